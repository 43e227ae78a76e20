package executor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/infra-iac/infra/operations"
	"github.com/infra-iac/infra/render"
	"github.com/infra-iac/infra/spec"
)

// sweepOp deletes debris by name prefix with the executor's credentials.
// It needs no state and takes no lock: a sweep manages no ledger. Regions
// come from options.regions, else from the document's placement and
// resources; the document's exclusions and accounts apply when one is sent.
func (h *Handler) sweepOp(ctx context.Context, req Request) Response {
	o := req.Options
	if p := h.cfg.SweepPrefix; p != "" && !strings.HasPrefix(o.Prefix, p) {
		return failed(fmt.Sprintf("this function sweeps only names starting with %s (%s); its role can delete nothing else: send options.prefix %s, or one that starts with it",
			p, EnvSweepPrefix, p))
	}
	sreq := operations.SweepRequest{Prefix: o.Prefix, OlderThan: o.OlderThan, Delete: o.Yes, Progress: h.sweepEvent}
	if len(req.Document) > 0 && string(req.Document) != "null" {
		doc, err := spec.DecodeDocument(req.Document)
		if err != nil {
			return failed("decode the document: " + err.Error())
		}
		sreq.Document = doc
	}
	if len(o.Regions) > 0 {
		regions, err := operations.RegionsByProvider(o.Regions)
		if err != nil {
			return failed("options.regions: " + err.Error())
		}
		sreq.Regions = regions
	}
	if h.cfg.Backends == nil {
		return failed("this executor has no cloud backends")
	}
	report, err := operations.New(operations.Env{Backends: h.cfg.Backends}).Sweep(ctx, sreq)
	if errors.Is(err, operations.ErrNoRegions) {
		return failed("sweep needs regions: send options.regions, or a document with a placement")
	}
	var diags *operations.DiagnosticsError
	var age *operations.AgeError
	switch {
	case errors.Is(err, operations.ErrNoPrefix):
		return failed("sweep needs options.prefix (such as ci-tests-): without one every resource in the account would be a candidate")
	case errors.As(err, &age):
		return failed("options.olderThan: " + age.Error())
	case report == nil && errors.As(err, &diags):
		return refusal(ctx, OpSweep, err)
	case report == nil && err != nil:
		return failed(err.Error())
	}
	resp := Response{Status: StatusDone, Sweep: report}
	var text bytes.Buffer
	if rerr := render.SweepText(&text, report); rerr == nil {
		resp.Message = text.String()
	}
	if err != nil {
		resp.Status = StatusFailed
		resp.Message += err.Error()
	}
	return resp
}

func (h *Handler) sweepEvent(ev operations.SweepEvent) {
	switch {
	case ev.Err != nil:
		h.logf("sweep %s %s %s: %v", ev.Kind, ev.Address, ev.Region, ev.Err)
	case !ev.Address.IsZero():
		h.logf("sweep %s %s %s", ev.Kind, ev.Address, ev.Region)
	case ev.Message != "":
		h.logf("sweep %s: %s", ev.Kind, ev.Message)
	}
}
