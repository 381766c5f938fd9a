package ratelimit

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Pacer spaces admissions evenly: the generic cell rate algorithm (GCRA). Where a fixed window
// lets a whole second's budget through at the start of the second, a pacer admits one request
// per 1/rate on average, with bursts of at most burst, so that what it admits arrives as a
// steady flow the service can absorb without queueing. A request whose slot is a little ahead
// may take it and wait for it (at most maxWait); one whose slot is further ahead is refused.
type Pacer interface {
	// Reserve asks for the next slot of key at rate per second. ok reports whether a slot was
	// taken; wait is how long the caller must wait for it (0: now) when ok, and how long until
	// a slot could be taken when not.
	Reserve(ctx context.Context, key string, rate, burst int, maxWait time.Duration) (wait time.Duration, ok bool, err error)
}

// MemoryPacer is the in-process Pacer: it paces one process. It is safe for concurrent use.
type MemoryPacer struct {
	clock func() time.Time
	mu    sync.Mutex
	tat   map[string]time.Time // key → theoretical arrival time of the next request
}

var _ Pacer = (*MemoryPacer)(nil)

// NewMemoryPacer returns an in-process Pacer reading the time from clock (time.Now if nil).
func NewMemoryPacer(clock func() time.Time) *MemoryPacer {
	if clock == nil {
		clock = time.Now
	}
	return &MemoryPacer{clock: clock, tat: map[string]time.Time{}}
}

// Reserve implements Pacer.
func (p *MemoryPacer) Reserve(ctx context.Context, key string, rate, burst int, maxWait time.Duration) (time.Duration, bool, error) {
	if rate < 1 || burst < 1 || maxWait < 0 {
		return 0, false, fmt.Errorf("%w: rate %d, burst %d, max wait %s", ErrInvalidArgument, rate, burst, maxWait)
	}
	if err := ctx.Err(); err != nil {
		return 0, false, fmt.Errorf("ratelimit: pace %q: %w", key, err)
	}
	interval := time.Second / time.Duration(rate)
	tolerance := interval * time.Duration(burst-1)
	now := p.clock()
	p.mu.Lock()
	defer p.mu.Unlock()
	tat := p.tat[key]
	if tat.Before(now) {
		tat = now
	}
	// The request conforms from tat - tolerance on: that is its slot.
	wait := tat.Add(-tolerance).Sub(now)
	if wait > maxWait {
		return wait - maxWait, false, nil
	}
	p.tat[key] = tat.Add(interval)
	return max(wait, 0), true, nil
}
