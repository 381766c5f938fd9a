package mtnmomo

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika/gateway"
	"github.com/sikahq/sika/gateway/gatewaytest"
	"github.com/sikahq/sika/gateway/mtnmomo/mtnfake"
)

// harness runs the gateway contract against the fake MTN.
type harness struct{}

func (harness) Features() gatewaytest.Features {
	return gatewaytest.Features{Payouts: true, Tokens: true, SignedCallbacks: false, Refunds: true,
		Country: "BJ", Currency: "XOF", Network: "MTN_BJ", Phone: "+22997000000", Amount: decimal.NewFromInt(1000)}
}

func (harness) New(t *testing.T) (gateway.Gateway, gatewaytest.Controls) {
	f := mtnfake.New(t)
	return newClient(t, f, nil), f
}

func TestContract(t *testing.T) { gatewaytest.Run(t, harness{}) }

// newClient returns an adapter wired to the fake f.
func newClient(t *testing.T, f *mtnfake.Server, configure func(*Config)) *Client {
	cfg := Config{
		Name:                        "mtnmomo-bj",
		BaseURL:                     f.URL(),
		CollectionSubscriptionKey:   mtnfake.CollectionKey,
		DisbursementSubscriptionKey: mtnfake.DisbursementKey,
		APIUser:                     mtnfake.APIUser,
		APIKey:                      mtnfake.APIKey,
		TargetEnvironment:           map[string]string{"BJ": mtnfake.Environment},
		CallbackURL:                 "https://sika.example/callbacks/mtnmomo-bj",
		HTTPClient:                  f.HTTPClient(t),
		Timeout:                     300 * time.Millisecond,
	}
	if configure != nil {
		configure(&cfg)
	}
	return New(cfg)
}

func collectReq(ref string) gateway.CollectRequest {
	return gateway.CollectRequest{Reference: ref, Amount: decimal.NewFromInt(1000), Currency: "XOF", Country: "BJ",
		Network: "MTN_BJ", Phone: "+22997000000", Description: "Order 42"}
}

func TestWireFormat(t *testing.T) {
	f := mtnfake.New(t)
	c := newClient(t, f, nil)
	ref := gatewaytest.Reference()
	res, err := c.Collect(t.Context(), collectReq(ref))
	require.NoError(t, err)
	assert.Equal(t, gateway.StatusPending, res.Status)
	assert.Equal(t, gateway.NextUSSDPush, res.NextAction.Type)

	body := f.Body(ref)
	assert.Equal(t, "1000", body["amount"])
	assert.Equal(t, "XOF", body["currency"])
	assert.Equal(t, ref, body["externalId"])
	assert.Equal(t, map[string]any{"partyIdType": "MSISDN", "partyId": "22997000000"}, body["payer"])
	assert.Equal(t, "Order 42", body["payerMessage"])

	st, err := c.CollectionStatus(t.Context(), ref)
	require.NoError(t, err)
	assert.Equal(t, gateway.StatusSuccess, st.Status)
	assert.NotEmpty(t, st.GatewayReference, "financialTransactionId")
}

func TestReferenceStableAcrossTokenRetry(t *testing.T) {
	f := mtnfake.New(t)
	c := newClient(t, f, nil)
	_, err := c.Collect(t.Context(), collectReq(gatewaytest.Reference()))
	require.NoError(t, err)
	f.ExpireToken()
	ref := gatewaytest.Reference()
	_, err = c.Collect(t.Context(), collectReq(ref))
	require.NoError(t, err)
	seen := f.Seen()
	require.Len(t, seen, 3, "first collect, refused collect, retried collect")
	assert.Equal(t, ref, seen[1].ReferenceID)
	assert.Equal(t, ref, seen[2].ReferenceID)
	assert.Equal(t, 2, f.TokenCount("collection"))
	assert.Equal(t, 2, f.Operations())
}

func TestTokenCachedAcrossCalls(t *testing.T) {
	f := mtnfake.New(t)
	c := newClient(t, f, nil)
	for range 10 {
		ref := gatewaytest.Reference()
		_, err := c.Collect(t.Context(), collectReq(ref))
		require.NoError(t, err)
		_, err = c.CollectionStatus(t.Context(), ref)
		require.NoError(t, err)
	}
	assert.Equal(t, 1, f.TokenCount("collection"), "20 calls, one token")
	assert.Equal(t, 0, f.TokenCount("disbursement"), "tokens are per product")
	_, err := c.DisbursementStatus(t.Context(), gatewaytest.Reference())
	require.NoError(t, err)
	assert.Equal(t, 1, f.TokenCount("disbursement"))
}

