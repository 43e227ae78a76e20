// Package workflows holds the GitHub workflows `infra init` writes into a
// repository (as .github/workflows/infra-NAME): plan.yml, apply.yml,
// sweep.yml and drift.yml, and pr-apply.yml when asked. They are the one
// copy: docs/ci.md shows them
// verbatim and a test runs actionlint on them, so the three never disagree.
package workflows

import "embed"

// Files are the workflows, by file name.
//
//go:embed plan.yml apply.yml sweep.yml drift.yml pr-apply.yml
var Files embed.FS

// Names lists the workflows in the order docs/ci.md presents them.
var Names = []string{"plan.yml", "apply.yml", "sweep.yml", "drift.yml", "pr-apply.yml"}

// OptIn are the workflows init writes only when asked: pr-apply.yml
// (infra init --pr-apply), since the default is to apply on merge.
var OptIn = map[string]bool{"pr-apply.yml": true}
