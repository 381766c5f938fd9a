package api

import (
	"context"
	"errors"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/api/ratelimit"
	"github.com/sikahq/sika/gateway"
	"github.com/sikahq/sika/gateway/sandbox"
)

func TestRateLimit(t *testing.T) {
	ts := newTestServer(t, func(c *Config) { c.RateLimitPerMinute = 3 })
	a := ts.newAccount(t, true)
	b := ts.newAccount(t, true)

	for i := 0; i < 3; i++ {
		r := ts.call(t, "GET", "/api/v1/networks/", nil, a.key(sika.EnvironmentTest, sika.ScopeBoth)...)
		require.Equal(t, 200, r.Status)
		assert.Equal(t, "3", r.Header.Get("RateLimit-Limit"))
		assert.Equal(t, strconv.Itoa(2-i), r.Header.Get("RateLimit-Remaining"))
		reset, err := strconv.Atoi(r.Header.Get("RateLimit-Reset"))
		require.NoError(t, err)
		assert.True(t, reset >= 1 && reset <= 60, "RateLimit-Reset %d", reset)
		assert.Empty(t, r.Header.Get("Retry-After"))
	}
	// The budget is the account's, whatever the key or session: a LIVE key and the dashboard
	// of the same merchant are refused too.
	for _, h := range [][]string{a.key(sika.EnvironmentTest, sika.ScopeBoth), a.key(sika.EnvironmentLive, sika.ScopePayin), a.dashboard(sika.EnvironmentTest)} {
		r := ts.call(t, "GET", "/api/v1/networks/", nil, h...)
		assert.Equal(t, 429, r.Status)
		assert.Equal(t, "rate_limited", r.code())
		assert.Equal(t, "0", r.Header.Get("RateLimit-Remaining"))
		retry, err := strconv.Atoi(r.Header.Get("Retry-After"))
		require.NoError(t, err)
		assert.True(t, retry >= 1 && retry <= 60, "Retry-After %d", retry)
	}
	// Another merchant has its own budget.
	assert.Equal(t, 200, ts.call(t, "GET", "/api/v1/networks/", nil, b.key(sika.EnvironmentTest, sika.ScopeBoth)...).Status)

	// A per-merchant override replaces the default.
	c := ts.newAccount(t, true)
	five := 5
	require.NoError(t, testStore.SetMerchantRateLimit(t.Context(), c.Merchant.ID, &five))
	for i := 0; i < 5; i++ {
		r := ts.call(t, "GET", "/api/v1/networks/", nil, c.key(sika.EnvironmentTest, sika.ScopeBoth)...)
		require.Equal(t, 200, r.Status, "request %d", i+1)
		assert.Equal(t, "5", r.Header.Get("RateLimit-Limit"))
	}
	assert.Equal(t, 429, ts.call(t, "GET", "/api/v1/networks/", nil, c.key(sika.EnvironmentTest, sika.ScopeBoth)...).Status)
}

func TestLoginIsThrottledPerIP(t *testing.T) {
	ts := newTestServer(t, func(c *Config) { c.PublicRateLimitPerMinute = 2 })
	body := map[string]string{"email": "nobody-per-ip@example.com", "password": "wrong password"}
	for i := 0; i < 2; i++ {
		r := ts.call(t, "POST", "/api/v1/auth/login/", body)
		assert.Equal(t, 401, r.Status)
		assert.Equal(t, "invalid_credentials", r.code())
	}
	r := ts.call(t, "POST", "/api/v1/auth/login/", body)
	assert.Equal(t, 429, r.Status)
	assert.NotEmpty(t, r.Header.Get("Retry-After"))
}

// TestGatewayCallbacksLimitedPerGatewayAndSource: past its budget a source's callbacks for a
// gateway are refused 429 before their signature is checked; another source, or another gateway,
// has its own budget.
func TestGatewayCallbacksLimitedPerGatewayAndSource(t *testing.T) {
	var gws []gateway.Gateway
	for _, g := range sandbox.DefaultGateways("callback limit test secret") {
		gws = append(gws, sandbox.NewClient(sandbox.ClientConfig{Name: g.Name, BaseURL: "http://127.0.0.1:1", APIKey: g.APIKey,
			CallbackSecret: g.CallbackSecret, Timeout: time.Second}))
	}
	ts := newTestServer(t, func(c *Config) {
		c.Gateways = gateway.NewRouter(gateway.HealthPolicy{}, gws...)
		c.CallbackRateLimitPerMinute = 2
		c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	})
	post := func(gw, from string) *http.Response {
		req, err := http.NewRequest("POST", ts.url+"/gateway-callbacks/"+gw+"/", strings.NewReader(`{"reference":"x"}`))
		require.NoError(t, err)
		req.Header.Set("X-Forwarded-For", from)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp
	}
	for i := 0; i < 2; i++ {
		assert.Equal(t, 401, post("sandbox-a", "41.138.0.1").StatusCode, "unsigned, within the budget")
	}
	over := post("sandbox-a", "41.138.0.1")
	assert.Equal(t, 429, over.StatusCode)
	assert.NotEmpty(t, over.Header.Get("Retry-After"))
	assert.Equal(t, 401, post("sandbox-a", "41.138.0.2").StatusCode, "another source")
	assert.Equal(t, 401, post("sandbox-b", "41.138.0.1").StatusCode, "another gateway")
	for i := 0; i < 2; i++ {
		assert.Equal(t, 404, post("made-up-"+strconv.Itoa(i), "41.138.0.3").StatusCode)
	}
	assert.Equal(t, 429, post("made-up-2", "41.138.0.3").StatusCode, "unknown gateways share one budget")
}

