package aws

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/infra-iac/infra/spec"
)

// A region with more than 1,000 queues is listed whole: SQS answers 1,000
// a page with a NextToken, which the listing follows (the emulator is
// made to page as SQS does, internal/moto/serialized.py; moto itself
// stops at 1,000 without a token). A listing that stopped at the first
// page would plan the rest as creates.
func TestQueuesListPastAThousand(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: makes 1,100 queues")
	}
	calls := &callCounter{}
	b, _ := newTestBackend(t, calls.option())
	c := sqs.NewFromConfig(b.Config(), func(o *sqs.Options) { o.Region = testRegion })
	names := make(chan string)
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range names {
				if _, err := c.CreateQueue(context.Background(), &sqs.CreateQueueInput{QueueName: aws.String(n)}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	for i := 0; i < 1100; i++ {
		names <- fmt.Sprintf("page-%04d", i)
	}
	close(names)
	wg.Wait()
	d, _ := b.Driver(spec.Queues)
	listed, err := d.List(context.Background(), testRegion)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, r := range listed {
		seen[r.Name] = true
	}
	if len(seen) != 1100 || len(listed) != 1100 {
		t.Errorf("listed %d queues (%d names), want 1100", len(listed), len(seen))
	}
	if n := calls.count("ListQueues"); n != 2 {
		t.Errorf("ListQueues called %d times, want 2 pages", n)
	}
}
