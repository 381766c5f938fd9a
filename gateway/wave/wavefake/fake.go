// Package wavefake is a fake Wave Business API on loopback that speaks the documented wire format
// (docs.wave.com): Bearer keys per API (Checkout, Payout), amounts as strings, idempotency-key
// replay, {code, message} errors, searches by client_reference answering {result: [...]}, and
// webhooks signed with Wave-Signature. It checks every request it gets and reports violations of
// the format on the test. The Wave adapter's tests and the service's LIVE end-to-end test drive it.
//
// A paid checkout session is refunded whole, once, by POST /v1/checkout/sessions/{id}/refund
// (see refund.go).
//
// Checkout sessions stay open until the test plays the customer (Pay, PayClientReference,
// FailPayment, Expire), the adapter expires them (POST /v1/checkout/sessions/{id}/expire), or,
// after SettleAfter, until their customer acts by itself. Payouts
// answer processing when created and are decided (succeeded, or failed after
// Next(gatewaytest.Decline)) at their first read, unless HoldPayouts holds them.
package wavefake

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/sikahq/sika/gateway/gatewaytest"
)

// Credentials of the fake wallet.
const (
	// CheckoutKey is the API key of the Checkout API (collections).
	CheckoutKey = "wave_sn_prod_fakeCheckoutKey0123456789abcdef"
	// PayoutKey is the API key of the Payout API.
	PayoutKey = "wave_sn_prod_fakePayoutKey9876543210fedcba"
	// WebhookSecret is the signing secret of the fake's webhooks.
	WebhookSecret = "wave_sn_WHS_fakeWebhookSecret5a5a5a5a5a"
)

// launchURLPrefix starts the wave_launch_url of every session (followed by its id).
const launchURLPrefix = "https://pay.wave.com/c/"

// fakeSession is a checkout session the fake holds.
type fakeSession struct {
	id, amount, currency, reference, successURL, errorURL, restrict string
	checkoutStatus, paymentStatus, transactionID                    string
	errCode, errMessage                                             string // last_payment_error
	created, completed                                              time.Time
	decline                                                         bool // what the customer does by itself
}

// fakePayout is a payout the fake holds.
type fakePayout struct {
	id, currency, amount, mobile, name, reference, reason, status string
	errCode, errMessage                                           string // payout_error
	created                                                       time.Time
	decline                                                       bool
}

// Answer is an answer imposed on a create (POST /v1/checkout/sessions or /v1/payout, Force) or
// on an expiry (POST /v1/checkout/sessions/{id}/expire, ForceExpiry), in Wave's error shape.
type Answer struct {
	Status        int    // HTTP status
	Code, Message string // Wave's error code and message
	Field         string // the body field a validation error is about (details[].loc), if any
	// Create does what was asked before answering (the answer hides a success): creates the
	// operation, or expires the open session.
	Create bool
}

// Request is what one API call to the fake carried.
type Request struct {
	Method, Path, Query, Authorization, IdempotencyKey string
	Body                                               map[string]any // the JSON body, nil without one
}

// Server is a Wave Business API on loopback. Its methods are safe for concurrent use.
type Server struct {
	gatewaytest.Fake
	// Script gives Next, HTTPClient (the refusal switch) and Take.
	gatewaytest.Script

	closed chan struct{}

	settleAfter              time.Duration           // 0: customers act only when told
	holdPayouts              bool                    // payouts stay processing at reads
	sessions                 map[string]*fakeSession // by id
	refunds                  int                     // sessions refunded
	payouts                  map[string]*fakePayout  // by id
	idempotent               map[string]string       // "api key" → canonical body + "\x00" + id
	forced                   []Answer
	forcedExpiries           []Answer
	rejectDuplicateReference bool // 409 to a second session with the same client_reference
	ignoreIdempotency        bool // behave as if idempotency-key were not supported
	echoAuthorization        bool // error answers quote the Authorization header (a leaky proxy)
	requests                 []Request
	seq                      int
	timers                   []*time.Timer
}

// New starts a fake Wave on loopback, closed when t ends. Its customers act only when told and
// its payouts are decided at their first read.
func New(t testing.TB) *Server {
	f := &Server{closed: make(chan struct{}),
		sessions: map[string]*fakeSession{}, payouts: map[string]*fakePayout{}, idempotent: map[string]string{}}
	f.Start(t, "Wave", f.serve)
	t.Cleanup(func() { // runs before Close: handlers that hold an answer back give up
		close(f.closed)
		f.Mu.Lock()
		defer f.Mu.Unlock()
		for _, tm := range f.timers {
			tm.Stop()
		}
	})
	return f
}

