package wave

import (
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika/gateway"
	"github.com/sikahq/sika/gateway/gatewaytest"
	"github.com/sikahq/sika/gateway/wave/wavefake"
)

// harness runs the gateway contract against the fake Wave.
type harness struct{}

func (harness) Features() gatewaytest.Features {
	return gatewaytest.Features{Payouts: true, Tokens: false, SignedCallbacks: true, NoPayoutCallbacks: true, Cancels: true,
		Refunds: true, RefundsWholeOnly: true,
		Country: "SN", Currency: "XOF", Network: "WAVE_SN", Phone: "+221770000000", Amount: decimal.NewFromInt(1000)}
}

func (harness) New(t *testing.T) (gateway.Gateway, gatewaytest.Controls) {
	f := wavefake.New(t)
	f.SettleAfter(20 * time.Millisecond) // customers act by themselves
	return newClient(t, f, nil), f
}

func TestContract(t *testing.T) { gatewaytest.Run(t, harness{}) }

func collectReq(ref string) gateway.CollectRequest {
	return gateway.CollectRequest{Reference: ref, Amount: decimal.NewFromInt(1000), Currency: "XOF", Country: "SN",
		Network: "WAVE_SN", Phone: "+221770000000", CustomerName: "Awa Diop", Description: "Order 42"}
}

func payoutReq(ref string) gateway.DisburseRequest {
	return gateway.DisburseRequest{Reference: ref, Amount: decimal.NewFromInt(1000), Currency: "XOF", Country: "SN",
		Network: "WAVE_SN", Phone: "+221770000000", RecipientName: "Awa Diop", Description: "Payout 42"}
}

// newClient returns an adapter wired to the fake f (its dials go through f's refusal switch).
func newClient(t *testing.T, f *wavefake.Server, configure func(*Config)) *Client {
	cfg := Config{
		Name:                "wave-sn",
		BaseURL:             f.URL(),
		APIKey:              wavefake.CheckoutKey,
		PayoutAPIKey:        wavefake.PayoutKey,
		WebhookSecret:       wavefake.WebhookSecret,
		SuccessURL:          "https://pay.sika.example/return/" + ReferencePlaceholder + "/success",
		ErrorURL:            "https://pay.sika.example/return/" + ReferencePlaceholder + "/error",
		RestrictPayerMobile: true,
		Memory:              &gateway.MapMemory{},
		HTTPClient:          f.HTTPClient(t),
		Timeout:             250 * time.Millisecond,
	}
	if configure != nil {
		configure(&cfg)
	}
	return New(cfg)
}

// manualFake is a fake whose customers act only when told and whose payouts stay processing.
func manualFake(t *testing.T) *wavefake.Server {
	f := wavefake.New(t)
	f.HoldPayouts(true)
	return f
}

// posts counts the creates f received on path.
func posts(f *wavefake.Server, path string) int {
	n := 0
	for _, r := range f.Seen() {
		if r.Method == http.MethodPost && r.Path == path {
			n++
		}
	}
	return n
}

func TestCheckoutRequest(t *testing.T) {
	f := manualFake(t)
	c := newClient(t, f, nil)
	ref := gatewaytest.Reference()
	res, err := c.Collect(t.Context(), collectReq(ref))
	require.NoError(t, err)
	assert.Equal(t, gateway.StatusPending, res.Status)
	assert.True(t, strings.HasPrefix(res.GatewayReference, "cos-"), res.GatewayReference)
	assert.Equal(t, gateway.NextAction{Type: gateway.NextRedirect, URL: "https://pay.wave.com/c/" + res.GatewayReference}, res.NextAction)

	seen := f.Seen()
	require.Len(t, seen, 1)
	assert.Equal(t, http.MethodPost, seen[0].Method)
	assert.Equal(t, "/v1/checkout/sessions", seen[0].Path)
	assert.Equal(t, "Bearer "+wavefake.CheckoutKey, seen[0].Authorization)
	assert.Equal(t, ref, seen[0].IdempotencyKey)
	assert.Equal(t, map[string]any{
		"amount":                "1000",
		"currency":              "XOF",
		"client_reference":      ref,
		"success_url":           "https://pay.sika.example/return/" + ref + "/success",
		"error_url":             "https://pay.sika.example/return/" + ref + "/error",
		"restrict_payer_mobile": "+221770000000",
	}, seen[0].Body)

	// the session id is remembered: the status read is a plain GET, not a search
	st, err := c.CollectionStatus(t.Context(), ref)
	require.NoError(t, err)
	assert.Equal(t, gateway.OperationStatus{Reference: ref, GatewayReference: res.GatewayReference, Status: gateway.StatusPending}, st)
	seen = f.Seen()
	assert.Equal(t, "/v1/checkout/sessions/"+res.GatewayReference, seen[len(seen)-1].Path)

	f.PayClientReference(ref)
	st, err = c.CollectionStatus(t.Context(), ref)
	require.NoError(t, err)
	assert.Equal(t, gateway.StatusSuccess, st.Status)

	// without RestrictPayerMobile the phone is not sent (any Wave account may pay)
	open := newClient(t, f, func(cfg *Config) { cfg.RestrictPayerMobile = false })
	_, err = open.Collect(t.Context(), collectReq(gatewaytest.Reference()))
	require.NoError(t, err)
	seen = f.Seen()
	assert.NotContains(t, seen[len(seen)-1].Body, "restrict_payer_mobile")
}

