package orangefake

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/sikahq/sika/gateway/gatewaytest"
)

// notifyClient posts the notifications.
var notifyClient = &http.Client{Timeout: 10 * time.Second}

// Customers, and Orange's notifications.

// pageOf returns the payment whose payment_url is paymentURL (f.Mu held).
func (f *Server) pageOf(paymentURL string) *payment {
	u, err := url.Parse(paymentURL)
	if err != nil {
		return nil
	}
	token, ok := strings.CutPrefix(u.Path, pagePath)
	if !ok {
		return nil
	}
	return f.byPayToken[token]
}

// customer ends the payment behind paymentURL with status, as its customer on the page.
func (f *Server) customer(paymentURL, status string) {
	f.T().Helper()
	f.Mu.Lock()
	defer f.Mu.Unlock()
	p := f.pageOf(paymentURL)
	if p == nil {
		f.Errorf("no payment page %q", paymentURL)
		return
	}
	f.advance(p)
	switch {
	case p.delivered.IsZero():
		f.Errorf("payment %s: its page never reached the merchant, nobody can be on it", p.orderID)
	case !p.open():
		f.Errorf("payment %s is %s: nobody can pay it any more", p.orderID, p.status)
	default:
		f.settle(p, status)
	}
}

// Pay is the customer paying on the page at paymentURL (the payment_url of the initiation's
// answer, as the merchant's next_action carries it): the payment becomes SUCCESS, with a txnid.
// A page that is unknown, never reached the merchant, or whose payment has ended is reported on
// the test. Orange's notification is not sent: see Notify.
func (f *Server) Pay(paymentURL string) {
	f.T().Helper()
	f.customer(paymentURL, Success)
}

// Decline is the customer cancelling on the page at paymentURL (or failing its PIN or OTP): the
// payment becomes FAILED. It is reported on the test as Pay is.
func (f *Server) Decline(paymentURL string) {
	f.T().Helper()
	f.customer(paymentURL, Failed)
}

// Notify is Orange notifying the end of the payment behind paymentURL: it POSTs
// {status, notif_token, txnid} as JSON to the notif_url the payment was created with and
// returns an error when the page is unknown, the payment has not ended yet, or the answer is
// not a 2xx.
func (f *Server) Notify(paymentURL string) error {
	f.Mu.Lock()
	p := f.pageOf(paymentURL)
	if p == nil {
		f.Mu.Unlock()
		return fmt.Errorf("fake Orange: no payment page %q", paymentURL)
	}
	f.advance(p)
	if p.open() {
		status := p.status
		f.Mu.Unlock()
		return fmt.Errorf("fake Orange: payment %s is %s: Orange notifies only a payment that has ended", p.orderID, status)
	}
	body, target := notificationOf(p), p.notifURL
	f.Mu.Unlock()
	resp, err := notifyClient.Post(target, "application/json", bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("fake Orange: post notification: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("fake Orange: notification to %s answered %s", target, resp.Status)
	}
	return nil
}

// Notification renders the notification Orange would post now about the payment of orderID,
// as our endpoint receives it (headers and raw body); an unknown order is reported on the test.
// It is what a harness's gatewaytest.Controls.Callback returns, once the reference is turned
// into its order_id.
func (f *Server) Notification(orderID string) (http.Header, []byte) {
	f.T().Helper()
	f.Mu.Lock()
	defer f.Mu.Unlock()
	p, ok := f.payments[orderID]
	if !ok {
		f.Errorf("no payment of order %q to notify", orderID)
		return http.Header{}, nil
	}
	f.advance(p)
	return http.Header{"Content-Type": {"application/json"}}, notificationOf(p)
}

// Inspection.

// Payment returns a snapshot of the payment of orderID, and whether the fake holds one.
func (f *Server) Payment(orderID string) (Payment, bool) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	p, ok := f.payments[orderID]
	if !ok {
		return Payment{}, false
	}
	return f.snapshot(p), true
}

// Seen lists every request received, in order.
func (f *Server) Seen() []SeenRequest {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	return append([]SeenRequest(nil), f.requests...)
}

// Settings.

// SettleAfter makes the customers act by themselves: d after its page reached the merchant,
// the customer of a payment ends it (SUCCESS, or FAILED after Next(gatewaytest.Decline), or as
// NextOutcome says), and is on the page (PENDING) from d/2. The clock runs when the payment is
// read (status reads, Notification, Notify). 0, the default, leaves payments to Pay and Decline.
func (f *Server) SettleAfter(d time.Duration) { gatewaytest.Set(&f.Fake, &f.settleAfter, d) }

// SetSessionTTL sets how long after its creation an unpaid payment expires (default
// DefaultSessionTTL).
func (f *Server) SetSessionTTL(d time.Duration) { gatewaytest.Set(&f.Fake, &f.sessionTTL, d) }

// NextOutcome sets what the customer of the next payment created does after SettleAfter:
// Success, Failed, or "" (never comes back: the payment expires). Calls queue up, one per
// payment.
func (f *Server) NextOutcome(status string) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	f.nextOutcome = append(f.nextOutcome, status)
}

// ForceNext makes the next initiation answer status with body, after creating the payment if
// create (its page then never reaches the merchant).
func (f *Server) ForceNext(status int, create bool, body string) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	f.forced, f.forcedCreate, f.forcedBody = status, create, body
}

// ForceNextStatus makes the next status read answer status with body.
func (f *Server) ForceNextStatus(status int, body string) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	f.statusForced, f.statusBody = status, body
}

// SetStatusDelay delays every status read's answer by d.
func (f *Server) SetStatusDelay(d time.Duration) { gatewaytest.Set(&f.Fake, &f.statusDelay, d) }

// RejectBearer makes the fake refuse every Bearer token with a 403, as Orange does to an
// application that may not use WebPay (true), or accept valid ones again.
func (f *Server) RejectBearer(reject bool) { gatewaytest.Set(&f.Fake, &f.rejectBearer, reject) }

// IssueExpiredTokens makes every token issued from now on already expired (true), so that each
// is refused with a 401, or issues valid ones again.
func (f *Server) IssueExpiredTokens(expired bool) { gatewaytest.Set(&f.Fake, &f.stillborn, expired) }

// Controls of gatewaytest (all but Callback: see the package's documentation).

// Operations counts the payments created (gatewaytest.Controls).
func (f *Server) Operations() int {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	return len(f.payments)
}

// ExpireToken makes every issued token expired (gatewaytest.Controls).
func (f *Server) ExpireToken() {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	for tok := range f.tokens {
		f.tokens[tok] = false
	}
}

// TokenRequests counts the token requests (gatewaytest.Controls).
func (f *Server) TokenRequests() int {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	return f.tokenRequests
}
