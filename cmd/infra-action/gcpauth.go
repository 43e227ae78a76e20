package main

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/infra-iac/infra/spec"
)

// The GCP endpoints a federated credential names. INFRA_GCP_API_URL (the
// GCP backend's, for a private endpoint or a test) replaces both hosts.
const (
	stsTokenURL    = "https://sts.googleapis.com/v1/token"
	impersonateURL = "https://iamcredentials.googleapis.com/v1/projects/-/serviceAccounts/%s:generateAccessToken"
)

var (
	wifProviderRE    = regexp.MustCompile(`^projects/[0-9]+/locations/global/workloadIdentityPools/[a-z0-9-]{4,32}/providers/[a-z0-9-]{4,32}$`)
	serviceAccountRE = regexp.MustCompile(`^[a-z][a-z0-9-]{4,28}[a-z0-9]@[a-z0-9.-]+\.iam\.gserviceaccount\.com$`)
)

// gcpWorkloadIdentity sets the job up to reach GCP with no stored key: a
// credential configuration (external_account) that exchanges the job's
// GitHub OIDC token at GCP's Security Token Service, written where only
// this job reads it, and named by GOOGLE_APPLICATION_CREDENTIALS, which
// Google's clients read. It does what google-github-actions/auth does, so
// a workflow needs no other action. Nothing happens without the input.
func (a *action) gcpWorkloadIdentity() error {
	provider := input(a.gha, "gcp-workload-identity-provider")
	account := input(a.gha, "gcp-service-account")
	if provider == "" {
		if account != "" {
			return errors.New("input gcp-service-account needs gcp-workload-identity-provider: impersonation is of a federated identity")
		}
		return nil
	}
	if !wifProviderRE.MatchString(provider) {
		return fmt.Errorf("input gcp-workload-identity-provider is %q; want projects/<number>/locations/global/workloadIdentityPools/<pool>/providers/<provider>", spec.Printable(provider))
	}
	if account != "" && !serviceAccountRE.MatchString(account) {
		return fmt.Errorf("input gcp-service-account is %q; want a service account's email, such as infra@my-project.iam.gserviceaccount.com", spec.Printable(account))
	}
	tokenURL, token := a.e.getenv("ACTIONS_ID_TOKEN_REQUEST_URL"), a.e.getenv("ACTIONS_ID_TOKEN_REQUEST_TOKEN")
	if tokenURL == "" || token == "" {
		return errors.New("input gcp-workload-identity-provider needs the job's OIDC token, which GitHub gives only to a job with permissions: id-token: write")
	}
	a.gha.AddMask(token)
	cfg, err := externalAccount(provider, account, tokenURL, token, a.e.getenv("INFRA_GCP_API_URL"))
	if err != nil {
		return err
	}
	path, err := writePrivate(a.e.getenv("RUNNER_TEMP"), cfg)
	if err != nil {
		return fmt.Errorf("write the GCP credential configuration: %w", err)
	}
	fmt.Fprintf(a.log, "gcp: workload identity federation through %s%s\n", provider, map[bool]string{true: ", as " + account}[account != ""])
	return a.e.setenv("GOOGLE_APPLICATION_CREDENTIALS", path)
}

// externalAccount is the credential configuration: the subject token is
// fetched from GitHub's OIDC endpoint with the provider as its audience,
// each time Google's client needs a fresh one.
func externalAccount(provider, account, tokenURL, token, apiURL string) ([]byte, error) {
	audience := "//iam.googleapis.com/" + provider
	u, err := url.Parse(tokenURL)
	if err != nil {
		return nil, fmt.Errorf("ACTIONS_ID_TOKEN_REQUEST_URL does not parse: %w", err)
	}
	q := u.Query()
	q.Set("audience", "https:"+audience)
	u.RawQuery = q.Encode()
	sts, imp := stsTokenURL, impersonateURL
	if apiURL != "" {
		base := strings.TrimSuffix(apiURL, "/")
		sts, imp = base+"/v1/token", base+"/v1/projects/-/serviceAccounts/%s:generateAccessToken"
	}
	cfg := map[string]any{
		"type":               "external_account",
		"audience":           audience,
		"subject_token_type": "urn:ietf:params:oauth:token-type:jwt",
		"token_url":          sts,
		"credential_source": map[string]any{
			"url":     u.String(),
			"headers": map[string]string{"Authorization": "Bearer " + token},
			"format":  map[string]string{"type": "json", "subject_token_field_name": "value"},
		},
	}
	if account != "" {
		cfg["service_account_impersonation_url"] = fmt.Sprintf(imp, account)
	}
	return json.MarshalIndent(cfg, "", "  ")
}

// writePrivate writes data to a new file only its owner can read, in dir
// (the runner's temporary directory, emptied after each job).
func writePrivate(dir string, data []byte) (string, error) {
	if dir == "" {
		dir = os.TempDir()
	}
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	path := filepath.Join(dir, "infra-gcp-credentials-"+hex.EncodeToString(b[:])+".json")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", err
	}
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return "", err
	}
	return path, f.Close()
}