// writeError answers in Wave's error shape.
func writeError(w http.ResponseWriter, status int, code, message string, loc ...string) {
	body := map[string]any{"code": code, "message": message}
	if len(loc) > 0 {
		body["details"] = []map[string]any{{"loc": append([]string{"body"}, loc...), "msg": message}}
	}
	gatewaytest.WriteJSON(w, status, body)
}

func (f *Server) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	seen := Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery,
		Authorization: r.Header.Get("Authorization"), IdempotencyKey: r.Header.Get("Idempotency-Key")}
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &seen.Body)
	}
	f.Mu.Lock()
	f.requests = append(f.requests, seen)
	f.Mu.Unlock()

	path := r.URL.Path
	payouts := path == "/v1/payout" || strings.HasPrefix(path, "/v1/payout/") || path == "/v1/payouts/search"
	if !payouts && !strings.HasPrefix(path, "/v1/checkout/sessions") {
		writeError(w, http.StatusNotFound, "not-found", "no such endpoint")
		return
	}
	if !f.authorized(w, r, payouts) {
		return
	}
	id, byID := strings.CutPrefix(path, "/v1/checkout/sessions/")
	if payouts {
		id, byID = strings.CutPrefix(path, "/v1/payout/")
	}
	expiry, isExpiry := strings.CutSuffix(id, "/expire")
	isExpiry = isExpiry && byID && !payouts && expiry != "" && !strings.Contains(expiry, "/")
	refund, isRefund := strings.CutSuffix(id, "/refund")
	isRefund = isRefund && byID && !payouts && refund != "" && !strings.Contains(refund, "/")
	if r.Method == http.MethodPost && !isExpiry && !isRefund && r.Header.Get("Content-Type") != "application/json" {
		f.Errorf("%s %s: Content-Type %q", r.Method, path, r.Header.Get("Content-Type"))
	}
	switch {
	case r.Method == http.MethodPost && isExpiry:
		f.expire(w, r, expiry)
	case r.Method == http.MethodPost && isRefund:
		f.refund(w, r, refund)
	case r.Method == http.MethodPost && (path == "/v1/checkout/sessions" || path == "/v1/payout"):
		f.create(w, r, payouts, raw)
	case r.Method == http.MethodGet && path == "/v1/checkout/sessions/search":
		f.search(w, r, false)
	case r.Method == http.MethodGet && path == "/v1/payouts/search":
		f.search(w, r, true)
	case r.Method == http.MethodGet && byID && id != "" && !strings.Contains(id, "/"):
		f.read(w, payouts, id)
	default:
		writeError(w, http.StatusNotFound, "not-found", "no such endpoint")
	}
}

// authorized checks the Bearer key of the API the path belongs to.
func (f *Server) authorized(w http.ResponseWriter, r *http.Request, payouts bool) bool {
	auth := r.Header.Get("Authorization")
	want := CheckoutKey
	if payouts {
		want = PayoutKey
	}
	f.Mu.Lock()
	echo := f.echoAuthorization
	f.Mu.Unlock()
	key, bearer := strings.CutPrefix(auth, "Bearer ")
	switch {
	case auth == "":
		writeError(w, http.StatusUnauthorized, "missing-auth-header", "Your request should include an HTTP auth header.")
	case !bearer:
		writeError(w, http.StatusUnauthorized, "invalid-auth", "Your HTTP auth header can't be processed.")
	case key != want:
		message := "The API key you provided is not valid."
		if echo {
			message += " (received " + auth + ")"
		}
		writeError(w, http.StatusUnauthorized, "no-matching-api-key", message)
	default:
		return true
	}
	return false
}

