package wave

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika/gateway"
	"github.com/sikahq/sika/gateway/gatewaytest"
	"github.com/sikahq/sika/gateway/wave/wavefake"
)

// expiries counts the expiry calls f received.
func expiries(f *wavefake.Server) int {
	n := 0
	for _, r := range f.Seen() {
		if r.Method == http.MethodPost && strings.HasSuffix(r.Path, "/expire") {
			n++
		}
	}
	return n
}

// openSession collects ref from a fresh adapter of f and returns the adapter.
func openSession(t *testing.T, f *wavefake.Server, ref string) *Client {
	t.Helper()
	c := newClient(t, f, nil)
	res, err := c.Collect(t.Context(), collectReq(ref))
	require.NoError(t, err)
	require.Equal(t, gateway.StatusPending, res.Status)
	return c
}

// An open session is expired: FAILED cancelled, and nobody can pay it any more.
func TestCancelExpiresAnOpenSession(t *testing.T) {
	f := manualFake(t)
	ref := gatewaytest.Reference()
	c := openSession(t, f, ref)

	st, err := c.CancelCollection(t.Context(), ref)
	require.NoError(t, err)
	assert.Equal(t, gateway.StatusFailed, st.Status)
	assert.Equal(t, gateway.FailureCancelled, st.FailureCode)
	assert.Equal(t, ref, st.Reference)
	assert.Equal(t, f.SessionID(ref), st.GatewayReference)
	assert.Equal(t, 1, expiries(f))
	seen := f.Seen()
	last := seen[len(seen)-1]
	assert.Equal(t, "/v1/checkout/sessions/"+f.SessionID(ref), last.Path, "the session is read back after its expiry")

	read, err := c.CollectionStatus(t.Context(), ref)
	require.NoError(t, err)
	assert.Equal(t, gateway.StatusFailed, read.Status, "status reads agree")

	// A second cancel finds the session closed: no second expiry, still FAILED.
	again, err := c.CancelCollection(t.Context(), ref)
	require.NoError(t, err)
	assert.Equal(t, gateway.StatusFailed, again.Status)
	assert.Equal(t, 1, expiries(f))
}

// A session Wave already closed is answered as it stands, without an expiry.
func TestCancelOfAClosedSession(t *testing.T) {
	cases := []struct {
		name   string
		close  func(f *wavefake.Server, ref string)
		status gateway.Status
		code   string
	}{
		{"paid", func(f *wavefake.Server, ref string) { f.PayClientReference(ref) }, gateway.StatusSuccess, ""},
		{"payment failed", func(f *wavefake.Server, ref string) { f.FailPayment(f.SessionID(ref), "insufficient-funds") },
			gateway.StatusFailed, gateway.FailureInsufficientFunds},
		{"expired by Wave", func(f *wavefake.Server, ref string) { f.Expire(f.SessionID(ref)) }, gateway.StatusFailed, gateway.FailureExpired},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := manualFake(t)
			ref := gatewaytest.Reference()
			c := openSession(t, f, ref)
			tc.close(f, ref)
			st, err := c.CancelCollection(t.Context(), ref)
			require.NoError(t, err)
			assert.Equal(t, tc.status, st.Status)
			assert.Equal(t, tc.code, st.FailureCode)
			assert.Equal(t, 0, expiries(f))
		})
	}
}

func TestCancelUnknownReferenceIsNotFound(t *testing.T) {
	f := manualFake(t)
	st, err := newClient(t, f, nil).CancelCollection(t.Context(), "no-such-ref")
	require.NoError(t, err)
	assert.Equal(t, gateway.OperationStatus{Reference: "no-such-ref", Status: gateway.StatusNotFound}, st)
	assert.Equal(t, 0, expiries(f))
}

// A process that never sent the reference finds its session by Wave's search, and expires it.
func TestCancelFromAnotherProcess(t *testing.T) {
	f := manualFake(t)
	ref := gatewaytest.Reference()
	openSession(t, f, ref)
	st, err := newClient(t, f, nil).CancelCollection(t.Context(), ref)
	require.NoError(t, err)
	assert.Equal(t, gateway.StatusFailed, st.Status)
	assert.Equal(t, gateway.FailureCancelled, st.FailureCode)
}

