package cli

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/infra-iac/infra/internal/testbin"
)

func TestVersionFromBuildInfo(t *testing.T) {
	vcs := []debug.BuildSetting{
		{Key: "GOOS", Value: "linux"}, {Key: "GOARCH", Value: "arm64"},
		{Key: "vcs", Value: "git"},
		{Key: "vcs.revision", Value: "2d0e400a1b2c3d4e5f60718293a4b5c6d7e8f901"},
		{Key: "vcs.time", Value: "2026-03-01T12:00:00Z"},
		{Key: "vcs.modified", Value: "true"},
	}
	for _, tc := range []struct {
		name string
		bi   *debug.BuildInfo
		text string
		json string
	}{
		{
			name: "installed release",
			bi: &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: sdkModule, Version: "v1.2.3"},
				Settings: []debug.BuildSetting{{Key: "GOOS", Value: "linux"}, {Key: "GOARCH", Value: "amd64"}}},
			text: "infra v1.2.3, go1.26.8 linux/amd64",
			json: `{"module":"github.com/infra-iac/infra","version":"v1.2.3","go":"go1.26.8","platform":"linux/amd64"}`,
		},
		{
			name: "a checkout with changes",
			bi:   &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: sdkModule, Version: "(devel)"}, Settings: vcs},
			text: "infra (devel), commit 2d0e400a1b2c (2026-03-01T12:00:00Z, modified), go1.26.8 linux/arm64",
			json: `{"module":"github.com/infra-iac/infra","version":"(devel)","commit":"2d0e400a1b2c3d4e5f60718293a4b5c6d7e8f901","commitTime":"2026-03-01T12:00:00Z","modified":true,"go":"go1.26.8","platform":"linux/arm64"}`,
		},
		{
			// A fleet program: the SDK is a dependency, replaced by a
			// checkout; the commit is the program's repository's.
			name: "fleet program",
			bi: &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "example.com/shop", Version: "(devel)"}, Settings: vcs,
				Deps: []*debug.Module{{Path: "github.com/spf13/cobra", Version: "v1.10.2"},
					{Path: sdkModule, Version: "v0.0.0-00010101000000-000000000000", Replace: &debug.Module{Path: "/src/infra", Version: "(devel)"}}}},
			text: "infra v0.0.0-00010101000000-000000000000 => /src/infra, in fleet program example.com/shop (devel), commit 2d0e400a1b2c (2026-03-01T12:00:00Z, modified), go1.26.8 linux/arm64",
			json: `{"module":"github.com/infra-iac/infra","version":"v0.0.0-00010101000000-000000000000","replace":"/src/infra","program":"example.com/shop","programVersion":"(devel)","commit":"2d0e400a1b2c3d4e5f60718293a4b5c6d7e8f901","commitTime":"2026-03-01T12:00:00Z","modified":true,"go":"go1.26.8","platform":"linux/arm64"}`,
		},
		{
			name: "no build info",
			text: "infra (unknown), " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH,
			json: `{"module":"github.com/infra-iac/infra","version":"(unknown)","go":"` + runtime.Version() + `","platform":"` + runtime.GOOS + "/" + runtime.GOARCH + `"}`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := versionFrom(tc.bi)
			if got := v.String(); got != tc.text {
				t.Errorf("text:\n got %s\nwant %s", got, tc.text)
			}
			b, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tc.json {
				t.Errorf("json:\n got %s\nwant %s", b, tc.json)
			}
		})
	}
}

// The real binary: `infra --version` and `infra version` print the same
// line, and --json the same facts, from the binary's own build info.
func TestVersionVerbAndFlag(t *testing.T) {
	bin := testbin.Infra(t)
	run := func(args ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		cmd := exec.Command(bin, args...)
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil {
			t.Fatalf("infra %s: %v\n%s", strings.Join(args, " "), err, errOut.String())
		}
		return out.String()
	}
	flag, verb := run("--version"), run("version")
	if flag != verb {
		t.Errorf("--version %q and version %q differ", flag, verb)
	}
	want := runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + "\n"
	if !strings.HasPrefix(verb, "infra ") || !strings.HasSuffix(verb, want) {
		t.Errorf("version: %q, want infra ... %q", verb, want)
	}
	var v versionInfo
	if err := json.Unmarshal([]byte(run("version", "--json")), &v); err != nil {
		t.Fatal(err)
	}
	if v.Module != sdkModule || v.Version == "" || v.Go != runtime.Version() || v.Program != "" || v.String()+"\n" != verb {
		t.Errorf("version --json: %+v, text %q", v, verb)
	}
}
