package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika/gateway"
)

func TestWrongAPIKeyIsAuthFailed(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	gw := DefaultGateways(testMaster)[0]
	client := NewClient(ClientConfig{Name: gw.Name, BaseURL: h.url, APIKey: "wrong", CallbackSecret: gw.CallbackSecret})
	ctx := context.Background()

	_, err := client.Collect(ctx, gateway.CollectRequest{Reference: newRef(), Amount: decimal.NewFromInt(100),
		Currency: "XOF", Country: "BJ", Network: "MTN_BJ", Phone: phone("000")})
	requireKind(t, err, gateway.KindAuth, gateway.FailureGatewayUnavailable)
	_, err = client.CollectionStatus(ctx, newRef())
	requireKind(t, err, gateway.KindAuth, "")
	_, err = client.Disburse(ctx, gateway.DisburseRequest{Reference: newRef(), Amount: decimal.NewFromInt(100),
		Currency: "XOF", Country: "BJ", Network: "MTN_BJ", Phone: phone("000")})
	requireKind(t, err, gateway.KindAuth, "")
	require.Empty(t, h.server.Operations())

	// Another gateway's key is wrong too.
	other := DefaultGateways(testMaster)[1]
	client = NewClient(ClientConfig{Name: gw.Name, BaseURL: h.url, APIKey: other.APIKey})
	_, err = client.DisbursementStatus(ctx, newRef())
	requireKind(t, err, gateway.KindAuth, "")
}

func TestCredentialsAreDerived(t *testing.T) {
	t.Parallel()
	key, secret := Credentials("m", GatewayA)
	require.Len(t, key, 64)
	require.NotEqual(t, key, secret)
	key2, _ := Credentials("m", GatewayB)
	require.NotEqual(t, key, key2)
	key3, _ := Credentials("other", GatewayA)
	require.NotEqual(t, key, key3)
	gws := DefaultGateways("m")
	require.Equal(t, key, gws[0].APIKey)
	require.Equal(t, secret, gws[0].CallbackSecret)
	require.True(t, gws[0].UnavailableOn005)
	require.False(t, gws[1].UnavailableOn005)
}

func TestInvalidRequests(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	ctx := context.Background()
	c := h.clients[GatewayA]
	for name, req := range map[string]gateway.CollectRequest{
		"no plus":      {Reference: newRef(), Amount: decimal.NewFromInt(1), Currency: "XOF", Country: "BJ", Network: "MTN_BJ", Phone: "22997000000"},
		"zero amount":  {Reference: newRef(), Currency: "XOF", Country: "BJ", Network: "MTN_BJ", Phone: phone("000")},
		"no reference": {Amount: decimal.NewFromInt(1), Currency: "XOF", Country: "BJ", Network: "MTN_BJ", Phone: phone("000")},
		"bad callback": {Reference: newRef(), Amount: decimal.NewFromInt(1), Currency: "XOF", Country: "BJ", Network: "MTN_BJ", Phone: phone("000"), CallbackURL: "ftp://x"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := c.Collect(ctx, req)
			requireKind(t, err, gateway.KindInvalid, gateway.FailureGatewayError)
			require.Contains(t, err.Error(), "invalid_request")
		})
	}
	require.Empty(t, h.server.Operations())

	// A client pointed at a gateway the sandbox does not serve never reaches an operator.
	stranger := NewClient(ClientConfig{Name: "sandbox-z", BaseURL: h.url, APIKey: "k"})
	_, err := stranger.CollectionStatus(ctx, newRef())
	requireKind(t, err, gateway.KindUnavailable, "")
}