// create is POST /v1/checkout/sessions and POST /v1/payout.
func (f *Server) create(w http.ResponseWriter, r *http.Request, payouts bool, raw []byte) {
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		writeError(w, http.StatusBadRequest, "request-parsing-error", "The request body is not JSON.")
		return
	}
	if field, ok := f.checkBody(payouts, body); !ok {
		writeError(w, http.StatusBadRequest, "request-validation-error", "invalid "+field, field)
		return
	}
	key := r.Header.Get("Idempotency-Key")
	if payouts && key == "" {
		f.Errorf("POST /v1/payout without idempotency-key")
	}
	canonical, _ := json.Marshal(body) // map keys sorted: the same body gives the same text

	f.Mu.Lock()
	b := f.Take()
	var forced *Answer
	if len(f.forced) > 0 {
		forced, f.forced = &f.forced[0], f.forced[1:]
	}
	echo := f.echoAuthorization
	api := map[bool]string{false: "checkout", true: "payout"}[payouts]
	if b == gatewaytest.Unavailable503 {
		f.Mu.Unlock()
		writeError(w, http.StatusServiceUnavailable, "service-unavailable", "Service unavailable, try again later.")
		return
	}
	if prior, ok := f.idempotent[api+" "+key]; ok && key != "" && !f.ignoreIdempotency {
		priorBody, id, _ := strings.Cut(prior, "\x00")
		answer := f.render(payouts, id)
		f.Mu.Unlock()
		if priorBody != string(canonical) {
			writeError(w, http.StatusConflict, "idempotency-mismatch", "The idempotency key was used with another request.")
			return
		}
		gatewaytest.WriteJSON(w, http.StatusOK, answer) // replayed: nothing new is created
		return
	}
	if !payouts && f.rejectDuplicateReference && f.sessionByReference(fmt.Sprint(body["client_reference"])) != nil {
		f.Mu.Unlock()
		writeError(w, http.StatusConflict, "conflict", "A checkout session already exists for this client_reference.")
		return
	}
	if forced != nil && !forced.Create {
		f.Mu.Unlock()
		writeForced(w, r, *forced, echo)
		return
	}
	id := f.newOperation(payouts, body, b == gatewaytest.Decline)
	if key != "" {
		f.idempotent[api+" "+key] = string(canonical) + "\x00" + id
	}
	answer := f.render(payouts, id)
	f.Mu.Unlock()

	switch {
	case forced != nil:
		writeForced(w, r, *forced, echo)
	case b == gatewaytest.TimeoutAfterAccept:
		select { // accepted, but the answer never comes
		case <-r.Context().Done():
		case <-f.closed:
		}
	default:
		gatewaytest.WriteJSON(w, http.StatusOK, answer)
	}
}

func writeForced(w http.ResponseWriter, r *http.Request, a Answer, echo bool) {
	message := a.Message
	if echo {
		message += " (request had Authorization: " + r.Header.Get("Authorization") + ")"
	}
	if a.Field != "" {
		writeError(w, a.Status, a.Code, message, a.Field)
		return
	}
	writeError(w, a.Status, a.Code, message)
}

var (
	e164       = regexp.MustCompile(`^\+[1-9][0-9]{7,14}$`)
	waveAmount = regexp.MustCompile(`^[0-9]+(\.[0-9]{1,2})?$`)
)

// checkBody checks a create's documented shape; field names what Wave would refuse.
func (f *Server) checkBody(payouts bool, body map[string]any) (string, bool) {
	amountField := map[bool]string{false: "amount", true: "receive_amount"}[payouts]
	amount, isString := body[amountField].(string)
	if !isString {
		f.Errorf("%s %#v is not a string", amountField, body[amountField])
		return amountField, false
	}
	if !waveAmount.MatchString(amount) || body["currency"] == "XOF" && strings.Contains(amount, ".") {
		f.Errorf("%s %q is not a Wave amount", amountField, amount)
		return amountField, false
	}
	ref, _ := body["client_reference"].(string)
	if ref == "" {
		f.Errorf("create without client_reference")
	}
	if c, _ := body["currency"].(string); c != "XOF" {
		f.Errorf("currency %q", body["currency"])
	}
	if payouts {
		if m, _ := body["mobile"].(string); !e164.MatchString(m) {
			return "mobile", false
		}
		if reason, _ := body["payment_reason"].(string); utf8.RuneCountInString(reason) > 40 || !utf8.ValidString(reason) {
			f.Errorf("payment_reason %q is longer than 40 characters or not UTF-8", reason)
			return "payment_reason", false
		}
		return "", true
	}
	for _, k := range []string{"success_url", "error_url"} {
		if u, _ := body[k].(string); !strings.HasPrefix(u, "https://") {
			f.Errorf("%s %q is not an https URL", k, body[k])
			return k, false
		}
	}
	if m, ok := body["restrict_payer_mobile"]; ok {
		if s, _ := m.(string); !e164.MatchString(s) {
			return "restrict_payer_mobile", false
		}
	}
	return "", true
}

