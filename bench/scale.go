package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/infra-iac/infra/spec"
)

// scaleKinds are the kinds of the scale fleet, a quarter each: the ones
// the Tagging API returns, so that ownership and tags cost its pages.
var scaleKinds = []spec.Kind{spec.Queues, spec.ObjectStore, spec.Secrets, spec.SecurityGroup}

// scaleDocument is the scale fleet of n resources (rounded down to a
// multiple of four), with no references, declared as a fleet would be:
// three tags each; a visibility timeout on half the queues, versioning on
// a quarter of the buckets, a description on half the secrets, one ingress
// rule on every group. With changed, one resource of each kind in a
// hundred (1%) differs in one field: a queue's timeout, a bucket's
// versioning turned off, a secret's description, a group's added rule.
func scaleDocument(n int, changed bool) *spec.Document {
	doc := newDocument("scale")
	tiers := []string{"web", "batch", "data"}
	for i := 0; i < n/len(scaleKinds); i++ {
		// i%100 == 0 is even and a multiple of four, so each changed
		// resource is one that declares the field it changes.
		change := changed && i%100 == 0
		tags := func() map[string]any {
			return map[string]any{"team": "scale", "tier": tiers[i%len(tiers)], "cost-centre": fmt.Sprint(100 + i%7)}
		}
		add := func(k spec.Kind, s map[string]any) {
			doc.Resources = append(doc.Resources, spec.Resource{Address: fmt.Sprintf("aws/%s/scale-%s-%05d", k, k, i), Spec: s})
		}
		q := map[string]any{"tags": tags()}
		if i%2 == 0 {
			q["visibilityTimeoutSec"] = 30.0
			if change {
				q["visibilityTimeoutSec"] = 45.0
			}
		}
		add(spec.Queues, q)
		b := map[string]any{"forceDestroy": true, "tags": tags()}
		if i%4 == 0 {
			b["versioning"] = !change
		}
		add(spec.ObjectStore, b)
		s := map[string]any{"value": map[string]any{"fromEnv": "BENCH_PASSWORD"}, "tags": tags()}
		if i%2 == 0 {
			s["description"] = "scale secret"
			if change {
				s["description"] = "scale secret, rotated"
			}
		}
		add(spec.Secrets, s)
		ingress := []any{map[string]any{"port": 443.0, "cidr": "10.0.0.0/8"}}
		if change {
			ingress = append(ingress, map[string]any{"port": 8443.0, "cidr": "10.0.0.0/8"})
		}
		add(spec.SecurityGroup, map[string]any{"description": "scale group", "ingress": ingress, "tags": tags()})
	}
	return doc
}

// scalePhases are the scale measure's phases, in order, on one emptied
// emulator: the fresh apply sets the fleet up and is measured too.
var scalePhases = phasesNamed("check", "apply (fresh)", "plan (no changes)", "apply (1% changed)")

func phasesNamed(names ...string) []phase {
	var out []phase
	for _, name := range names {
		for _, ph := range phases {
			if ph.name == name {
				out = append(out, ph)
			}
		}
	}
	return out
}

// onceResult is one run of a measure whose phases run once, in order, on
// one emptied emulator (scale, estate).
type onceResult struct {
	n       int
	fleet   fleetPair
	phases  []phase
	samples []sample // one per phase, up to a failed one
	// failed is the phase that failed, and why, so that the phases before
	// it (a fresh apply of 10,000 is long) are still reported.
	failed string
}

func measureScale(self string, env []string, work string, n int) (*onceResult, error) {
	return measureOnce(self, env, filepath.Join(work, fmt.Sprintf("scale%d", n)), n, fleetPair{scaleDocument(n, false), scaleDocument(n, true)}, scalePhases)
}

// measureOnce runs each phase once on the fleet f, in dir.
func measureOnce(self string, env []string, dir string, n int, f fleetPair, phases []phase) (*onceResult, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	res := &onceResult{n: n, fleet: f, phases: phases}
	docPath, changedPath := filepath.Join(dir, "fleet.json"), filepath.Join(dir, "fleet-changed.json")
	if err := writeDoc(docPath, res.fleet.doc); err != nil {
		return nil, err
	}
	if err := writeDoc(changedPath, res.fleet.changed); err != nil {
		return nil, err
	}
	st := filepath.Join(dir, "state")
	for _, ph := range phases {
		s, err := measure(self, env, dir, ph.args(docPath, changedPath, st), ph.exit)
		if err != nil {
			why, _, _ := strings.Cut(err.Error(), "\n")
			res.failed = ph.name + ": " + why
			return res, fmt.Errorf("%s: %w", ph.name, err)
		}
		fmt.Fprintf(os.Stderr, "  %s\n", progress(ph.name, s, res.fleet))
		res.samples = append(res.samples, s)
	}
	return res, nil
}

// table writes the phases' table and the note of a failed one.
func (x *onceResult) table(b *strings.Builder) {
	fmt.Fprintf(b, "| phase | wall | peak RSS | calls | minimum | ÷ | CPU per call |\n|---|---|---|---|---|---|---|\n")
	for i, s := range x.samples {
		ph := x.phases[i]
		least, ratio := minCells(ph.name, x.fleet, total(s.ops))
		fmt.Fprintf(b, "| %s | %s | %.1f MB | %d | %s | %s | %s |\n", ph.name, secs(s.wall), float64(s.rssKB)/1024, total(s.ops), least, ratio, cpuPerCall(s))
	}
	if x.failed != "" {
		fmt.Fprintf(b, "\nStopped: %s.\n", x.failed)
	}
	fmt.Fprintln(b)
}

func (r *report) scale(b *strings.Builder) {
	x := r.scaled
	if x == nil {
		return
	}
	fmt.Fprintf(b, "## Scale: %d resources\n\n", x.n)
	fmt.Fprintf(b, "One fleet of %d in one account: a quarter each of queues, buckets, secrets and security groups, three tags each, a visibility timeout on half the queues, versioning on a quarter of the buckets, a description on half the secrets, an ingress rule on every group. \"1%% changed\" changes one field of one resource of each kind in a hundred. One run, on one emptied emulator, in this order.\n\n", x.n)
	x.table(b)
	for i, s := range x.samples {
		ph := scalePhases[i]
		if total(s.ops) == 0 {
			continue
		}
		rows, _ := phaseMinimum(ph.name, x.fleet)
		least, _ := minTotal(rows)
		fmt.Fprintf(b, "- **%s** (%d): %s\n", ph.name, total(s.ops), breakdown(s.ops))
		fmt.Fprintf(b, "  - minimum (%d):\n", least)
		for _, row := range rows {
			fmt.Fprintf(b, "    - %d: %s\n", row.calls, row.what)
		}
	}
	fmt.Fprintln(b)
}
