package ratelimit

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// DefaultRedisPrefix is the key prefix NewRedisFromURL uses.
const DefaultRedisPrefix = "sika:ratelimit:"

// allowScript is the whole of one Allow, run atomically by Redis: the
// package's fixed-window algorithm on the server's clock.
//
// KEYS[1]: the counter, a hash {s: window start in ms, n: requests allowed}.
// ARGV[1]: limit; ARGV[2]: window in ms.
// Returns {allowed (0|1), count, ms until the window ends}.
//
// The counter expires when its window ends, so idle keys vanish. Numbers
// are written with %d: Redis would otherwise format large Lua numbers in
// exponent notation.
var allowScript = redis.NewScript(`
if redis.replicate_commands then redis.replicate_commands() end
local limit = tonumber(ARGV[1])
local win = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local start = now - (now % win)
local count = 0
local stored = redis.call('HMGET', KEYS[1], 's', 'n')
local s = tonumber(stored[1])
if s and s >= start then
  start = s
  count = tonumber(stored[2]) or 0
end
local reset = start + win - now
if count >= limit then
  return {0, count, reset}
end
count = count + 1
redis.call('HSET', KEYS[1], 's', string.format('%d', start), 'n', string.format('%d', count))
redis.call('PEXPIRE', KEYS[1], string.format('%d', reset))
return {1, count, reset}
`)

// Redis is the Limiter shared by all API replicas through one Redis server;
// see the package documentation for the algorithm. Each Allow is one
// EVALSHA of a Lua script (EVAL when the server does not have it cached).
// It is safe for concurrent use.
type Redis struct {
	client *redis.Client
	prefix string
	owned  bool // client was created by NewRedisFromURL and is closed by Close
}

var _ Limiter = (*Redis)(nil)

// NewRedis returns a Limiter that keeps its counters in Redis through
// client, under keys beginning with prefix (e.g. DefaultRedisPrefix). The
// caller keeps ownership of client.
func NewRedis(client *redis.Client, prefix string) *Redis {
	return &Redis{client: client, prefix: prefix}
}

// NewRedisFromURL returns a Limiter on a new client for url (the REDIS_URL
// form accepted by redis.ParseURL, e.g. redis://user:pass@host:6379/0),
// with DefaultRedisPrefix. It does not connect; Close releases the client.
//
// The client dials once per attempt instead of go-redis's default five, so
// that with Redis down Allow fails in milliseconds rather than ~1.7s (the
// caller fails open); the URL's query options (max_retries, dial_timeout,
// read_timeout, ...) still apply. Callers should also bound Allow with a
// context deadline.
func NewRedisFromURL(url string) (*Redis, error) {
	opts, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("ratelimit: parse redis url: %w", err)
	}
	opts.DialerRetries = 1
	r := NewRedis(redis.NewClient(opts), DefaultRedisPrefix)
	r.owned = true
	return r, nil
}

// Close closes the client if NewRedisFromURL created it; a client passed to
// NewRedis is left to its owner.
func (r *Redis) Close() error {
	if !r.owned {
		return nil
	}
	if err := r.client.Close(); err != nil {
		return fmt.Errorf("ratelimit: close redis client: %w", err)
	}
	return nil
}

// Allow implements Limiter. A Redis failure is returned wrapped, with a zero
// Decision; the caller decides whether to fail open.
func (r *Redis) Allow(ctx context.Context, key string, limit int, window time.Duration) (Decision, error) {
	win, err := validate(limit, window)
	if err != nil {
		return Decision{}, err
	}
	k := r.prefix + strconv.FormatInt(win, 10) + ":" + key
	res, err := allowScript.Run(ctx, r.client, []string{k}, limit, win).Int64Slice()
	if err != nil {
		return Decision{}, fmt.Errorf("ratelimit: redis allow %q: %w", key, err)
	}
	if len(res) != 3 {
		return Decision{}, fmt.Errorf("ratelimit: redis allow %q: script returned %d values, want 3", key, len(res))
	}
	return decision(res[0] == 1, limit, res[1], res[2]), nil
}