// newOperation creates a session or payout from body (f.Mu held) and, after SettleAfter, lets
// its customer act by itself.
func (f *Server) newOperation(payouts bool, body map[string]any, decline bool) string {
	f.seq++
	str := func(k string) string { s, _ := body[k].(string); return s }
	var id string
	if payouts {
		id = "pt-" + strconv.FormatInt(int64(1e9+f.seq), 36)
		f.payouts[id] = &fakePayout{id: id, currency: str("currency"), amount: str("receive_amount"), mobile: str("mobile"),
			name: str("name"), reference: str("client_reference"), reason: str("payment_reason"), status: "processing",
			created: time.Now().UTC(), decline: decline}
	} else {
		id = "cos-" + strconv.FormatInt(int64(1e9+f.seq), 36)
		f.sessions[id] = &fakeSession{id: id, amount: str("amount"), currency: str("currency"), reference: str("client_reference"),
			successURL: str("success_url"), errorURL: str("error_url"), restrict: str("restrict_payer_mobile"),
			checkoutStatus: "open", paymentStatus: "processing", created: time.Now().UTC(), decline: decline}
	}
	if f.settleAfter > 0 {
		f.timers = append(f.timers, time.AfterFunc(f.settleAfter, func() { f.settle(id) }))
	}
	return id
}

// settle is the customer (or, for a payout, Wave) deciding an operation as planned at creation.
func (f *Server) settle(id string) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	if s := f.sessions[id]; s != nil && s.checkoutStatus == "open" {
		if s.decline { // the customer cancels the payment in the app
			s.cancel("")
		} else {
			s.pay()
		}
	}
	if p := f.payouts[id]; p != nil {
		p.decide()
	}
}

// pay completes the session, paid.
func (s *fakeSession) pay() {
	s.checkoutStatus, s.paymentStatus, s.completed = "complete", "succeeded", time.Now().UTC()
	s.transactionID = "T_" + strings.ToUpper(strings.TrimPrefix(s.id, "cos-"))
}

// expire ends the session unpaid: nobody can pay it any more.
func (s *fakeSession) expire() {
	s.checkoutStatus, s.completed = "expired", time.Now().UTC()
}

// cancel completes the session unpaid, with code as last_payment_error when there is one.
func (s *fakeSession) cancel(code string) {
	s.checkoutStatus, s.paymentStatus, s.completed = "complete", "cancelled", time.Now().UTC()
	if code != "" {
		s.errCode, s.errMessage = code, "The payment failed ("+code+")."
	}
}

// decide ends a processing payout as planned at its creation.
func (p *fakePayout) decide() {
	if p.status != "processing" {
		return
	}
	p.status = "succeeded"
	if p.decline {
		p.status, p.errCode, p.errMessage = "failed", "recipient-account-inactive", "The recipient's account is inactive."
	}
}

// read is GET /v1/checkout/sessions/{id} and GET /v1/payout/{id}.
func (f *Server) read(w http.ResponseWriter, payouts bool, id string) {
	f.Mu.Lock()
	exists := payouts && f.payouts[id] != nil || !payouts && f.sessions[id] != nil
	var answer map[string]any
	if exists {
		if payouts && !f.holdPayouts {
			f.payouts[id].decide()
		}
		answer = f.render(payouts, id)
	}
	f.Mu.Unlock()
	switch {
	case exists:
		gatewaytest.WriteJSON(w, http.StatusOK, answer)
	case payouts:
		writeError(w, http.StatusNotFound, "not-found", "Payout not found.")
	default:
		writeError(w, http.StatusNotFound, "checkout-session-not-found", "Checkout session not found.")
	}
}

// expire is POST /v1/checkout/sessions/{id}/expire: an open session expires, unpaid, and is
// answered. Wave documents the endpoint but not its refusals: for a session already complete or
// expired the fake answers 409 checkout-session-not-open (the adapter reads the session after
// any answer, so nothing rests on that choice), and 404 checkout-session-not-found for an
// unknown id. ForceExpiry imposes other answers.
func (f *Server) expire(w http.ResponseWriter, r *http.Request, id string) {
	f.Mu.Lock()
	var forced *Answer
	if len(f.forcedExpiries) > 0 {
		forced, f.forcedExpiries = &f.forcedExpiries[0], f.forcedExpiries[1:]
	}
	echo := f.echoAuthorization
	s := f.sessions[id]
	if s == nil || forced != nil && !forced.Create {
		f.Mu.Unlock()
		if s == nil {
			writeError(w, http.StatusNotFound, "checkout-session-not-found", "Checkout session not found.")
			return
		}
		writeForced(w, r, *forced, echo)
		return
	}
	open := s.checkoutStatus == "open"
	if open {
		s.expire()
	}
	answer := f.render(false, id)
	f.Mu.Unlock()
	switch {
	case forced != nil:
		writeForced(w, r, *forced, echo)
	case !open:
		writeError(w, http.StatusConflict, "checkout-session-not-open", "Only an open checkout session can be expired.")
	default:
		gatewaytest.WriteJSON(w, http.StatusOK, answer)
	}
}

