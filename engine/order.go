package engine

import (
	"container/heap"
	"fmt"
	"sort"
	"strings"

	"github.com/infra-iac/infra/spec"
)

// order sorts actions by dependency: builds (everything but delete) by
// Kahn's algorithm over the reference edges, dependencies first; deletions
// over the same graph reversed, so a resource goes before what it needs;
// builds before deletions. Ties go to the smaller address, so the order —
// and with it the plan id — is a function of the inputs. deps maps a
// declared resource to the resources it refers to.
func order(actions []Action, deps map[spec.Address][]spec.Address) ([]Action, error) {
	var builds, deletes []Action
	for _, a := range actions {
		if a.Action == Delete {
			deletes = append(deletes, a)
		} else {
			builds = append(builds, a)
		}
	}
	b, err := kahn(builds, func(a spec.Address) []spec.Address { return deps[a] })
	if err != nil {
		return nil, err
	}
	// Reversed: x waits for every y that depends on x.
	dependants := map[spec.Address][]spec.Address{}
	for y, xs := range deps {
		for _, x := range xs {
			dependants[x] = append(dependants[x], y)
		}
	}
	d, err := kahn(deletes, func(a spec.Address) []spec.Address { return dependants[a] })
	if err != nil {
		return nil, err
	}
	return append(b, d...), nil
}

// kahn orders nodes so that each comes after the nodes among them that
// before(node) names, filling DependsOn with those edges.
func kahn(nodes []Action, before func(spec.Address) []spec.Address) ([]Action, error) {
	index := make(map[spec.Address]int, len(nodes))
	for i, n := range nodes {
		index[n.Address] = i
	}
	indegree := make([]int, len(nodes))
	after := make([][]int, len(nodes))
	for i := range nodes {
		nodes[i].DependsOn = nil
		seen := map[int]bool{}
		for _, dep := range before(nodes[i].Address) {
			j, ok := index[dep]
			if !ok || j == i || seen[j] {
				continue
			}
			seen[j] = true
			nodes[i].DependsOn = append(nodes[i].DependsOn, dep)
			indegree[i]++
			after[j] = append(after[j], i)
		}
		sortAddresses(nodes[i].DependsOn)
	}
	ready := &addrHeap{nodes: nodes}
	for i := range nodes {
		if indegree[i] == 0 {
			heap.Push(ready, i)
		}
	}
	out := make([]Action, 0, len(nodes))
	for ready.Len() > 0 {
		i := heap.Pop(ready).(int)
		out = append(out, nodes[i])
		for _, j := range after[i] {
			indegree[j]--
			if indegree[j] == 0 {
				heap.Push(ready, j)
			}
		}
	}
	if len(out) < len(nodes) {
		var stuck []string
		for i, n := range nodes {
			if indegree[i] > 0 {
				stuck = append(stuck, n.Address.String())
			}
		}
		return nil, fmt.Errorf("dependency cycle among: %s", strings.Join(stuck, ", "))
	}
	return out, nil
}

// addrHeap is a min-heap of node indexes by address.
type addrHeap struct {
	nodes []Action
	items []int
}

func (h *addrHeap) Len() int { return len(h.items) }
func (h *addrHeap) Less(i, j int) bool {
	return h.nodes[h.items[i]].Address.Less(h.nodes[h.items[j]].Address)
}
func (h *addrHeap) Swap(i, j int) { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *addrHeap) Push(x any)    { h.items = append(h.items, x.(int)) }
func (h *addrHeap) Pop() any {
	n := len(h.items)
	x := h.items[n-1]
	h.items = h.items[:n-1]
	return x
}

func sortAddresses(as []spec.Address) {
	sort.Slice(as, func(i, j int) bool { return as[i].Less(as[j]) })
}
