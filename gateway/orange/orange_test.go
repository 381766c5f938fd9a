package orange

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika/gateway"
	"github.com/sikahq/sika/gateway/gatewaytest"
	"github.com/sikahq/sika/gateway/orange/orangefake"
)

// harness runs the gateway contract against the fake Orange.
type harness struct{}

func (harness) Features() gatewaytest.Features {
	return gatewaytest.Features{Payouts: false, Tokens: true, SignedCallbacks: false, LostAnswerFails: true,
		Country: "CI", Currency: "XOF", Network: "ORANGE_CI", Phone: "+2250707000000", Amount: decimal.NewFromInt(1000)}
}

func (harness) New(t *testing.T) (gateway.Gateway, gatewaytest.Controls) {
	f := newFake(t)
	return newClient(t, f, nil), controls{Server: f, t: t}
}

func TestContract(t *testing.T) { gatewaytest.Run(t, harness{}) }

// controls are the fake's gatewaytest.Controls. The fake knows payments by order_id only: the
// contract's references are turned into theirs here.
type controls struct {
	*orangefake.Server
	t *testing.T
}

// Callback renders the notification Orange would post now about reference.
func (c controls) Callback(kind gateway.CallbackKind, reference string) (http.Header, []byte) {
	c.t.Helper()
	if kind != gateway.CallbackCollection {
		c.t.Errorf("no %s notification for %s: WebPay only collects", kind, reference)
		return http.Header{}, nil
	}
	return c.Notification(orderIDOf(c.t, reference))
}

// newFake starts a fake Orange whose customers act by themselves, 40ms after their payment page
// reached the merchant.
func newFake(t *testing.T) *orangefake.Server {
	f := orangefake.New(t)
	f.SettleAfter(40 * time.Millisecond)
	return f
}

// newClient returns an adapter wired to the fake f.
func newClient(t *testing.T, f *orangefake.Server, configure func(*Config)) *Client {
	cfg := Config{
		BaseURL: f.URL(), ClientID: orangefake.ClientID, ClientSecret: orangefake.ClientSecret, MerchantKey: orangefake.MerchantKey,
		ReturnURL: "https://pay.sika.example/return", CancelURL: "https://pay.sika.example/cancel",
		NotifURL:   "https://api.sika.example/gateway-callbacks/orange/",
		HTTPClient: f.HTTPClient(t),
		Timeout:    200 * time.Millisecond, UnansweredAfter: time.Second,
	}
	if configure != nil {
		configure(&cfg)
	}
	return New(cfg)
}

// orderIDOf is the order_id of ref.
func orderIDOf(t *testing.T, ref string) string {
	t.Helper()
	orderID, err := OrderID(ref)
	require.NoError(t, err)
	return orderID
}

// paymentOf returns what the fake holds about the payment of ref (zero when none).
func paymentOf(t *testing.T, f *orangefake.Server, ref string) orangefake.Payment {
	t.Helper()
	p, _ := f.Payment(orderIDOf(t, ref))
	return p
}

func collectReq(ref string) gateway.CollectRequest {
	return gateway.CollectRequest{Reference: ref, Amount: decimal.NewFromInt(1000), Currency: "XOF", Country: "CI",
		Network: "ORANGE_CI", Phone: "+2250707000000", Description: "Order 42",
		CallbackURL: "https://api.sika.example/gateway-callbacks/orange/"}
}

// eventually polls the status of ref until it is final.
func eventually(t *testing.T, c *Client, ref string) gateway.OperationStatus {
	t.Helper()
	var last gateway.OperationStatus
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		st, err := c.CollectionStatus(t.Context(), ref)
		require.NoError(ct, err)
		last = st
		assert.True(ct, st.Status.Final(), "status %s", st.Status)
	}, 3*time.Second, 10*time.Millisecond)
	return last
}

