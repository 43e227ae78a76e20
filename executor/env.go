package executor

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/infra-iac/infra/operations"
	"github.com/infra-iac/infra/spec"
)

// The function's environment, documented in docs/executor.md.
const (
	// EnvState is where the state lives: s3://bucket/prefix.
	EnvState = "INFRA_STATE"
	// EnvCredentialsSecret names the Secrets Manager secret holding the
	// Scaleway credentials (and any fromEnv value), read at cold start.
	EnvCredentialsSecret = "INFRA_CREDENTIALS_SECRET"
	// EnvStopMargin overrides how long before the deadline no new action
	// starts (a Go duration such as 45s).
	EnvStopMargin = "INFRA_STOP_MARGIN"
	// EnvParallelism bounds concurrent cloud calls.
	EnvParallelism = "INFRA_PARALLELISM"
	// EnvOperations restricts the operations served: "plan,discover" for
	// a function pull requests may invoke.
	EnvOperations = "INFRA_OPERATIONS"
	// EnvLog is the call log's level, as for the command line: debug
	// writes a line per API call to the function's log, trace also each
	// request and response, secrets masked.
	EnvLog = "INFRA_LOG"
	// EnvSweepPrefix makes the function a sweeper for one prefix: it
	// refuses a sweep of names that do not start with it, which its role
	// could not delete anyway (infra executor deploy --sweep-prefix).
	EnvSweepPrefix = "INFRA_SWEEP_PREFIX"
)

// FromEnv configures the executor for Lambda from the function's
// environment. It makes no call and builds no client: the AWS backend is
// made by the first request and kept for the warm ones, so the cold start
// stays cheap. Only the credentials secret is read now, in the background.
// A setting that does not parse fails every request with the reason,
// rather than the start, whose failure Lambda reports without it.
func FromEnv(getenv func(string) string, log io.Writer) Config {
	if log == nil {
		log = io.Discard
	}
	// One writer for the handler's lines and the call log's, so that
	// neither cuts the other's.
	log = &lineWriter{w: log}
	settings := readSettings(getenv)
	calls := operations.CallLogOptions(log, settings.logLevel, nil)
	aws := &operations.AWS{Options: calls}
	creds := startCredentials(getenv(EnvCredentialsSecret), aws.ReadSecret)
	cfg := Config{
		StopMargin:  settings.margin,
		Parallelism: settings.parallelism,
		Operations:  settings.operations,
		SweepPrefix: getenv(EnvSweepPrefix),
		Function:    getenv("AWS_LAMBDA_FUNCTION_NAME"),
		Log:         log,
		Ready: func(ctx context.Context) error {
			if len(settings.problems) > 0 {
				return fmt.Errorf("the function is misconfigured: %s", strings.Join(settings.problems, "; "))
			}
			_, err := creds.wait(ctx)
			return err
		},
		Backends: envBackends(aws, creds, calls),
		Getenv: func(name string) string {
			// Only the secret: the function's own environment is visible to
			// anyone who may read its configuration, so it is no place for
			// a secret value.
			c, _ := creds.wait(context.Background())
			v, _ := c.Lookup(name)
			return v.Reveal()
		},
	}
	if location := settings.location; location != "" {
		cfg.State = func(ctx context.Context) (operations.Blobs, string, error) { return aws.StateBlobs(ctx, location) }
	}
	return cfg
}

// settings are the function's environment, parsed; problems lists what
// does not parse.
type settings struct {
	margin      time.Duration
	parallelism int
	operations  []Operation
	location    string
	logLevel    string
	problems    []string
}

func readSettings(getenv func(string) string) settings {
	var s settings
	if v := getenv(EnvStopMargin); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			s.problems = append(s.problems, fmt.Sprintf("%s=%q is not a duration such as 30s", EnvStopMargin, v))
		}
		s.margin = d
	}
	if v := getenv(EnvParallelism); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			s.problems = append(s.problems, fmt.Sprintf("%s=%q is not a positive number", EnvParallelism, v))
		}
		s.parallelism = n
	}
	if v := getenv(EnvOperations); v != "" {
		for _, o := range strings.Split(v, ",") {
			op := Operation(strings.TrimSpace(o))
			if !validOperation(op) {
				s.problems = append(s.problems, fmt.Sprintf("%s: %q is not an operation (want %s)", EnvOperations, op, joinOps(Operations)))
			}
			s.operations = append(s.operations, op)
		}
	}
	level, ok := operations.LogLevel(getenv(EnvLog))
	if !ok {
		s.problems = append(s.problems, fmt.Sprintf("%s=%q: want off, debug or trace", EnvLog, spec.Printable(getenv(EnvLog))))
	}
	s.logLevel = level
	s.location = getenv(EnvState)
	if s.location != "" && !strings.HasPrefix(s.location, "s3://") {
		s.problems = append(s.problems, fmt.Sprintf("%s=%q: want s3://bucket/prefix", EnvState, s.location))
	}
	return s
}

