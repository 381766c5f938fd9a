package api

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika"
)

// syncBuffer is a log sink safe for concurrent handlers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestRegisterLoginAndKeys(t *testing.T) {
	logs := &syncBuffer{}
	ts := newTestServer(t, func(c *Config) { c.Logger = slog.New(slog.NewJSONHandler(logs, nil)) })
	password := "a long enough password"
	r := ts.call(t, "POST", "/api/v1/auth/register/", map[string]any{
		"email": "Owner@Example.com", "password": password, "full_name": "Awa Owner", "business_name": "Awa Shop", "country": "sn"})
	require.Equal(t, 201, r.Status, "%s", r.Body)
	var reg sessionResponse
	r.data(t, &reg)
	assert.Equal(t, "Bearer", reg.TokenType)
	require.Len(t, reg.Merchants, 1)
	m := reg.Merchants[0]
	assert.Equal(t, "SN", m.Country)
	assert.Equal(t, sika.KYCPending, m.KYCStatus)
	assert.False(t, m.IsActive, "a new merchant is not active until KYC approval")
	assert.Equal(t, sika.RoleOwner, m.Role)

	t.Run("the same email in another case is taken", func(t *testing.T) {
		r := ts.call(t, "POST", "/api/v1/auth/register/", map[string]any{
			"email": "owner@example.com", "password": password, "full_name": "X", "business_name": "Y", "country": "SN"})
		assert.Equal(t, 400, r.Status)
		assert.Contains(t, r.fields(), "email")
	})
	t.Run("login", func(t *testing.T) {
		r := ts.call(t, "POST", "/api/v1/auth/login/", map[string]string{"email": "owner@example.com", "password": password})
		require.Equal(t, 200, r.Status, "%s", r.Body)
		var s sessionResponse
		r.data(t, &s)
		assert.NotEmpty(t, s.AccessToken)
		assert.Equal(t, reg.Member.ID, s.Member.ID)
		assert.Equal(t, "no-store", r.Header.Get("Cache-Control"), "a session token is kept by no cache")
		r = ts.call(t, "POST", "/api/v1/auth/login/", map[string]string{"email": "owner@example.com", "password": "wrong password!"})
		assert.Equal(t, 401, r.Status)
		assert.Equal(t, "invalid_credentials", r.code())
		assert.Equal(t, `Bearer realm="sika"`, r.Header.Get("WWW-Authenticate"), "a 401 names its scheme")
		r = ts.call(t, "GET", "/api/v1/networks/", nil)
		assert.Equal(t, "authentication_required", r.code())
		assert.Equal(t, `Bearer realm="sika"`, r.Header.Get("WWW-Authenticate"))
	})

	dash := append(bearer(reg.AccessToken), "X-Environment", "TEST")
	t.Run("a second merchant, chosen with X-Merchant-Id", func(t *testing.T) {
		r := ts.call(t, "POST", "/api/v1/auth/merchants/", map[string]string{"business_name": "Awa Two", "country": "CI"}, bearer(reg.AccessToken)...)
		require.Equal(t, 201, r.Status, "%s", r.Body)
		var second sika.MerchantMembership
		r.data(t, &second)
		var list []sika.MerchantMembership
		ts.call(t, "GET", "/api/v1/auth/merchants/", nil, bearer(reg.AccessToken)...).data(t, &list)
		require.Len(t, list, 2)
		assert.Equal(t, m.ID, list[0].ID, "the first merchant stays the default")
		r = ts.call(t, "POST", "/api/v1/api-keys/", map[string]string{"scope": "PAYIN", "name": "second"},
			append(dash, "X-Merchant-Id", second.ID.String())...)
		require.Equal(t, 201, r.Status)
		var k sika.APIKey
		r.data(t, &k)
		assert.Equal(t, second.ID, k.Merchant)
	})

	var created sika.APIKey
	t.Run("create a key: the secret is shown once", func(t *testing.T) {
		r := ts.call(t, "POST", "/api/v1/api-keys/", map[string]string{"scope": "both", "name": "backend"}, dash...)
		require.Equal(t, 201, r.Status, "%s", r.Body)
		r.data(t, &created)
		assert.True(t, strings.HasPrefix(created.Secret, "sk_test_"), created.Secret)
		assert.GreaterOrEqual(t, len(created.Secret), len("sk_test_")+43)
		assert.Equal(t, created.Secret[:12], created.Prefix)
		assert.Equal(t, sika.ScopeBoth, created.Scope)
		assert.Equal(t, sika.EnvironmentTest, created.Environment)
		assert.Equal(t, "no-store", r.Header.Get("Cache-Control"), "the secret is kept by no cache")
		assert.Equal(t, "nosniff", r.Header.Get("X-Content-Type-Options"))
		assert.NotContains(t, string(ts.call(t, "GET", "/api/v1/api-keys/", nil, dash...).Body), created.Secret)
	})
	t.Run("the key works in TEST even though the merchant is inactive, until revoked", func(t *testing.T) {
		assert.Equal(t, 200, ts.call(t, "GET", "/api/v1/networks/", nil, bearer(created.Secret)...).Status)
		r := ts.call(t, "POST", "/api/v1/api-keys/"+created.ID.String()+"/revoke/", nil, dash...)
		require.Equal(t, 200, r.Status)
		var k sika.APIKey
		r.data(t, &k)
		assert.NotNil(t, k.RevokedAt)
		assert.Equal(t, 401, ts.call(t, "GET", "/api/v1/networks/", nil, bearer(created.Secret)...).Status)
	})
	t.Run("LIVE keys are sk_live_", func(t *testing.T) {
		r := ts.call(t, "POST", "/api/v1/api-keys/", map[string]string{"scope": "PAYOUT"}, append(bearer(reg.AccessToken), "X-Environment", "LIVE")...)
		var k sika.APIKey
		r.data(t, &k)
		assert.True(t, strings.HasPrefix(k.Secret, "sk_live_"))
		r = ts.call(t, "GET", "/api/v1/networks/", nil, bearer(k.Secret)...)
		assert.Equal(t, 403, r.Status)
		assert.Equal(t, "merchant_inactive", r.code())
	})
	t.Run("logs never carry a key, a token or a password", func(t *testing.T) {
		out := logs.String()
		assert.NotEmpty(t, out)
		for _, secret := range []string{created.Secret, reg.AccessToken, password} {
			assert.NotContains(t, out, secret)
		}
		assert.Contains(t, out, `"route":"/api/v1/api-keys/"`)
	})
}