func TestOrderID(t *testing.T) {
	charset := regexp.MustCompile(`^[A-Z2-7]+$`)
	seen := map[string]string{}
	for range 2000 {
		ref := gatewaytest.Reference()
		id, err := OrderID(ref)
		require.NoError(t, err)
		assert.LessOrEqual(t, len(id), 30, id)
		assert.Regexp(t, charset, id)
		again, _ := OrderID(ref)
		assert.Equal(t, id, again, "stable across retries")
		upper, _ := OrderID(strings.ToUpper(ref))
		assert.Equal(t, id, upper, "the same UUID in either case")
		back, err := ReferenceOf(id)
		require.NoError(t, err)
		assert.Equal(t, ref, back, "reversible")
		if other, dup := seen[id]; dup {
			t.Fatalf("%s and %s share order_id %s", ref, other, id)
		}
		seen[id] = ref
	}
	for _, bad := range []string{"", "attempt-42", "0c8a5b3e7d1f4c2a9e6b1f2d3c4b5a69", "0c8a5b3e-7d1f-4c2a-9e6b-1f2d3c4b5a6z"} {
		_, err := OrderID(bad)
		assert.Error(t, err, bad)
	}
	_, err := ReferenceOf("NOT-OURS")
	assert.Error(t, err)
}

func TestRequestShapes(t *testing.T) {
	f := newFake(t)
	c := newClient(t, f, func(cfg *Config) { cfg.MerchantReference = "Sika" })
	ref := gatewaytest.Reference()
	res, err := c.Collect(t.Context(), collectReq(ref))
	require.NoError(t, err)
	op := paymentOf(t, f, ref)
	assert.Equal(t, gateway.StatusPending, res.Status)
	assert.Equal(t, gateway.NextAction{Type: gateway.NextRedirect, URL: f.URL() + "/payment/pay_token/" + op.PayToken}, res.NextAction)
	assert.Equal(t, op.PayToken, res.GatewayReference)

	seen := f.Seen()
	require.Len(t, seen, 2, "a token, then the initiation")
	assert.Equal(t, "/oauth/v3/token", seen[0].Path)
	assert.Equal(t, "application/x-www-form-urlencoded", seen[0].ContentType)
	assert.Equal(t, "grant_type=client_credentials", seen[0].Body)
	assert.True(t, strings.HasPrefix(seen[0].Authorization, "Basic "))

	orderID, _ := OrderID(ref)
	assert.Equal(t, "/orange-money-webpay/ci/v1/webpayment", seen[1].Path)
	assert.Equal(t, "Bearer tok-1", seen[1].Authorization)
	assert.JSONEq(t, `{"merchant_key":"`+orangefake.MerchantKey+`","currency":"XOF","order_id":"`+orderID+`","amount":1000,
		"return_url":"https://pay.sika.example/return","cancel_url":"https://pay.sika.example/cancel",
		"notif_url":"https://api.sika.example/gateway-callbacks/orange/","lang":"fr","reference":"Sika"}`, seen[1].Body)

	st, err := c.CollectionStatus(t.Context(), ref)
	require.NoError(t, err)
	assert.Equal(t, op.PayToken, st.GatewayReference)
	seen = f.Seen()
	require.Len(t, seen, 3)
	assert.Equal(t, "/orange-money-webpay/ci/v1/transactionstatus", seen[2].Path)
	assert.JSONEq(t, `{"order_id":"`+orderID+`","amount":1000,"pay_token":"`+op.PayToken+`"}`, seen[2].Body)
}

func TestCountrySegments(t *testing.T) {
	f := newFake(t)
	memory := &gateway.MapMemory{}
	c := newClient(t, f, func(cfg *Config) {
		cfg.CountrySegments = map[string]string{"SN": SandboxSegment}
		cfg.Currency = "OUV"
		cfg.Memory = memory
	})
	for country, want := range map[string]string{"SN": "dev", "CM": "cm", "ci": "ci"} {
		req := collectReq(gatewaytest.Reference())
		req.Country = country
		_, err := c.Collect(t.Context(), req)
		require.NoError(t, err)
		seen := f.Seen()
		assert.Equal(t, "/orange-money-webpay/"+want+"/v1/webpayment", seen[len(seen)-1].Path, country)
		assert.Contains(t, seen[len(seen)-1].Body, `"currency":"OUV"`)
	}
	// a status read, here by a process configured otherwise, uses the segment the payment was sent to
	ref := gatewaytest.Reference()
	req := collectReq(ref)
	req.Country = "SN"
	_, err := c.Collect(t.Context(), req)
	require.NoError(t, err)
	reader := newClient(t, f, func(cfg *Config) { cfg.Memory = memory })
	_, err = reader.CollectionStatus(t.Context(), ref)
	require.NoError(t, err)
	seen := f.Seen()
	assert.Equal(t, "/orange-money-webpay/dev/v1/transactionstatus", seen[len(seen)-1].Path)
}

