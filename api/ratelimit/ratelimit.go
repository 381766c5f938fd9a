// Package ratelimit implements the API's per-account request-rate limit:
// DefaultLimit requests per DefaultWindow per merchant account, with a
// per-merchant override passed in by the caller on every request.
//
// # Algorithm
//
// Both implementations use the same fixed-window counter, aligned to the
// window (the scheme GitHub uses):
//
//   - Time is measured in whole milliseconds since the Unix epoch, and the
//     window length is used at millisecond resolution.
//   - The window containing the instant now starts at now - now%window and
//     ends window later, so every key's window of a given length resets at
//     the same instants (for one minute: on every whole minute).
//   - A key's counter holds the start of the window it counts in and the
//     number of requests allowed in it. A request is allowed, and counted,
//     when fewer than limit requests have been allowed in the current window;
//     otherwise it is refused and not counted. So with limit N exactly N
//     requests are allowed per window and the (N+1)-th is refused, also under
//     any concurrency: the read-and-increment is atomic (a mutex in Memory,
//     one Lua script in Redis).
//   - A counter whose window has ended is worth nothing: the next request
//     starts a fresh window. If the clock steps backwards, the stored (later)
//     window is kept, so a clock step never grants a fresh budget.
//   - Counters are per (key, window length): the same key used with two
//     window lengths has two independent counters. Changing limit within a
//     window keeps the count (lowering it below the count refuses the rest of
//     the window; Remaining is then 0).
//
// A Decision's Reset is the time until the current window ends (> 0, and at
// most window unless the clock stepped backwards); its RetryAfter, when the request was refused,
// is the same duration. Both are exact to the millisecond, never early;
// callers rounding them up to whole seconds for the RateLimit-Reset and
// Retry-After headers therefore report at least 1s.
//
// # Implementations
//
// Redis (NewRedis, NewRedisFromURL) holds the limit across API replicas: the
// counter lives in Redis and the window arithmetic uses the Redis server's
// clock (TIME inside the script), so replicas with skewed clocks agree.
// Memory (NewMemory) holds the limit per process only: with R replicas
// behind a load balancer a merchant may get up to R times the limit.
package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// DefaultLimit is the number of requests a merchant account may make per
// DefaultWindow unless it has an override.
const DefaultLimit = 300

// DefaultWindow is the window DefaultLimit applies to.
const DefaultWindow = time.Minute

// ErrInvalidArgument is returned (wrapped) by Allow when limit is not
// positive or window is shorter than one millisecond.
var ErrInvalidArgument = errors.New("ratelimit: invalid argument")

// Decision is the outcome of one request against a key's budget.
type Decision struct {
	// Allowed reports whether the request is within the budget (and was
	// counted against it).
	Allowed bool
	// Limit is the number of requests allowed per window.
	Limit int
	// Remaining is the number of requests left in the current window
	// (never negative).
	Remaining int
	// Reset is the time until the current window ends and the budget is
	// restored; always > 0. Callers round it up to whole seconds, so the
	// reported value is >= 1s.
	Reset time.Duration
	// RetryAfter, when !Allowed, is how long until a request would be
	// allowed (the same as Reset); 0 when Allowed.
	RetryAfter time.Duration
}

// Limiter counts requests per key within a window.
type Limiter interface {
	// Allow counts one request for key against a budget of limit requests
	// per window and reports the outcome. It returns an error (and a zero
	// Decision) when the arguments are invalid or the backing store fails;
	// the caller decides whether to fail open.
	Allow(ctx context.Context, key string, limit int, window time.Duration) (Decision, error)
}

// validate checks Allow's arguments and returns the window in milliseconds.
func validate(limit int, window time.Duration) (int64, error) {
	if limit < 1 {
		return 0, fmt.Errorf("%w: limit must be positive, got %d", ErrInvalidArgument, limit)
	}
	win := window.Milliseconds()
	if win < 1 {
		return 0, fmt.Errorf("%w: window must be at least 1ms, got %s", ErrInvalidArgument, window)
	}
	return win, nil
}

// windowStart returns the start, in milliseconds since the epoch, of the
// window of length win milliseconds that contains the instant now.
func windowStart(now, win int64) int64 {
	start := now - now%win
	if start > now { // now < 0: Go's % truncates toward zero.
		start -= win
	}
	return start
}

// decision builds the Decision for a request that was allowed or not, after
// which count requests have been counted in a window ending resetMs
// milliseconds from now.
func decision(allowed bool, limit int, count, resetMs int64) Decision {
	d := Decision{
		Allowed:   allowed,
		Limit:     limit,
		Remaining: int(max(int64(limit)-count, 0)),
		Reset:     time.Duration(resetMs) * time.Millisecond,
	}
	if !allowed {
		d.RetryAfter = d.Reset
	}
	return d
}
