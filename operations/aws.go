package operations

import (
	"context"
	"sync"

	awsprovider "github.com/infra-iac/infra/providers/aws"
	"github.com/infra-iac/infra/providers/aws/executordeploy"
	gcpprovider "github.com/infra-iac/infra/providers/gcp"
	scwprovider "github.com/infra-iac/infra/providers/scaleway"
	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/state"
)

// AWS is one AWS backend from the SDK's default configuration, made on
// first use and shared by everything a process reaches AWS for: the
// clouds, the state, a secret. The zero value is ready.
type AWS struct {
	// Options are the call log's (Log, Trace): the executor's INFRA_LOG.
	Options BackendOptions
	mu      sync.Mutex
	b       *awsprovider.Backend
}

func (a *AWS) get(ctx context.Context) (*awsprovider.Backend, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.b != nil {
		return a.b, nil
	}
	b, err := awsprovider.New(ctx, awsprovider.Options{Log: a.Options.Log, Trace: a.Options.Trace})
	if err != nil {
		return nil, err
	}
	a.b = b
	return b, nil
}

// Backend returns the backend.
func (a *AWS) Backend(ctx context.Context) (Backend, error) { return a.get(ctx) }

// ReadSecret reads a Secrets Manager secret's string.
func (a *AWS) ReadSecret(ctx context.Context, id string) (spec.Sensitive, error) {
	b, err := a.get(ctx)
	if err != nil {
		return spec.Sensitive{}, err
	}
	return b.ReadSecretString(ctx, id)
}

// StateBlobs opens the object store of a state location
// (s3://bucket/prefix) and returns the prefix within it.
func (a *AWS) StateBlobs(ctx context.Context, location string) (state.Blobs, string, error) {
	b, err := a.get(ctx)
	if err != nil {
		return nil, "", err
	}
	blobs, prefix, err := b.OpenStateBlobs(location)
	if err != nil {
		return nil, "", err
	}
	return blobs, prefix, nil
}

// ScalewayKeys are explicit Scaleway credentials (the executor's secret).
type ScalewayKeys = scwprovider.Keys

// ScalewayWithKeys builds the Scaleway backend from explicit keys, its
// calls logged as o says.
func ScalewayWithKeys(k ScalewayKeys, o BackendOptions) (Backend, error) {
	return scwprovider.NewWithKeys(k, scwprovider.Options{Progress: o.Progress, Log: o.Log, Trace: o.Trace})
}

// GCPKeys are explicit GCP credentials (the executor's secret).
type GCPKeys = gcpprovider.Keys

// GCPWithKeys builds the GCP backend from explicit credentials, tuned by
// o (the call log).
func GCPWithKeys(k GCPKeys, o BackendOptions) (Backend, error) {
	return gcpprovider.NewWithKeys(k, gcpprovider.Options{Log: o.Log, Trace: o.Trace})
}

// Invoker sends one payload to a Lambda function and returns its answer.
type Invoker interface {
	Invoke(ctx context.Context, function string, payload []byte) ([]byte, error)
}

// NewLambdaInvoker invokes with the SDK's default configuration, its
// calls logged as o says.
func NewLambdaInvoker(ctx context.Context, o BackendOptions) (Invoker, error) {
	return awsprovider.NewInvoker(ctx, awsprovider.Options{Log: o.Log, Trace: o.Trace})
}

// The executor's deployment: what to deploy, and what was.
type (
	ExecutorSpec     = executordeploy.Spec
	ExecutorDeployed = executordeploy.Deployed
)

// DeployExecutor creates or updates the executor in the account and
// region of the default AWS credentials, its calls logged as o says;
// running it again changes only what differs.
func DeployExecutor(ctx context.Context, s ExecutorSpec, o BackendOptions) (*ExecutorDeployed, error) {
	b, err := awsprovider.New(ctx, awsprovider.Options{Log: o.Log, Trace: o.Trace})
	if err != nil {
		return nil, err
	}
	return executordeploy.Deploy(ctx, b, s)
}
