package api

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika"
)

// mountProbe adds a route under /api/v1/test/ that answers who called it; tests use it to
// exercise the middleware chain on options no real route has yet.
func (ts *testServer) mountProbe(path string, o routeOpts, h handlerFunc) {
	if h == nil {
		h = func(w http.ResponseWriter, r *http.Request) error {
			p := principalFrom(r.Context())
			out := map[string]any{}
			if p != nil && p.Merchant != nil {
				out["merchant"], out["environment"], out["scope"] = p.Merchant.ID, p.Environment, p.Scope
			}
			writeData(w, http.StatusOK, out)
			return nil
		}
	}
	ts.handle(ts.router, http.MethodPost, "/test"+path, h, o)
}

func TestAuthenticationFailures(t *testing.T) {
	ts := newTestServer(t)
	acct := ts.newAccount(t, true)
	revoked := ts.call(t, http.MethodPost, "/api/v1/api-keys/"+acct.KeyIDs["TEST/BOTH"].String()+"/revoke/", nil, acct.dashboard(sika.EnvironmentTest)...)
	require.Equal(t, http.StatusOK, revoked.Status, "%s", revoked.Body)

	clock := &fixedClock{t: time.Now().Add(-2 * time.Hour)}
	past := newTestServer(t, func(c *Config) { c.Now = clock.now })
	expired, _, err := past.issueToken(acct.Member)
	require.NoError(t, err)
	otherSecret := newTestServer(t, func(c *Config) { c.JWTSecret = []byte("another secret of thirty-two bytes or more") })
	forged, _, err := otherSecret.issueToken(acct.Member)
	require.NoError(t, err)

	cases := []struct {
		name    string
		headers []string
		status  int
		code    string
	}{
		{"no credentials", nil, 401, "authentication_required"},
		{"basic scheme", []string{"Authorization", "Basic dXNlcjpwYXNz"}, 401, "invalid_credentials"},
		{"bearer without value", []string{"Authorization", "Bearer "}, 401, "invalid_credentials"},
		{"malformed key", bearer("sk_test_short"), 401, "invalid_credentials"},
		{"unknown key", bearer("sk_test_" + "0123456789abcdefghijABCDEFGHIJ0123456789abc"), 401, "invalid_credentials"},
		{"revoked key", acct.key(sika.EnvironmentTest, sika.ScopeBoth), 401, "invalid_credentials"},
		{"garbage token", bearer("not.a.jwt"), 401, "invalid_credentials"},
		{"token signed with another secret", bearer(forged), 401, "invalid_credentials"},
		{"expired token", bearer(expired), 401, "token_expired"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := ts.call(t, http.MethodGet, "/api/v1/networks/", nil, c.headers...)
			assert.Equal(t, c.status, r.Status, "%s", r.Body)
			assert.Equal(t, c.code, r.code())
			assert.Empty(t, r.Header.Get("RateLimit-Limit"), "unauthenticated calls are not counted")
		})
	}

	t.Run("a valid key and a valid token pass", func(t *testing.T) {
		assert.Equal(t, 200, ts.call(t, http.MethodGet, "/api/v1/networks/", nil, acct.key(sika.EnvironmentLive, sika.ScopePayin)...).Status)
		assert.Equal(t, 200, ts.call(t, http.MethodGet, "/api/v1/networks/", nil, bearer(acct.Token)...).Status)
	})
	t.Run("the key records its last use", func(t *testing.T) {
		r := ts.call(t, http.MethodGet, "/api/v1/api-keys/", nil, acct.dashboard(sika.EnvironmentLive)...)
		var pg struct{ Results []sika.APIKey }
		r.data(t, &pg)
		var payin *sika.APIKey
		for i := range pg.Results {
			if pg.Results[i].ID == acct.KeyIDs["LIVE/PAYIN"] {
				payin = &pg.Results[i]
			}
		}
		require.NotNil(t, payin)
		assert.NotNil(t, payin.LastUsedAt)
		assert.Empty(t, payin.Secret, "a list never shows secrets")
	})
}

func TestDashboardOnlyRoutesRefuseAPIKeys(t *testing.T) {
	ts := newTestServer(t)
	acct := ts.newAccount(t, true)
	key := acct.key(sika.EnvironmentTest, sika.ScopeBoth)
	for _, rt := range []struct{ method, path string }{
		{"GET", "/api/v1/api-keys/"}, {"POST", "/api/v1/api-keys/"},
		{"POST", "/api/v1/api-keys/" + acct.KeyIDs["TEST/BOTH"].String() + "/revoke/"},
		{"GET", "/api/v1/ip-whitelist/"}, {"POST", "/api/v1/ip-whitelist/"},
		{"GET", "/api/v1/merchant-settings/"}, {"PATCH", "/api/v1/merchant-settings/"},
		{"GET", "/api/v1/auth/merchants/"}, {"POST", "/api/v1/auth/merchants/"},
	} {
		r := ts.call(t, rt.method, rt.path, map[string]any{}, key...)
		assert.Equal(t, 403, r.Status, "%s %s: %s", rt.method, rt.path, r.Body)
		assert.Equal(t, "dashboard_only", r.code(), "%s %s", rt.method, rt.path)
	}
	// Nothing was revoked by the refused call.
	assert.Equal(t, 200, ts.call(t, "GET", "/api/v1/networks/", nil, key...).Status)
}

