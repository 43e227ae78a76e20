// Command bench measures infra against moto_server on loopback: check,
// plan against an empty account, a fresh apply, a plan with no changes,
// drift with none, a plan and an apply with 1% changed, and destroy, for fleets of 10, 100 and 1,000
// resources, an import of 500 resources no fleet owns, and (with -scale N)
// one fleet of N of four kinds, and (with -estate N) examples/estate's kinds in a fleet of about N; each phase is the real command line in a child process, whose
// wall time, peak RSS, CPU time and AWS API calls (counted by SDK middleware) are
// recorded, beside the phase's minimum calls (minimum.go). Then the same engine applies 200 independent resources at
// parallelism 8 and at 1, in the same run. It writes a Markdown report to
// bench/results/<date>.md.
//
//	go run ./bench                       # everything (about 15 minutes here)
//	go run ./bench -sizes 10,100 -runs 3 # a quicker look
//	go run ./bench -sizes 100 -runs 1 -independent 0 -import 0 -scale 10000
//	go run ./bench -sizes '' -independent 0 -import 0 -estate 100
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/infra-iac/infra/internal/faultproxy"
	"github.com/infra-iac/infra/internal/moto"
	"github.com/infra-iac/infra/spec"
)

const (
	region = "eu-west-3"
	// benchAMI is any id: moto accepts a made-up AMI, and a fixed one
	// keeps DescribeImages (seconds on moto's first call) out of the
	// measure.
	benchAMI = "ami-0abcdef1234567890"
)

func main() {
	if len(os.Args) > 2 && os.Args[1] == "child" {
		os.Exit(runChild(os.Args[2], os.Args[3:]))
	}
	os.Exit(run())
}

type options struct {
	sizes       []int
	runs        int
	out         string
	independent int
	latency     time.Duration
	concRuns    int
	imports     int
	scale       int
	estate      int
}

func run() int {
	var o options
	sizes := flag.String("sizes", "10,100,1000", "fleet sizes, comma-separated")
	flag.IntVar(&o.runs, "runs", 3, "runs per size; each figure is the median")
	flag.StringVar(&o.out, "out", "bench/results", "directory of the Markdown report")
	flag.IntVar(&o.independent, "independent", 200, "independent resources for the concurrency measure; 0 skips it")
	flag.DurationVar(&o.latency, "latency", 50*time.Millisecond, "round trip added by a proxy in the second concurrency measure; 0 skips it")
	flag.IntVar(&o.concRuns, "conc-runs", 3, "runs of each concurrency measure")
	flag.IntVar(&o.imports, "import", 500, "resources no fleet owns for the import measure; 0 skips it")
	flag.IntVar(&o.scale, "scale", 0, "resources of the scale measure (check, fresh apply, no-change plan, apply of 1% changed, one run); 0 skips it")
	flag.IntVar(&o.estate, "estate", 0, "resources of the estate measure (examples/estate's kinds: fresh apply, no-change plan, one run); 0 skips it")
	flag.Parse()
	for _, s := range strings.Split(*sizes, ",") {
		if strings.TrimSpace(s) == "" && strings.TrimSpace(*sizes) == "" {
			break // -sizes "": no fleet sizes, only the other measures
		}
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < unitSize {
			fmt.Fprintf(os.Stderr, "bench: -sizes: %q is not a size of at least %d\n", s, unitSize)
			return 64
		}
		o.sizes = append(o.sizes, n)
	}
	if err := bench(o); err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		return 1
	}
	return 0
}

// phase is one measured command.
type phase struct {
	name string
	args func(doc, changed, state string) []string
	// exit is the code the command must end with.
	exit int
}