// The customer pays between the adapter's read and its expiry: Wave refuses the expiry and the
// session read back is paid. The cancel answers SUCCESS: the money moved.
func TestCancelLosesTheRaceToThePayment(t *testing.T) {
	f := manualFake(t)
	ref := gatewaytest.Reference()
	openSession(t, f, ref)
	c := newClient(t, f, func(cfg *Config) {
		client := *cfg.HTTPClient
		next := client.Transport
		if next == nil {
			next = http.DefaultTransport
		}
		client.Transport = roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if strings.HasSuffix(r.URL.Path, "/expire") {
				f.PayClientReference(ref)
			}
			return next.RoundTrip(r)
		})
		cfg.HTTPClient = &client
	})
	st, err := c.CancelCollection(t.Context(), ref)
	require.NoError(t, err)
	assert.Equal(t, gateway.StatusSuccess, st.Status)
	assert.Empty(t, st.FailureCode)
	assert.Equal(t, 1, expiries(f))
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// What the expiry call answers decides nothing by itself: the session read back does, and an
// expiry Wave did not take is an error (nothing was expired).
func TestCancelExpiryAnswers(t *testing.T) {
	cases := []struct {
		name   string
		answer wavefake.Answer
		kind   gateway.Kind // an error of this kind; 0: the status below
		status gateway.Status
		code   string
	}{
		{"503", wavefake.Answer{Status: 503, Code: "service-unavailable", Message: "later"}, gateway.KindUnavailable, "", ""},
		{"429", wavefake.Answer{Status: 429, Code: "too-many-requests", Message: "slow down"}, gateway.KindUnavailable, "", ""},
		{"401", wavefake.Answer{Status: 401, Code: "no-matching-api-key", Message: "no"}, gateway.KindAuth, "", ""},
		{"500 after expiring", wavefake.Answer{Status: 500, Code: "internal-server-error", Message: "oops", Create: true},
			0, gateway.StatusFailed, gateway.FailureCancelled},
		{"500 without expiring", wavefake.Answer{Status: 500, Code: "internal-server-error", Message: "oops"},
			0, gateway.StatusPending, ""},
		{"409 without expiring", wavefake.Answer{Status: 409, Code: "conflict", Message: "not now"},
			0, gateway.StatusPending, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := manualFake(t)
			ref := gatewaytest.Reference()
			c := openSession(t, f, ref)
			f.ForceExpiry(tc.answer)
			st, err := c.CancelCollection(t.Context(), ref)
			if tc.kind != 0 {
				require.Error(t, err)
				assert.Equal(t, tc.kind, gateway.KindOf(err), "%v", err)
				assertNoSecrets(t, err)
				read, err := c.CollectionStatus(t.Context(), ref)
				require.NoError(t, err)
				assert.Equal(t, gateway.StatusPending, read.Status, "nothing was expired")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.status, st.Status)
			assert.Equal(t, tc.code, st.FailureCode)
		})
	}
}

// An expiry sent whose session cannot be read back is Ambiguous: it may have been expired.
func TestCancelWithoutReadBackIsAmbiguous(t *testing.T) {
	f := manualFake(t)
	ref := gatewaytest.Reference()
	openSession(t, f, ref)
	c := newClient(t, f, func(cfg *Config) {
		client := *cfg.HTTPClient
		next := client.Transport
		if next == nil {
			next = http.DefaultTransport
		}
		expired := false
		client.Transport = roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if expired && r.Method == http.MethodGet {
				return &http.Response{StatusCode: http.StatusBadGateway, Body: http.NoBody, Header: http.Header{}, Request: r}, nil
			}
			resp, err := next.RoundTrip(r)
			expired = expired || strings.HasSuffix(r.URL.Path, "/expire")
			return resp, err
		})
		cfg.HTTPClient = &client
	})
	_, err := c.CancelCollection(t.Context(), ref)
	require.Error(t, err)
	assert.Equal(t, gateway.KindAmbiguous, gateway.KindOf(err), "%v", err)
	assert.Equal(t, 1, expiries(f))
}

// The fake's expiry endpoint, as the adapter relies on it.
func TestFakeExpiresSessions(t *testing.T) {
	f := manualFake(t)
	ref := gatewaytest.Reference()
	openSession(t, f, ref)
	id := f.SessionID(ref)
	expire := func(id, key string) (int, map[string]any) {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, f.URL()+"/v1/checkout/sessions/"+id+"/expire", http.NoBody)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+key)
		client := &http.Client{Timeout: 5 * time.Second}
		resp, err := client.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var body map[string]any
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
		return resp.StatusCode, body
	}
	status, body := expire(id, wavefake.PayoutKey)
	assert.Equal(t, http.StatusUnauthorized, status, "the Checkout API's key only")
	status, body = expire("cos-nothing", wavefake.CheckoutKey)
	assert.Equal(t, http.StatusNotFound, status)
	assert.Equal(t, "checkout-session-not-found", body["code"])

	status, body = expire(id, wavefake.CheckoutKey)
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, id, body["id"])
	assert.Equal(t, "expired", body["checkout_status"])
	assert.NotNil(t, body["when_completed"])

	status, body = expire(id, wavefake.CheckoutKey)
	assert.Equal(t, http.StatusConflict, status, "only an open session can be expired")
	assert.Equal(t, "checkout-session-not-open", body["code"])
}

// Wave declares its windows; an adapter hidden behind a wrapper that declares none gets the
// conservative defaults.
func TestWindows(t *testing.T) {
	c := New(Config{})
	want := gateway.Windows{NotFoundSettle: 5 * time.Minute, LateSuccess: 24 * time.Hour}
	require.Equal(t, want, c.Windows())
	require.Equal(t, want, gateway.WindowsOf(c))

	type undeclared struct{ gateway.Gateway }
	require.Equal(t, gateway.Windows{NotFoundSettle: gateway.DefaultNotFoundSettle, LateSuccess: gateway.DefaultLateSuccess},
		gateway.WindowsOf(undeclared{c}))
	_, cancels := gateway.Gateway(undeclared{c}).(gateway.Canceller)
	require.False(t, cancels, "a wrapper hides the cancel too")
}