func TestScopes(t *testing.T) {
	ts := newTestServer(t)
	ts.mountProbe("/payin/", routeOpts{access: accessMerchant, scope: sika.ScopePayin}, nil)
	ts.mountProbe("/payout/", routeOpts{access: accessMerchant, scope: sika.ScopePayout}, nil)
	acct := ts.newAccount(t, true)
	cases := []struct {
		scope sika.Scope
		path  string
		ok    bool
	}{
		{sika.ScopePayin, "/payin/", true}, {sika.ScopePayin, "/payout/", false},
		{sika.ScopePayout, "/payin/", false}, {sika.ScopePayout, "/payout/", true},
		{sika.ScopeBoth, "/payin/", true}, {sika.ScopeBoth, "/payout/", true},
	}
	for _, c := range cases {
		r := ts.call(t, "POST", "/api/v1/test"+c.path, nil, acct.key(sika.EnvironmentTest, c.scope)...)
		if c.ok {
			assert.Equal(t, 200, r.Status, "%s on %s: %s", c.scope, c.path, r.Body)
		} else {
			assert.Equal(t, 403, r.Status, "%s on %s", c.scope, c.path)
			assert.Equal(t, "api_key_scope_forbidden", r.code())
		}
	}
	// A dashboard session may do everything its member may.
	r := ts.call(t, "POST", "/api/v1/test/payout/", nil, acct.dashboard(sika.EnvironmentTest)...)
	assert.Equal(t, 200, r.Status)
}

func TestMerchantStanding(t *testing.T) {
	ts := newTestServer(t)
	inactive := ts.newAccount(t, false)
	r := ts.call(t, "GET", "/api/v1/networks/", nil, inactive.key(sika.EnvironmentLive, sika.ScopeBoth)...)
	assert.Equal(t, 403, r.Status)
	assert.Equal(t, "merchant_inactive", r.code())
	r = ts.call(t, "GET", "/api/v1/networks/", nil, inactive.key(sika.EnvironmentTest, sika.ScopeBoth)...)
	assert.Equal(t, 200, r.Status, "TEST keeps working for inactive merchants")

	suspended := ts.newAccount(t, true)
	_, err := testStore.Pool().Exec(t.Context(), `UPDATE merchants SET is_suspended = true WHERE id = $1`, suspended.Merchant.ID)
	require.NoError(t, err)
	testStore.FlushReadCache() // as the notification of the change does, without waiting for it
	for _, env := range []sika.Environment{sika.EnvironmentTest, sika.EnvironmentLive} {
		r = ts.call(t, "GET", "/api/v1/networks/", nil, suspended.key(env, sika.ScopeBoth)...)
		assert.Equal(t, 403, r.Status)
		assert.Equal(t, "merchant_suspended", r.code())
	}
}

