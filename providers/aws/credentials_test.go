package aws

import (
	"errors"
	"strings"
	"testing"
)

// No credentials anywhere is one sentence that says what to set, not the
// SDK's chain of every source it tried.
func TestNoCredentialsIsOneSentenceThatSaysWhatToSet(t *testing.T) {
	for k, v := range map[string]string{"AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_SESSION_TOKEN": "", "AWS_PROFILE": "",
		"AWS_CONFIG_FILE": "/dev/null", "AWS_SHARED_CREDENTIALS_FILE": "/dev/null", "AWS_EC2_METADATA_DISABLED": "true",
		"AWS_ENDPOINT_URL": "http://127.0.0.1:1", "AWS_REGION": testRegion} {
		t.Setenv(k, v)
	}
	b, err := New(t.Context(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Account(t.Context())
	var none *NoCredentialsError
	if !errors.As(err, &none) {
		t.Fatalf("account without credentials: %v; want a NoCredentialsError", err)
	}
	if msg := err.Error(); strings.Contains(msg, "IMDS") || strings.Contains(msg, "\n") || !strings.Contains(msg, "AWS_ACCESS_KEY_ID") || !strings.Contains(msg, "AWS_ENDPOINT_URL") {
		t.Errorf("the error: %q; want one line naming what to set", msg)
	}
}
