package ratelimit

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// reserveScript is one Reserve of the pacer, run atomically by Redis on the server's clock (so
// replicas with skewed clocks share one pace). KEYS[1] holds the theoretical arrival time in
// microseconds; ARGV: interval, tolerance, max wait (microseconds). Returns {ok (0|1), wait
// in microseconds}. The key expires once it no longer matters.
var reserveScript = redis.NewScript(`
if redis.replicate_commands then redis.replicate_commands() end
local interval = tonumber(ARGV[1])
local tolerance = tonumber(ARGV[2])
local maxwait = tonumber(ARGV[3])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
local wait = tat - tolerance - now
if wait > maxwait then
  return {0, wait - maxwait}
end
local next = tat + interval
redis.call('SET', KEYS[1], string.format('%d', next), 'PX', string.format('%d', math.floor((next - now) / 1000) + 1000))
if wait < 0 then wait = 0 end
return {1, wait}
`)

// RedisPacer is the Pacer shared by every API replica through one Redis server.
type RedisPacer struct {
	client *redis.Client
	prefix string
}

var _ Pacer = (*RedisPacer)(nil)

// Pacer returns the pacer that shares r's Redis client and key prefix.
func (r *Redis) Pacer() *RedisPacer { return &RedisPacer{client: r.client, prefix: r.prefix + "pace:"} }

// Reserve implements Pacer. A Redis failure is returned wrapped; the caller decides whether to
// fail open.
func (p *RedisPacer) Reserve(ctx context.Context, key string, rate, burst int, maxWait time.Duration) (time.Duration, bool, error) {
	if rate < 1 || burst < 1 || maxWait < 0 {
		return 0, false, fmt.Errorf("%w: rate %d, burst %d, max wait %s", ErrInvalidArgument, rate, burst, maxWait)
	}
	interval := time.Second / time.Duration(rate)
	res, err := reserveScript.Run(ctx, p.client, []string{p.prefix + key},
		interval.Microseconds(), (interval * time.Duration(burst-1)).Microseconds(), maxWait.Microseconds()).Int64Slice()
	if err != nil {
		return 0, false, fmt.Errorf("ratelimit: redis pace %q: %w", key, err)
	}
	if len(res) != 2 {
		return 0, false, fmt.Errorf("ratelimit: redis pace %q: script returned %d values, want 2", key, len(res))
	}
	return time.Duration(res[1]) * time.Microsecond, res[0] == 1, nil
}