func TestCatalogue(t *testing.T) {
	ts := newTestServer(t)
	acct := ts.newAccount(t, true)
	key := acct.key(sika.EnvironmentTest, sika.ScopePayin)

	r := ts.call(t, "GET", "/api/v1/countries/", nil)
	require.Equal(t, 200, r.Status)
	assert.True(t, bytes.HasPrefix(r.Body, []byte("[")), "countries is a bare array")
	var countries []sika.Country
	require.NoError(t, json.Unmarshal(r.Body, &countries))
	assert.Len(t, countries, 12)
	var benin sika.Country
	for _, c := range countries {
		if c.ISOCode == "BJ" {
			benin = c
		}
	}
	assert.Equal(t, "XOF", benin.DefaultCurrency)

	var got sika.Country
	ts.call(t, "GET", "/api/v1/countries/"+benin.ID.String()+"/", nil, key...).data(t, &got)
	assert.Equal(t, benin.ID, got.ID)
	assert.Equal(t, 401, ts.call(t, "GET", "/api/v1/countries/"+benin.ID.String()+"/", nil).Status, "country detail needs auth")

	var networks struct {
		Count   int
		Results []sika.Network
	}
	ts.call(t, "GET", "/api/v1/networks/?page_size=100", nil, key...).data(t, &networks)
	assert.Equal(t, 29, networks.Count)
	codes := map[string]sika.Network{}
	for _, n := range networks.Results {
		codes[n.Code] = n
	}
	for _, c := range []string{"MTN_BJ", "MOOV_BJ", "CELTIIS_BJ", "ORANGE_CI", "WAVE_SN", "AIRTEL_NE", "VODACOM_CD", "TMONEY_TG"} {
		assert.Contains(t, codes, c)
	}
	assert.Equal(t, benin.ID, codes["MTN_BJ"].Country)
	var n sika.Network
	ts.call(t, "GET", "/api/v1/networks/"+codes["WAVE_CI"].ID.String()+"/", nil, key...).data(t, &n)
	assert.Equal(t, "WAVE_CI", n.Code)

	var rates struct {
		Count   int
		Results []exchangeRateJSON
	}
	ts.call(t, "GET", "/api/v1/exchange-rates/?page_size=100", nil, key...).data(t, &rates)
	assert.Equal(t, 30, rates.Count)
	byPair := map[string]exchangeRateJSON{}
	for _, x := range rates.Results {
		byPair[x.FromCurrency+x.ToCurrency] = x
	}
	assert.Equal(t, "655.957", byPair["EURXOF"].Rate)
	assert.Equal(t, "1", byPair["XOFXAF"].Rate, "XOF and XAF are both pegged to the euro at the same rate")
	assert.False(t, byPair["XOFXAF"].AutoUpdate)
	assert.True(t, byPair["EURGNF"].AutoUpdate)

	var lines []networkRateJSON
	ts.call(t, "GET", "/api/v1/pricing/my-rates/", nil, key...).data(t, &lines)
	assert.Len(t, lines, 29)
	byCode := map[string]networkRateJSON{}
	for _, l := range lines {
		byCode[l.NetworkCode] = l
	}
	assert.True(t, byCode["ORANGE_SN"].OTPRequired)
	assert.Contains(t, byCode["ORANGE_SN"].OTPInstructions, "#144#391#")
	assert.False(t, byCode["MOOV_TG"].OTPRequired, "post-push OTP is not a pre-payment OTP")
	assert.Equal(t, sika.OTPPostPush, byCode["MOOV_TG"].OTPKind)
	assert.False(t, byCode["MTN_BJ"].OTPRequired)
	require.NotNil(t, byCode["MTN_BJ"].Collection)
	assert.Equal(t, "1.50", byCode["MTN_BJ"].Collection.Percentage)
	assert.Equal(t, "1.00", byCode["MTN_BJ"].Payout.Percentage)
	assert.NotContains(t, string(ts.call(t, "GET", "/api/v1/pricing/my-rates/", nil, key...).Body), "gateway", "operator costs are not shown to merchants")
}