// envBackends builds AWS from the function's role, and Scaleway from the
// credentials secret.
func envBackends(aws *operations.AWS, creds *pendingCredentials, calls operations.BackendOptions) operations.BackendsFunc {
	return func(ctx context.Context, ps []spec.Provider) (map[spec.Provider]operations.Backend, map[spec.Provider]string, error) {
		out := map[spec.Provider]operations.Backend{}
		why := map[spec.Provider]string{}
		for _, p := range ps {
			switch p {
			case spec.AWS:
				b, err := aws.Backend(ctx)
				if err != nil {
					return nil, nil, err
				}
				out[p] = b
			case spec.Scaleway:
				c, err := creds.wait(ctx)
				if err != nil {
					return nil, nil, err
				}
				b, reason, err := scalewayBackend(ctx, c, calls)
				if err != nil {
					return nil, nil, err
				}
				if b == nil {
					why[p] = reason
					continue
				}
				out[p] = b
			case spec.GCP:
				c, err := creds.wait(ctx)
				if err != nil {
					return nil, nil, err
				}
				b, reason, err := gcpBackend(c, calls)
				if err != nil {
					return nil, nil, err
				}
				if b == nil {
					why[p] = reason
					continue
				}
				out[p] = b
			default:
				why[p] = fmt.Sprintf("this executor has no %s backend", p)
			}
		}
		return out, why, nil
	}
}

func validOperation(op Operation) bool {
	for _, o := range Operations {
		if o == op {
			return true
		}
	}
	return false
}

// scalewayBackend builds the Scaleway backend from the credentials secret's
// SCW_* values. The executor never reads Scaleway credentials from its own
// environment: anyone who can read the function's configuration can read
// that.
func scalewayBackend(ctx context.Context, c *Credentials, calls operations.BackendOptions) (operations.Backend, string, error) {
	if c == nil {
		return nil, fmt.Sprintf("no Scaleway credentials: set %s to a Secrets Manager secret holding SCW_ACCESS_KEY, SCW_SECRET_KEY and SCW_DEFAULT_PROJECT_ID", EnvCredentialsSecret), nil
	}
	access, ok1 := c.Lookup("SCW_ACCESS_KEY")
	secret, ok2 := c.Lookup("SCW_SECRET_KEY")
	if !ok1 || !ok2 {
		return nil, fmt.Sprintf("the credentials secret %s holds no SCW_ACCESS_KEY and SCW_SECRET_KEY", c.Secret), nil
	}
	project, _ := c.Lookup("SCW_DEFAULT_PROJECT_ID")
	region, _ := c.Lookup("SCW_DEFAULT_REGION")
	b, err := operations.ScalewayWithKeys(operations.ScalewayKeys{AccessKey: access.Reveal(), SecretKey: secret,
		Project: project.Reveal(), Region: region.Reveal()}, calls)
	if err != nil {
		return nil, "", err
	}
	return b, "", nil
}

// gcpBackend builds the GCP backend from the credentials secret's
// GOOGLE_CREDENTIALS_JSON (a service-account key, or a workload identity
// federation file) and GOOGLE_CLOUD_PROJECT, as scalewayBackend does for
// Scaleway: never from the function's own environment.
func gcpBackend(c *Credentials, calls operations.BackendOptions) (operations.Backend, string, error) {
	if c == nil {
		return nil, fmt.Sprintf("no GCP credentials: set %s to a Secrets Manager secret holding %s (and %s)", EnvCredentialsSecret, GCPCredentialsJSON, "GOOGLE_CLOUD_PROJECT"), nil
	}
	key, ok := c.Lookup(GCPCredentialsJSON)
	if !ok {
		return nil, fmt.Sprintf("the credentials secret %s holds no %s", c.Secret, GCPCredentialsJSON), nil
	}
	project, _ := c.Lookup("GOOGLE_CLOUD_PROJECT")
	b, err := operations.GCPWithKeys(operations.GCPKeys{CredentialsJSON: key, Project: project.Reveal()}, calls)
	if err != nil {
		return nil, "", err
	}
	return b, "", nil
}

// GCPCredentialsJSON names, in the credentials secret, the GCP credential
// configuration's JSON.
const GCPCredentialsJSON = "GOOGLE_CREDENTIALS_JSON"

// lineWriter serialises writes to the function's log: the handler and
// the call log write from concurrent calls.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
