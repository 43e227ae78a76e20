package executor

import (
	"context"
	"encoding/json"
	"fmt"

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
