// Package lifecycle holds the five-stage lifecycle tests: full, ramp-up,
// ramp-down, trimmed, empty — the whole stack (engine, state, drivers)
// against an emulated cloud, ending with an audit that nothing is left.
package lifecycle
