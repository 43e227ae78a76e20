package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/aws/aws-sdk-go-v2/config"

	"github.com/infra-iac/infra/cli"
	"github.com/infra-iac/infra/providers"
	awsprovider "github.com/infra-iac/infra/providers/aws"
	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/state"
)

// runChild is the measured process: the infra command line itself
// (cli.RunWith), whose AWS backend counts every call through SDK
// middleware. The counts go to countsFile when the command ends, and the
// parent reads this process's peak RSS from the kernel.
func runChild(countsFile string, args []string) int {
	c := newCounter()
	f := &cli.Factory{
		IO:     cli.System(),
		Getenv: os.Getenv,
		Backends: func(ctx context.Context, ps []spec.Provider) (map[spec.Provider]providers.Backend, map[spec.Provider]string, error) {
			out := map[spec.Provider]providers.Backend{}
			why := map[spec.Provider]string{}
			for _, p := range ps {
				if p != spec.AWS {
					why[p] = "the benchmark reaches AWS only"
					continue
				}
				b, err := awsprovider.New(ctx, awsprovider.Options{ConfigOptions: []func(*config.LoadOptions) error{c.option()}})
				if err != nil {
					return nil, nil, err
				}
				out[p] = b
			}
			return out, why, nil
		},
		Store: func(ctx context.Context, location, fleet string) (state.Store, error) {
			return state.OpenFile(location, fleet)
		},
		Synth: func(ctx context.Context, dir string) ([]byte, error) {
			return nil, fmt.Errorf("the benchmark passes a document, not a fleet program")
		},
	}
	code := cli.RunWith(f, args, nil)
	b, err := json.Marshal(c)
	if err == nil {
		err = os.WriteFile(countsFile, b, 0o644)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: write the counts: %v\n", err)
		return 1
	}
	return code
}
