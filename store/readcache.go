package store

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// readCacheChannel is the Postgres notification channel on which the triggers of migration
// 0028 announce a change to a table whose rows the read cache keeps.
const readCacheChannel = "sika_read_cache"

// readCacheTTL bounds how long an answer is kept even when no change is announced: a safety
// net, not the means of freshness (the notifications are).
const readCacheTTL = time.Minute

// readCache keeps, for a short time, the answers of the queries every payment repeats on rows
// that change rarely: the catalogue (countries, networks), the routing table, prices, a
// merchant's fee settings, and an API key with its merchant. It is used only while a listener
// (WatchReadCache) holds a LISTEN on readCacheChannel: any committed change to those tables
// empties it on every replica, and a change made through this Store empties it at once, before
// the call returns. Without a listener (it failed, or was never started) every read goes to
// Postgres as before.
type readCache struct {
	live    atomic.Bool
	mu      sync.Mutex
	gen     uint64 // bumped by every flush: an answer read across a flush is not kept
	entries map[string]readCacheEntry
}

type readCacheEntry struct {
	value   any
	expires time.Time
}

// flush forgets every answer.
func (c *readCache) flush() {
	c.mu.Lock()
	c.gen++
	clear(c.entries)
	c.mu.Unlock()
}

func (c *readCache) get(key string, now time.Time) (any, uint64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok || !now.Before(e.expires) {
		return nil, c.gen, false
	}
	return e.value, c.gen, true
}

func (c *readCache) put(key string, value any, gen uint64, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen || !c.live.Load() {
		return // a change was announced while this answer was read: it may be stale
	}
	if c.entries == nil {
		c.entries = map[string]readCacheEntry{}
	}
	c.entries[key] = readCacheEntry{value: value, expires: now.Add(readCacheTTL)}
}

// cachedRead answers key from the read cache when it can, and otherwise runs load and keeps a
// successful answer. Errors (not_found included) are never kept. The value must not be changed
// by callers: keep slices out of it or copy them (clone).
func cachedRead[T any](s *Store, key string, load func() (T, error), clone func(T) T) (T, error) {
	c := &s.cache
	if !c.live.Load() {
		return load()
	}
	now := s.now()
	cached, gen, ok := c.get(key, now)
	if ok {
		return clone(cached.(T)), nil
	}
	v, err := load()
	if err != nil {
		return v, err
	}
	c.put(key, v, gen, now)
	return clone(v), nil
}

// same is the clone of values without shared mutable parts.
func same[T any](v T) T { return v }

// FlushReadCache forgets what the read cache holds, as a change to one of its tables does. The
// Store's own writes to those tables call it; so does a notification from another replica.
func (s *Store) FlushReadCache() { s.cache.flush() }

// StartReadCache puts the read cache in use for the life of the Store (Close stops it) or of
// ctx: a goroutine listens for changes to the cached tables (WatchReadCache). The API and the
// worker call it; one-shot commands need not.
func (s *Store) StartReadCache(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = s.WatchReadCache(ctx)
	}()
	s.stopCache = func() { cancel(); <-done }
}

// WatchReadCache listens for changes to the cached tables until ctx ends, and keeps the read
// cache in use while it listens. When the connection fails the cache is emptied and set aside
// until the listener is back (retried every second), so a missed notification never leaves a
// stale answer in use.
func (s *Store) WatchReadCache(ctx context.Context) error {
	for ctx.Err() == nil {
		err := s.watchReadCacheOnce(ctx)
		s.cache.live.Store(false)
		s.cache.flush()
		if ctx.Err() != nil {
			break
		}
		if err != nil {
			slog.Warn("read cache listener lost; reads go to Postgres until it is back", "err", err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
	return ctx.Err()
}

func (s *Store) watchReadCacheOnce(ctx context.Context) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("acquire read cache listen connection: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "LISTEN "+readCacheChannel); err != nil {
		return fmt.Errorf("listen %s: %w", readCacheChannel, err)
	}
	defer func() { _, _ = conn.Exec(context.WithoutCancel(ctx), "UNLISTEN "+readCacheChannel) }()
	s.cache.flush() // anything read before the LISTEN took effect may be stale
	s.cache.live.Store(true)
	for {
		if _, err := conn.Conn().WaitForNotification(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("wait for %s: %w", readCacheChannel, err)
		}
		s.cache.flush()
	}
}