func TestStatusMapping(t *testing.T) {
	cases := []struct {
		status string
		want   gateway.Status
		code   string
	}{
		{"INITIATED", gateway.StatusPending, ""},
		{"PENDING", gateway.StatusPending, ""},
		{"SUCCESS", gateway.StatusSuccess, ""},
		{"FAILED", gateway.StatusFailed, gateway.FailurePayerDeclined},
		{"EXPIRED", gateway.StatusFailed, gateway.FailureExpired},
		{"success", gateway.StatusSuccess, ""},
	}
	for _, tc := range cases {
		t.Run(tc.status, func(t *testing.T) {
			st, err := operationStatus("ref", "pt", tc.status)
			require.NoError(t, err)
			assert.Equal(t, tc.want, st.Status)
			assert.Equal(t, tc.code, st.FailureCode)
			assert.Equal(t, "pt", st.GatewayReference)
			if tc.want == gateway.StatusFailed {
				assert.Contains(t, st.FailureMessage, strings.ToUpper(tc.status))
			}
		})
	}
	for _, bad := range []string{"", "CANCELLED", "201"} {
		_, err := operationStatus("ref", "pt", bad)
		assert.Error(t, err, bad)
	}
}

func TestOutcomesEndToEnd(t *testing.T) {
	cases := []struct {
		outcome string
		want    gateway.Status
		code    string
	}{
		{orangefake.Success, gateway.StatusSuccess, ""},
		{orangefake.Failed, gateway.StatusFailed, gateway.FailurePayerDeclined},
		{"", gateway.StatusFailed, gateway.FailureExpired}, // the customer never pays
	}
	for _, tc := range cases {
		t.Run(tc.code, func(t *testing.T) {
			f := newFake(t)
			f.SetSessionTTL(150 * time.Millisecond)
			f.NextOutcome(tc.outcome)
			c := newClient(t, f, nil)
			ref := gatewaytest.Reference()
			_, err := c.Collect(t.Context(), collectReq(ref))
			require.NoError(t, err)
			st := eventually(t, c, ref)
			assert.Equal(t, tc.want, st.Status)
			assert.Equal(t, tc.code, st.FailureCode)
			again, err := c.Collect(t.Context(), collectReq(ref))
			require.NoError(t, err)
			assert.Equal(t, tc.want, again.Status, "a final payment is not created again")
			assert.Equal(t, 1, f.Operations())
		})
	}
}

func TestTokenCachedAndRefreshedBeforeExpiry(t *testing.T) {
	f := newFake(t)
	var mu sync.Mutex
	now := time.Date(2026, 11, 21, 8, 0, 0, 0, time.UTC)
	c := newClient(t, f, func(cfg *Config) {
		cfg.Now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
		cfg.UnansweredAfter = time.Hour
	})
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	ref := gatewaytest.Reference()
	_, err := c.Collect(t.Context(), collectReq(ref))
	require.NoError(t, err)
	for range 10 {
		_, err = c.CollectionStatus(t.Context(), ref)
		require.NoError(t, err)
	}
	assert.Equal(t, 1, f.TokenRequests(), "eleven calls, one token")
	advance(54 * time.Minute) // expires_in 3600: more than five minutes left
	_, err = c.CollectionStatus(t.Context(), ref)
	require.NoError(t, err)
	assert.Equal(t, 1, f.TokenRequests())
	advance(2 * time.Minute) // within the last five minutes: renewed before Orange refuses it
	_, err = c.CollectionStatus(t.Context(), ref)
	require.NoError(t, err)
	assert.Equal(t, 2, f.TokenRequests())
	assert.Equal(t, time.Hour-5*time.Minute, refreshAfter(time.Hour))
	assert.Equal(t, 54*time.Second, refreshAfter(time.Minute))
}

