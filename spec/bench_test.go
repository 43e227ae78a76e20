package spec_test

import (
	"runtime"
	"testing"

	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/spec/spectest"
)

// The generated document is what the benchmark measures, so it must be
// valid: a document that fails early would make check look fast.
func TestLargeDocumentIsValid(t *testing.T) {
	data, err := spectest.LargeDocumentJSON(1000)
	if err != nil {
		t.Fatal(err)
	}
	d, err := spec.DecodeDocument(data)
	if err != nil {
		t.Fatal(err)
	}
	m, rows := spec.Compile(d)
	if len(rows) != 0 {
		t.Fatalf("rows: %v", rows[:min(len(rows), 5)])
	}
	if len(m.Resources) != 1000 {
		t.Fatalf("model holds %d resources", len(m.Resources))
	}
	edges := 0
	for _, r := range m.Resources {
		edges += len(r.Deps())
	}
	// Per unit: instance→sg, db→pw, url→pw+db, api→queue, container→ns+key.
	if edges != 100*7 {
		t.Fatalf("edges: got %d, want %d", edges, 100*7)
	}
}

// BenchmarkCheck10k is what `infra check` does to a 10,000-resource
// document: decode the bytes, then validate. See docs/performance.md.
//
//	go test ./spec -run '^$' -bench Check10k -benchmem -count 5
func BenchmarkCheck10k(b *testing.B) {
	data, err := spectest.LargeDocumentJSON(10000)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var peak uint64
	for b.Loop() {
		d, err := spec.DecodeDocument(data)
		if err != nil {
			b.Fatal(err)
		}
		if rows := spec.Validate(d); len(rows) != 0 {
			b.Fatalf("rows: %v", rows[0])
		}
		// Live heap after a check, while the document is still reachable:
		// a floor for the peak, which /usr/bin/time on checkbench gives.
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapInuse)
		runtime.KeepAlive(d)
	}
	b.ReportMetric(float64(peak)/(1<<20), "heap-inuse-MB")
}
