package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"time"
)

type report struct {
	started time.Time
	opts    options
	commit  string
	sizes   []*sizeResult
	conc    []*concResult
	imp     *importResult
	scaled  *onceResult
	estated *onceResult
}

func (r *report) write(dir string) error {
	var b strings.Builder
	date := r.started.Format("2006-01-02")
	fmt.Fprintf(&b, "# infra benchmark, %s\n\n", date)
	fmt.Fprintf(&b, "Written by `go run ./bench` (bench/main.go). Every figure is the median of %d runs unless it says otherwise; the spread is min–max.\n\n", r.opts.runs)
	r.machine(&b)
	for _, s := range r.sizes {
		r.size(&b, s)
	}
	r.minimums(&b)
	r.scale(&b)
	r.estate(&b)
	r.memory(&b)
	r.concurrency(&b)
	r.imports(&b)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	path := filepath.Join(dir, date+".md")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "wrote %s\n", path)
	return nil
}

func (r *report) machine(b *strings.Builder) {
	cpu := "unknown"
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				cpu = strings.TrimSpace(v)
				break
			}
		}
	}
	load, _ := os.ReadFile("/proc/loadavg")
	kernel, _ := exec.Command("uname", "-sr").Output()
	motoV, _ := exec.Command("python3", "-c", "import moto; print(moto.__version__)").Output()
	sdk := "unknown"
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/aws/aws-sdk-go-v2" {
				sdk = d.Version
			}
		}
	}
	fmt.Fprintf(b, "## Machine and versions\n\n")
	fmt.Fprintf(b, "| | |\n|---|---|\n")
	fmt.Fprintf(b, "| CPU | %d × %s |\n", runtime.NumCPU(), cpu)
	fmt.Fprintf(b, "| OS | %s %s |\n", strings.TrimSpace(string(kernel)), runtime.GOARCH)
	fmt.Fprintf(b, "| load average at the end (1, 5, 15 min) | %s |\n", strings.Join(strings.Fields(string(load))[:3], ", "))
	fmt.Fprintf(b, "| Go | %s |\n", runtime.Version())
	fmt.Fprintf(b, "| aws-sdk-go-v2 | %s |\n", sdk)
	fmt.Fprintf(b, "| moto | %s (moto_server on loopback) |\n", strings.TrimSpace(string(motoV)))
	fmt.Fprintf(b, "| infra commit | %s |\n", r.commit)
	fmt.Fprintf(b, "| started | %s |\n\n", r.started.UTC().Format(time.RFC3339))
	sizes := make([]string, len(r.opts.sizes))
	for i, n := range r.opts.sizes {
		sizes[i] = fmt.Sprint(n)
	}
	if len(sizes) == 0 {
		sizes = []string{"''"}
	}
	fmt.Fprintf(b, "**Command:** `go run ./bench -sizes %s -runs %d -independent %d -latency %s -conc-runs %d -import %d -scale %d -estate %d` (or `bench/run.sh` with the same flags).\n\n",
		strings.Join(sizes, ","), r.opts.runs, r.opts.independent, r.opts.latency, r.opts.concRuns, r.opts.imports, r.opts.scale, r.opts.estate)
	fmt.Fprintf(b, "Each phase runs the infra command line in a child process (`cli.RunWith`, the code of `infra`, with an SDK middleware counting calls), against one moto_server reset before each run, reached through a proxy that keeps the connections alive (moto closes each after one answer, AWS does not):\n\n")
	fmt.Fprintf(b, "```sh\ninfra check --fleet fleet.json\ninfra plan --detailed-exitcode --fleet fleet.json --state DIR           # empty account: exit 2\n"+
		"infra apply --yes --fleet fleet.json --state DIR\ninfra plan --detailed-exitcode --fleet fleet.json --state DIR           # no changes: exit 0\n"+
		"infra drift --detailed-exitcode --fleet fleet.json --state DIR          # none: exit 0\n"+
		"infra plan --detailed-exitcode --fleet fleet-changed.json --state DIR   # 1%% changed: exit 2\n"+
		"infra apply --yes --fleet fleet-changed.json --state DIR\ninfra destroy --yes --fleet fleet.json --state DIR\n```\n\n")
	fmt.Fprintf(b, "The fleet: units of ten resources over seven AWS kinds — a security group and two instances that reference it, two queues, a bucket, a password secret, a configuration secret composed from a queue's URL and the bucket's ARN, an IAM user, an image registry. \"1%% changed\" changes one queue in every ten units.\n\n")
	fmt.Fprintf(b, "Wall time is the child process from start to exit. Peak RSS is the child's maximum resident set, and CPU per call its user and system CPU time (getrusage) divided by its calls: infra's own work, moto being another process. The minimum is the model of bench/minimum.go for each phase (its rows are printed for the no-change plan below and for each scale phase). Calls are operations the code made (each counted once, before the SDK's retry loop); attempts are requests sent (after it), so retries are the difference.\n\n")
}

