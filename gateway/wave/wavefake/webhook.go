package wavefake

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/sikahq/sika/gateway"
)

// The webhooks of the fake Wave: events about its checkout sessions, signed as Wave signs them.

// Callback is the webhook Wave sends now about the checkout session of client_reference
// reference, signed with WebhookSecret (gatewaytest.Controls). Wave documents no payout webhooks
// (its events are checkout.session.*, b2b.*, merchant.payment_received): a payout callback is
// a mistake of the caller (the contract runs with Features.NoPayoutCallbacks).
func (f *Server) Callback(kind gateway.CallbackKind, reference string) (http.Header, []byte) {
	f.T().Helper()
	if kind == gateway.CallbackDisbursement {
		f.T().Errorf("Wave sends no payout webhooks (docs.wave.com/webhook): payouts are followed by status reads")
		return nil, nil
	}
	f.Mu.Lock()
	defer f.Mu.Unlock()
	return f.event(f.sessionByReference(reference), "client_reference "+reference, time.Now(), WebhookSecret)
}

// Webhook is the webhook Wave sends now about the checkout session that launchURLOrSessionID
// names (its wave_launch_url or its id), signed with WebhookSecret: headers (Content-Type,
// Wave-Signature) and raw body. The event is checkout.session.completed once the session is
// paid (after Pay), checkout.session.payment_failed otherwise (after FailPayment).
func (f *Server) Webhook(launchURLOrSessionID string) (http.Header, []byte) {
	f.T().Helper()
	f.Mu.Lock()
	defer f.Mu.Unlock()
	return f.event(f.sessionOf(launchURLOrSessionID), launchURLOrSessionID, time.Now(), WebhookSecret)
}

// SendWebhook POSTs the Webhook about the session that launchURLOrSessionID names to url (the
// service's callback endpoint, e.g. <public URL>/gateway-callbacks/wave/), as Wave delivers it.
// It fails when the delivery fails or is not answered 2xx.
func (f *Server) SendWebhook(url, launchURLOrSessionID string) error {
	header, body := f.Webhook(launchURLOrSessionID)
	if body == nil {
		return fmt.Errorf("fake Wave: no checkout session %s", launchURLOrSessionID)
	}
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header = header
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("fake Wave: webhook to %s: %w", url, err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("fake Wave: webhook to %s answered %s: %s", url, resp.Status, strings.TrimSpace(string(answer)))
	}
	return nil
}

// event renders the webhook about session s (f.Mu held), signed at signedAt with each of secrets;
// what names s when it is nil.
func (f *Server) event(s *fakeSession, what string, signedAt time.Time, secrets ...string) (http.Header, []byte) {
	f.T().Helper()
	if s == nil {
		f.Errorf("webhook about unknown checkout session %s", what)
		return http.Header{}, nil
	}
	kind := "checkout.session.completed"
	if s.paymentStatus != "succeeded" {
		kind = "checkout.session.payment_failed"
	}
	id := "AE_" + strings.TrimPrefix(s.id, "cos-") + "_" + strings.TrimPrefix(kind, "checkout.session.")
	body, _ := json.Marshal(map[string]any{"id": id, "type": kind, "data": f.render(false, s.id)})
	return Sign(body, signedAt, secrets...), body
}

// Sign returns the headers Wave sends with body signed at at: Content-Type and Wave-Signature
// "t=<unix seconds>,v1=<hex HMAC-SHA256(secret, t + body)>", one v1 per secret (several during a
// secret rotation).
func Sign(body []byte, at time.Time, secrets ...string) http.Header {
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
