package operations

import (
	"testing"

	"github.com/infra-iac/infra/spec"
)

// check has no ledger: a fromEnv variable its environment lacks is a
// warning for the secret (a create will need it), never an error, and a
// set one is nothing.
func TestCheckWarnsOfAnUnsetVariable(t *testing.T) {
	doc, err := spec.DecodeDocument([]byte(`{"apiVersion": "infra/v1", "fleet": "shop", "accounts": {"aws": "123456789012"},
		"placement": {"aws": "eu-west-3"}, "resources": [
		{"address": "aws/secrets/db-password", "spec": {"value": {"fromEnv": "DB_PASSWORD"}}},
		{"address": "aws/secrets/api-key", "spec": {"value": {"fromEnv": "API_KEY"}}},
		{"address": "aws/secrets/db-url", "spec": {"value": {"composed": {"format": "x{0}", "args": [{"secretValue": "aws/secrets/db-password"}]}}}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"API_KEY": "set"}
	rows := Check(doc, func(k string) string { return env[k] })
	if len(rows) != 1 || rows[0].ID != spec.RowEnvUnset || rows[0].Severity != spec.Warning ||
		rows[0].Subject != "aws/secrets/db-password" || rows[0].Evidence != "DB_PASSWORD" {
		t.Fatalf("rows: %v", rows)
	}
	if rows := Check(doc, nil); len(rows) != 0 {
		t.Fatalf("no environment: %v", rows)
	}
}
