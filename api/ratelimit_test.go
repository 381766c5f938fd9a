package api

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika"
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
	body := map[string]string{"email": "nobody@example.com", "password": "wrong password"}
	for i := 0; i < 2; i++ {
		r := ts.call(t, "POST", "/api/v1/auth/login/", body)
		assert.Equal(t, 401, r.Status)
		assert.Equal(t, "invalid_credentials", r.code())
	}
	r := ts.call(t, "POST", "/api/v1/auth/login/", body)
	assert.Equal(t, 429, r.Status)
	assert.NotEmpty(t, r.Header.Get("Retry-After"))
}
