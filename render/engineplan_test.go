package render

import (
	"context"
	"strings"
	"testing"

	"github.com/infra-iac/infra/engine"
	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/providers/memory"
	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/state"
)

// The renderers draw real plans too: the engine plans these documents
// against the memory cloud, as the engine's own tests do.
const (
	acct     = "123456789012"
	sg       = `{"address": "aws/security-group/web", "spec": {"description": "web", "ingress": [{"port": 443, "cidr": "0.0.0.0/0"}]}}`
	instance = `{"address": "aws/aws-instance/web-1", "spec": {"imageId": "latest", "instanceType": "t3.micro", "securityGroup": {"ref": "aws/security-group/web"}}}`
	queue    = `{"address": "aws/queues/jobs", "spec": {"visibilityTimeoutSec": 30}}`
	password = `{"address": "aws/secrets/db-password", "spec": {"value": {"fromEnv": "DB_PASSWORD"}}}`
	db       = `{"address": "aws/postgres/main", "spec": {"masterUsername": "dbadmin", "masterPasswordSecret": {"ref": "aws/secrets/db-password"}, "minCapacity": 0.5, "maxCapacity": 4}}`
	dbURL    = `{"address": "aws/secrets/db-url", "spec": {"value": {"composed": {"format": "postgres://dbadmin:{0}@{1}/main", "args": [{"secretValue": "aws/secrets/db-password"}, {"observed": "aws/postgres/main", "attribute": "endpoint"}]}}}}`
)

func doc(resources ...string) string {
	return `{"apiVersion": "infra/v1", "fleet": "shop", "accounts": {"aws": "` + acct + `"},
	"placement": {"aws": "eu-west-3"}, "resources": [` + strings.Join(resources, ",") + `]}`
}

// world is a memory cloud, a ledger and the environment secrets read.
type world struct {
	t      *testing.T
	cloud  *memory.Cloud
	ledger *state.Ledger
	env    map[string]string
}

func newWorld(t *testing.T) *world {
	return &world{t: t, cloud: memory.NewCloud(map[spec.Provider]string{spec.AWS: acct}), ledger: state.NewLedger(), env: map[string]string{}}
}

func (w *world) engine() *engine.Engine {
	return engine.New(engine.Options{Backends: map[spec.Provider]providers.Backend{spec.AWS: w.cloud.Backend(spec.AWS)},
		Getenv: func(k string) string { return w.env[k] }})
}

// plan plans the document against the world.
func (w *world) plan(document string) *engine.Plan {
	w.t.Helper()
	d, err := spec.DecodeDocument([]byte(document))
	if err != nil {
		w.t.Fatal(err)
	}
	m, diags := spec.Compile(d)
	p, err := w.engine().Plan(context.Background(), m, diags, w.ledger, engine.PlanOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	return p
}

// apply plans and applies the document, keeping the ledger.
func (w *world) apply(document string) *engine.Plan {
	w.t.Helper()
	p := w.plan(document)
	store := &ledgerStore{w: w}
	if _, err := w.engine().Apply(context.Background(), p, engine.ApplyOptions{Store: store}); err != nil {
		w.t.Fatal(err)
	}
	return p
}

// ledgerStore keeps the ledger in the world; the cache is not needed.
type ledgerStore struct{ w *world }

func (s *ledgerStore) Lock(context.Context, state.LockInfo) (state.Lock, error) { return nil, nil }
func (s *ledgerStore) Unlock(context.Context, string) error                     { return nil }
func (s *ledgerStore) LoadLedger(context.Context) (*state.Ledger, error)        { return s.w.ledger, nil }
func (s *ledgerStore) SaveLedger(_ context.Context, l *state.Ledger) error {
	s.w.ledger = l
	return nil
}
func (s *ledgerStore) LoadCache(context.Context) (*state.Cache, error) { return &state.Cache{}, nil }
func (s *ledgerStore) SaveCache(context.Context, *state.Cache) error   { return nil }
func (s *ledgerStore) Where() string                                   { return "memory" }