var phases = []phase{
	{"check", func(doc, _, _ string) []string { return []string{"check", "--fleet", doc} }, 0},
	{"plan (empty account)", func(doc, _, st string) []string {
		return []string{"plan", "--detailed-exitcode", "--fleet", doc, "--state", st}
	}, 2},
	{"apply (fresh)", func(doc, _, st string) []string { return []string{"apply", "--yes", "--fleet", doc, "--state", st} }, 0},
	{"plan (no changes)", func(doc, _, st string) []string {
		return []string{"plan", "--detailed-exitcode", "--fleet", doc, "--state", st}
	}, 0},
	// Drift reads what a no-change plan reads; it compares with the cache
	// instead of the document, and a fleet just applied has none.
	{"drift (none)", func(doc, _, st string) []string {
		return []string{"drift", "--detailed-exitcode", "--fleet", doc, "--state", st}
	}, 0},
	{"plan (1% changed)", func(_, changed, st string) []string {
		return []string{"plan", "--detailed-exitcode", "--fleet", changed, "--state", st}
	}, 2},
	{"apply (1% changed)", func(_, changed, st string) []string {
		return []string{"apply", "--yes", "--fleet", changed, "--state", st}
	}, 0},
	{"destroy", func(doc, _, st string) []string { return []string{"destroy", "--yes", "--fleet", doc, "--state", st} }, 0},
}

// sample is one measured command.
type sample struct {
	wall  time.Duration
	rssKB int64
	// cpu is the child's user and system CPU time: infra's own work, the
	// emulator's being another process.
	cpu      time.Duration
	ops      map[string]int
	attempts map[string]int
}

// emulator starts moto and returns it with the measured commands'
// environment. moto's server (werkzeug) closes every connection after one
// answer, which AWS does not: each call would pay a TCP dial, about a
// sixth of infra's CPU per call. The commands reach it through a proxy
// that keeps their connections alive, as AWS's endpoints do; the proxy's
// own dials to moto are the bench's, not infra's.
func emulator(ctx context.Context, work string) (*moto.Server, []string, func(), error) {
	srv, err := moto.Start(ctx, work)
	if err != nil {
		return nil, nil, nil, err
	}
	front, err := faultproxy.Start(srv.URL, faultproxy.Options{})
	if err != nil {
		srv.Stop()
		return nil, nil, nil, err
	}
	env := append(append(os.Environ(), srv.Env()...), moto.Endpoint(front.URL)...)
	env = append(env, "BENCH_PASSWORD=bench-password-1", "NO_COLOR=1")
	return srv, env, func() { front.Close(); srv.Stop() }, nil
}

func bench(o options) error {
	ctx := context.Background()
	work, err := os.MkdirTemp("", "infra-bench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	self, err := os.Executable()
	if err != nil {
		return err
	}
	srv, env, stop, err := emulator(ctx, work)
	if err != nil {
		return err
	}
	defer stop()
	rep := &report{started: time.Now(), opts: o, commit: gitCommit()}
	// moto is slow on each service's first call; one small unmeasured
	// round warms every service the phases use.
	fmt.Fprintln(os.Stderr, "warming the emulator …")
	if _, err := measureSize(self, env, srv, work, unitSize, 1, true); err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}
	for _, n := range o.sizes {
		fmt.Fprintf(os.Stderr, "fleet of %d …\n", n)
		res, err := measureSize(self, env, srv, work, n, o.runs, false)
		if err != nil {
			return fmt.Errorf("fleet of %d: %w", n, err)
		}
		rep.sizes = append(rep.sizes, res)
	}
	if o.scale > 0 {
		fmt.Fprintf(os.Stderr, "scale: a fleet of %d …\n", o.scale)
		if err := srv.Reset(); err != nil {
			return err
		}
		// A failed phase is reported with the ones before it rather than
		// losing them.
		if rep.scaled, err = measureScale(self, env, work, o.scale); err != nil {
			fmt.Fprintf(os.Stderr, "scale: %v\n", err)
		}
	}
	if o.estate > 0 {
		fmt.Fprintf(os.Stderr, "estate: examples/estate's kinds, about %d resources …\n", o.estate)
		if err := srv.Reset(); err != nil {
			return err
		}
		if rep.estated, err = measureEstate(self, env, work, o.estate); err != nil {
			fmt.Fprintf(os.Stderr, "estate: %v\n", err)
		}
	}
	if o.imports > 0 {
		fmt.Fprintf(os.Stderr, "import of %d resources no fleet owns …\n", o.imports)
		if err := srv.Reset(); err != nil {
			return err
		}
		if rep.imp, err = measureImport(self, env, work, o.imports); err != nil {
			return fmt.Errorf("import: %w", err)
		}
	}
	if o.independent > 0 {
		fmt.Fprintf(os.Stderr, "concurrency: %d independent resources …\n", o.independent)
		srv.Setenv()
		os.Setenv("BENCH_PASSWORD", "bench-password-1")
		for _, lat := range []time.Duration{0, o.latency} {
			if lat < 0 || (lat == 0 && len(rep.conc) > 0) {
				continue
			}
			c, err := measureConcurrency(ctx, srv, work, o.independent, o.concRuns, lat)
			if err != nil {
				return fmt.Errorf("concurrency: %w", err)
			}
			rep.conc = append(rep.conc, c)
			if o.latency == 0 {
				break
			}
		}
	}
	return rep.write(o.out)
}