func TestConcurrentCallsShareOneToken(t *testing.T) {
	f := mtnfake.New(t)
	f.SetTokenDelay(50 * time.Millisecond) // all callers arrive while the token is being fetched
	c := newClient(t, f, func(cfg *Config) { cfg.Timeout = 2 * time.Second })
	var wg sync.WaitGroup
	var failures atomic.Int32
	for range 20 {
		wg.Go(func() {
			if _, err := c.Collect(t.Context(), collectReq(gatewaytest.Reference())); err != nil {
				failures.Add(1)
			}
		})
	}
	wg.Wait()
	assert.Zero(t, failures.Load())
	assert.Equal(t, 1, f.TokenCount("collection"))
	assert.Equal(t, 20, f.Operations())
}

func TestTokenRefreshedBeforeExpiry(t *testing.T) {
	f := mtnfake.New(t)
	var mu sync.Mutex
	now := time.Date(2026, 11, 21, 8, 0, 0, 0, time.UTC)
	c := newClient(t, f, func(cfg *Config) {
		cfg.Now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	})
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	_, err := c.CollectionStatus(t.Context(), gatewaytest.Reference())
	require.NoError(t, err)
	advance(58 * time.Minute) // expires_in 3600: still more than a minute left
	_, err = c.CollectionStatus(t.Context(), gatewaytest.Reference())
	require.NoError(t, err)
	assert.Equal(t, 1, f.TokenCount("collection"))
	advance(90 * time.Second) // within the last minute: refreshed before MTN refuses it
	_, err = c.CollectionStatus(t.Context(), gatewaytest.Reference())
	require.NoError(t, err)
	assert.Equal(t, 2, f.TokenCount("collection"))
}

func TestErrorMapping(t *testing.T) {
	cases := []struct {
		status  int
		create  bool
		kind    gateway.Kind
		created int
	}{
		{http.StatusInternalServerError, true, gateway.KindAmbiguous, 1},
		{http.StatusBadGateway, false, gateway.KindAmbiguous, 0},
		{http.StatusGatewayTimeout, true, gateway.KindAmbiguous, 1},
		{http.StatusServiceUnavailable, false, gateway.KindUnavailable, 0},
		{http.StatusTooManyRequests, false, gateway.KindUnavailable, 0},
		{http.StatusBadRequest, false, gateway.KindInvalid, 0},
	}
	for _, tc := range cases {
		t.Run(http.StatusText(tc.status), func(t *testing.T) {
			f := mtnfake.New(t)
			c := newClient(t, f, nil)
			f.ForceNext(tc.status, tc.create)
			ref := gatewaytest.Reference()
			_, err := c.Collect(t.Context(), collectReq(ref))
			require.Error(t, err)
			assert.Equal(t, tc.kind, gateway.KindOf(err), "%v", err)
			assert.Equal(t, tc.created, f.Operations())
			assertNoSecrets(t, err)
			if tc.kind == gateway.KindAmbiguous { // resolved by the same reference: 409, then a status read
				res, err := c.Collect(t.Context(), collectReq(ref))
				require.NoError(t, err)
				if tc.created == 1 {
					assert.Equal(t, gateway.StatusSuccess, res.Status)
				}
				assert.Equal(t, 1, f.Operations())
			}
		})
	}
}

func TestRefusedAfterTokenIsUnavailable(t *testing.T) {
	f := mtnfake.New(t)
	c := newClient(t, f, nil)
	_, err := c.CollectionStatus(t.Context(), gatewaytest.Reference()) // warm the token
	require.NoError(t, err)
	f.Next(gatewaytest.RefuseConnection)
	_, err = c.Collect(t.Context(), collectReq(gatewaytest.Reference()))
	require.Error(t, err)
	assert.Equal(t, gateway.KindUnavailable, gateway.KindOf(err), "%v", err)
	assert.Zero(t, f.Operations())
}

func TestBadCredentialsAreAuthFailed(t *testing.T) {
	f := mtnfake.New(t)
	c := newClient(t, f, func(cfg *Config) { cfg.APIKey = "wrong-api-key" })
	_, err := c.Collect(t.Context(), collectReq(gatewaytest.Reference()))
	require.Error(t, err)
	assert.Equal(t, gateway.KindAuth, gateway.KindOf(err), "%v", err)
	assert.NotContains(t, err.Error(), "wrong-api-key")
	assertNoSecrets(t, err)
	assert.Zero(t, f.Operations())
}

func TestTokenRefusedTwiceIsAuthFailed(t *testing.T) {
	f := mtnfake.New(t)
	c := newClient(t, f, nil)
	_, err := c.CollectionStatus(t.Context(), gatewaytest.Reference())
	require.NoError(t, err)
	f.RejectBearer(true) // e.g. the API user lost the product: every token is refused
	_, err = c.Collect(t.Context(), collectReq(gatewaytest.Reference()))
	require.Error(t, err)
	assert.Equal(t, gateway.KindAuth, gateway.KindOf(err), "%v", err)
	assertNoSecrets(t, err)
	assert.Equal(t, 2, f.TokenCount("collection"), "one refresh, then give up")
	assert.Len(t, f.Seen(), 2, "the refused call is sent twice, not more")
	assert.Zero(t, f.Operations())
}