func TestPayoutRequest(t *testing.T) {
	f := manualFake(t)
	c := newClient(t, f, nil)
	ref := gatewaytest.Reference()
	req := payoutReq(ref)
	req.Description = "Remboursement de la commande n° 2026-0042 — merci de votre confiance"
	st, err := c.Disburse(t.Context(), req)
	require.NoError(t, err)
	assert.Equal(t, gateway.StatusPending, st.Status)
	assert.True(t, strings.HasPrefix(st.GatewayReference, "pt-"), st.GatewayReference)

	seen := f.Seen()
	require.Len(t, seen, 1)
	assert.Equal(t, "/v1/payout", seen[0].Path)
	assert.Equal(t, "Bearer "+wavefake.PayoutKey, seen[0].Authorization, "payouts use the payout key")
	assert.Equal(t, ref, seen[0].IdempotencyKey)
	reason, _ := seen[0].Body["payment_reason"].(string)
	assert.Equal(t, 40, utf8.RuneCountInString(reason))
	assert.True(t, utf8.ValidString(reason))
	assert.True(t, strings.HasPrefix(req.Description, reason), "%q is a prefix of the description", reason)
	delete(seen[0].Body, "payment_reason")
	assert.Equal(t, map[string]any{"currency": "XOF", "receive_amount": "1000", "mobile": "+221770000000",
		"name": "Awa Diop", "client_reference": ref}, seen[0].Body)
}

func TestIdempotencyKeyStableAcrossRetries(t *testing.T) {
	f := manualFake(t)
	c := newClient(t, f, nil)
	ref := gatewaytest.Reference()
	f.Next(gatewaytest.Unavailable503)
	_, err := c.Disburse(t.Context(), payoutReq(ref))
	assert.Equal(t, gateway.KindUnavailable, gateway.KindOf(err), "%v", err)
	first, err := c.Disburse(t.Context(), payoutReq(ref))
	require.NoError(t, err)

	// another process, whose memory knows nothing of ref, sends it again: Wave replays
	other := newClient(t, f, nil)
	again, err := other.Disburse(t.Context(), payoutReq(ref))
	require.NoError(t, err)
	assert.Equal(t, first.GatewayReference, again.GatewayReference)
	assert.Equal(t, 1, f.Operations(), "the same idempotency-key twice creates nothing new")

	keys := 0
	for _, r := range f.Seen() {
		if r.Method == http.MethodPost {
			assert.Equal(t, ref, r.IdempotencyKey)
			keys++
		}
	}
	assert.Equal(t, 3, keys, "refused, accepted, replayed")
}

