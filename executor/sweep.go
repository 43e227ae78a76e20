package executor

import (
	"bytes"
	"context"
	"fmt"
	"sort"

	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/sweep"
)

// sweepOp deletes debris by name prefix with the executor's credentials.
// It needs no state and takes no lock: a sweep manages no ledger. Regions
// come from options.regions, else from the document's placement and
// resources; the document's exclusions and accounts apply when one is sent.
func (h *Handler) sweepOp(ctx context.Context, req Request) Response {
	o := req.Options
	if err := sweep.CheckPrefix(o.Prefix); err != nil {
		return failed(err.Error())
	}
	age, err := sweep.ParseAge(o.OlderThan)
	if err != nil {
		return failed(err.Error())
	}
	opts := sweep.Options{Prefix: o.Prefix, OlderThan: age, Delete: o.Yes, Regions: map[spec.Provider][]string{}}
	if len(req.Document) > 0 && string(req.Document) != "null" {
		doc, err := spec.DecodeDocument(req.Document)
		if err != nil {
			return failed("decode the document: " + err.Error())
		}
		m, diags := spec.Compile(doc)
		if spec.HasErrors(diags) {
			return Response{Status: StatusFailed, Diagnostics: diags,
				Message: fmt.Sprintf("the fleet document has %d error(s); fix them (infra check lists them all)", countErrors(diags))}
		}
		opts.Exclusions, opts.Accounts = m.Exclusions, m.Accounts
		for p, rs := range m.Regions() {
			opts.Regions[p] = append(opts.Regions[p], rs...)
		}
		for p, r := range m.Placement {
			opts.Regions[p] = append(opts.Regions[p], r)
		}
	}
	for _, r := range o.Regions {
		p, ok := spec.RegionOwner(r)
		if !ok {
			return failed(fmt.Sprintf("options.regions: %q is a region of no cloud infra knows", r))
		}
		opts.Regions[p] = append(opts.Regions[p], r)
	}
	var ps []spec.Provider
	for p, rs := range opts.Regions {
		sort.Strings(rs)
		opts.Regions[p] = dedupe(rs)
		ps = append(ps, p)
	}
	if len(ps) == 0 {
		return failed("sweep needs regions: send options.regions, or a document with a placement")
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
	if h.cfg.Backends == nil {
		return failed("this executor has no cloud backends")
	}
	opts.Backends, opts.Skipped, err = h.cfg.Backends(ctx, ps)
	if err != nil {
		return failed("build the cloud backends: " + err.Error())
	}
	opts.Progress = func(ev sweep.Event) {
		switch {
		case ev.Err != nil:
			h.logf("sweep %s %s %s: %v", ev.Kind, ev.Address, ev.Region, ev.Err)
		case !ev.Address.IsZero():
			h.logf("sweep %s %s %s", ev.Kind, ev.Address, ev.Region)
		case ev.Message != "":
			h.logf("sweep %s: %s", ev.Kind, ev.Message)
		}
	}
	report, err := sweep.Run(ctx, opts)
	resp := Response{Status: StatusDone, Sweep: report}
	if report != nil {
		var text bytes.Buffer
		if rerr := sweep.RenderText(&text, report); rerr == nil {
			resp.Message = text.String()
		}
	}
	if err != nil {
		resp.Status = StatusFailed
		if resp.Message == "" {
			resp.Message = err.Error()
		} else {
			resp.Message += err.Error()
		}
	}
	return resp
}

func dedupe(xs []string) []string {
	out := xs[:0]
	for i, x := range xs {
		if i == 0 || x != xs[i-1] {
			out = append(out, x)
		}
	}
	return out
}
