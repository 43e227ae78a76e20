package executor

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/infra-iac/infra/operations"
)

// Client speaks the protocol to an executor function: the one client, for
// the command line (infra executor invoke) and the Action.
type Client struct {
	Invoker  operations.Invoker
	Function string
	// Newer, when set, hears of an executor speaking a newer protocol than
	// this build: its answers may carry what this build cannot read.
	Newer func(version int)
}

// Do sends one request and reads the answer.
func (c Client) Do(ctx context.Context, req Request) (*Response, error) {
	payload, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("encode the request: %w", err)
	}
	body, err := c.Invoker.Invoke(ctx, c.Function, payload)
	if err != nil {
		return nil, fmt.Errorf("executor %s: %w", c.Function, err)
	}
	var resp Response
	if err := json.Unmarshal(body, &resp); err != nil || resp.Status == "" {
		return nil, fmt.Errorf("executor %s: not an executor response: %.300s", c.Function, body)
	}
	if resp.ProtocolVersion > ProtocolVersion && c.Newer != nil {
		c.Newer(resp.ProtocolVersion)
	}
	return &resp, nil
}

// Output reads a fleet's published record through the executor: of the
// document's fleet, or, with no document, of the fleet named; sel is "",
// CAPABILITY or CAPABILITY.EXPORT. A fleet that has published nothing is
// an error that wraps operations.ErrNothingPublished.
func (c Client) Output(ctx context.Context, document json.RawMessage, fleet, sel string) (*operations.Output, error) {
	resp, err := c.Do(ctx, Request{Operation: OpOutput, Document: document, Fleet: fleet, Options: Options{Select: sel}})
	if err != nil {
		return nil, err
	}
	switch {
	case resp.Status != StatusDone:
		return nil, fmt.Errorf("executor %s: output %s: %s", c.Function, resp.Status, resp.Message)
	case resp.Output == nil:
		// The message ends with the sentence the error carries.
		where, cut := strings.CutSuffix(resp.Message, operations.ErrNothingPublished.Error())
		if !cut {
			where += ": "
		}
		return nil, fmt.Errorf("executor %s: %s%w", c.Function, where, operations.ErrNothingPublished)
	}
	return resp.Output, nil
}
