package ratelimit

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMemoryPacerSpacesAdmissions(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	p := NewMemoryPacer(func() time.Time { return now })
	ctx := context.Background()
	reserve := func() (time.Duration, bool) {
		wait, ok, err := p.Reserve(ctx, "k", 10, 2, 150*time.Millisecond) // a slot every 100 ms
		require.NoError(t, err)
		return wait, ok
	}
	// A burst of 2 goes at once, the next slots are 100 ms apart; one slot ahead may be waited
	// for (150 ms), the one after is refused with the time until it could be reserved.
	for i, want := range []time.Duration{0, 0, 100 * time.Millisecond} {
		wait, ok := reserve()
		require.True(t, ok, "request %d", i)
		assert.Equal(t, want, wait, "request %d", i)
	}
	wait, ok := reserve()
	assert.False(t, ok)
	assert.Equal(t, 50*time.Millisecond, wait, "its slot (200 ms) is 50 ms past the longest wait")
	// A refused request takes no slot: 100 ms later the next one waits 100 ms.
	now = now.Add(100 * time.Millisecond)
	wait, ok = reserve()
	assert.True(t, ok)
	assert.Equal(t, 100*time.Millisecond, wait)
	// Idle time does not bank more than the burst.
	now = now.Add(time.Hour)
	for i, want := range []time.Duration{0, 0, 100 * time.Millisecond} {
		wait, ok := reserve()
		require.True(t, ok, "after idling, request %d", i)
		assert.Equal(t, want, wait)
	}
	_, _, err := p.Reserve(ctx, "k", 0, 1, 0)
	assert.ErrorIs(t, err, ErrInvalidArgument)
}

func TestMemoryPacerUnderConcurrency(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	p := NewMemoryPacer(func() time.Time { return now })
	var wg sync.WaitGroup
	var mu sync.Mutex
	waits := map[time.Duration]int{}
	for range 100 {
		wg.Go(func() {
			wait, ok, err := p.Reserve(context.Background(), "k", 50, 1, time.Second)
			if assert.NoError(t, err) && ok {
				mu.Lock()
				waits[wait]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	// 50/s over at most a second of waiting: slots 0, 20 ms, ..., 1 s, each taken exactly once.
	assert.Len(t, waits, 51)
	for wait, n := range waits {
		assert.Equal(t, 1, n, "slot %s", wait)
	}
}

// Two replicas share one pace through Redis: over a burst of concurrent reservations, each
// slot (one per 1/rate) is given once, whichever replica asked.
func TestRedisPacerSharedByReplicas(t *testing.T) {
	prefix := uniquePrefix()
	replicas := []*RedisPacer{NewRedis(redisClient(t), prefix).Pacer(), NewRedis(redisClient(t), prefix).Pacer()}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var granted []time.Duration
	refused := 0
	for i := range 60 {
		wg.Go(func() {
			wait, ok, err := replicas[i%2].Reserve(context.Background(), "accept", 20, 1, 400*time.Millisecond)
			if !assert.NoError(t, err) {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if ok {
				granted = append(granted, wait)
			} else {
				refused++
				assert.Positive(t, wait, "a refusal says when to come back")
			}
		})
	}
	wg.Wait()
	// 20/s with up to 400 ms of waiting: the slots at 0, 50, ..., 400 ms (9), the rest refused.
	// (The calls spread over some milliseconds of Redis time, which may free one more slot.)
	assert.InDelta(t, 9, len(granted), 1)
	assert.Equal(t, 60, len(granted)+refused)
	for _, w := range granted {
		assert.LessOrEqual(t, w, 400*time.Millisecond)
	}
}
