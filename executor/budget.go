package executor

import (
	"context"
	"time"

	"github.com/aws/aws-lambda-go/lambdacontext"
)

// budget divides the invocation's time. Lambda kills a function at its
// deadline without warning, so the executor stops starting actions at
// stopAt (what is running then still finishes and is recorded), and gives
// its cloud calls a context that ends a little before the deadline, so
// that even a stuck call leaves time to save, release the lock and answer.
type budget struct {
	// stopAt is when no new action starts; zero without a deadline.
	stopAt time.Time
	// deadline is the hard end of the work; zero without a deadline.
	deadline time.Time
	// total is the time the invocation had when it started.
	total time.Duration
}

// Defaults for the margin before the deadline.
const (
	maxStopMargin = 30 * time.Second
	maxReserve    = 3 * time.Second
)

func newBudget(ctx context.Context, now time.Time, margin time.Duration) budget {
	end, ok := ctx.Deadline()
	if !ok {
		return budget{}
	}
	total := end.Sub(now)
	if margin <= 0 {
		// A fifth of the time leaves a 15-minute function 30s for the
		// actions still running and a 3-second test 600ms.
		margin = min(total/5, maxStopMargin)
	}
	reserve := min(total/10, maxReserve)
	return budget{stopAt: end.Add(-margin), deadline: end.Add(-reserve), total: total}
}

// workContext is ctx ending at the hard end of the work.
func (b budget) workContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if b.deadline.IsZero() {
		return context.WithCancel(ctx)
	}
	return context.WithDeadline(ctx, b.deadline)
}

// requestID is the Lambda request id, for the lock's holder.
func requestID(ctx context.Context) string {
	if lc, ok := lambdacontext.FromContext(ctx); ok {
		return lc.AwsRequestID
	}
	return ""
}
