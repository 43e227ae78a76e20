package executor

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/infra-iac/infra/spec"
)

// Credentials are the values of the credentials secret: a JSON object of
// environment-style names (SCW_ACCESS_KEY, SCW_SECRET_KEY,
// SCW_DEFAULT_PROJECT_ID, … and any variable a document's fromEnv names).
// They are kept as spec.Sensitive, so no log line or error can print one.
type Credentials struct {
	// Secret is the secret's name or ARN, for messages.
	Secret string
	values map[string]spec.Sensitive
}

// Lookup returns the value of name.
func (c *Credentials) Lookup(name string) (spec.Sensitive, bool) {
	if c == nil {
		return spec.Sensitive{}, false
	}
	v, ok := c.values[name]
	return v, ok
}

// Names lists the names the secret holds (never their values), sorted.
func (c *Credentials) Names() []string {
	if c == nil {
		return nil
	}
	out := make([]string, 0, len(c.values))
	for k := range c.values {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Format, String, GoString and MarshalJSON show the names only. fmt cannot
// call a method through an unexported field, so spec.Sensitive's own
// redaction would not apply to the values in the map: printing a
// Credentials with %v would print them.
func (c *Credentials) Format(f fmt.State, verb rune) { _, _ = f.Write([]byte(c.String())) }
func (c *Credentials) String() string {
	if c == nil {
		return "no credentials"
	}
	return fmt.Sprintf("credentials from %s: %v (values not shown)", c.Secret, c.Names())
}
func (c *Credentials) GoString() string { return c.String() }
func (c *Credentials) MarshalJSON() ([]byte, error) {
	if c == nil {
		return []byte("null"), nil
	}
	return json.Marshal(struct {
		Secret string   `json:"secret"`
		Names  []string `json:"names"`
	}{c.Secret, c.Names()})
}

// parseCredentials reads the secret's value. The error never quotes it:
// a JSON syntax error would print the bytes around the mistake.
func parseCredentials(secret string, v spec.Sensitive) (*Credentials, error) {
	var m map[string]any
	if err := json.Unmarshal([]byte(v.Reveal()), &m); err != nil || m == nil {
		return nil, fmt.Errorf("the credentials secret %s is not a JSON object of NAME: value strings (its value is not shown)", secret)
	}
	c := &Credentials{Secret: secret, values: make(map[string]spec.Sensitive, len(m))}
	for k, x := range m {
		s, ok := x.(string)
		if !ok {
			return nil, fmt.Errorf("the credentials secret %s: %s is not a string", secret, k)
		}
		c.values[k] = spec.NewSensitive(s)
	}
	return c, nil
}

// pendingCredentials is the read of the credentials secret, started at cold
// start and awaited by the first request that needs it, so that the read
// overlaps the rest of the start instead of adding to it.
type pendingCredentials struct {
	done  chan struct{}
	creds *Credentials
	err   error
}

// startCredentials begins reading secret with read; with no secret
// configured it is settled at once with no credentials.
func startCredentials(secret string, read func(ctx context.Context, id string) (spec.Sensitive, error)) *pendingCredentials {
	p := &pendingCredentials{done: make(chan struct{})}
	if secret == "" {
		close(p.done)
		return p
	}
	go func() {
		defer close(p.done)
		v, err := read(context.Background(), secret)
		if err != nil {
			p.err = fmt.Errorf("read the credentials secret (INFRA_CREDENTIALS_SECRET): %w", err)
			return
		}
		p.creds, p.err = parseCredentials(secret, v)
	}()
	return p
}

// wait returns the credentials once read.
func (p *pendingCredentials) wait(ctx context.Context) (*Credentials, error) {
	select {
	case <-p.done:
		return p.creds, p.err
	case <-ctx.Done():
		return nil, fmt.Errorf("read the credentials secret: %w", ctx.Err())
	}
}
