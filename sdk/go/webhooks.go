package sika

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// ErrWebhookVerification is the error VerifyWebhook wraps when a delivery is not Sika's: no
// signature matches, a header is missing, or the timestamp is more than five minutes off.
var ErrWebhookVerification = errors.New("sika: webhook verification failed")

// VerifyWebhook verifies a webhook delivery the Standard Webhooks way, with the Standard
// Webhooks library: the `webhook-signature` (any of its signatures: after a secret rotation
// deliveries carry two for 24 hours) must be the HMAC-SHA256 of `webhook-id`,
// `webhook-timestamp` and the raw body under the endpoint's signing_secret (`whsec_…`), and the
// timestamp within five minutes of now. Pass the body exactly as received, before any JSON
// decoding. It answers the event; the error wraps ErrWebhookVerification when the delivery does
// not verify. Dedupe on the event's Id (= `webhook-id`): a delivery can come more than once.
//
//	body, _ := io.ReadAll(r.Body)
//	event, err := sika.VerifyWebhook(secret, body, r.Header)
//	if err != nil { http.Error(w, "bad signature", http.StatusUnauthorized); return }
//	if event.Type == sika.EventTypeCheckoutSessionPaid { var s sika.CheckoutSession; _ = event.DecodeData(&s) }
func VerifyWebhook(secret string, body []byte, header http.Header) (*Event, error) {
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		return nil, fmt.Errorf("%w: the signing secret is not a whsec_ secret: %w", ErrWebhookVerification, err)
	}
	if err := wh.Verify(body, header); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrWebhookVerification, err)
	}
	var event Event
	if err := json.Unmarshal(body, &event); err != nil {
		return nil, fmt.Errorf("sika: decode the webhook event: %w", err)
	}
	return &event, nil
}

// DecodeData decodes the event's resource (Data) into v: a *Transaction for transaction.* and
// payout.* events, a *CheckoutSession for checkout_session.*, a *Settlement, a *KYCDossier.
func (e *Event) DecodeData(v any) error {
	b, err := json.Marshal(e.Data)
	if err != nil {
		return fmt.Errorf("sika: event %s data: %w", e.Id, err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("sika: event %s data: %w", e.Id, err)
	}
	return nil
}