func TestSearchFallbackAfterAmbiguousCreate(t *testing.T) {
	f := manualFake(t)
	c := newClient(t, f, nil)
	ref := gatewaytest.Reference()
	f.Next(gatewaytest.TimeoutAfterAccept)
	_, err := c.Collect(t.Context(), collectReq(ref))
	require.Error(t, err)
	assert.Equal(t, gateway.KindAmbiguous, gateway.KindOf(err), "%v", err)
	require.Equal(t, 1, f.Operations(), "Wave accepted the session before the answer was lost")

	st, err := c.CollectionStatus(t.Context(), ref)
	require.NoError(t, err)
	assert.Equal(t, gateway.StatusPending, st.Status)
	assert.True(t, strings.HasPrefix(st.GatewayReference, "cos-"))
	seen := f.Seen()
	last := seen[len(seen)-1]
	assert.Equal(t, "/v1/checkout/sessions/search", last.Path)
	assert.Equal(t, "client_reference="+ref, last.Query)

	// the id found is remembered: the next read is a plain GET
	_, err = c.CollectionStatus(t.Context(), ref)
	require.NoError(t, err)
	seen = f.Seen()
	assert.Equal(t, "/v1/checkout/sessions/"+st.GatewayReference, seen[len(seen)-1].Path)

	// Collect again: the existing session, not a second one
	res, err := c.Collect(t.Context(), collectReq(ref))
	require.NoError(t, err)
	assert.Equal(t, st.GatewayReference, res.GatewayReference)
	assert.Equal(t, gateway.NextRedirect, res.NextAction.Type)
	assert.Equal(t, 1, posts(f, "/v1/checkout/sessions"))

	// a process with an empty memory finds it by search too
	f.PayClientReference(ref)
	st, err = newClient(t, f, nil).CollectionStatus(t.Context(), ref)
	require.NoError(t, err)
	assert.Equal(t, gateway.StatusSuccess, st.Status)
	assert.Equal(t, 1, f.Operations())
}

func TestSearchFallbackAfterAmbiguousPayout(t *testing.T) {
	f := manualFake(t)
	c := newClient(t, f, nil)
	ref := gatewaytest.Reference()
	f.Force(wavefake.Answer{Status: http.StatusInternalServerError, Code: "internal-server-error", Message: "oops", Create: true})
	_, err := c.Disburse(t.Context(), payoutReq(ref))
	assert.Equal(t, gateway.KindAmbiguous, gateway.KindOf(err), "%v", err)
	st, err := c.Disburse(t.Context(), payoutReq(ref)) // found by search: not sent again
	require.NoError(t, err)
	assert.Equal(t, gateway.StatusPending, st.Status)
	assert.Equal(t, 1, posts(f, "/v1/payout"))
	assert.Equal(t, 1, f.Operations())
}

func TestUnknownReferenceIsNotFound(t *testing.T) {
	f := manualFake(t)
	c := newClient(t, f, nil)
	for _, read := range []func() (gateway.OperationStatus, error){
		func() (gateway.OperationStatus, error) { return c.CollectionStatus(t.Context(), "no-such-ref") },
		func() (gateway.OperationStatus, error) { return c.DisbursementStatus(t.Context(), "no-such-ref") },
	} {
		st, err := read()
		require.NoError(t, err)
		assert.Equal(t, gateway.OperationStatus{Reference: "no-such-ref", Status: gateway.StatusNotFound}, st)
	}
}

func TestConflictResolvedByReadingTheExistingOperation(t *testing.T) {
	f := manualFake(t)
	f.IgnoreIdempotency(true)
	f.RejectDuplicateReference(true)
	ref := gatewaytest.Reference()
	first, err := newClient(t, f, nil).Collect(t.Context(), collectReq(ref))
	require.NoError(t, err)

	// another process with an empty memory: Wave answers 409, the session is read instead
	again, err := newClient(t, f, nil).Collect(t.Context(), collectReq(ref))
	require.NoError(t, err)
	assert.Equal(t, first.GatewayReference, again.GatewayReference)
	assert.Equal(t, gateway.StatusPending, again.Status)
	assert.Equal(t, 1, f.Operations())

	// the same reference for another amount is not that session
	other := collectReq(ref)
	other.Amount = decimal.NewFromInt(2000)
	_, err = newClient(t, f, nil).Collect(t.Context(), other)
	assert.Equal(t, gateway.KindInvalid, gateway.KindOf(err), "%v", err)
	assert.Equal(t, 1, f.Operations())
}

