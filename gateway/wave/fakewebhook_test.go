package wave

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/sikahq/sika/gateway"
)

// The webhooks of the fake Wave: events about its checkout sessions, signed as Wave signs them.

// Callback is the webhook Wave sends now about the operation. Wave documents no payout
// webhooks (its events are checkout.session.*, b2b.*, merchant.payment_received): the payout
// case of the contract cannot apply and is skipped, visibly.
func (f *fakeWave) Callback(kind gateway.CallbackKind, reference string) (http.Header, []byte) {
	if kind == gateway.CallbackDisbursement {
		f.t.Skip("Wave sends no payout webhooks (docs.wave.com/webhook): payouts are followed by status reads")
	}
	return f.event(reference, time.Now(), fakeWebhookSecret)
}

// event renders the webhook Wave sends about the session of ref, signed at signedAt with each of
// secrets (several during a rotation).
func (f *fakeWave) event(ref string, signedAt time.Time, secrets ...string) (http.Header, []byte) {
	f.mu.Lock()
	s := f.sessionByReference(ref)
	if s == nil {
		f.mu.Unlock()
		f.errorf("event for unknown session %s", ref)
		return http.Header{}, nil
	}
	kind := "checkout.session.completed"
	if s.paymentStatus != "succeeded" {
		kind = "checkout.session.payment_failed"
	}
	body, _ := json.Marshal(map[string]any{"id": "AE_" + s.id[4:] + "_" + kind[17:], "type": kind, "data": f.render(false, s.id)})
	f.mu.Unlock()
	return signedHeader(body, signedAt, secrets...), body
}

// signedHeader signs body as Wave does: t=<unix>,v1=hex(HMAC-SHA256(secret, t + body)).
func signedHeader(body []byte, at time.Time, secrets ...string) http.Header {
	t := strconv.FormatInt(at.Unix(), 10)
	value := "t=" + t
	for _, secret := range secrets {
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write([]byte(t))
		mac.Write(body)
		value += ",v1=" + hex.EncodeToString(mac.Sum(nil))
	}
	return http.Header{"Content-Type": {"application/json"}, "Wave-Signature": {value}}
}
