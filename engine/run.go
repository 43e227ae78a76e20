package engine

// run is filled in by the planner.
type run struct{}
