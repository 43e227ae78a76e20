package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/infra-iac/infra/providers"
	awsprovider "github.com/infra-iac/infra/providers/aws"
	scwprovider "github.com/infra-iac/infra/providers/scaleway"
	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/state"
)

// Factory builds what commands need, lazily: credentials and clients are
// made only by the verbs that reach a cloud, so --help, check and synth
// need none.
type Factory struct {
	IO     *IOStreams
	Getenv func(string) string
	// Backends builds a backend for each provider in ps. A provider it
	// cannot build goes into the second map with the reason.
	Backends func(ctx context.Context, ps []spec.Provider) (map[spec.Provider]providers.Backend, map[spec.Provider]string, error)
	// Store opens the state of one fleet at a location (--state): a
	// directory, or s3://bucket/prefix.
	Store func(ctx context.Context, location, fleet string) (state.Store, error)
	// Synth runs a fleet program and returns the document it prints.
	Synth func(ctx context.Context, dir string) ([]byte, error)
}

// DefaultFactory is the factory of the real command.
func DefaultFactory() *Factory {
	f := &Factory{IO: System(), Getenv: os.Getenv, Store: openStore, Synth: synthProgram}
	f.Backends = f.defaultBackends
	return f
}

func (f *Factory) defaultBackends(ctx context.Context, ps []spec.Provider) (map[spec.Provider]providers.Backend, map[spec.Provider]string, error) {
	out := map[spec.Provider]providers.Backend{}
	why := map[spec.Provider]string{}
	for _, p := range ps {
		switch p {
		case spec.AWS:
			b, err := awsprovider.New(ctx, awsprovider.Options{})
			if err != nil {
				return nil, nil, err
			}
			out[p] = b
		case spec.Scaleway:
			// The standard Scaleway configuration: the active profile of
			// ~/.config/scw/config.yaml, then SCW_ACCESS_KEY,
			// SCW_SECRET_KEY, SCW_DEFAULT_PROJECT_ID, SCW_DEFAULT_REGION,
			// SCW_API_URL. The project is the account the engine checks.
			b, err := scwprovider.New(scwprovider.Options{Progress: func(line string) {
				fmt.Fprintln(f.IO.ErrOut, line)
			}})
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

func openStore(ctx context.Context, location, fleet string) (state.Store, error) {
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

// synthProgram runs `go run DIR synth`: a fleet program built with
// fleet.Main prints its document.
func synthProgram(ctx context.Context, dir string) ([]byte, error) {
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