func TestPayoutIdempotencyMismatch(t *testing.T) {
	f := manualFake(t)
	ref := gatewaytest.Reference()
	first, err := newClient(t, f, nil).Disburse(t.Context(), payoutReq(ref))
	require.NoError(t, err)

	// same payout, another payment_reason: 409 idempotency-mismatch, resolved to the payout
	reworded := payoutReq(ref)
	reworded.Description = "Payout 42 (retry)"
	st, err := newClient(t, f, nil).Disburse(t.Context(), reworded)
	require.NoError(t, err)
	assert.Equal(t, first.GatewayReference, st.GatewayReference)

	// another amount under the same reference: refused, not taken for that payout
	more := payoutReq(ref)
	more.Amount = decimal.NewFromInt(5000)
	_, err = newClient(t, f, nil).Disburse(t.Context(), more)
	assert.Equal(t, gateway.KindInvalid, gateway.KindOf(err), "%v", err)
	assert.Equal(t, 1, f.Operations())
}

func TestErrorMapping(t *testing.T) {
	cases := []struct {
		name    string
		payout  bool
		answer  wavefake.Answer
		kind    gateway.Kind
		code    string
		created int
	}{
		{"checkout 500 after creating", false, wavefake.Answer{Status: 500, Code: "internal-server-error", Message: "oops", Create: true}, gateway.KindAmbiguous, "", 1},
		{"checkout 502", false, wavefake.Answer{Status: 502, Code: "bad-gateway", Message: "upstream"}, gateway.KindAmbiguous, "", 0},
		{"checkout 503", false, wavefake.Answer{Status: 503, Code: "service-unavailable", Message: "later"}, gateway.KindUnavailable, gateway.FailureGatewayUnavailable, 0},
		{"checkout 429", false, wavefake.Answer{Status: 429, Code: "too-many-requests", Message: "slow down"}, gateway.KindUnavailable, gateway.FailureGatewayUnavailable, 0},
		{"checkout 400", false, wavefake.Answer{Status: 400, Code: "request-validation-error", Message: "bad"}, gateway.KindInvalid, gateway.FailureGatewayError, 0},
		{"checkout 400 payer mobile", false, wavefake.Answer{Status: 400, Code: "request-validation-error", Message: "bad", Field: "restrict_payer_mobile"}, gateway.KindInvalid, gateway.FailureInvalidNumber, 0},
		{"checkout 403", false, wavefake.Answer{Status: 403, Code: "unauthorized-wallet", Message: "no"}, gateway.KindAuth, gateway.FailureGatewayUnavailable, 0},
		{"payout 500 after creating", true, wavefake.Answer{Status: 500, Code: "internal-server-error", Message: "oops", Create: true}, gateway.KindAmbiguous, "", 1},
		{"payout 422 limit", true, wavefake.Answer{Status: 422, Code: "recipient-limit-exceeded", Message: "limit"}, gateway.KindDeclined, gateway.FailureRecipientLimit, 0},
		{"payout 422 blocked", true, wavefake.Answer{Status: 422, Code: "recipient-account-blocked", Message: "blocked"}, gateway.KindDeclined, gateway.FailureRecipientNotFound, 0},
		{"payout 422 our wallet is empty", true, wavefake.Answer{Status: 422, Code: "insufficient-funds", Message: "top up"}, gateway.KindUnavailable, gateway.FailureGatewayUnavailable, 0},
		{"payout 400 country", true, wavefake.Answer{Status: 400, Code: "country-mismatch", Message: "other country"}, gateway.KindInvalid, gateway.FailureInvalidNumber, 0},
		{"payout 400 mobile", true, wavefake.Answer{Status: 400, Code: "request-validation-error", Message: "bad", Field: "mobile"}, gateway.KindInvalid, gateway.FailureInvalidNumber, 0},
		{"payout 400 currency", true, wavefake.Answer{Status: 400, Code: "currency-mismatch", Message: "XAF"}, gateway.KindInvalid, gateway.FailureGatewayError, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := manualFake(t)
			c := newClient(t, f, nil)
			f.Force(tc.answer)
			ref := gatewaytest.Reference()
			initiate := func() (gateway.Status, error) {
				if tc.payout {
					st, err := c.Disburse(t.Context(), payoutReq(ref))
					return st.Status, err
				}
				res, err := c.Collect(t.Context(), collectReq(ref))
				return res.Status, err
			}
			_, err := initiate()
			require.Error(t, err)
			assert.Equal(t, tc.kind, gateway.KindOf(err), "%v", err)
			assert.Equal(t, tc.code, gateway.CodeOf(err), "%v", err)
			assert.Equal(t, tc.created, f.Operations())
			assertNoSecrets(t, err)
			if tc.kind == gateway.KindAmbiguous || tc.kind == gateway.KindUnavailable {
				// the same reference later: the existing operation, or one new one
				status, err := initiate()
				require.NoError(t, err)
				assert.Equal(t, gateway.StatusPending, status)
				assert.Equal(t, 1, f.Operations())
			}
		})
	}
}