// answering returns a server that answers every request with status and body.
func answering(t *testing.T, status int, body string) string {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

func apiErrorJSON(code string) string {
	return fmt.Sprintf(`{"error":{"code":%q,"message":"m"}}`, code)
}

func TestClientErrorMapping(t *testing.T) {
	t.Parallel()
	collect := func(c *Client) error {
		_, err := c.Collect(context.Background(), gateway.CollectRequest{Reference: "r1", Amount: decimal.NewFromInt(5),
			Currency: "XOF", Country: "BJ", Network: "MTN_BJ", Phone: phone("000")})
		return err
	}
	cases := []struct {
		name   string
		status int
		body   string
		kind   gateway.Kind
		code   string
	}{
		{"invalid number", 400, apiErrorJSON("invalid_number"), gateway.KindInvalid, gateway.FailureInvalidNumber},
		{"invalid otp", 400, apiErrorJSON("invalid_otp"), gateway.KindDeclined, gateway.FailureInvalidOTP},
		{"invalid request", 400, apiErrorJSON("invalid_request"), gateway.KindInvalid, gateway.FailureGatewayError},
		{"unauthorized", 401, apiErrorJSON("unauthorized"), gateway.KindAuth, ""},
		{"conflict", 409, apiErrorJSON("reference_conflict"), gateway.KindInvalid, gateway.FailureGatewayError},
		{"rate limited", 429, "slow down", gateway.KindUnavailable, gateway.FailureGatewayUnavailable},
		{"unavailable", 503, apiErrorJSON("unavailable"), gateway.KindUnavailable, gateway.FailureGatewayUnavailable},
		{"internal error", 500, "boom", gateway.KindAmbiguous, ""},
		{"bad gateway", 502, "<html>", gateway.KindAmbiguous, ""},
		{"garbled success", 201, "{", gateway.KindAmbiguous, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := collect(NewClient(ClientConfig{Name: "x", BaseURL: answering(t, tc.status, tc.body)}))
			requireKind(t, err, tc.kind, tc.code)
		})
	}

	t.Run("status read 404 is not found", func(t *testing.T) {
		t.Parallel()
		c := NewClient(ClientConfig{Name: "x", BaseURL: answering(t, 404, apiErrorJSON("not_found"))})
		got, err := c.DisbursementStatus(context.Background(), "r1")
		require.NoError(t, err)
		require.Equal(t, gateway.StatusNotFound, got.Status)
	})
	t.Run("connection refused", func(t *testing.T) {
		t.Parallel()
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		addr := l.Addr().String()
		require.NoError(t, l.Close())
		requireKind(t, collect(NewClient(ClientConfig{Name: "x", BaseURL: "http://" + addr})), gateway.KindUnavailable, "")
	})
	t.Run("unknown host", func(t *testing.T) {
		t.Parallel()
		c := NewClient(ClientConfig{Name: "x", BaseURL: "http://sandbox.invalid", Timeout: 2 * time.Second})
		requireKind(t, collect(c), gateway.KindUnavailable, "")
	})
	t.Run("connection broken after sending", func(t *testing.T) {
		t.Parallel()
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				conn.Close()
			}
		}))
		t.Cleanup(ts.Close)
		requireKind(t, collect(NewClient(ClientConfig{Name: "x", BaseURL: ts.URL})), gateway.KindAmbiguous, "")
	})
	t.Run("timeout after sending", func(t *testing.T) {
		t.Parallel()
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			<-r.Context().Done()
		}))
		t.Cleanup(ts.Close)
		c := NewClient(ClientConfig{Name: "x", BaseURL: ts.URL, Timeout: time.Second})
		requireKind(t, collect(c), gateway.KindAmbiguous, "")
	})
}

