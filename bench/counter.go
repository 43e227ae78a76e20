package main

import (
	"context"
	"sort"
	"sync"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/smithy-go/middleware"
)

// counter counts AWS API calls by "Service.Operation", twice: operations
// (once per call the code makes, before the retry loop) and attempts (each
// request sent, after it), so that retries show as the difference.
type counter struct {
	mu       sync.Mutex
	Ops      map[string]int `json:"ops"`
	Attempts map[string]int `json:"attempts"`
}

func newCounter() *counter {
	return &counter{Ops: map[string]int{}, Attempts: map[string]int{}}
}

func opKey(ctx context.Context) string {
	return awsmiddleware.GetServiceID(ctx) + "." + middleware.GetOperationName(ctx)
}

// option installs the counter through the SDK's own middleware stack.
func (c *counter) option() func(*config.LoadOptions) error {
	return config.WithAPIOptions([]func(*middleware.Stack) error{func(s *middleware.Stack) error {
		err := s.Initialize.Add(middleware.InitializeMiddlewareFunc("bench-ops", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			c.add(c.Ops, opKey(ctx))
			return next.HandleInitialize(ctx, in)
		}), middleware.After)
		if err != nil {
			return err
		}
		return s.Finalize.Add(middleware.FinalizeMiddlewareFunc("bench-attempts", func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
			c.add(c.Attempts, opKey(ctx))
			return next.HandleFinalize(ctx, in)
		}), middleware.After)
	}})
}

func (c *counter) add(m map[string]int, k string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	m[k]++
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func sortedKeys(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