// search is GET /v1/checkout/sessions/search and GET /v1/payouts/search.
func (f *Server) search(w http.ResponseWriter, r *http.Request, payouts bool) {
	ref := r.URL.Query().Get("client_reference")
	if ref == "" {
		writeError(w, http.StatusBadRequest, "request-validation-error", "client_reference is required", "client_reference")
		return
	}
	f.Mu.Lock()
	result := []map[string]any{}
	if payouts {
		for id, p := range f.payouts {
			if p.reference == ref {
				if !f.holdPayouts {
					p.decide()
				}
				result = append(result, f.render(true, id))
			}
		}
	} else {
		for id, s := range f.sessions {
			if s.reference == ref {
				result = append(result, f.render(false, id))
			}
		}
	}
	f.Mu.Unlock()
	gatewaytest.WriteJSON(w, http.StatusOK, map[string]any{"result": result})
}

// render is an operation as Wave shows it (f.Mu held).
func (f *Server) render(payouts bool, id string) map[string]any {
	if payouts {
		p := f.payouts[id]
		out := map[string]any{"id": p.id, "currency": p.currency, "receive_amount": p.amount, "fee": "10",
			"mobile": p.mobile, "name": p.name, "client_reference": p.reference, "payment_reason": p.reason,
			"status": p.status, "payout_error": nil, "timestamp": p.created.Format(time.RFC3339)}
		if p.errCode != "" {
			out["payout_error"] = map[string]any{"error_code": p.errCode, "error_message": p.errMessage}
		}
		return out
	}
	s := f.sessions[id]
	out := map[string]any{"id": s.id, "amount": s.amount, "currency": s.currency, "business_name": "Sika Test",
		"checkout_status": s.checkoutStatus, "payment_status": s.paymentStatus, "client_reference": s.reference,
		"last_payment_error": nil, "success_url": s.successURL, "error_url": s.errorURL, "transaction_id": nil,
		"wave_launch_url": launchURLPrefix + s.id, "when_created": s.created.Format(time.RFC3339),
		"when_expires": s.created.Add(30 * time.Minute).Format(time.RFC3339), "when_completed": nil}
	if s.restrict != "" {
		out["restrict_payer_mobile"] = s.restrict
	}
	if s.transactionID != "" {
		out["transaction_id"] = s.transactionID
	}
	if !s.completed.IsZero() {
		out["when_completed"] = s.completed.Format(time.RFC3339)
	}
	if s.errCode != "" {
		out["last_payment_error"] = map[string]any{"code": s.errCode, "message": s.errMessage}
	}
	return out
}

// sessionByReference returns the session of a client_reference (f.Mu held).
func (f *Server) sessionByReference(ref string) *fakeSession {
	for _, s := range f.sessions {
		if s.reference == ref {
			return s
		}
	}
	return nil
}

// sessionOf returns the session a wave_launch_url or a session id names (f.Mu held).
func (f *Server) sessionOf(launchURLOrID string) *fakeSession {
	id := launchURLOrID
	if u, err := url.Parse(launchURLOrID); err == nil && u.Scheme != "" {
		id = path.Base(u.Path)
	}
	return f.sessions[id]
}

// customer acts on session s (f.Mu held) as its customer, or Wave's clock, would; what names s in
// errors.
func (f *Server) customer(s *fakeSession, what string, act func(*fakeSession)) {
	f.T().Helper()
	switch {
	case s == nil:
		f.Errorf("no checkout session for %s", what)
	case s.checkoutStatus != "open":
		f.Errorf("checkout session %s (%s) is %s: nobody can pay it any more", s.id, what, s.checkoutStatus)
	default:
		act(s)
	}
}

// Customers, and Wave's clock.

// Pay is the customer paying the checkout session that launchURLOrSessionID names (its
// wave_launch_url, as the merchant's next_action carries it, or its id): the session completes,
// succeeded. A session that is not open any more is reported on the test.
func (f *Server) Pay(launchURLOrSessionID string) {
	f.T().Helper()
	f.Mu.Lock()
	defer f.Mu.Unlock()
	f.customer(f.sessionOf(launchURLOrSessionID), launchURLOrSessionID, (*fakeSession).pay)
}

