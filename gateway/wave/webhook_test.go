package wave

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika/gateway"
	"github.com/sikahq/sika/gateway/gatewaytest"
	"github.com/sikahq/sika/gateway/wave/wavefake"
)

// webhookNow is the receiving clock of the signature tests.
var webhookNow = time.Date(2026, 11, 21, 8, 0, 0, 0, time.UTC)

// webhookClient is an adapter that only receives webhooks, at webhookNow.
func webhookClient(secret string) *Client {
	return New(Config{WebhookSecret: secret, Now: func() time.Time { return webhookNow }})
}

// completedEvent is a checkout.session.completed body about ref.
func completedEvent(ref string) []byte {
	body, _ := json.Marshal(map[string]any{"id": "AE_ijzo7oGgrlM4", "type": EventCheckoutCompleted, "data": map[string]any{
		"id": "cos-18qq25rgr100a", "amount": "1000", "currency": "XOF", "checkout_status": "complete",
		"payment_status": "succeeded", "client_reference": ref, "last_payment_error": nil, "business_name": "Sika Test",
		"transaction_id": "TCN7G4H2KQ", "wave_launch_url": "https://pay.wave.com/c/cos-18qq25rgr100a",
		"when_created": "2026-11-21T07:58:00Z", "when_completed": "2026-11-21T07:59:30Z", "when_expires": "2026-11-21T08:28:00Z"}})
	return body
}

func TestWebhookSignature(t *testing.T) {
	ref := gatewaytest.Reference()
	body := completedEvent(ref)
	good := wavefake.Sign(body, webhookNow, wavefake.WebhookSecret).Get(SignatureHeader)
	header := func(v string) http.Header { return http.Header{SignatureHeader: {v}} }
	tampered := []byte(strings.Replace(string(body), `"amount":"1000"`, `"amount":"9000"`, 1))
	cases := []struct {
		name   string
		header http.Header
		body   []byte
		ok     bool
	}{
		{"valid", header(good), body, true},
		{"valid, spaces after commas", header(strings.ReplaceAll(good, ",", ", ")), body, true},
		{"rotation: one of several v1 matches", wavefake.Sign(body, webhookNow, "old-secret", wavefake.WebhookSecret), body, true},
		{"4 minutes old", wavefake.Sign(body, webhookNow.Add(-4*time.Minute), wavefake.WebhookSecret), body, true},
		{"tampered body", header(good), tampered, false},
		{"another secret", wavefake.Sign(body, webhookNow, "not-our-secret"), body, false},
		{"stale: 6 minutes old", wavefake.Sign(body, webhookNow.Add(-6*time.Minute), wavefake.WebhookSecret), body, false},
		{"from the future", wavefake.Sign(body, webhookNow.Add(6*time.Minute), wavefake.WebhookSecret), body, false},
		{"timestamp changed", header(strings.Replace(good, "t="+strconv.FormatInt(webhookNow.Unix(), 10),
			"t="+strconv.FormatInt(webhookNow.Unix()-1, 10), 1)), body, false},
		{"missing header", http.Header{}, body, false},
		{"no timestamp", header(good[strings.Index(good, ",")+1:]), body, false},
		{"no v1", header("t=" + strconv.FormatInt(webhookNow.Unix(), 10)), body, false},
		{"v1 not hex", header("t=" + strconv.FormatInt(webhookNow.Unix(), 10) + ",v1=zz"), body, false},
		{"two timestamps", header(good + ",t=1"), body, false},
		{"bearer instead of a signature", http.Header{"Authorization": {"Bearer " + wavefake.WebhookSecret}}, body, false},
	}
	c := webhookClient(wavefake.WebhookSecret)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cb, err := c.ParseCallback(t.Context(), tc.header, tc.body)
			if tc.ok {
				require.NoError(t, err)
				assert.Equal(t, ref, cb.Reference)
				assert.True(t, cb.Trusted)
				return
			}
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrBadSignature)
			assert.NotContains(t, err.Error(), wavefake.WebhookSecret)
		})
	}

	_, err := webhookClient("").ParseCallback(t.Context(), header(good), body)
	assert.ErrorIs(t, err, ErrBadSignature, "without a configured secret nothing is trusted")
}

func TestParseCallbackEvents(t *testing.T) {
	f := manualFake(t)
	c := newClient(t, f, nil)
	sign := func(body []byte) http.Header { return wavefake.Sign(body, time.Now(), wavefake.WebhookSecret) }

	paid := gatewaytest.Reference()
	res, err := c.Collect(t.Context(), collectReq(paid))
	require.NoError(t, err)
	f.PayClientReference(paid)
	header, body := f.Webhook(res.NextAction.URL) // by its launch URL
	cb, err := c.ParseCallback(t.Context(), header, body)
	require.NoError(t, err)
	assert.Equal(t, gateway.Callback{Kind: gateway.CallbackCollection, Trusted: true, OperationStatus: gateway.OperationStatus{
		Reference: paid, GatewayReference: res.GatewayReference, Status: gateway.StatusSuccess}}, cb)

	broke := gatewaytest.Reference()
	_, err = c.Collect(t.Context(), collectReq(broke))
	require.NoError(t, err)
	f.FailPayment(f.SessionID(broke), "insufficient-funds")
	header, body = f.Callback(gateway.CallbackCollection, broke) // by our reference
	cb, err = c.ParseCallback(t.Context(), header, body)
	require.NoError(t, err)
	assert.Equal(t, gateway.StatusFailed, cb.Status)
	assert.Equal(t, gateway.FailureInsufficientFunds, cb.FailureCode)
	assert.Contains(t, cb.FailureMessage, "insufficient-funds")
	status, err := c.CollectionStatus(t.Context(), broke)
	require.NoError(t, err)
	assert.Equal(t, status, cb.OperationStatus, "a callback decodes as the status read of its session does")

	// a failed attempt on a session still open: the customer may pay yet
	open := map[string]any{"id": "cos-1", "amount": "1000", "currency": "XOF", "checkout_status": "open",
		"payment_status": "cancelled", "client_reference": broke, "last_payment_error": map[string]any{"code": "payment-failure", "message": "x"}}
	body, _ = json.Marshal(map[string]any{"id": "AE_2", "type": EventCheckoutPaymentFailed, "data": open})
	cb, err = c.ParseCallback(t.Context(), sign(body), body)
	require.NoError(t, err)
	assert.Equal(t, gateway.StatusPending, cb.Status)

	for name, body := range map[string]string{
		"another event type":     `{"id":"AE_3","type":"merchant.payment_received","data":{"id":"M_1","amount":"500"}}`,
		"portal test event":      `{"id":"AE_4","type":"test.test_event","data":{}}`,
		"session not ours":       `{"id":"AE_5","type":"checkout.session.completed","data":{"id":"cos-2","checkout_status":"complete","payment_status":"succeeded","client_reference":null}}`,
		"unknown checkout state": `{"id":"AE_6","type":"checkout.session.completed","data":{"id":"cos-3","checkout_status":"weird","payment_status":"processing","client_reference":"r"}}`,
		"not JSON":               `checkout.session.completed`,
	} {
		_, err := c.ParseCallback(t.Context(), sign([]byte(body)), []byte(body))
		assert.Error(t, err, name)
		assert.False(t, errors.Is(err, ErrBadSignature), "%s: authentic, refused for its content: %v", name, err)
	}
}