func TestValidation(t *testing.T) {
	f := mtnfake.New(t)
	c := newClient(t, f, nil)
	req := collectReq("attempt-42")
	_, err := c.Collect(t.Context(), req)
	assert.Equal(t, gateway.KindInvalid, gateway.KindOf(err), "%v", err)

	req = collectReq(gatewaytest.Reference())
	req.Amount = decimal.RequireFromString("1000.50")
	_, err = c.Collect(t.Context(), req)
	assert.Equal(t, gateway.KindInvalid, gateway.KindOf(err), "XOF has no decimals: %v", err)

	req = collectReq(gatewaytest.Reference())
	req.Phone = "+229 97 abc"
	_, err = c.Collect(t.Context(), req)
	assert.Equal(t, gateway.KindInvalid, gateway.KindOf(err))
	assert.Equal(t, gateway.FailureInvalidNumber, gateway.CodeOf(err))

	_, err = c.ConfirmOTP(t.Context(), gatewaytest.Reference(), "1234")
	assert.Equal(t, gateway.KindInvalid, gateway.KindOf(err))
	assert.Zero(t, f.Operations())

	noPayouts := newClient(t, f, func(cfg *Config) { cfg.DisbursementSubscriptionKey = "" })
	_, err = noPayouts.Disburse(t.Context(), gateway.DisburseRequest{Reference: gatewaytest.Reference(),
		Amount: decimal.NewFromInt(500), Currency: "XOF", Country: "BJ", Phone: "+22997000000"})
	assert.Equal(t, gateway.KindInvalid, gateway.KindOf(err))
}

func TestTargetEnvironment(t *testing.T) {
	c := New(Config{TargetEnvironment: LiveTargetEnvironments})
	for country, want := range map[string]string{"BJ": "mtnbenin", "CI": "mtnivorycoast", "CM": "mtncameroon",
		"CG": "mtncongo", "GN": "mtnguineaconakry", "SN": "sandbox"} {
		_, env, err := c.initiation(gatewaytest.Reference(), "1000", true, "XOF", country, "+22997000000", "", "", false)
		require.NoError(t, err)
		assert.Equal(t, want, env, country)
	}
	assert.Equal(t, "sandbox", c.defaultEnv)
	assert.Equal(t, "mtnbenin", New(Config{TargetEnvironment: map[string]string{"BJ": "mtnbenin"}}).defaultEnv)
}

func TestReasonMapping(t *testing.T) {
	cases := []struct {
		status, reason string
		payout         bool
		want           gateway.Status
		code           string
	}{
		{"PENDING", "", false, gateway.StatusPending, ""},
		{"SUCCESSFUL", "", false, gateway.StatusSuccess, ""},
		{"FAILED", `"APPROVAL_REJECTED"`, false, gateway.StatusFailed, gateway.FailurePayerDeclined},
		{"FAILED", `"EXPIRED"`, false, gateway.StatusFailed, gateway.FailureExpired},
		{"FAILED", `"PAYER_NOT_FOUND"`, false, gateway.StatusFailed, gateway.FailureInvalidNumber},
		{"FAILED", `"NOT_ENOUGH_FUNDS"`, false, gateway.StatusFailed, gateway.FailureInsufficientFunds},
		{"FAILED", `{"code":"NOT_ENOUGH_FUNDS","message":"low balance"}`, false, gateway.StatusFailed, gateway.FailureInsufficientFunds},
		{"FAILED", `"INTERNAL_PROCESSING_ERROR"`, false, gateway.StatusFailed, gateway.FailureGatewayError},
		{"FAILED", `"SERVICE_UNAVAILABLE"`, false, gateway.StatusFailed, gateway.FailureGatewayError},
		{"FAILED", `"COULD_NOT_PERFORM_TRANSACTION"`, false, gateway.StatusFailed, gateway.FailureGatewayError},
		{"FAILED", "", false, gateway.StatusFailed, gateway.FailureGatewayError},
		{"FAILED", `"PAYEE_NOT_FOUND"`, true, gateway.StatusFailed, gateway.FailureRecipientNotFound},
		{"FAILED", `"PAYEE_LIMIT_REACHED"`, true, gateway.StatusFailed, gateway.FailureRecipientLimit},
		{"REJECTED", "", false, gateway.StatusFailed, gateway.FailurePayerDeclined},
		{"TIMEOUT", "", false, gateway.StatusFailed, gateway.FailureExpired},
	}
	for _, tc := range cases {
		t.Run(tc.status+" "+tc.reason, func(t *testing.T) {
			sb := statusBody{Status: tc.status}
			if tc.reason != "" {
				sb.Reason = json.RawMessage(tc.reason)
			}
			st, err := sb.operationStatus("ref", tc.payout)
			require.NoError(t, err)
			assert.Equal(t, tc.want, st.Status)
			assert.Equal(t, tc.code, st.FailureCode)
		})
	}
	_, err := statusBody{Status: "WEIRD"}.operationStatus("ref", false)
	assert.Error(t, err)
}