func TestExpiredTokenRefreshedOnceAndCallRetried(t *testing.T) {
	f := newFake(t)
	c := newClient(t, f, nil)
	_, err := c.Collect(t.Context(), collectReq(gatewaytest.Reference()))
	require.NoError(t, err)
	f.ExpireToken()
	ref := gatewaytest.Reference()
	_, err = c.Collect(t.Context(), collectReq(ref))
	require.NoError(t, err)
	seen := f.Seen()
	require.Len(t, seen, 5, "token, collect, refused collect, token, retried collect")
	assert.Equal(t, seen[2].Body, seen[4].Body, "the retry sends the same order_id")
	assert.Equal(t, "Bearer tok-2", seen[4].Authorization)
	assert.Equal(t, 2, f.TokenRequests())
	assert.Equal(t, 2, f.Operations())
}

func TestAuthFailures(t *testing.T) {
	t.Run("bad client secret", func(t *testing.T) {
		f := newFake(t)
		c := newClient(t, f, func(cfg *Config) { cfg.ClientSecret = "wrong-secret-1234" })
		_, err := c.Collect(t.Context(), collectReq(gatewaytest.Reference()))
		assert.Equal(t, gateway.KindAuth, gateway.KindOf(err), "%v", err)
		assert.NotContains(t, err.Error(), "wrong-secret-1234")
		assertNoSecrets(t, err)
	})
	t.Run("every token refused", func(t *testing.T) {
		f := newFake(t)
		c := newClient(t, f, nil)
		_, err := c.Collect(t.Context(), collectReq(gatewaytest.Reference()))
		require.NoError(t, err)
		f.ExpireToken()
		f.IssueExpiredTokens(true) // every token issued from now on is refused
		ref := gatewaytest.Reference()
		_, err = c.Collect(t.Context(), collectReq(ref))
		assert.Equal(t, gateway.KindAuth, gateway.KindOf(err), "%v", err)
		assertNoSecrets(t, err)
		assert.Equal(t, 2, f.TokenRequests(), "one refresh, then give up")
		assert.Equal(t, 1, f.Operations())
		st, err := c.CollectionStatus(t.Context(), ref)
		require.NoError(t, err)
		assert.Equal(t, gateway.StatusNotFound, st.Status, "a refused initiation leaves nothing behind")
	})
	t.Run("access denied", func(t *testing.T) {
		f := newFake(t)
		c := newClient(t, f, nil)
		f.RejectBearer(true)
		_, err := c.Collect(t.Context(), collectReq(gatewaytest.Reference()))
		assert.Equal(t, gateway.KindAuth, gateway.KindOf(err), "%v", err)
		assert.Equal(t, 1, f.TokenRequests(), "a 403 is not an expired token")
	})
	t.Run("bad merchant key", func(t *testing.T) {
		f := newFake(t)
		c := newClient(t, f, func(cfg *Config) { cfg.MerchantKey = "merchant-key-typo" })
		_, err := c.Collect(t.Context(), collectReq(gatewaytest.Reference()))
		assert.Equal(t, gateway.KindAuth, gateway.KindOf(err), "%v", err)
		assert.NotContains(t, err.Error(), "merchant-key-typo", "Orange echoes the key: scrubbed")
		assert.Zero(t, f.Operations())
	})
}

