package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// ---- redis-server started by the tests ----

// testRedis is the redis-server the tests start on first use and TestMain
// stops at the end.
var testRedis struct {
	once sync.Once
	addr string
	err  error
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
	dir  string
}

func TestMain(m *testing.M) {
	code := m.Run()
	stopRedis()
	os.Exit(code)
}

// findRedisServer returns the path of redis-server, on PATH or in /usr/bin.
func findRedisServer() (string, error) {
	if p, err := exec.LookPath("redis-server"); err == nil {
		return p, nil
	}
	const p = "/usr/bin/redis-server"
	if _, err := os.Stat(p); err == nil {
		return p, nil
	}
	return "", errors.New("redis-server not found on PATH or in /usr/bin: " +
		"run scripts/install-deps.sh (as root, or follow what it prints) to install it")
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// startRedis starts redis-server on a free loopback port, without
// persistence, and waits until it answers PING.
func startRedis() (string, error) {
	bin, err := findRedisServer()
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", "ratelimit-redis-")
	if err != nil {
		return "", fmt.Errorf("redis-server work dir: %w", err)
	}
	testRedis.dir = dir
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ { // the free port may be taken meanwhile
		port, err := freePort()
		if err != nil {
			return "", err
		}
		var out strings.Builder
		cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--save", "", "--appendonly", "no", "--dir", dir, "--daemonize", "no")
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			return "", fmt.Errorf("start %s: %w", bin, err)
		}
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		if err := waitRedis(addr, done); err != nil {
			_ = cmd.Process.Kill()
			<-done
			lastErr = fmt.Errorf("%w; redis-server output:\n%s", err, out.String())
			continue
		}
		testRedis.cmd, testRedis.done = cmd, done
		return addr, nil
	}
	return "", lastErr
}

// waitRedis waits up to 10s for the server at addr to answer PING, or for
// it to exit (done closed).
func waitRedis(addr string, done <-chan struct{}) error {
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: time.Second})
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-done:
			return fmt.Errorf("redis-server on %s exited before answering PING", addr)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redis-server on %s did not answer PING within 10s: %w", addr, err)
		}
	}
}

// stopRedis stops the server started by startRedis, if any.
func stopRedis() {
	if testRedis.cmd != nil {
		_ = testRedis.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-testRedis.done:
		case <-time.After(5 * time.Second):
			_ = testRedis.cmd.Process.Kill()
			<-testRedis.done
		}
	}
	if testRedis.dir != "" {
		_ = os.RemoveAll(testRedis.dir)
	}
}

// redisClient returns a new client of the test redis-server (started on
// first use), closed when tb ends.
func redisClient(tb testing.TB) *redis.Client {
	tb.Helper()
	testRedis.once.Do(func() { testRedis.addr, testRedis.err = startRedis() })
	if testRedis.err != nil {
		tb.Fatalf("test redis-server: %v", testRedis.err)
	}
	c := redis.NewClient(&redis.Options{Addr: testRedis.addr})
	tb.Cleanup(func() { _ = c.Close() })
	return c
}

var prefixSeq atomic.Int64

// uniquePrefix returns a key prefix no other limiter in this process uses,
// so tests (and -count=N reruns) never share counters on the one server.
func uniquePrefix() string {
	return fmt.Sprintf("test:%d:%d:", os.Getpid(), prefixSeq.Add(1))
}

// ---- the implementations under test ----

// fakeClock is a settable clock for Memory.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// impl is one Limiter implementation with its clock.
type impl struct {
	lim Limiter
	// now returns the limiter's current time.
	now func(t *testing.T) time.Time
	// advance lets d pass on the limiter's clock.
	advance func(d time.Duration)
}