// sizeResult is every phase of one fleet size, each run.
type sizeResult struct {
	n      int
	fleet  fleetPair
	byName map[string][]sample
}

func measureSize(self string, env []string, srv *moto.Server, work string, n, runs int, quiet bool) (*sizeResult, error) {
	doc, changed := fleetDocument(n, 0), fleetDocument(n, 0.01)
	res := &sizeResult{n: n, fleet: fleetPair{doc, changed}, byName: map[string][]sample{}}
	dir := filepath.Join(work, fmt.Sprintf("n%d", n))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	docPath, changedPath := filepath.Join(dir, "fleet.json"), filepath.Join(dir, "fleet-changed.json")
	if err := writeDoc(docPath, doc); err != nil {
		return nil, err
	}
	if err := writeDoc(changedPath, changed); err != nil {
		return nil, err
	}
	for r := 0; r < runs; r++ {
		if err := srv.Reset(); err != nil {
			return nil, err
		}
		st := filepath.Join(dir, fmt.Sprintf("state-%d", r))
		for _, ph := range phases {
			s, err := measure(self, env, dir, ph.args(docPath, changedPath, st), ph.exit)
			if err != nil {
				return nil, fmt.Errorf("%s (run %d): %w", ph.name, r+1, err)
			}
			if !quiet {
				fmt.Fprintf(os.Stderr, "  run %d %s\n", r+1, progress(ph.name, s, res.fleet))
			}
			res.byName[ph.name] = append(res.byName[ph.name], s)
		}
	}
	return res, nil
}

func writeDoc(path string, doc *spec.Document) error {
	b, err := spec.EncodeDocument(doc)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// measure runs one child command and reads what it cost.
func measure(self string, env []string, dir string, args []string, wantExit int) (sample, error) {
	counts := filepath.Join(dir, "counts.json")
	os.Remove(counts)
	logf, err := os.Create(filepath.Join(dir, "child.log"))
	if err != nil {
		return sample{}, err
	}
	defer logf.Close()
	cmd := exec.Command(self, append([]string{"child", counts}, args...)...)
	cmd.Env = env
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logf, logf
	start := time.Now()
	err = cmd.Run()
	wall := time.Since(start)
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			return sample{}, err
		}
		code = ee.ExitCode()
	}
	if code != wantExit {
		tail, _ := os.ReadFile(logf.Name())
		if len(tail) > 3000 {
			tail = tail[len(tail)-3000:]
		}
		return sample{}, fmt.Errorf("infra %s exited %d, want %d:\n%s", strings.Join(args, " "), code, wantExit, tail)
	}
	s := sample{wall: wall}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		s.rssKB = ru.Maxrss
		s.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	var c counter
	if b, err := os.ReadFile(counts); err == nil {
		if err := json.Unmarshal(b, &c); err != nil {
			return sample{}, fmt.Errorf("read the counts: %w", err)
		}
	}
	s.ops, s.attempts = c.Ops, c.Attempts
	return s, nil
}

func gitCommit() string {
	out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}

func median[T int | int64 | time.Duration](xs []T) T {
	s := append([]T(nil), xs...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}
