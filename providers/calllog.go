package providers

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"time"

	"github.com/infra-iac/infra/spec"
)

// Call is one API call a backend made, for the call log (INFRA_LOG,
// docs/cli.md#logs): what it was, for which resource, how long it took,
// how it ended and how often the SDK retried it. It holds no body and no
// parameter, so it holds no secret.
type Call struct {
	Provider  spec.Provider
	Service   string
	Operation string
	Region    string
	// Address is the resource the engine made the call for ("" for a
	// listing, the tag scan or the account check).
	Address  string
	Duration time.Duration
	// Status is the HTTP status of the last attempt; 0 when none came.
	Status  int
	Retries int
	Err     error
}

// CallLog receives every call a backend makes; it must be safe for
// concurrent use.
type CallLog func(Call)

type addressKey struct{}

// WithAddress says that the calls made with ctx are for resource a, so
// that the call log can name it.
func WithAddress(ctx context.Context, a spec.Address) context.Context {
	return context.WithValue(ctx, addressKey{}, a.String())
}

// AddressIn is the resource WithAddress named, or "".
func AddressIn(ctx context.Context) string {
	a, _ := ctx.Value(addressKey{}).(string)
	return a
}

// secretFields are the parameters and JSON fields of the clouds' APIs
// that carry a secret, masked in a traced body.
var secretFields = regexp.MustCompile(`(?i)("(?:SecretString|SecretBinary|Password|MasterUserPassword|rootPassword|SecretAccessKey|SessionToken|secret_key|password|data)"\s*:\s*)"(?:[^"\\]|\\.)*"` +
	`|("(?:secret_environment_variables|SecretEnvironmentVariables)"\s*:\s*)(?:\{[^}]*\}|\[[^\]]*\])` +
	`|((?:^|[&?\s])(?:SecretString|SecretBinary|MasterUserPassword|Password|SecretAccessKey)=)[^&\s]*` +
	`|((?:Authorization|X-Amz-Security-Token|X-Auth-Token)\s*:\s*)[^\r\n]*` +
	`|(<(?:SecretAccessKey|SessionToken|Password|MasterUserPassword|SecretString)>)[^<]*`)

// MaskSecrets masks in a traced request or response every field that
// carries a secret: a secret's value, a password, a signature, a token.
func MaskSecrets(s string) string {
	return secretFields.ReplaceAllStringFunc(s, func(m string) string {
		sub := secretFields.FindStringSubmatch(m)
		switch {
		case sub[1] != "": // a JSON field keeps its quotes
			return sub[1] + `"` + spec.Redacted + `"`
		case sub[2] != "": // every value of a map of secrets
			return sub[2] + `{"` + spec.Redacted + `": "` + spec.Redacted + `"}`
		case sub[3] != "":
			return sub[3] + spec.Redacted
		case sub[4] != "":
			return sub[4] + spec.Redacted
		case sub[5] != "":
			return sub[5] + spec.Redacted
		}
		return spec.Redacted
	})
}

// secretKeys are the JSON keys whose whole value is masked in a traced
// JSON body, whatever the value is: a string, a map of secrets, a list.
var secretKeys = map[string]bool{"secretstring": true, "secretbinary": true, "password": true, "masteruserpassword": true,
	"secretaccesskey": true, "sessiontoken": true, "rootpassword": true, "secret_key": true, "data": true,
	"secret_environment_variables": true, "secretenvironmentvariables": true}

// MaskBody masks a traced body: a JSON one by its structure, so that no
// value under a secret's key survives whatever it holds; anything else
// as MaskSecrets does.
func MaskBody(body []byte) string {
	var v any
	if len(body) == 0 || json.Unmarshal(body, &v) != nil {
		return MaskSecrets(string(body))
	}
	b, err := json.Marshal(maskJSON(v))
	if err != nil {
		return spec.Redacted
	}
	return string(b)
}

func maskJSON(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, y := range x {
			if secretKeys[strings.ToLower(k)] {
				x[k] = spec.Redacted
				continue
			}
			x[k] = maskJSON(y)
		}
	case []any:
		for i, y := range x {
			x[i] = maskJSON(y)
		}
	}
	return v
}
