package operations

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/infra-iac/infra/providers"
	awsprovider "github.com/infra-iac/infra/providers/aws"
	gcpprovider "github.com/infra-iac/infra/providers/gcp"
	scwprovider "github.com/infra-iac/infra/providers/scaleway"
	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/state"
)

// ErrNoFleet is a directory with neither a ./infra program nor a
// fleet.json, and no fleet named.
var ErrNoFleet = errors.New("no fleet found: there is no ./infra program and no fleet.json here")

// SourceError is a named fleet path that is not a fleet: missing, or a
// directory that is not a Go fleet program.
type SourceError struct {
	Path string
	Err  error
}

func (e *SourceError) Error() string { return e.Path + ": " + e.Err.Error() }
func (e *SourceError) Unwrap() error { return e.Err }

// SynthFunc runs a fleet program in dir and returns the document it prints.
type SynthFunc func(ctx context.Context, dir string) ([]byte, error)

// DefaultFleetPath is where the fleet is when --fleet does not say: ./infra
// if it is a directory, else fleet.json.
func DefaultFleetPath() string {
	if fi, err := os.Stat("infra"); err == nil && fi.IsDir() {
		return "infra"
	}
	return "fleet.json"
}

// LoadDocument finds and reads a fleet document: path, else ./infra if it
// exists, else fleet.json. A directory is a Go fleet program, which synth
// runs to print its document. Its Lambda functions' zips are resolved
// (ResolveZips): their paths are made relative to where infra runs, and
// their hashes filled.
func LoadDocument(ctx context.Context, path string, synth SynthFunc) (*spec.Document, error) {
	named := path != ""
	if !named {
		path = DefaultFleetPath()
	}
	fi, err := os.Stat(path)
	if err != nil {
		if os.IsNotExist(err) && !named {
			return nil, ErrNoFleet
		}
		return nil, &SourceError{Path: path, Err: err}
	}
	var data []byte
	dir := "" // a fleet program's document is made where infra runs
	if fi.IsDir() {
		if _, err := os.Stat(filepath.Join(path, "go.mod")); err != nil && !hasGoFiles(path) {
			return nil, &SourceError{Path: path, Err: errors.New("a directory must be a Go fleet program (package main calling fleet.Main)")}
		}
		data, err = synth(ctx, path)
	} else {
		data, err = os.ReadFile(path)
		dir = filepath.Dir(path)
	}
	if err != nil {
		return nil, err
	}
	doc, err := spec.DecodeDocument(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ResolveZips(doc, dir)
}

func hasGoFiles(dir string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".go") {
			return true
		}
	}
	return false
}

// SynthProgram runs `go run DIR synth`: a fleet program built with
// fleet.Main prints its document. Its stderr is the process's.
func SynthProgram(ctx context.Context, dir string) ([]byte, error) {
	if !strings.HasPrefix(dir, ".") && !strings.HasPrefix(dir, "/") {
		dir = "./" + dir
	}
	cmd := exec.CommandContext(ctx, "go", "run", dir, "synth")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("synthesize the fleet program %s (go run %s synth): %w", dir, dir, err)
	}
	return out, nil
}

// DefaultBackends builds the clouds from their standard configuration:
// the AWS SDK's default chain (profiles, environment, SSO,
// AWS_ENDPOINT_URL), and the active Scaleway profile of
// ~/.config/scw/config.yaml, then SCW_ACCESS_KEY, SCW_SECRET_KEY,
// SCW_DEFAULT_PROJECT_ID, SCW_DEFAULT_REGION, SCW_API_URL. progress
// receives the drivers' own progress lines.
func DefaultBackends(progress func(string)) BackendsFunc {
	return NewBackends(BackendOptions{Progress: progress})
}

// Call is one API call a backend made, for the call log.
type Call = providers.Call

// MaskSecrets masks the fields that carry a secret in a traced body or an
// error's text.
func MaskSecrets(s string) string { return providers.MaskSecrets(s) }

// BackendOptions tune the backends NewBackends makes.
type BackendOptions struct {
	// Progress receives a line when a driver starts and ends a long wait.
	Progress func(string)
	// Log receives every API call (INFRA_LOG=debug); Trace every request
	// and response with its body, secrets masked (INFRA_LOG=trace).
	Log   func(Call)
	Trace func(string)
}

// NewBackendsWith is NewBackends with options decided when the backends
// are built: after the command line is read, which --log-level is part of.
func NewBackendsWith(options func() BackendOptions) BackendsFunc {
	return func(ctx context.Context, ps []spec.Provider) (map[spec.Provider]providers.Backend, map[spec.Provider]string, error) {
		return NewBackends(options())(ctx, ps)
	}
}

// NewBackends builds the real backends, with the SDKs' default
// credentials, tuned by o.
func NewBackends(o BackendOptions) BackendsFunc {
	return func(ctx context.Context, ps []spec.Provider) (map[spec.Provider]providers.Backend, map[spec.Provider]string, error) {
		out := map[spec.Provider]providers.Backend{}
		why := map[spec.Provider]string{}
		for _, p := range ps {
			switch p {
			case spec.AWS:
				b, err := awsprovider.New(ctx, awsprovider.Options{Log: o.Log, Trace: o.Trace})
				if err != nil {
					return nil, nil, err
				}
				out[p] = b
			case spec.Scaleway:
				b, err := scwprovider.New(scwprovider.Options{Progress: o.Progress, Log: o.Log, Trace: o.Trace})
				if err != nil {
					return nil, nil, err
				}
				out[p] = b
			case spec.GCP:
				b, err := gcpprovider.New(gcpprovider.Options{Log: o.Log, Trace: o.Trace})
				if err != nil {
					return nil, nil, err
				}
				out[p] = b
			default:
				why[p] = fmt.Sprintf("this build of infra has no %s driver yet", p)
			}
		}
		return out, why, nil
	}
}

// OpenState opens one fleet's state at a location: a directory, or
// s3://bucket/prefix with the AWS SDK's default credentials.
func OpenState(ctx context.Context, location, fleet string) (state.Store, error) {
	if !strings.HasPrefix(location, "s3://") {
		return state.OpenFile(location, fleet)
	}
	b, err := awsprovider.New(ctx, awsprovider.Options{})
	if err != nil {
		return nil, err
	}
	blobs, prefix, err := b.OpenStateBlobs(location)
	if err != nil {
		return nil, err
	}
	return state.OpenBlobs(blobs, prefix, fleet)
}