func (r *report) size(b *strings.Builder, s *sizeResult) {
	fmt.Fprintf(b, "## %d resources\n\n", s.n)
	fmt.Fprintf(b, "| phase | wall time | peak RSS | API calls | attempts | minimum | ÷ | CPU per call |\n|---|---|---|---|---|---|---|---|\n")
	for _, ph := range phases {
		ss := s.byName[ph.name]
		var walls []time.Duration
		var rss []int64
		var ops, atts []int
		var cpus []time.Duration
		for _, x := range ss {
			walls = append(walls, x.wall)
			rss = append(rss, x.rssKB)
			ops = append(ops, total(x.ops))
			atts = append(atts, total(x.attempts))
			if n := total(x.ops); n > 0 {
				cpus = append(cpus, x.cpu/time.Duration(n))
			}
		}
		least, ratio := minCells(ph.name, s.fleet, median(ops))
		perCall := "—"
		if len(cpus) > 0 {
			perCall = ms(median(cpus))
		}
		fmt.Fprintf(b, "| %s | %s (%s–%s) | %.1f MB | %d | %d | %s | %s | %s |\n", ph.name, secs(median(walls)), secs(minOf(walls)), secs(maxOf(walls)),
			float64(median(rss))/1024, median(ops), median(atts), least, ratio, perCall)
	}
	fmt.Fprintf(b, "\n<details><summary>API calls per service and operation (run 1)</summary>\n\n")
	for _, ph := range phases {
		ss := s.byName[ph.name]
		if len(ss) == 0 || len(ss[0].ops) == 0 {
			continue
		}
		fmt.Fprintf(b, "- **%s** (%d): %s\n", ph.name, total(ss[0].ops), breakdown(ss[0].ops))
	}
	fmt.Fprintf(b, "\n</details>\n\n")
}

func (r *report) minimums(b *strings.Builder) {
	if len(r.sizes) == 0 {
		return
	}
	fmt.Fprintf(b, "## Measured ÷ minimum API calls (plan with no changes)\n\n")
	fmt.Fprintf(b, "The minimum is the fewest calls the APIs allow to observe the fleet (docs/performance.md, \"API calls\"): every listing's pages, and a read only where no listing or batch API carries the field.\n\n")
	fmt.Fprintf(b, "| resources | measured | minimum | measured ÷ minimum | minimum with any API | measured ÷ that |\n|---|---|---|---|---|---|\n")
	for _, s := range r.sizes {
		var ops []int
		for _, x := range s.byName["plan (no changes)"] {
			ops = append(ops, total(x.ops))
		}
		least, anyAPI := minTotal(minimum(censusOf(s.fleet.doc)))
		m := float64(median(ops))
		fmt.Fprintf(b, "| %d | %d | %d | %.2f | %d | %.2f |\n", s.n, median(ops), least, m/float64(least), anyAPI, m/float64(anyAPI))
	}
	if len(r.sizes) > 0 {
		last := r.sizes[len(r.sizes)-1]
		fmt.Fprintf(b, "\nThe minimum for %d resources (the minimum uses the permissions infra asks for; \"with any API\" lists IAM users with GetAccountAuthorizationDetails):\n\n| calls | with any API | for |\n|---|---|---|\n", last.n)
		for _, row := range minimum(censusOf(last.fleet.doc)) {
			anyCalls := row.calls
			if row.anyCalls > 0 {
				anyCalls = row.anyCalls
			}
			fmt.Fprintf(b, "| %d | %d | %s |\n", row.calls, anyCalls, row.what)
		}
	}
	fmt.Fprintln(b)
}