func TestParseCallback(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_700_000_000, 0)
	_, secret := Credentials(testMaster, GatewayA)
	client := NewClient(ClientConfig{Name: GatewayA, CallbackSecret: secret, Now: func() time.Time { return now }})
	body, err := json.Marshal(callbackBody{Type: kindCollection, Reference: "r1", GatewayReference: "SBX-1",
		Status: gateway.StatusFailed, FailureCode: gateway.FailurePayerDeclined, SentAt: now.Format(time.RFC3339)})
	require.NoError(t, err)
	header := func(value string) http.Header { return http.Header{SignatureHeader: {value}} }

	cb, err := client.ParseCallback(t.Context(), header(sign(secret, now.Add(-4*time.Minute), body)), body)
	require.NoError(t, err)
	require.Equal(t, gateway.Callback{Kind: gateway.CallbackCollection, Trusted: true, OperationStatus: gateway.OperationStatus{
		Reference: "r1", GatewayReference: "SBX-1", Status: gateway.StatusFailed, FailureCode: gateway.FailurePayerDeclined,
	}}, cb)

	tampered := append([]byte(nil), body...)
	tampered[len(tampered)-3] ^= 1
	good := sign(secret, now, body)
	for name, tc := range map[string]struct {
		header http.Header
		body   []byte
	}{
		"tampered body": {header(good), tampered},
		"wrong secret":  {header(sign("not-the-secret", now, body)), body},
		"other gateway": {header(sign(DefaultGateways(testMaster)[1].CallbackSecret, now, body)), body},
		"old timestamp": {header(sign(secret, now.Add(-6*time.Minute), body)), body},
		"future":        {header(sign(secret, now.Add(6*time.Minute), body)), body},
		"missing":       {http.Header{}, body},
		"garbled":       {header("nonsense"), body},
		"no signature":  {header(fmt.Sprintf("t=%d", now.Unix())), body},
		"bad timestamp": {header("t=yesterday,v1=abcd"), body},
		"not hex":       {header(fmt.Sprintf("t=%d,v1=zz", now.Unix())), body},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := client.ParseCallback(t.Context(), tc.header, tc.body)
			require.ErrorIs(t, err, ErrInvalidSignature)
		})
	}

	t.Run("a rotated secret's second signature", func(t *testing.T) {
		_, err := client.ParseCallback(t.Context(), header(sign("old", now, body)+",v1="+signatureOf(secret, now.Unix(), body)), body)
		require.NoError(t, err)
	})
	t.Run("signed garbage", func(t *testing.T) {
		garbage := []byte(`{"type":"chargeback","reference":"r1","status":"SUCCESS"}`)
		_, err := client.ParseCallback(t.Context(), header(sign(secret, now, garbage)), garbage)
		require.Error(t, err)
		require.False(t, errors.Is(err, ErrInvalidSignature))
	})
	t.Run("no secret configured", func(t *testing.T) {
		_, err := NewClient(ClientConfig{Name: GatewayA}).ParseCallback(t.Context(), header(sign("", now, body)), body)
		require.ErrorIs(t, err, ErrInvalidSignature)
	})
}

// The client declares the sandbox's windows; the defaults fit the server's defaults and Sika's.
func TestClientWindows(t *testing.T) {
	t.Parallel()
	c := NewClient(ClientConfig{Name: GatewayA})
	require.Equal(t, gateway.Windows{NotFoundSettle: 30 * time.Second, LateSuccess: time.Hour}, c.Windows())
	require.Equal(t, c.Windows(), gateway.WindowsOf(c))

	c = NewClient(ClientConfig{Name: GatewayA, NotFoundSettle: time.Minute, LateSuccess: 2 * time.Hour})
	require.Equal(t, gateway.Windows{NotFoundSettle: time.Minute, LateSuccess: 2 * time.Hour}, gateway.WindowsOf(c))

	// A 010 operation is found (3 ticks of 1 s by default) well within NotFoundSettle, and a
	// 011 one succeeds after Sika's default push lifetime (5 min) and within LateSuccess of it.
	const sikaPushLifetime = 5 * time.Minute
	s := NewServer(Config{Gateways: DefaultGateways(testMaster), Logger: slog.New(slog.DiscardHandler)})
	defer s.Close()
	require.Equal(t, 3*time.Second, s.cfg.NotFoundFor)
	require.Less(t, s.cfg.NotFoundFor, DefaultNotFoundSettle)
	require.Equal(t, DefaultLateAfter, s.cfg.LateAfter)
	require.Greater(t, s.cfg.LateAfter, sikaPushLifetime)
	require.Less(t, s.cfg.LateAfter-sikaPushLifetime, DefaultLateSuccess)
}