func TestWrongKeysAreAuthFailed(t *testing.T) {
	f := manualFake(t)
	f.EchoAuthorization(true) // the worst case: Wave quotes the key
	wrongCheckout, wrongPayout := "wave_sn_prod_WRONG-checkout-key-0000", "wave_sn_prod_WRONG-payout-key-1111"
	c := newClient(t, f, func(cfg *Config) { cfg.APIKey, cfg.PayoutAPIKey = wrongCheckout, wrongPayout })
	_, err := c.Collect(t.Context(), collectReq(gatewaytest.Reference()))
	assert.Equal(t, gateway.KindAuth, gateway.KindOf(err), "%v", err)
	assert.NotContains(t, err.Error(), wrongCheckout)
	_, err = c.Disburse(t.Context(), payoutReq(gatewaytest.Reference()))
	assert.Equal(t, gateway.KindAuth, gateway.KindOf(err), "%v", err)
	assert.NotContains(t, err.Error(), wrongPayout)
	_, err = c.CollectionStatus(t.Context(), gatewaytest.Reference())
	assert.Equal(t, gateway.KindAuth, gateway.KindOf(err), "%v", err)
	assert.NotContains(t, err.Error(), wrongCheckout)
	assert.Zero(t, f.Operations())
}

func TestNoSecretInErrors(t *testing.T) {
	f := manualFake(t)
	f.EchoAuthorization(true)
	c := newClient(t, f, nil)
	f.Force(wavefake.Answer{Status: 400, Code: "request-validation-error", Message: "bad"},
		wavefake.Answer{Status: 500, Code: "internal-server-error", Message: "oops"})
	_, err := c.Collect(t.Context(), collectReq(gatewaytest.Reference()))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "[redacted]", "the echoed key was cut out: %v", err)
	assertNoSecrets(t, err)
	_, err = c.Disburse(t.Context(), payoutReq(gatewaytest.Reference()))
	require.Error(t, err)
	assertNoSecrets(t, err)
}

func TestSnippetCutsNoSecretInHalf(t *testing.T) {
	c := New(Config{APIKey: wavefake.CheckoutKey})
	for pad := 280; pad < 300; pad++ { // the key across the 300th character
		got := c.snippet([]byte(strings.Repeat("x", pad) + wavefake.CheckoutKey + " trailing"))
		assert.NotContains(t, got, wavefake.CheckoutKey[:min(len(wavefake.CheckoutKey), 300-pad)], "pad %d", pad)
		assert.LessOrEqual(t, utf8.RuneCountInString(got), 300)
	}
}

func TestConfigPrintsNoSecret(t *testing.T) {
	cfg := Config{Name: "wave-sn", APIKey: wavefake.CheckoutKey, PayoutAPIKey: wavefake.PayoutKey, WebhookSecret: wavefake.WebhookSecret,
		SuccessURL: "https://pay.sika.example/ok"}
	var logged strings.Builder
	slog.New(slog.NewTextHandler(&logged, nil)).Info("configured", "wave", cfg)
	for _, out := range []string{fmt.Sprint(cfg), fmt.Sprintf("%+v", cfg), fmt.Sprintf("%#v", cfg), logged.String()} {
		assert.Contains(t, out, "https://pay.sika.example/ok")
		for _, secret := range []string{wavefake.CheckoutKey, wavefake.PayoutKey, wavefake.WebhookSecret} {
			assert.NotContains(t, out, secret)
		}
	}
}

// assertNoSecrets checks that an error's text carries none of the fake wallet's secrets.
func assertNoSecrets(t *testing.T, err error) {
	t.Helper()
	for _, secret := range []string{wavefake.CheckoutKey, wavefake.PayoutKey, wavefake.WebhookSecret} {
		assert.False(t, strings.Contains(err.Error(), secret), "error %q leaks %q", err, secret)
	}
}
