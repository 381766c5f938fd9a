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