func TestMerchantPricingOverridesDefault(t *testing.T) {
	ts := newTestServer(t)
	a := ts.newAccount(t, true)
	b := ts.newAccount(t, true)
	_, err := testStore.Pool().Exec(t.Context(), `INSERT INTO pricing (merchant_id, environment, network_id, direction, fee_percent, fee_fixed, min_fee)
		SELECT $1, 'TEST', id, 'INBOUND', 0.9, 25, 50 FROM networks WHERE code = 'MTN_BJ'`, a.Merchant.ID)
	require.NoError(t, err)
	testStore.FlushReadCache() // as the notification of the change does, without waiting for it
	find := func(acct *account, env sika.Environment) networkRateJSON {
		var lines []networkRateJSON
		ts.call(t, "GET", "/api/v1/pricing/my-rates/", nil, acct.key(env, sika.ScopeBoth)...).data(t, &lines)
		for _, l := range lines {
			if l.NetworkCode == "MTN_BJ" {
				return l
			}
		}
		t.Fatal("MTN_BJ missing")
		return networkRateJSON{}
	}
	mine := find(a, sika.EnvironmentTest)
	assert.True(t, mine.Custom)
	assert.Equal(t, "0.90", mine.Collection.Percentage)
	assert.Equal(t, "25.00", mine.Collection.Fixed)
	require.NotNil(t, mine.Collection.MinFee)
	assert.Equal(t, "50.00", *mine.Collection.MinFee)
	assert.Equal(t, "1.00", mine.Payout.Percentage, "the other direction keeps the default")
	assert.Equal(t, "1.50", find(a, sika.EnvironmentLive).Collection.Percentage, "the override is for TEST only")
	assert.Equal(t, "1.50", find(b, sika.EnvironmentTest).Collection.Percentage, "other merchants keep the default")
}

func TestOperationalEndpoints(t *testing.T) {
	down := false
	ts := newTestServer(t, func(c *Config) {
		c.ReadinessChecks = map[string]func(context.Context) error{
			"postgres": testStore.Ping,
			"temporal": func(context.Context) error {
				if down {
					return io.ErrUnexpectedEOF
				}
				return nil
			},
		}
	})
	r := ts.call(t, "GET", "/healthz", nil)
	assert.Equal(t, 200, r.Status)
	r = ts.call(t, "GET", "/readyz", nil)
	assert.Equal(t, 200, r.Status)
	down = true
	r = ts.call(t, "GET", "/readyz", nil)
	assert.Equal(t, 503, r.Status)
	assert.Equal(t, "service_unavailable", r.code())
	assert.Contains(t, string(r.Body), "temporal")

	ts.call(t, "GET", "/api/v1/countries/", nil)
	resp, err := http.Get(ts.url + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	assert.Equal(t, 200, resp.StatusCode)
	assert.Contains(t, string(body), `sika_http_requests_total{method="GET",route="/api/v1/countries/",status="200"}`)
	assert.Contains(t, string(body), "sika_http_request_duration_seconds_bucket")
}