func TestTenancy(t *testing.T) {
	ts := newTestServer(t)
	a := ts.newAccount(t, true)
	b := ts.newAccount(t, true)

	t.Run("another merchant's key cannot be revoked: 404, and the key still works", func(t *testing.T) {
		r := ts.call(t, "POST", "/api/v1/api-keys/"+a.KeyIDs["TEST/BOTH"].String()+"/revoke/", nil, b.dashboard(sika.EnvironmentTest)...)
		assert.Equal(t, 404, r.Status)
		assert.Equal(t, "not_found", r.code())
		assert.Equal(t, 200, ts.call(t, "GET", "/api/v1/networks/", nil, a.key(sika.EnvironmentTest, sika.ScopeBoth)...).Status)
	})
	t.Run("a LIVE key is invisible from the TEST environment", func(t *testing.T) {
		r := ts.call(t, "POST", "/api/v1/api-keys/"+a.KeyIDs["LIVE/BOTH"].String()+"/revoke/", nil, a.dashboard(sika.EnvironmentTest)...)
		assert.Equal(t, 404, r.Status)
		var pg struct {
			Count   int
			Results []sika.APIKey
		}
		ts.call(t, "GET", "/api/v1/api-keys/", nil, a.dashboard(sika.EnvironmentTest)...).data(t, &pg)
		assert.Equal(t, 3, pg.Count)
		for _, k := range pg.Results {
			assert.Equal(t, sika.EnvironmentTest, k.Environment)
			assert.Equal(t, a.Merchant.ID, k.Merchant)
		}
	})
	t.Run("whitelist entries are per merchant and environment", func(t *testing.T) {
		r := ts.call(t, "POST", "/api/v1/ip-whitelist/", map[string]string{"ip_address": "203.0.113.7"}, a.dashboard(sika.EnvironmentLive)...)
		require.Equal(t, 201, r.Status, "%s", r.Body)
		var entry sika.IPWhitelistEntry
		r.data(t, &entry)
		assert.Equal(t, "203.0.113.7", entry.IPAddress)
		assert.Equal(t, 404, ts.call(t, "DELETE", "/api/v1/ip-whitelist/"+entry.ID.String()+"/", nil, b.dashboard(sika.EnvironmentLive)...).Status)
		assert.Equal(t, 404, ts.call(t, "DELETE", "/api/v1/ip-whitelist/"+entry.ID.String()+"/", nil, a.dashboard(sika.EnvironmentTest)...).Status)
		var pg struct{ Count int }
		ts.call(t, "GET", "/api/v1/ip-whitelist/", nil, b.dashboard(sika.EnvironmentLive)...).data(t, &pg)
		assert.Equal(t, 0, pg.Count)
		ts.call(t, "GET", "/api/v1/ip-whitelist/", nil, a.dashboard(sika.EnvironmentTest)...).data(t, &pg)
		assert.Equal(t, 0, pg.Count)
		assert.Equal(t, 200, ts.call(t, "DELETE", "/api/v1/ip-whitelist/"+entry.ID.String()+"/", nil, a.dashboard(sika.EnvironmentLive)...).Status)
	})
	t.Run("a whitelist entry is not most of the internet", func(t *testing.T) {
		for _, wide := range []string{"0.0.0.0/0", "128.0.0.0/1", "10.0.0.0/7", "::/0", "2001:db8::/31"} {
			r := ts.call(t, "POST", "/api/v1/ip-whitelist/", map[string]string{"ip_address": wide}, a.dashboard(sika.EnvironmentLive)...)
			assert.Equal(t, 400, r.Status, "%s: %s", wide, r.Body)
			assert.Contains(t, strings.Join(r.fields()["ip_address"], " "), "wider than", wide)
		}
		for _, ok := range []string{"10.0.0.0/8", "198.51.100.0/24", "2001:db8::/32"} {
			r := ts.call(t, "POST", "/api/v1/ip-whitelist/", map[string]string{"ip_address": ok}, a.dashboard(sika.EnvironmentLive)...)
			require.Equal(t, 201, r.Status, "%s: %s", ok, r.Body)
			var entry sika.IPWhitelistEntry
			r.data(t, &entry)
			assert.Equal(t, 200, ts.call(t, "DELETE", "/api/v1/ip-whitelist/"+entry.ID.String()+"/", nil, a.dashboard(sika.EnvironmentLive)...).Status)
		}
	})
	t.Run("a member cannot act for a merchant it does not belong to", func(t *testing.T) {
		h := append(a.dashboard(sika.EnvironmentTest), "X-Merchant-Id", b.Merchant.ID.String())
		r := ts.call(t, "GET", "/api/v1/api-keys/", nil, h...)
		assert.Equal(t, 404, r.Status)
		assert.Equal(t, "not_found", r.code())
	})
	t.Run("settings are per environment", func(t *testing.T) {
		r := ts.call(t, "PATCH", "/api/v1/merchant-settings/", map[string]any{"fee_charge_mode": "ADD_ON", "allow_client_override": true}, a.dashboard(sika.EnvironmentTest)...)
		require.Equal(t, 200, r.Status, "%s", r.Body)
		var live sika.MerchantSettings
		ts.call(t, "GET", "/api/v1/merchant-settings/", nil, a.dashboard(sika.EnvironmentLive)...).data(t, &live)
		assert.Equal(t, sika.FeeDeducted, live.FeeChargeMode)
		assert.False(t, live.AllowClientOverride)
		var test sika.MerchantSettings
		ts.call(t, "GET", "/api/v1/merchant-settings/", nil, a.dashboard(sika.EnvironmentTest)...).data(t, &test)
		assert.Equal(t, sika.FeeAddOn, test.FeeChargeMode)
		assert.True(t, test.AllowClientOverride)
		var other sika.MerchantSettings
		ts.call(t, "GET", "/api/v1/merchant-settings/", nil, b.dashboard(sika.EnvironmentTest)...).data(t, &other)
		assert.Equal(t, sika.FeeDeducted, other.FeeChargeMode)
	})
	t.Run("the principal carries the key's environment", func(t *testing.T) {
		ts.mountProbe("/whoami/", routeOpts{access: accessMerchant}, nil)
		var got map[string]string
		ts.call(t, "POST", "/api/v1/test/whoami/", nil, a.key(sika.EnvironmentTest, sika.ScopePayin)...).data(t, &got)
		assert.Equal(t, "TEST", got["environment"])
		assert.Equal(t, a.Merchant.ID.String(), got["merchant"])
		ts.call(t, "POST", "/api/v1/test/whoami/", nil, b.key(sika.EnvironmentLive, sika.ScopePayin)...).data(t, &got)
		assert.Equal(t, "LIVE", got["environment"])
		assert.Equal(t, b.Merchant.ID.String(), got["merchant"])
	})
}
