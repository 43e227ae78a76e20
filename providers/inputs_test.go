package providers

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/infra-iac/infra/spec"
)

func TestDecodeTypes(t *testing.T) {
	in, err := DecodeScalewayContainer(map[string]any{
		"namespace": "ns", "image": "img", "port": int32(80), "minScale": 0.0, "maxScale": int64(3),
		"memoryMb": float32(512), "cpuLimit": 140, "env": map[string]any{"A": "a", "S": spec.NewSensitive("s")},
		"secretEnv": map[string]string{"K": "v"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if in.Namespace != "ns" || in.Image != "img" || in.Port != 80 || in.MaxScale != 3 || in.MemoryMB != 512 || in.CPULimit != 140 {
		t.Errorf("scalars: %+v", in)
	}
	if in.Env["A"] != "a" || in.Env["S"] != "s" || in.SecretEnv["K"] != "v" {
		t.Errorf("maps: env %v, secretEnv %v", in.Env, in.SecretEnv)
	}
	if !in.HasMinScale() || in.MinScale != 0 {
		t.Error("a zero minScale the target set reads as unset")
	}
	if in.HasTimeoutSec() || in.HasTags() || in.Tags == nil {
		t.Errorf("unset timeoutSec or tags reads as set, or unset tags are nil: %v", in.Tags)
	}

	b, err := DecodeObjectStore(map[string]any{"versioning": false})
	if err != nil || !b.HasVersioning() || b.Versioning || b.HasForceDestroy() {
		t.Errorf("bools: %+v, %v", b, err)
	}
	p, err := DecodeIAM(map[string]any{"policies": []any{"a", "b"}})
	if err != nil || !slices.Equal(p.Policies, []string{"a", "b"}) {
		t.Errorf("list: %v, %v", p.Policies, err)
	}
	if p, _ := DecodeIAM(map[string]any{"policies": []string{}}); !p.HasPolicies() || len(p.Policies) != 0 {
		t.Errorf("an empty list the target set: %+v", p)
	}
	if p, _ := DecodeIAM(nil); p.HasPolicies() || p.Policies != nil {
		t.Errorf("an orphan's nil fields: %+v", p)
	}
	for _, v := range []any{spec.NewSensitive("pw"), "pw"} {
		pg, err := DecodePostgres(map[string]any{"masterPasswordSecret": v})
		if err != nil || pg.MasterPasswordSecret.Reveal() != "pw" {
			t.Errorf("secret %T: %v", v, err)
		}
	}
	sg, err := DecodeSecurityGroup(map[string]any{"ingress": []any{map[string]any{"port": 443}}})
	if err != nil || len(sg.Ingress) != 1 {
		t.Errorf("ingress: %v, %v", sg.Ingress, err)
	}
}

func TestDecodeWrongTypeNamesTheField(t *testing.T) {
	for name, fields := range map[string]map[string]any{
		"image":         {"image": 3},
		"memoryMb":      {"memoryMb": "256"},
		"env":           {"env": []any{"A"}},
		"executionRole": {"executionRole": spec.NewSensitive("r")},
	} {
		_, err := DecodeCompute(fields)
		if err == nil || !strings.Contains(err.Error(), `field "`+name+`"`) {
			t.Errorf("%s: %v", name, err)
			continue
		}
		var pe *Error
		if !errors.As(err, &pe) || pe.Code != InvalidArgument {
			t.Errorf("%s: %v is not InvalidArgument", name, err)
		}
	}
	for name, decode := range map[string]func() error{
		"versioning": func() error { _, err := DecodeObjectStore(map[string]any{"versioning": "yes"}); return err },
		"policies":   func() error { _, err := DecodeIAM(map[string]any{"policies": []any{"a", 1}}); return err },
		"value":      func() error { _, err := DecodeSecrets(map[string]any{"value": 1}); return err },
		"ingress":    func() error { _, err := DecodeSecurityGroup(map[string]any{"ingress": "22"}); return err },
	} {
		if err := decode(); err == nil || !strings.Contains(err.Error(), `field "`+name+`"`) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