func (r *report) memory(b *strings.Builder) {
	if len(r.sizes) < 2 {
		return
	}
	fmt.Fprintf(b, "## Memory against N\n\n| phase |")
	for _, s := range r.sizes {
		fmt.Fprintf(b, " %d |", s.n)
	}
	fmt.Fprintf(b, "\n|---|")
	for range r.sizes {
		fmt.Fprintf(b, "---|")
	}
	fmt.Fprintln(b)
	for _, ph := range phases {
		fmt.Fprintf(b, "| %s |", ph.name)
		for _, s := range r.sizes {
			var rss []int64
			for _, x := range s.byName[ph.name] {
				rss = append(rss, x.rssKB)
			}
			fmt.Fprintf(b, " %.1f MB |", float64(median(rss))/1024)
		}
		fmt.Fprintln(b)
	}
	fmt.Fprintln(b)
}

func (r *report) concurrency(b *strings.Builder) {
	if len(r.conc) == 0 {
		return
	}
	fmt.Fprintf(b, "## Concurrency: a fresh apply of %d independent resources\n\n", r.conc[0].n)
	fmt.Fprintf(b, "The same engine (in process, `engine.Options.Parallelism`), the same plan, on an emptied emulator each time; the parallelisms alternate which goes first. %d runs each; wall time of the apply alone.\n\n", r.opts.concRuns)
	fmt.Fprintf(b, "| added round trip | parallelism 8 | parallelism 1 | speed-up (1 ÷ 8) | calls |\n|---|---|---|---|---|\n")
	for _, c := range r.conc {
		p8, p1 := median(c.wall[8]), median(c.wall[1])
		lat := "none (loopback)"
		if c.latency > 0 {
			lat = c.latency.String() + " per call (proxy)"
		}
		fmt.Fprintf(b, "| %s | %s | %s | %.1f× | %d |\n", lat, secs(p8), secs(p1), float64(p1)/float64(p8), median(c.calls[8]))
	}
	fmt.Fprintln(b)
}

func secs(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }

// minCells is a phase's minimum and measured ÷ minimum as table cells,
// empty where the model has no minimum and "—" where the minimum is 0.
func minCells(phase string, f fleetPair, calls int) (least, ratio string) {
	rows, ok := phaseMinimum(phase, f)
	if !ok {
		return "", ""
	}
	m, _ := minTotal(rows)
	if m == 0 {
		return "0", "—"
	}
	return fmt.Sprint(m), fmt.Sprintf("%.2f", float64(calls)/float64(m))
}

// cpuPerCall is a sample's CPU time divided by its calls, "—" with none.
func cpuPerCall(s sample) string {
	if n := total(s.ops); n > 0 {
		return ms(s.cpu / time.Duration(n))
	}
	return "—"
}

// progress is one measured phase as the harness prints it while it runs.
func progress(phase string, s sample, f fleetPair) string {
	least, ratio := minCells(phase, f, total(s.ops))
	against := fmt.Sprintf("minimum %s, ÷ %s", least, ratio)
	if least == "" {
		against = "no minimum modelled"
	}
	return fmt.Sprintf("%-22s %8s %7.1f MB %6d calls (%s) %s CPU per call", phase,
		s.wall.Round(time.Millisecond), float64(s.rssKB)/1024, total(s.ops), against, cpuPerCall(s))
}

func minOf[T int | int64 | time.Duration](xs []T) T {
	var m T
	for i, x := range xs {
		if i == 0 || x < m {
			m = x
		}
	}
	return m
}

func maxOf[T int | int64 | time.Duration](xs []T) T {
	var m T
	for i, x := range xs {
		if i == 0 || x > m {
			m = x
		}
	}
	return m
}

// breakdown is a sample's calls per service and operation.
func breakdown(ops map[string]int) string {
	var parts []string
	for _, k := range sortedKeys(ops) {
		parts = append(parts, fmt.Sprintf("%s %d", k, ops[k]))
	}
	return strings.Join(parts, ", ")
}