// impls returns a fresh instance of each implementation.
func impls(t *testing.T) map[string]impl {
	clock := &fakeClock{t: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	client := redisClient(t)
	return map[string]impl{
		"memory": {
			lim:     NewMemory(clock.Now),
			now:     func(*testing.T) time.Time { return clock.Now() },
			advance: clock.Advance,
		},
		"redis": redisImpl(NewRedis(client, uniquePrefix())),
	}
}

// redisImpl returns r with the Redis server's clock; time passes by sleeping.
func redisImpl(r *Redis) impl {
	return impl{
		lim: r,
		now: func(t *testing.T) time.Time {
			now, err := r.client.Time(context.Background()).Result()
			if err != nil {
				t.Fatalf("redis TIME: %v", err)
			}
			return now
		},
		advance: time.Sleep,
	}
}

// ensureRoom lets time pass, if needed, until at least need is left in the
// current window of length window, so a test's requests fall in one window.
func (im impl) ensureRoom(t *testing.T, window, need time.Duration) {
	t.Helper()
	win := window.Milliseconds()
	left := time.Duration(win-im.now(t).UnixMilli()%win) * time.Millisecond
	if left < need {
		im.advance(left)
	}
}

// allow calls Allow and fails the test on error.
func (im impl) allow(t *testing.T, key string, limit int, window time.Duration) Decision {
	t.Helper()
	d, err := im.lim.Allow(context.Background(), key, limit, window)
	if err != nil {
		t.Fatalf("Allow(%q, %d, %s): %v", key, limit, window, err)
	}
	return d
}

// checkAllowed fails the test unless d allowed a request leaving remaining.
func checkAllowed(t *testing.T, d Decision, limit, remaining int, window time.Duration) {
	t.Helper()
	if !d.Allowed || d.Limit != limit || d.Remaining != remaining || d.RetryAfter != 0 ||
		d.Reset <= 0 || d.Reset > window {
		t.Fatalf("got %+v, want allowed with Limit %d, Remaining %d, 0 < Reset <= %s, RetryAfter 0",
			d, limit, remaining, window)
	}
}

// checkRefused fails the test unless d refused a request.
func checkRefused(t *testing.T, d Decision, limit int, window time.Duration) {
	t.Helper()
	if d.Allowed || d.Limit != limit || d.Remaining != 0 || d.RetryAfter <= 0 ||
		d.RetryAfter != d.Reset || d.Reset > window {
		t.Fatalf("got %+v, want refused with Limit %d, Remaining 0, 0 < RetryAfter = Reset <= %s",
			d, limit, window)
	}
}

// ---- behaviour, against both implementations ----

func TestLimiter(t *testing.T) {
	const hour = time.Hour
	cases := []struct {
		name string
		run  func(t *testing.T, im impl)
	}{
		{"allows exactly limit then refuses", func(t *testing.T, im impl) {
			im.ensureRoom(t, hour, time.Minute)
			for i := range 5 {
				checkAllowed(t, im.allow(t, "acct", 5, hour), 5, 4-i, hour)
			}
			for range 3 {
				checkRefused(t, im.allow(t, "acct", 5, hour), 5, hour)
			}
		}},
		{"window rollover restores the budget", func(t *testing.T, im impl) {
			const window = time.Second
			for attempt := 1; ; attempt++ {
				key := fmt.Sprintf("acct-%d", attempt)
				im.ensureRoom(t, window, 600*time.Millisecond)
				var ds []Decision
				for range 4 {
					ds = append(ds, im.allow(t, key, 3, window))
				}
				// A slow machine may cross into the next window midway (the
				// time left would go up); start over in a fresh window then.
				crossed := false
				for i := 1; i < len(ds); i++ {
					crossed = crossed || ds[i].Reset > ds[i-1].Reset
				}
				if crossed && attempt < 5 {
					t.Logf("attempt %d crossed a window boundary; retrying", attempt)
					continue
				}
				for i, d := range ds[:3] {
					checkAllowed(t, d, 3, 2-i, window)
				}
				checkRefused(t, ds[3], 3, window)
				im.advance(ds[3].RetryAfter)
				checkAllowed(t, im.allow(t, key, 3, window), 3, 2, window)
				return
			}
		}},
		{"keys are independent", func(t *testing.T, im impl) {
			im.ensureRoom(t, hour, time.Minute)
			checkAllowed(t, im.allow(t, "a", 2, hour), 2, 1, hour)
			checkAllowed(t, im.allow(t, "a", 2, hour), 2, 0, hour)
			checkRefused(t, im.allow(t, "a", 2, hour), 2, hour)
			checkAllowed(t, im.allow(t, "b", 2, hour), 2, 1, hour)
			checkRefused(t, im.allow(t, "a", 2, hour), 2, hour)
		}},
		{"window lengths count separately", func(t *testing.T, im impl) {
			im.ensureRoom(t, hour, time.Minute)
			checkAllowed(t, im.allow(t, "acct", 1, hour), 1, 0, hour)
			checkRefused(t, im.allow(t, "acct", 1, hour), 1, hour)
			checkAllowed(t, im.allow(t, "acct", 1, 2*hour), 1, 0, 2*hour)
		}},
		{"limit change keeps the window's count", func(t *testing.T, im impl) {
			im.ensureRoom(t, hour, time.Minute)
			for i := range 3 {
				checkAllowed(t, im.allow(t, "acct", 5, hour), 5, 4-i, hour)
			}
			checkRefused(t, im.allow(t, "acct", 2, hour), 2, hour)
			checkAllowed(t, im.allow(t, "acct", 5, hour), 5, 1, hour)
		}},
		{"concurrent requests never exceed the limit", func(t *testing.T, im impl) {
			const goroutines, limit = 200, 50
			im.ensureRoom(t, hour, 5*time.Minute)
			start := make(chan struct{})
			results := make(chan Decision, goroutines)
			errs := make(chan error, goroutines)
			var wg sync.WaitGroup
			for range goroutines {
				wg.Go(func() {
					<-start
					d, err := im.lim.Allow(context.Background(), "acct", limit, hour)
					if err != nil {
						errs <- err
						return
					}
					results <- d
				})
			}
			close(start)
			wg.Wait()
			close(results)
			close(errs)
			for err := range errs {
				t.Fatalf("Allow: %v", err)
			}
			seen := make(map[int]bool) // Remaining of each allowed request
			for d := range results {
				if d.Allowed {
					if seen[d.Remaining] {
						t.Errorf("Remaining %d reported to two allowed requests", d.Remaining)
					}
					seen[d.Remaining] = true
				} else if d.Remaining != 0 || d.RetryAfter <= 0 {
					t.Errorf("refused with %+v, want Remaining 0 and RetryAfter > 0", d)
				}
			}
			if len(seen) != limit {
				t.Fatalf("%d of %d concurrent requests allowed, want exactly %d", len(seen), goroutines, limit)
			}
		}},
		{"invalid arguments", func(t *testing.T, im impl) {
			for _, c := range []struct {
				limit  int
				window time.Duration
			}{{0, hour}, {-1, hour}, {1, 0}, {1, -time.Second}, {1, 500 * time.Microsecond}} {
				d, err := im.lim.Allow(context.Background(), "acct", c.limit, c.window)
				if !errors.Is(err, ErrInvalidArgument) || d != (Decision{}) {
					t.Errorf("Allow(limit %d, window %s) = %+v, %v; want ErrInvalidArgument", c.limit, c.window, d, err)
				}
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for name, im := range impls(t) {
				t.Run(name, func(t *testing.T) { c.run(t, im) })
			}
		})
	}
}

// ---- Memory only ----

func TestMemoryEvictsEndedWindows(t *testing.T) {
	clock := &fakeClock{t: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	m := NewMemory(clock.Now)
	ctx := context.Background()
	for i := range 1000 {
		if _, err := m.Allow(ctx, fmt.Sprintf("acct-%d", i), 10, time.Second); err != nil {
			t.Fatal(err)
		}
	}
	if n := m.len(); n != 1000 {
		t.Fatalf("%d counters after 1000 keys, want 1000", n)
	}
	clock.Advance(sweepEvery + time.Second)
	// Touch every shard once with a new key: each sweeps its ended windows.
	touched := map[uint64]bool{}
	for i := 0; len(touched) < memShards; i++ {
		key := fmt.Sprintf("new-%d", i)
		shard := maphash.String(m.seed, key) & (memShards - 1)
		if touched[shard] {
			continue
		}
		touched[shard] = true
		if _, err := m.Allow(ctx, key, 10, time.Second); err != nil {
			t.Fatal(err)
		}
	}
	if n := m.len(); n != memShards {
		t.Fatalf("%d counters after the windows ended, want only the %d new ones", n, memShards)
	}
}

func TestMemoryClockStepBackKeepsWindow(t *testing.T) {
	clock := &fakeClock{t: time.Date(2025, 1, 1, 0, 1, 0, 0, time.UTC)}
	m := NewMemory(clock.Now)
	ctx := context.Background()
	if d, _ := m.Allow(ctx, "acct", 1, time.Minute); !d.Allowed {
		t.Fatalf("first request refused: %+v", d)
	}
	clock.Advance(-30 * time.Second) // into the previous window
	d, err := m.Allow(ctx, "acct", 1, time.Minute)
	if err != nil || d.Allowed || d.RetryAfter != 90*time.Second {
		t.Fatalf("after stepping back: %+v, %v; want refused until the stored window ends (90s)", d, err)
	}
}

func TestMemoryCanceledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := NewMemory(nil).Allow(ctx, "acct", 1, time.Minute); !errors.Is(err, context.Canceled) {
		t.Fatalf("Allow with canceled context: %v, want context.Canceled", err)
	}
}

// ---- Redis only ----

func TestRedisReplicasShareBudget(t *testing.T) {
	const limit, window = 30, time.Hour
	prefix := uniquePrefix()
	replicas := []*Redis{NewRedis(redisClient(t), prefix), NewRedis(redisClient(t), prefix)}
	redisImpl(replicas[0]).ensureRoom(t, window, 5*time.Minute)

	var allowed atomic.Int64
	var wg sync.WaitGroup
	for i := range 100 {
		wg.Go(func() {
			d, err := replicas[i%2].Allow(context.Background(), "acct", limit, window)
			if err != nil {
				t.Errorf("replica %d: %v", i%2, err)
				return
			}
			if d.Allowed {
				allowed.Add(1)
			}
		})
	}
	wg.Wait()
	if n := allowed.Load(); n != limit {
		t.Fatalf("%d requests allowed across two replicas, want exactly %d", n, limit)
	}
	for i, r := range replicas {
		d, err := r.Allow(context.Background(), "acct", limit, window)
		if err != nil || d.Allowed {
			t.Fatalf("replica %d after the shared budget is spent: %+v, %v; want refused", i, d, err)
		}
	}
}

func TestRedisCounterExpires(t *testing.T) {
	client := redisClient(t)
	prefix := uniquePrefix()
	r := NewRedis(client, prefix)
	ctx := context.Background()
	d, err := r.Allow(ctx, "acct", 5, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	ttl, err := client.PTTL(ctx, prefix+"60000:acct").Result()
	if err != nil {
		t.Fatal(err)
	}
	if ttl <= 0 || ttl > d.Reset {
		t.Fatalf("counter TTL %s, want 0 < TTL <= Reset %s", ttl, d.Reset)
	}
}

func TestRedisSurvivesScriptFlush(t *testing.T) {
	client := redisClient(t)
	r := NewRedis(client, uniquePrefix())
	ctx := context.Background()
	if _, err := r.Allow(ctx, "acct", 5, time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := client.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Allow(ctx, "acct", 5, time.Hour); err != nil {
		t.Fatalf("Allow after SCRIPT FLUSH: %v", err)
	}
}

func TestRedisErrorIsWrapped(t *testing.T) {
	port, err := freePort() // nothing listens there
	if err != nil {
		t.Fatal(err)
	}
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port), MaxRetries: -1, DialerRetries: 1})
	defer client.Close()
	d, err := NewRedis(client, "x:").Allow(context.Background(), "acct", 5, time.Minute)
	if err == nil || !strings.Contains(err.Error(), `ratelimit: redis allow "acct"`) || d != (Decision{}) {
		t.Fatalf("Allow against a dead server: %+v, %v; want a wrapped error", d, err)
	}
}

func TestNewRedisFromURL(t *testing.T) {
	if _, err := NewRedisFromURL("http://nope"); err == nil {
		t.Fatal("NewRedisFromURL accepted an http URL")
	}
	redisClient(t) // start the server
	r, err := NewRedisFromURL("redis://" + testRedis.addr + "/0")
	if err != nil {
		t.Fatal(err)
	}
	r.prefix = uniquePrefix()
	if d, err := r.Allow(context.Background(), "acct", 1, time.Hour); err != nil || d.Limit != 1 {
		t.Fatalf("Allow: %+v, %v", d, err)
	}
	if err := r.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := NewRedis(redisClient(t), "x:").Close(); err != nil {
		t.Fatalf("Close of a limiter not owning its client: %v", err)
	}
}

// ---- benchmarks ----

// benchAllow runs Allow in parallel over 1024 keys at the default limit.
func benchAllow(b *testing.B, lim Limiter) {
	keys := make([]string, 1024)
	for i := range keys {
		keys[i] = "acct_" + strconv.Itoa(i)
	}
	var seq atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := int(seq.Add(1)) * 7919
		for pb.Next() {
			i++
			if _, err := lim.Allow(context.Background(), keys[i%len(keys)], DefaultLimit, DefaultWindow); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func BenchmarkMemoryAllow(b *testing.B) {
	benchAllow(b, NewMemory(nil))
}

func BenchmarkRedisAllow(b *testing.B) {
	benchAllow(b, NewRedis(redisClient(b), uniquePrefix()))
}