// PayClientReference is Pay for the checkout session created with client_reference ref (the
// collection's reference).
func (f *Server) PayClientReference(ref string) {
	f.T().Helper()
	f.Mu.Lock()
	defer f.Mu.Unlock()
	f.customer(f.sessionByReference(ref), "client_reference "+ref, (*fakeSession).pay)
}

// FailPayment is the customer's payment of the session that launchURLOrSessionID names failing:
// the session completes, cancelled, with code as its last_payment_error (e.g.
// "insufficient-funds"; empty: the customer cancelled, no error).
func (f *Server) FailPayment(launchURLOrSessionID, code string) {
	f.T().Helper()
	f.Mu.Lock()
	defer f.Mu.Unlock()
	f.customer(f.sessionOf(launchURLOrSessionID), launchURLOrSessionID, func(s *fakeSession) { s.cancel(code) })
}

// Expire is Wave expiring the open session that launchURLOrSessionID names, unpaid.
func (f *Server) Expire(launchURLOrSessionID string) {
	f.T().Helper()
	f.Mu.Lock()
	defer f.Mu.Unlock()
	f.customer(f.sessionOf(launchURLOrSessionID), launchURLOrSessionID, (*fakeSession).expire)
}

// SessionID returns the id of the checkout session created with client_reference ref ("" when
// there is none).
func (f *Server) SessionID(ref string) string {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	if s := f.sessionByReference(ref); s != nil {
		return s.id
	}
	return ""
}

// Settings.

// SettleAfter makes every operation created from now on decide itself d after its creation:
// the customer pays the session (or cancels it, after Next(gatewaytest.Decline)) and the payout
// succeeds (or fails). 0, the default, leaves sessions to Pay, FailPayment and Expire.
func (f *Server) SettleAfter(d time.Duration) { gatewaytest.Set(&f.Fake, &f.settleAfter, d) }

// HoldPayouts keeps payouts processing however often they are read (true), until a
// SettleAfter delay decides them; false (the default) decides a payout at its first read.
func (f *Server) HoldPayouts(hold bool) { f.setFlag(&f.holdPayouts, hold) }

// Force imposes answers on the next creates, one each, in order. Next(gatewaytest.Unavailable503),
// an idempotent replay and RejectDuplicateReference's 409 still answer first.
func (f *Server) Force(answers ...Answer) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	f.forced = append(f.forced, answers...)
}

// ForceExpiry imposes answers on the next calls to POST /v1/checkout/sessions/{id}/expire, one
// each, in order: Create expires the session (when it is open) before answering, so that the
// answer hides an expiry; without it nothing changes. An unknown id still answers 404 first.
func (f *Server) ForceExpiry(answers ...Answer) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	f.forcedExpiries = append(f.forcedExpiries, answers...)
}

// IgnoreIdempotency makes the fake behave as if idempotency-key were not supported (true):
// every create creates.
func (f *Server) IgnoreIdempotency(ignore bool) { f.setFlag(&f.ignoreIdempotency, ignore) }

// RejectDuplicateReference makes the fake answer 409 to a second checkout session with the
// client_reference of an existing one (true).
func (f *Server) RejectDuplicateReference(reject bool) {
	f.setFlag(&f.rejectDuplicateReference, reject)
}

// EchoAuthorization makes error answers quote the request's Authorization header (true), as a
// leaky proxy would: the adapter must keep its keys out of its errors anyway.
func (f *Server) EchoAuthorization(echo bool) { f.setFlag(&f.echoAuthorization, echo) }

// setFlag sets one of the fake's switches.
func (f *Server) setFlag(flag *bool, on bool) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	*flag = on
}

// Seen lists every API call received, in order.
func (f *Server) Seen() []Request {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	return append([]Request(nil), f.requests...)
}

// Controls of gatewaytest.

// Operations counts the sessions and payouts created (gatewaytest.Controls).
func (f *Server) Operations() int {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	return len(f.sessions) + len(f.payouts) + f.refunds
}

// ExpireToken does nothing: Wave's API keys do not expire (gatewaytest.Controls).
func (f *Server) ExpireToken() {}

// TokenRequests is 0: Wave has no tokens (gatewaytest.Controls).
func (f *Server) TokenRequests() int { return 0 }

var _ gatewaytest.Controls = (*Server)(nil)
