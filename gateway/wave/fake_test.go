package wave

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/sikahq/sika/gateway"
	"github.com/sikahq/sika/gateway/gatewaytest"
)

// Credentials of the fake wallet.
const (
	fakeCheckoutKey   = "wave_sn_prod_fakeCheckoutKey0123456789abcdef"
	fakePayoutKey     = "wave_sn_prod_fakePayoutKey9876543210fedcba"
	fakeWebhookSecret = "wave_sn_WHS_fakeWebhookSecret5a5a5a5a5a"
)

// fakeSession is a checkout session the fake holds.
type fakeSession struct {
	id, amount, currency, reference, successURL, errorURL, restrict string
	checkoutStatus, paymentStatus, transactionID                    string
	errCode, errMessage                                             string // last_payment_error
	created, completed                                              time.Time
	decline                                                         bool // what the customer will do
}

// fakePayout is a payout the fake holds.
type fakePayout struct {
	id, currency, amount, mobile, name, reference, reason, status string
	errCode, errMessage                                           string // payout_error
	created                                                       time.Time
	decline                                                       bool
}

// forcedAnswer is an answer imposed on the next create, after creating the operation if create.
type forcedAnswer struct {
	status        int
	code, message string
	loc           string // the field a validation error is about
	create        bool
}

// seenRequest is what one API call carried.
type seenRequest struct {
	Method, Path, Query, Authorization, IdempotencyKey string
	Body                                               map[string]any
}

// fakeWave is a Wave Business API on loopback speaking the documented wire format: Bearer keys
// per API, amounts as strings, idempotency-key replay, {code, message} errors, searches by
// client_reference answering {result: [...]}, and signed webhooks. Violations of the format by
// the adapter are reported with t.Errorf. Its customers pay (or cancel) by themselves after
// customerDelay, or when a test tells them to.
type fakeWave struct {
	t             *testing.T
	srv           *httptest.Server
	closed        chan struct{}
	customerDelay time.Duration // 0: customers act only when told

	mu                       sync.Mutex
	sessions                 map[string]*fakeSession // by id
	payouts                  map[string]*fakePayout  // by id
	idempotent               map[string]string       // "api key" → canonical body + "\x00" + id
	next                     []gatewaytest.Behaviour
	forced                   []forcedAnswer
	refuse                   bool // the next dial is refused
	transport                *http.Transport
	rejectDuplicateReference bool // 409 to a second session with the same client_reference
	ignoreIdempotency        bool // behave as if idempotency-key were not supported
	echoAuthorization        bool // error answers quote the Authorization header (a leaky proxy)
	requests                 []seenRequest
	seq                      int
	timers                   []*time.Timer
}

func newFakeWave(t *testing.T) *fakeWave {
	f := &fakeWave{t: t, closed: make(chan struct{}), customerDelay: 20 * time.Millisecond,
		sessions: map[string]*fakeSession{}, payouts: map[string]*fakePayout{}, idempotent: map[string]string{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	t.Cleanup(func() {
		close(f.closed) // before Close: handlers that hold an answer back give up
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, tm := range f.timers {
			tm.Stop()
		}
	})
	return f
}

// client returns an adapter wired to f (its dials go through f's refusal switch).
func (f *fakeWave) client(t *testing.T, configure func(*Config)) *Client {
	closed := closedAddr(t)
	transport := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		f.mu.Lock()
		refuse := f.refuse
		f.refuse = false
		f.mu.Unlock()
		if refuse {
			addr = closed // a real connection refused
		}
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}}
	t.Cleanup(transport.CloseIdleConnections)
	f.mu.Lock()
	f.transport = transport
	f.mu.Unlock()
	cfg := Config{
		Name:                "wave-sn",
		BaseURL:             f.srv.URL,
		APIKey:              fakeCheckoutKey,
		PayoutAPIKey:        fakePayoutKey,
		WebhookSecret:       fakeWebhookSecret,
		SuccessURL:          "https://pay.sika.example/return/" + ReferencePlaceholder + "/success",
		ErrorURL:            "https://pay.sika.example/return/" + ReferencePlaceholder + "/error",
		RestrictPayerMobile: true,
		Memory:              &gateway.MapMemory{},
		HTTPClient:          &http.Client{Transport: transport},
		Timeout:             250 * time.Millisecond,
	}
	if configure != nil {
		configure(&cfg)
	}
	return New(cfg)
}

