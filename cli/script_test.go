package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/infra-iac/infra/internal/moto"
	"github.com/infra-iac/infra/internal/testbin"
	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/providers/memory"
	"github.com/infra-iac/infra/spec"
)

// The acceptance scripts under testdata/script run `infra` in-process,
// against the memory cloud saved in $INFRA_TEST_CLOUD so that one script's
// commands share one cloud. Only this test binary knows that variable; the
// real command has no way to reach the memory driver.
func TestMain(m *testing.M) {
	code := testscript.RunMain(m, map[string]func() int{
		"infra": runTestInfra,
	})
	moto.StopShared()
	testbin.Remove()
	os.Exit(code)
}

func runTestInfra() int {
	path := os.Getenv("INFRA_TEST_CLOUD")
	accounts := map[spec.Provider]string{spec.AWS: "123456789012", spec.Scaleway: "11111111-2222-3333-4444-555555555555"}
	if a := os.Getenv("INFRA_TEST_AWS_ACCOUNT"); a != "" {
		accounts[spec.AWS] = a
	}
	cloud, err := memory.Load(path, accounts)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	f := DefaultFactory()
	f.Backends = func(ctx context.Context, ps []spec.Provider) (map[spec.Provider]providers.Backend, map[spec.Provider]string, error) {
		out := map[spec.Provider]providers.Backend{}
		for _, p := range ps {
			out[p] = cloud.Backend(p)
		}
		return out, map[spec.Provider]string{}, nil
	}
	if os.Getenv("INFRA_TEST_NO_CREDENTIALS") != "" {
		// A run with no credentials for any cloud: building a backend fails.
		f.Backends = func(ctx context.Context, ps []spec.Provider) (map[spec.Provider]providers.Backend, map[spec.Provider]string, error) {
			return nil, nil, errors.New("no credentials for any cloud in this run")
		}
	}
	code := RunWith(f, os.Args[1:], nil)
	if err := cloud.Save(path); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return code
}

func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join("..", "testdata", "script"),
		RequireExplicitExec: true,
		UpdateScripts:       os.Getenv("INFRA_UPDATE_GOLDEN") != "",
		Setup: func(env *testscript.Env) error {
			env.Setenv("INFRA_TEST_CLOUD", filepath.Join(env.WorkDir, ".cloud.json"))
			env.Setenv("NO_COLOR", "")
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){"cloud": outOfBand},
	})
}

// outOfBand changes the memory cloud behind infra's back, as a person in
// the console would:
//
//	cloud set ADDRESS REGION FIELD JSON   sets a field of a resource
//	cloud owner ADDRESS REGION FLEET      re-tags it for another fleet
//	cloud delete ADDRESS REGION           deletes it
//	cloud make ADDRESS REGION FIELDS      makes one with no ownership mark, FIELDS a JSON object
func outOfBand(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 3 {
		ts.Fatalf("usage: cloud set|owner|delete|make ADDRESS REGION …")
	}
	path := ts.Getenv("INFRA_TEST_CLOUD")
	cloud, err := memory.Load(path, map[spec.Provider]string{spec.AWS: "123456789012"})
	ts.Check(err)
	a, err := spec.ParseAddress(args[1])
	ts.Check(err)
	if args[0] == "make" && len(args) == 4 {
		fields := map[string]any{}
		ts.Check(json.Unmarshal([]byte(args[3]), &fields))
		cloud.Put(a.Provider, a.Kind, providers.Resource{Name: a.Name, Region: args[2], Fields: fields})
		ts.Check(cloud.Save(path))
		return
	}
	r, ok := cloud.Get(a.Provider, a.Kind, args[2], a.Name)
	if !ok {
		ts.Fatalf("no %s in %s", a, args[2])
	}
	switch {
	case args[0] == "set" && len(args) == 5:
		var v any
		ts.Check(json.Unmarshal([]byte(args[4]), &v))
		r.Fields[args[3]] = v
		cloud.Put(a.Provider, a.Kind, r)
	case args[0] == "owner" && len(args) == 4:
		r.Owner = args[3]
		cloud.Put(a.Provider, a.Kind, r)
	case args[0] == "delete":
		cloud.Remove(a.Provider, a.Kind, args[2], a.Name)
	default:
		ts.Fatalf("usage: cloud set|owner|delete|make ADDRESS REGION …")
	}
	ts.Check(cloud.Save(path))
}