func TestErrorMapping(t *testing.T) {
	echo := `{"code":1000,"message":"Internal error","description":"merchant ` + orangefake.MerchantKey + ` secret ` + orangefake.ClientSecret + ` token tok-1"}`
	cases := []struct {
		status int
		create bool
		kind   gateway.Kind
		after  gateway.Status // the status read right after
	}{
		{http.StatusInternalServerError, true, gateway.KindAmbiguous, gateway.StatusPending},
		{http.StatusBadGateway, false, gateway.KindAmbiguous, gateway.StatusPending},
		{http.StatusServiceUnavailable, false, gateway.KindUnavailable, gateway.StatusNotFound},
		{http.StatusTooManyRequests, false, gateway.KindUnavailable, gateway.StatusNotFound},
		{http.StatusNotFound, false, gateway.KindUnavailable, gateway.StatusNotFound},
		{http.StatusBadRequest, false, gateway.KindInvalid, gateway.StatusNotFound},
		{http.StatusUnprocessableEntity, false, gateway.KindInvalid, gateway.StatusNotFound},
	}
	for _, tc := range cases {
		t.Run(http.StatusText(tc.status), func(t *testing.T) {
			f := newFake(t)
			c := newClient(t, f, nil)
			f.ForceNext(tc.status, tc.create, echo)
			ref := gatewaytest.Reference()
			_, err := c.Collect(t.Context(), collectReq(ref))
			require.Error(t, err)
			assert.Equal(t, tc.kind, gateway.KindOf(err), "%v", err)
			assert.Contains(t, err.Error(), "Internal error", "Orange's message is kept")
			assertNoSecrets(t, err)
			st, err := c.CollectionStatus(t.Context(), ref)
			require.NoError(t, err)
			assert.Equal(t, tc.after, st.Status)
			if tc.create {
				assert.Equal(t, 1, f.Operations())
			}
		})
	}
}

func TestRefusedConnectionAfterTokenIsUnavailable(t *testing.T) {
	f := newFake(t)
	c := newClient(t, f, nil)
	_, err := c.Collect(t.Context(), collectReq(gatewaytest.Reference())) // warms the token
	require.NoError(t, err)
	f.Next(gatewaytest.RefuseConnection)
	ref := gatewaytest.Reference()
	_, err = c.Collect(t.Context(), collectReq(ref))
	assert.Equal(t, gateway.KindUnavailable, gateway.KindOf(err), "%v", err)
	st, err := c.CollectionStatus(t.Context(), ref)
	require.NoError(t, err)
	assert.Equal(t, gateway.StatusNotFound, st.Status)
	assert.Equal(t, 1, f.Operations())
}

func TestSlowStatusReadIsAnError(t *testing.T) {
	f := newFake(t)
	c := newClient(t, f, nil)
	ref := gatewaytest.Reference()
	first, err := c.Collect(t.Context(), collectReq(ref))
	require.NoError(t, err)
	f.SetStatusDelay(time.Second)
	_, err = c.CollectionStatus(t.Context(), ref)
	assert.Equal(t, gateway.KindAmbiguous, gateway.KindOf(err), "%v", err)
	// a repeated Collect that cannot read the status still answers with the payment's page
	again, err := c.Collect(t.Context(), collectReq(ref))
	require.NoError(t, err)
	assert.Equal(t, first, again)
	assert.Equal(t, 1, f.Operations())
}

func TestStatusReadErrorsAreScrubbed(t *testing.T) {
	f := newFake(t)
	c := newClient(t, f, nil)
	ref := gatewaytest.Reference()
	_, err := c.Collect(t.Context(), collectReq(ref))
	require.NoError(t, err)
	op := paymentOf(t, f, ref)
	f.ForceNextStatus(http.StatusInternalServerError,
		`{"code":1000,"message":"Internal error","description":"pay_token `+op.PayToken+` notif `+op.NotifToken+`"}`)
	_, err = c.CollectionStatus(t.Context(), ref)
	require.Error(t, err)
	assert.Equal(t, gateway.KindAmbiguous, gateway.KindOf(err), "%v", err)
	assert.NotContains(t, err.Error(), op.PayToken)
	assert.NotContains(t, err.Error(), op.NotifToken)
	assert.Contains(t, err.Error(), "[redacted]")
}

