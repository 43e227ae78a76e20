package providers

import (
	"strings"
	"testing"
)

func TestMaskSecrets(t *testing.T) {
	const canary = "canary-9d1e"
	for _, in := range []string{
		`{"Name":"db","SecretString":"` + canary + `"}`,
		`{"SecretString" : "a \"quoted\" ` + canary + `"}`,
		`Action=CreateDBCluster&MasterUserPassword=` + canary + `&Version=2014-10-31`,
		"Authorization: AWS4-HMAC-SHA256 Credential=AKID/" + canary + "\r\nHost: x",
		"X-Amz-Security-Token: " + canary,
		`{"data":"` + canary + `"}`,
		`<CreateAccessKeyResult><AccessKey><SecretAccessKey>` + canary + `</SecretAccessKey></AccessKey>`,
	} {
		out := MaskSecrets(in)
		if strings.Contains(out, canary) || !strings.Contains(out, "(sensitive)") {
			t.Errorf("MaskSecrets(%q) = %q", in, out)
		}
	}
	if got := MaskSecrets(`{"Name":"db"}`); got != `{"Name":"db"}` {
		t.Errorf("a body without a secret changed: %q", got)
	}
}
