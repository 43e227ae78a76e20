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
		`{"name":"db","rootPassword":"` + canary + `"}`,
		`{"payload":{"data":"` + canary + `","dataCrc32c":"42"}}`,
		`{"name":"api","secret_environment_variables":{"DB_URL":"postgres://app:` + canary + `@db/app","TOKEN":"x"},"min_scale":0}`,
		`{"secret_environment_variables": [{"key": "DB_URL", "value": "` + canary + `"}]}`,
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

func TestMaskBodyMasksWhatASecretKeyHolds(t *testing.T) {
	const canary = "canary-5b2a"
	body := `{"name":"api","secret_environment_variables":{"DB_URL":"pass}word-` + canary + `"},"nested":[{"Password":{"v":"` + canary + `"}}],"region":"fr-par"}`
	out := MaskBody([]byte(body))
	if strings.Contains(out, canary) || !strings.Contains(out, `"region":"fr-par"`) || !strings.Contains(out, `"secret_environment_variables":"(sensitive)"`) {
		t.Errorf("MaskBody = %s", out)
	}
	if got := MaskBody([]byte("Action=CreateDBCluster&MasterUserPassword=" + canary)); strings.Contains(got, canary) {
		t.Errorf("a form body: %s", got)
	}
}