func TestValidation(t *testing.T) {
	f := newFake(t)
	c := newClient(t, f, nil)
	invalid := map[string]func(*gateway.CollectRequest){
		"reference not a UUID": func(r *gateway.CollectRequest) { r.Reference = "attempt-42" },
		"decimals":             func(r *gateway.CollectRequest) { r.Amount = decimal.RequireFromString("1000.50") },
		"zero":                 func(r *gateway.CollectRequest) { r.Amount = decimal.Zero },
		"negative":             func(r *gateway.CollectRequest) { r.Amount = decimal.NewFromInt(-5) },
		"no country":           func(r *gateway.CollectRequest) { r.Country = "" },
		"no currency":          func(r *gateway.CollectRequest) { r.Currency = "" },
	}
	for name, mutate := range invalid {
		req := collectReq(gatewaytest.Reference())
		mutate(&req)
		_, err := c.Collect(t.Context(), req)
		assert.Equal(t, gateway.KindInvalid, gateway.KindOf(err), "%s: %v", name, err)
	}
	unconfigured := newClient(t, f, func(cfg *Config) { cfg.ReturnURL = "" })
	_, err := unconfigured.Collect(t.Context(), collectReq(gatewaytest.Reference()))
	assert.Equal(t, gateway.KindUnavailable, gateway.KindOf(err), "%v", err)
	assert.Contains(t, err.Error(), "ReturnURL")

	_, err = c.ConfirmOTP(t.Context(), gatewaytest.Reference(), "123456")
	assert.Equal(t, gateway.KindInvalid, gateway.KindOf(err))
	_, err = c.Disburse(t.Context(), gateway.DisburseRequest{Reference: gatewaytest.Reference(),
		Amount: decimal.NewFromInt(500), Currency: "XOF", Country: "CI", Phone: "+2250707000000"})
	assert.Equal(t, gateway.KindInvalid, gateway.KindOf(err))
	assert.Contains(t, err.Error(), "payouts are not available through Orange WebPay")
	_, err = c.DisbursementStatus(t.Context(), gatewaytest.Reference())
	assert.Equal(t, gateway.KindInvalid, gateway.KindOf(err))
	assert.Zero(t, f.Operations())
	assert.Empty(t, f.Seen(), "nothing invalid is sent")
}

func TestDefaults(t *testing.T) {
	c := New(Config{})
	assert.Equal(t, "orange", c.Name())
	assert.Equal(t, "https://api.orange.com", c.base)
	assert.Equal(t, "fr", c.cfg.Lang)
	assert.Equal(t, "orange", c.cfg.MerchantReference)
	assert.Equal(t, 15*time.Second, c.cfg.Timeout)
	assert.Equal(t, time.Minute+time.Minute, c.cfg.UnansweredAfter, "4×15s and a minute")
	assert.Equal(t, 4*time.Second, New(Config{Timeout: time.Second, UnansweredAfter: time.Millisecond}).cfg.UnansweredAfter,
		"never shorter than an initiation may take")
	raw, _ := json.Marshal(webpaymentRequest{Amount: "1000"})
	assert.Contains(t, string(raw), `"amount":1000`, "a JSON number")
}

// assertNoSecrets checks that an error's text carries none of the account's secrets or tokens.
func assertNoSecrets(t *testing.T, err error) {
	t.Helper()
	for _, secret := range []string{orangefake.ClientSecret, orangefake.MerchantKey, "tok-", "Basic ", "Bearer "} {
		assert.NotContains(t, err.Error(), secret, "error %q leaks %q", err, secret)
	}
}

// WebPay declares its LateSuccess only: NotFoundSettle is the default, and there is no cancel
// (WebPay cannot withdraw a payment). An adapter hidden behind a wrapper that declares none gets
// the conservative defaults.
func TestWindows(t *testing.T) {
	t.Parallel()
	c := New(Config{Name: "orange"})
	require.Equal(t, gateway.Windows{LateSuccess: 24 * time.Hour}, c.Windows())
	require.Equal(t, gateway.Windows{NotFoundSettle: gateway.DefaultNotFoundSettle, LateSuccess: 24 * time.Hour},
		gateway.WindowsOf(c))
	_, cancels := gateway.Gateway(c).(gateway.Canceller)
	require.False(t, cancels)

	type undeclared struct{ gateway.Gateway }
	require.Equal(t, gateway.Windows{NotFoundSettle: gateway.DefaultNotFoundSettle, LateSuccess: gateway.DefaultLateSuccess},
		gateway.WindowsOf(undeclared{c}))
}
