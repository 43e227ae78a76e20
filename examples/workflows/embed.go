// Package workflows holds the GitHub workflows a repository using infra
// copies: plan.yml, apply.yml, sweep.yml and drift.yml. `infra init` writes
// them, docs/ci.md shows them, and a test runs actionlint on them, so the
// three never disagree.
package workflows

import "embed"

// Files are the workflows, by file name.
//
//go:embed plan.yml apply.yml sweep.yml drift.yml
var Files embed.FS

// Names lists the workflows in the order docs/ci.md presents them.
var Names = []string{"plan.yml", "apply.yml", "sweep.yml", "drift.yml"}
