package gcp

import (
	"encoding/json"
	"fmt"

	"google.golang.org/api/option"

	"github.com/infra-iac/infra/spec"
)

// Keys are explicit GCP credentials, as the executor's credentials secret
// holds them: a credential configuration (a service-account key, or an
// external-account file for workload identity federation) and the
// project.
type Keys struct {
	// CredentialsJSON is the configuration's JSON.
	CredentialsJSON spec.Sensitive
	// Project is the project every call is scoped to; empty takes the
	// configuration's own (a service-account key's project_id).
	Project string
}

// credentialTypes are the configurations infra accepts from a secret: a
// key of a service account, or workload identity federation. Any other
// type (an authorized user's refresh token, an impersonation chain) is
// refused, since Google asks that a configuration from outside be
// validated before use.
var credentialTypes = map[string]option.CredentialsType{
	"service_account":  option.ServiceAccount,
	"external_account": option.ExternalAccount,
}

// NewWithKeys builds the backend from explicit credentials, which take the
// place of the Application Default Credentials.
func NewWithKeys(k Keys, opts Options) (*Backend, error) {
	raw := []byte(k.CredentialsJSON.Reveal())
	var head struct {
		Type      string `json:"type"`
		ProjectID string `json:"project_id"`
	}
	// The error never quotes the JSON: its bytes are a private key.
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, fmt.Errorf("gcp: the credential configuration is not JSON (its value is not shown)")
	}
	t, ok := credentialTypes[head.Type]
	if !ok {
		return nil, fmt.Errorf("gcp: a credential configuration of type %q is not accepted: give a service account key (service_account) or a workload identity federation file (external_account)", spec.Printable(head.Type))
	}
	opts.ClientOptions = append(opts.ClientOptions, option.WithAuthCredentialsJSON(t, raw))
	opts.Project = k.Project
	if opts.Project == "" {
		opts.Project = head.ProjectID
	}
	if opts.Project == "" {
		return nil, fmt.Errorf("gcp: no project: give GOOGLE_CLOUD_PROJECT with the credentials (an %s configuration names none)", head.Type)
	}
	return New(opts)
}
