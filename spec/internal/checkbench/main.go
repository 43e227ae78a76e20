// Command checkbench measures check on a large document, outside the test
// harness, so that /usr/bin/time reports the peak memory of decode and
// validate alone:
//
//	go run ./spec/internal/checkbench -write /tmp/10k.json -n 10000
//	go build -o /tmp/checkbench ./spec/internal/checkbench
//	/usr/bin/time -v /tmp/checkbench /tmp/10k.json
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"time"

	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/spec/spectest"
)

func main() {
	write := flag.String("write", "", "write a generated document to this file and exit")
	n := flag.Int("n", 10000, "resources in the generated document")
	flag.Parse()
	if err := run(*write, *n, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "checkbench:", err)
		os.Exit(1)
	}
}

func run(write string, n int, args []string) error {
	if write != "" {
		data, err := spectest.LargeDocumentJSON(n)
		if err != nil {
			return err
		}
		return os.WriteFile(write, data, 0o644)
	}
	if len(args) != 1 {
		return fmt.Errorf("usage: checkbench FILE, or checkbench -write FILE [-n N]")
	}
	start := time.Now()
	data, err := os.ReadFile(args[0])
	if err != nil {
		return err
	}
	doc, err := spec.DecodeDocument(data)
	if err != nil {
		return err
	}
	rows := spec.Validate(doc)
	elapsed := time.Since(start)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Printf("resources %d, rows %d, %d bytes, read+decode+validate %v, allocated %.1f MB, heap in use %.1f MB\n",
		len(doc.Resources), len(rows), len(data), elapsed.Round(time.Millisecond),
		float64(ms.TotalAlloc)/(1<<20), float64(ms.HeapInuse)/(1<<20))
	return nil
}