// failingLimiter is a shared limiter that is down.
type failingLimiter struct{}

func (failingLimiter) Allow(context.Context, string, int, time.Duration) (ratelimit.Decision, error) {
	return ratelimit.Decision{}, errors.New("redis: connection refused")
}

// TestLimiterDownStillThrottles: with the shared limiter down, logins are counted by the
// process's own limiter (they were let through unlimited).
func TestLimiterDownStillThrottles(t *testing.T) {
	ts := newTestServer(t, func(c *Config) { c.PublicRateLimitPerMinute = 2; c.Limiter = failingLimiter{} })
	body := map[string]string{"email": "nobody-down@example.com", "password": "wrong password"}
	for i := 0; i < 2; i++ {
		assert.Equal(t, 401, ts.call(t, "POST", "/api/v1/auth/login/", body).Status)
	}
	r := ts.call(t, "POST", "/api/v1/auth/login/", body)
	assert.Equal(t, 429, r.Status)
	assert.Equal(t, "rate_limited", r.code())
}

// TestPublicBudgetGroupsIPv6By64: an IPv6 client's addresses of one /64 share its budget.
func TestPublicBudgetGroupsIPv6By64(t *testing.T) {
	ts := newTestServer(t, func(c *Config) {
		c.PublicRateLimitPerMinute = 2
		c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	})
	body := map[string]string{"email": "nobody-v6@example.com", "password": "wrong password"}
	from := func(a string) []string { return []string{"X-Forwarded-For", a} }
	assert.Equal(t, 401, ts.call(t, "POST", "/api/v1/auth/login/", body, from("2001:db8:1:2::1")...).Status)
	assert.Equal(t, 401, ts.call(t, "POST", "/api/v1/auth/login/", body, from("2001:db8:1:2:ffff::9")...).Status)
	assert.Equal(t, 429, ts.call(t, "POST", "/api/v1/auth/login/", body, from("2001:db8:1:2:abcd:1234:5678:9")...).Status,
		"a third address of the same /64")
	assert.Equal(t, 401, ts.call(t, "POST", "/api/v1/auth/login/", body, from("2001:db8:1:3::1")...).Status, "another /64")
}

// TestFailedLoginsLockTheAccount: failures count per account whatever the address (4 addresses
// × 5 wrong passwords, then the right one from a fifth, was 200), the wait doubles, the right
// password is refused while the account waits, the dashboard and console forms and another
// replica share the count, and a success after the wait forgets it.
func TestFailedLoginsLockTheAccount(t *testing.T) {
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	configure := func(c *Config) {
		c.Now = clock
		c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	}
	ts := newTestServer(t, configure)
	other := newTestServer(t, configure) // another replica
	acct := ts.newAccount(t, false)
	login := func(srv *testServer, password, from string) *response {
		return srv.call(t, "POST", "/api/v1/auth/login/", map[string]string{"email": acct.Member.Email, "password": password},
			"X-Forwarded-For", from)
	}
	statuses := map[int]int{}
	for addr := 1; addr <= 4; addr++ {
		for i := 0; i < 5; i++ {
			statuses[login(ts, "wrong password", "41.202.0."+strconv.Itoa(addr)).Status]++
		}
	}
	assert.Equal(t, map[int]int{401: 5, 429: 15}, statuses, "five tries, then the account waits")
	r := login(ts, "correct horse battery", "41.202.0.5")
	assert.Equal(t, 429, r.Status, "the right password from a fifth address is refused while the account waits")
	assert.Equal(t, "rate_limited", r.code())
	retry, err := strconv.Atoi(r.Header.Get("Retry-After"))
	require.NoError(t, err)
	assert.True(t, retry > 0 && retry <= 30, "Retry-After %d", retry)
	assert.Equal(t, 429, login(other, "correct horse battery", "41.202.0.6").Status, "another replica")
	form := newDashClient(t, ts.url).login(t, acct.Member.Email, "correct horse battery")
	assert.Equal(t, http.StatusTooManyRequests, form.Status, "the dashboard's form")
	formRetry, err := strconv.Atoi(form.Header.Get("Retry-After"))
	require.NoError(t, err, "the form's answer says how long too")
	assert.Equal(t, retry, formRetry)
	assert.Contains(t, form.Body, "Réessayez dans "+strconv.Itoa(retry)+" s.", "the page tells the wait")
	assert.Equal(t, http.StatusTooManyRequests, newDashClient(t, ts.url).consoleLogin(t, acct.Member.Email, "correct horse battery").Status,
		"the console's form")

	advance(31 * time.Second)
	assert.Equal(t, 401, login(ts, "wrong password", "41.202.0.7").Status, "after the wait, one more try")
	advance(31 * time.Second)
	assert.Equal(t, 429, login(ts, "correct horse battery", "41.202.0.7").Status, "the wait doubled (60 s)")
	advance(30 * time.Second)
	assert.Equal(t, 200, login(ts, "correct horse battery", "41.202.0.8").Status)
	for i := 0; i < 4; i++ {
		assert.Equal(t, 401, login(other, "wrong password", "41.202.0.9").Status, "a success forgot the failures")
	}
}