func TestDeclinedCollectionEndToEnd(t *testing.T) {
	f := mtnfake.New(t)
	c := newClient(t, f, nil)
	ref := gatewaytest.Reference()
	f.Next(gatewaytest.Decline)
	_, err := c.Collect(t.Context(), collectReq(ref))
	require.NoError(t, err)
	st, err := c.CollectionStatus(t.Context(), ref)
	require.NoError(t, err)
	assert.Equal(t, gateway.StatusFailed, st.Status)
	assert.Equal(t, gateway.FailurePayerDeclined, st.FailureCode)
	assert.Contains(t, st.FailureMessage, "APPROVAL_REJECTED")
}

func TestParseCallback(t *testing.T) {
	c := New(Config{})
	ref := gatewaytest.Reference()
	cb, err := c.ParseCallback(t.Context(), nil, []byte(`{"financialTransactionId":"363440463","externalId":"`+ref+
		`","amount":"1000","currency":"XOF","payee":{"partyIdType":"MSISDN","partyId":"22997000000"},`+
		`"status":"FAILED","reason":"PAYEE_NOT_FOUND"}`))
	require.NoError(t, err)
	assert.Equal(t, gateway.CallbackDisbursement, cb.Kind)
	assert.Equal(t, ref, cb.Reference)
	assert.Equal(t, gateway.FailureRecipientNotFound, cb.FailureCode)
	assert.False(t, cb.Trusted)

	_, err = c.ParseCallback(t.Context(), nil, []byte(`{"externalId":"order-1","status":"SUCCESSFUL"}`))
	assert.Error(t, err, "a callback whose externalId is not one of our references")
	_, err = c.ParseCallback(t.Context(), nil, []byte(`not json`))
	assert.Error(t, err)
}

// assertNoSecrets checks that an error's text carries none of the account's secrets.
func assertNoSecrets(t *testing.T, err error) {
	t.Helper()
	for _, secret := range []string{mtnfake.APIKey, mtnfake.CollectionKey, mtnfake.DisbursementKey, "tok-collection-", "Basic "} {
		assert.False(t, strings.Contains(err.Error(), secret), "error %q leaks %q", err, secret)
	}
}

// A status read in another process (another worker, after a restart) needs the target
// environment the reference was sent with: it comes from the shared Memory, not from the
// process that sent it.
func TestStatusReadInAnotherProcess(t *testing.T) {
	f := mtnfake.New(t)
	memory := &gateway.MapMemory{}
	twoMarkets := func(c *Config) {
		c.TargetEnvironment = map[string]string{"BJ": mtnfake.Environment, "CI": "mtnivorycoast"}
		c.Memory = memory
	}
	sender := newClient(t, f, twoMarkets)
	ref := gatewaytest.Reference()
	_, err := sender.Collect(t.Context(), collectReq(ref))
	require.NoError(t, err)

	reader := newClient(t, f, twoMarkets) // its default environment is "sandbox"
	require.Equal(t, DefaultTargetEnvironment, reader.defaultEnv)
	st, err := reader.CollectionStatus(t.Context(), ref)
	require.NoError(t, err)
	assert.Equal(t, gateway.StatusSuccess, st.Status, "the fake refuses another X-Target-Environment")
}

// MTN's windows are declared (and no cancel: MTN cannot withdraw a request-to-pay); an adapter
// hidden behind a wrapper that declares none gets the conservative defaults.
func TestWindows(t *testing.T) {
	t.Parallel()
	c := New(Config{Name: "mtnmomo-bj"})
	want := gateway.Windows{NotFoundSettle: 10 * time.Minute, LateSuccess: 24 * time.Hour}
	require.Equal(t, want, c.Windows())
	require.Equal(t, want, gateway.WindowsOf(c))
	_, cancels := gateway.Gateway(c).(gateway.Canceller)
	require.False(t, cancels)

	type undeclared struct{ gateway.Gateway }
	require.Equal(t, gateway.Windows{NotFoundSettle: gateway.DefaultNotFoundSettle, LateSuccess: gateway.DefaultLateSuccess},
		gateway.WindowsOf(undeclared{c}))
}
