package ratelimit

import (
	"context"
	"fmt"
	"hash/maphash"
	"sync"
	"time"
)

// memShards is the number of independently locked parts of a Memory's
// counters; a power of two so the shard index is a mask.
const memShards = 32

// sweepEvery is how often, at most, a shard drops its counters whose window
// has ended. Counters are dropped lazily on Allow (no goroutine): a counter
// lives at most its window plus sweepEvery after its last request, as long
// as its shard sees traffic, so memory is bounded by the keys active
// recently rather than by all keys ever seen.
const sweepEvery = time.Minute

// Memory is the in-process Limiter. It holds the limit per process only; see
// the package documentation for the algorithm. It is safe for concurrent
// use and needs no cleanup: it starts no goroutine.
type Memory struct {
	clock  func() time.Time
	seed   maphash.Seed
	shards [memShards]memShard
}

// memShard is one locked part of a Memory's counters.
type memShard struct {
	mu        sync.Mutex
	counters  map[memKey]memCounter
	nextSweep int64 // ms since the epoch
}

// memKey identifies a counter: a key and a window length in milliseconds.
type memKey struct {
	key string
	win int64
}

// memCounter is a window's start (ms since the epoch) and the number of
// requests allowed in it.
type memCounter struct {
	start int64
	count int64
}

var _ Limiter = (*Memory)(nil)

// NewMemory returns an in-process Limiter that reads the time from clock
// (time.Now when clock is nil; tests inject a fake clock).
func NewMemory(clock func() time.Time) *Memory {
	if clock == nil {
		clock = time.Now
	}
	m := &Memory{clock: clock, seed: maphash.MakeSeed()}
	for i := range m.shards {
		m.shards[i].counters = make(map[memKey]memCounter)
	}
	return m
}

// Allow implements Limiter.
func (m *Memory) Allow(ctx context.Context, key string, limit int, window time.Duration) (Decision, error) {
	win, err := validate(limit, window)
	if err != nil {
		return Decision{}, err
	}
	if err := ctx.Err(); err != nil {
		return Decision{}, fmt.Errorf("ratelimit: memory allow %q: %w", key, err)
	}
	now := m.clock().UnixMilli()
	sh := &m.shards[maphash.String(m.seed, key)&(memShards-1)]

	sh.mu.Lock()
	defer sh.mu.Unlock()
	if now >= sh.nextSweep {
		sh.sweep(now)
		sh.nextSweep = now + sweepEvery.Milliseconds()
	}
	k := memKey{key: key, win: win}
	c := sh.counters[k]
	if start := windowStart(now, win); c.start < start {
		c = memCounter{start: start}
	}
	allowed := c.count < int64(limit)
	if allowed {
		c.count++
		sh.counters[k] = c
	}
	return decision(allowed, limit, c.count, c.start+win-now), nil
}

// sweep drops the counters whose window ended at or before now. The caller
// holds sh.mu.
func (sh *memShard) sweep(now int64) {
	for k, c := range sh.counters {
		if c.start+k.win <= now {
			delete(sh.counters, k)
		}
	}
}

// len returns the number of counters held, for tests.
func (m *Memory) len() int {
	n := 0
	for i := range m.shards {
		sh := &m.shards[i]
		sh.mu.Lock()
		n += len(sh.counters)
		sh.mu.Unlock()
	}
	return n
}