// closedAddr returns a loopback address nobody listens on.
func closedAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}

func (f *fakeWave) errorf(format string, args ...any) {
	f.t.Helper()
	f.t.Errorf("fake Wave: "+format, args...)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeError answers in Wave's error shape.
func writeError(w http.ResponseWriter, status int, code, message string, loc ...string) {
	body := map[string]any{"code": code, "message": message}
	if len(loc) > 0 {
		body["details"] = []map[string]any{{"loc": append([]string{"body"}, loc...), "msg": message}}
	}
	writeJSON(w, status, body)
}

func (f *fakeWave) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	seen := seenRequest{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery,
		Authorization: r.Header.Get("Authorization"), IdempotencyKey: r.Header.Get("Idempotency-Key")}
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &seen.Body)
	}
	f.mu.Lock()
	f.requests = append(f.requests, seen)
	f.mu.Unlock()

	path := r.URL.Path
	payouts := path == "/v1/payout" || strings.HasPrefix(path, "/v1/payout/") || path == "/v1/payouts/search"
	if !payouts && !strings.HasPrefix(path, "/v1/checkout/sessions") {
		writeError(w, http.StatusNotFound, "not-found", "no such endpoint")
		return
	}
	if !f.authorized(w, r, payouts) {
		return
	}
	if r.Method == http.MethodPost && r.Header.Get("Content-Type") != "application/json" {
		f.errorf("%s %s: Content-Type %q", r.Method, path, r.Header.Get("Content-Type"))
	}
	id, byID := strings.CutPrefix(path, "/v1/checkout/sessions/")
	if payouts {
		id, byID = strings.CutPrefix(path, "/v1/payout/")
	}
	switch {
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
func (f *fakeWave) authorized(w http.ResponseWriter, r *http.Request, payouts bool) bool {
	auth := r.Header.Get("Authorization")
	want := fakeCheckoutKey
	if payouts {
		want = fakePayoutKey
	}
	f.mu.Lock()
	echo := f.echoAuthorization
	f.mu.Unlock()
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
func (f *fakeWave) create(w http.ResponseWriter, r *http.Request, payouts bool, raw []byte) {
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
		f.errorf("POST /v1/payout without idempotency-key")
	}
	canonical, _ := json.Marshal(body) // map keys sorted: the same body gives the same text

	f.mu.Lock()
	b := gatewaytest.Succeed
	if len(f.next) > 0 {
		b, f.next = f.next[0], f.next[1:]
	}
	var forced *forcedAnswer
	if len(f.forced) > 0 {
		forced, f.forced = &f.forced[0], f.forced[1:]
	}
	echo := f.echoAuthorization
	api := map[bool]string{false: "checkout", true: "payout"}[payouts]
	if b == gatewaytest.Unavailable503 {
		f.mu.Unlock()
		writeError(w, http.StatusServiceUnavailable, "service-unavailable", "Service unavailable, try again later.")
		return
	}
	if prior, ok := f.idempotent[api+" "+key]; ok && key != "" && !f.ignoreIdempotency {
		priorBody, id, _ := strings.Cut(prior, "\x00")
		answer := f.render(payouts, id)
		f.mu.Unlock()
		if priorBody != string(canonical) {
			writeError(w, http.StatusConflict, "idempotency-mismatch", "The idempotency key was used with another request.")
			return
		}
		writeJSON(w, http.StatusOK, answer) // replayed: nothing new is created
		return
	}
	if !payouts && f.rejectDuplicateReference && f.sessionByReference(fmt.Sprint(body["client_reference"])) != nil {
		f.mu.Unlock()
		writeError(w, http.StatusConflict, "conflict", "A checkout session already exists for this client_reference.")
		return
	}
	if forced != nil && !forced.create {
		f.mu.Unlock()
		f.writeForced(w, r, *forced, echo)
		return
	}
	id := f.newOperation(payouts, body, b == gatewaytest.Decline)
	if key != "" {
		f.idempotent[api+" "+key] = string(canonical) + "\x00" + id
	}
	answer := f.render(payouts, id)
	f.mu.Unlock()

	switch {
	case forced != nil:
		f.writeForced(w, r, *forced, echo)
	case b == gatewaytest.TimeoutAfterAccept:
		select { // accepted, but the answer never comes
		case <-r.Context().Done():
		case <-f.closed:
		}
	default:
		writeJSON(w, http.StatusOK, answer)
	}
}

func (f *fakeWave) writeForced(w http.ResponseWriter, r *http.Request, a forcedAnswer, echo bool) {
	message := a.message
	if echo {
		message += " (request had Authorization: " + r.Header.Get("Authorization") + ")"
	}
	if a.loc != "" {
		writeError(w, a.status, a.code, message, a.loc)
		return
	}
	writeError(w, a.status, a.code, message)
}

var e164 = regexp.MustCompile(`^\+[1-9][0-9]{7,14}$`)

// checkBody checks a create's documented shape; field names what Wave would refuse.
func (f *fakeWave) checkBody(payouts bool, body map[string]any) (string, bool) {
	amountField := map[bool]string{false: "amount", true: "receive_amount"}[payouts]
	amount, isString := body[amountField].(string)
	if !isString {
		f.errorf("%s %#v is not a string", amountField, body[amountField])
		return amountField, false
	}
	if !regexp.MustCompile(`^[0-9]+(\.[0-9]{1,2})?$`).MatchString(amount) ||
		body["currency"] == "XOF" && strings.Contains(amount, ".") {
		f.errorf("%s %q is not a Wave amount", amountField, amount)
		return amountField, false
	}
	ref, _ := body["client_reference"].(string)
	if ref == "" {
		f.errorf("create without client_reference")
	}
	if c, _ := body["currency"].(string); c != "XOF" {
		f.errorf("currency %q", body["currency"])
	}
	if payouts {
		if m, _ := body["mobile"].(string); !e164.MatchString(m) {
			return "mobile", false
		}
		if reason, _ := body["payment_reason"].(string); utf8.RuneCountInString(reason) > 40 || !utf8.ValidString(reason) {
			f.errorf("payment_reason %q is longer than 40 characters or not UTF-8", reason)
			return "payment_reason", false
		}
		return "", true
	}
	for _, k := range []string{"success_url", "error_url"} {
		if u, _ := body[k].(string); !strings.HasPrefix(u, "https://") {
			f.errorf("%s %q is not an https URL", k, body[k])
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

// newOperation creates a session or payout from body (f.mu held) and lets its customer act.
func (f *fakeWave) newOperation(payouts bool, body map[string]any, decline bool) string {
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
	if f.customerDelay > 0 {
		f.timers = append(f.timers, time.AfterFunc(f.customerDelay, func() { f.settle(id) }))
	}
	return id
}

// settle is the customer (or, for a payout, Wave) deciding an operation as planned at creation.
func (f *fakeWave) settle(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if s := f.sessions[id]; s != nil && s.checkoutStatus == "open" {
		if s.decline { // the customer cancels the payment in the app
			s.checkoutStatus, s.paymentStatus, s.completed = "complete", "cancelled", time.Now().UTC()
		} else {
			s.checkoutStatus, s.paymentStatus, s.completed = "complete", "succeeded", time.Now().UTC()
			s.transactionID = "T_" + strings.ToUpper(id[4:])
		}
	}
	if p := f.payouts[id]; p != nil && p.status == "processing" {
		p.status = "succeeded"
		if p.decline {
			p.status, p.errCode, p.errMessage = "failed", "recipient-account-inactive", "The recipient's account is inactive."
		}
	}
}

// read is GET /v1/checkout/sessions/{id} and GET /v1/payout/{id}.
func (f *fakeWave) read(w http.ResponseWriter, payouts bool, id string) {
	f.mu.Lock()
	exists := payouts && f.payouts[id] != nil || !payouts && f.sessions[id] != nil
	var answer map[string]any
	if exists {
		answer = f.render(payouts, id)
	}
	f.mu.Unlock()
	switch {
	case exists:
		writeJSON(w, http.StatusOK, answer)
	case payouts:
		writeError(w, http.StatusNotFound, "not-found", "Payout not found.")
	default:
		writeError(w, http.StatusNotFound, "checkout-session-not-found", "Checkout session not found.")
	}
}

// search is GET /v1/checkout/sessions/search and GET /v1/payouts/search.
func (f *fakeWave) search(w http.ResponseWriter, r *http.Request, payouts bool) {
	ref := r.URL.Query().Get("client_reference")
	if ref == "" {
		writeError(w, http.StatusBadRequest, "request-validation-error", "client_reference is required", "client_reference")
		return
	}
	f.mu.Lock()
	result := []map[string]any{}
	if payouts {
		for id, p := range f.payouts {
			if p.reference == ref {
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
	f.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"result": result})
}

// render is an operation as Wave shows it (f.mu held).
func (f *fakeWave) render(payouts bool, id string) map[string]any {
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
		"wave_launch_url": "https://pay.wave.com/c/" + s.id, "when_created": s.created.Format(time.RFC3339),
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

// sessionByReference returns the session of a client_reference (f.mu held).
func (f *fakeWave) sessionByReference(ref string) *fakeSession {
	for _, s := range f.sessions {
		if s.reference == ref {
			return s
		}
	}
	return nil
}

// customer acts on the session of ref as a customer (or Wave's clock) would: "pay", "cancel"
// (with an optional last_payment_error code), "expire".
func (f *fakeWave) customer(ref, action, code string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.sessionByReference(ref)
	if s == nil {
		f.errorf("no session for %s", ref)
		return
	}
	switch action {
	case "pay":
		s.checkoutStatus, s.paymentStatus, s.transactionID = "complete", "succeeded", "T_"+strings.ToUpper(s.id[4:])
	case "cancel":
		s.checkoutStatus, s.paymentStatus, s.errCode = "complete", "cancelled", code
		if code != "" {
			s.errMessage = "The payment failed (" + code + ")."
		}
	case "expire":
		s.checkoutStatus = "expired"
	}
	s.completed = time.Now().UTC()
}

// force imposes answers on the next creates.
func (f *fakeWave) force(a ...forcedAnswer) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.forced = append(f.forced, a...)
}

func (f *fakeWave) seen() []seenRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]seenRequest(nil), f.requests...)
}

func (f *fakeWave) set(apply func(f *fakeWave)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	apply(f)
}

// Controls of gatewaytest.

func (f *fakeWave) Next(b gatewaytest.Behaviour) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if b == gatewaytest.RefuseConnection {
		f.refuse = true // the next dial, whichever endpoint it is for
		if f.transport != nil {
			f.transport.CloseIdleConnections()
		}
		return
	}
	f.next = append(f.next, b)
}

func (f *fakeWave) Operations() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.sessions) + len(f.payouts)
}

func (f *fakeWave) ExpireToken() {} // Wave's keys do not expire

func (f *fakeWave) TokenRequests() int { return 0 }

var _ gatewaytest.Controls = (*fakeWave)(nil)
