package orange

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sikahq/sika/gateway"
	"github.com/sikahq/sika/gateway/gatewaytest"
)

// Credentials of the fake account.
const (
	fakeClientID     = "sika-orange-app"
	fakeClientSecret = "client-secret-9f2c"
	fakeMerchantKey  = "merchant-key-77ab"
)

// fakeOp is a WebPay payment the fake holds.
type fakeOp struct {
	segment, orderID, amount, notifURL string
	payToken, notifToken, txnid        string
	status                             string // INITIATED, PENDING, SUCCESS, FAILED, EXPIRED
	// outcome is what the customer does once the page reaches them: SUCCESS, FAILED, or ""
	// (never comes back).
	outcome   string
	created   time.Time
	delivered time.Time // when the answer left, with payment_url; zero: the merchant never got it
}

// seenRequest records one call the adapter made.
type seenRequest struct {
	Path          string
	Authorization string
	ContentType   string
	Body          string
}

// fakeOrange is Orange's API on loopback: the OAuth token endpoint and WebPay's webpayment and
// transactionstatus, speaking the wire format of Orange's documentation. It checks what the
// adapter sends (Basic auth and form of the token request, a valid Bearer on every call, the
// merchant key, order_id of at most 30 characters, amount a whole JSON number) and reports
// violations with t.Errorf. The customer acts on a payment page payDelay after the page was
// delivered; a page never delivered is never paid and expires after sessionTTL.
type fakeOrange struct {
	t   *testing.T
	srv *httptest.Server

	mu            sync.Mutex
	tokens        map[string]bool // issued token → still valid
	tokenRequests int
	tokenTTL      int                // expires_in of new tokens, seconds
	rejectBearer  bool               // refuse every Bearer token with 403 (the application may not use WebPay)
	stillborn     bool               // every token is issued already expired
	ops           map[string]*fakeOp // by order_id
	next          []gatewaytest.Behaviour
	nextOutcome   []string // a fake-only override of the next payment's customer outcome
	refuse        bool     // the next dial is refused
	forced        int      // a forced answer to the next initiation (0: none)
	forcedCreate  bool     // whether that forced answer creates the payment first
	forcedBody    string   // its body
	statusDelay   time.Duration
	statusForced  int    // a forced answer to the next status read (0: none)
	statusBody    string // its body
	payDelay      time.Duration
	sessionTTL    time.Duration
	seq           int
	requests      []seenRequest
	transport     *http.Transport
}

func newFakeOrange(t *testing.T) *fakeOrange {
	f := &fakeOrange{t: t, tokens: map[string]bool{}, tokenTTL: 3600, ops: map[string]*fakeOp{},
		payDelay: 40 * time.Millisecond, sessionTTL: 10 * time.Second}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

// client returns an adapter wired to f; its dials go through f's refusal switch.
func (f *fakeOrange) client(t *testing.T, configure func(*Config)) *Client {
	closed := closedAddr(t)
	transport := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		f.mu.Lock()
		refuse := f.refuse
		f.refuse = false
		f.mu.Unlock()
		if refuse {
			addr = closed
		}
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}}
	t.Cleanup(transport.CloseIdleConnections)
	f.mu.Lock()
	f.transport = transport
	f.mu.Unlock()
	cfg := Config{
		BaseURL: f.srv.URL, ClientID: fakeClientID, ClientSecret: fakeClientSecret, MerchantKey: fakeMerchantKey,
		ReturnURL: "https://pay.sika.example/return", CancelURL: "https://pay.sika.example/cancel",
		NotifURL:   "https://api.sika.example/gateway-callbacks/orange/",
		HTTPClient: &http.Client{Transport: transport},
		Timeout:    200 * time.Millisecond, UnansweredAfter: time.Second,
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

func (f *fakeOrange) errorf(format string, args ...any) {
	f.t.Helper()
	f.t.Errorf("fake Orange: "+format, args...)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeError answers in the shape of Orange's API errors.
func writeError(w http.ResponseWriter, status, code int, message, description string) {
	writeJSON(w, status, map[string]any{"code": code, "message": message, "description": description})
}

func (f *fakeOrange) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.requests = append(f.requests, seenRequest{Path: r.URL.Path, Authorization: r.Header.Get("Authorization"),
		ContentType: r.Header.Get("Content-Type"), Body: string(raw)})
	f.mu.Unlock()
	if r.Method != http.MethodPost {
		writeError(w, http.StatusMethodNotAllowed, 405, "Method not allowed", "")
		return
	}
	if r.URL.Path == tokenPath {
		f.token(w, r, raw)
		return
	}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if len(parts) != 4 || parts[0] != "orange-money-webpay" || parts[2] != "v1" {
		writeError(w, http.StatusNotFound, 60, "Resource not found", "The requested URI does not exist")
		return
	}
	if !f.authorized(w, r) {
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		f.errorf("%s: Content-Type %q", r.URL.Path, ct)
	}
	var body map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&body); err != nil {
		writeError(w, http.StatusBadRequest, 400, "Bad Request", "body is not JSON")
		return
	}
	switch parts[3] {
	case "webpayment":
		f.webpayment(w, r, parts[1], body)
	case "transactionstatus":
		f.transactionStatus(w, r, parts[1], body)
	default:
		writeError(w, http.StatusNotFound, 60, "Resource not found", "The requested URI does not exist")
	}
}

func (f *fakeOrange) token(w http.ResponseWriter, r *http.Request, raw []byte) {
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte(fakeClientID+":"+fakeClientSecret))
	if r.Header.Get("Authorization") != want {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client",
			"error_description": "The requested service needs credentials, but the ones provided were invalid."})
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/x-www-form-urlencoded" {
		f.errorf("token request Content-Type %q", ct)
	}
	if string(raw) != "grant_type=client_credentials" {
		f.errorf("token request body %q", raw)
	}
	f.mu.Lock()
	f.tokenRequests++
	tok := fmt.Sprintf("tok-%d", f.tokenRequests)
	f.tokens[tok] = !f.stillborn
	ttl := f.tokenTTL
	f.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"token_type": "Bearer", "access_token": tok, "expires_in": ttl})
}

func (f *fakeOrange) authorized(w http.ResponseWriter, r *http.Request) bool {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	f.mu.Lock()
	valid, issued := f.tokens[tok]
	reject := f.rejectBearer
	f.mu.Unlock()
	switch {
	case !ok || !issued:
		writeError(w, http.StatusUnauthorized, 41, "Invalid credentials", "The requested service needs credentials, but the ones provided were invalid.")
	case !valid:
		writeError(w, http.StatusUnauthorized, 42, "Expired credentials", "The requested service needs credentials, and the ones provided were out-of-date.")
	case reject:
		writeError(w, http.StatusForbidden, 50, "Access denied", "The application is not allowed to access this service.")
	default:
		return true
	}
	return false
}

// wholeNumber reports whether v is a JSON number without a fraction, above zero.
func wholeNumber(v any) (string, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return "", false
	}
	i, err := n.Int64()
	return n.String(), err == nil && i > 0
}

func (f *fakeOrange) webpayment(w http.ResponseWriter, r *http.Request, segment string, body map[string]any) {
	if body["merchant_key"] != fakeMerchantKey {
		writeError(w, http.StatusForbidden, 50, "Access denied", fmt.Sprintf("merchant key %v is not valid", body["merchant_key"]))
		return
	}
	orderID, _ := body["order_id"].(string)
	if orderID == "" || len(orderID) > 30 {
		f.errorf("order_id %q: empty or longer than 30", orderID)
		writeError(w, http.StatusBadRequest, 400, "Bad Request", "order_id must have 1 to 30 characters")
		return
	}
	amount, ok := wholeNumber(body["amount"])
	if !ok {
		f.errorf("amount %#v is not a whole JSON number", body["amount"])
	}
	for _, k := range []string{"currency", "return_url", "cancel_url", "notif_url", "lang", "reference"} {
		if s, _ := body[k].(string); s == "" {
			f.errorf("webpayment without %s", k)
		}
	}
	f.mu.Lock()
	b := gatewaytest.Succeed
	if len(f.next) > 0 {
		b, f.next = f.next[0], f.next[1:]
	}
	forced, create, forcedBody := f.forced, f.forcedCreate, f.forcedBody
	f.forced = 0
	if existing, dup := f.ops[orderID]; dup {
		if existing.amount != amount {
			f.errorf("order_id %s sent again with amount %s, first %s", orderID, amount, existing.amount)
		}
		f.mu.Unlock()
		writeError(w, http.StatusConflict, 409, "Conflict", "Duplicate order_id")
		return
	}
	if b == gatewaytest.Unavailable503 {
		f.mu.Unlock()
		writeError(w, http.StatusServiceUnavailable, 5, "Service unavailable", "The service is temporarily unavailable, try again later")
		return
	}
	if forced != 0 && !create {
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(forced)
		_, _ = io.WriteString(w, forcedBody)
		return
	}
	f.seq++
	op := &fakeOp{segment: segment, orderID: orderID, amount: amount,
		notifURL: fmt.Sprint(body["notif_url"]), status: statusInitiated, outcome: statusSuccess, created: time.Now(),
		payToken: fmt.Sprintf("pt%062x", f.seq), notifToken: fmt.Sprintf("nt%030x", f.seq)}
	if b == gatewaytest.Decline {
		op.outcome = statusFailed
	}
	if len(f.nextOutcome) > 0 {
		op.outcome, f.nextOutcome = f.nextOutcome[0], f.nextOutcome[1:]
	}
	f.ops[orderID] = op
	if forced == 0 && b != gatewaytest.TimeoutAfterAccept {
		op.delivered = time.Now()
	}
	f.mu.Unlock()

	switch {
	case forced != 0:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(forced)
		_, _ = io.WriteString(w, forcedBody)
	case b == gatewaytest.TimeoutAfterAccept:
		<-r.Context().Done() // created, but the answer never comes
	default:
		writeJSON(w, http.StatusCreated, map[string]any{"status": 201, "message": "OK", "pay_token": op.payToken,
			"payment_url": f.srv.URL + "/payment/pay_token/" + op.payToken, "notif_token": op.notifToken})
	}
}

func (f *fakeOrange) transactionStatus(w http.ResponseWriter, r *http.Request, segment string, body map[string]any) {
	f.mu.Lock()
	delay := f.statusDelay
	f.mu.Unlock()
	select { // accepted, then slow to answer
	case <-time.After(delay):
	case <-r.Context().Done():
		return
	}
	orderID, _ := body["order_id"].(string)
	amount, ok := wholeNumber(body["amount"])
	if !ok {
		f.errorf("status read amount %#v is not a whole JSON number", body["amount"])
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if forced := f.statusForced; forced != 0 {
		f.statusForced = 0
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(forced)
		_, _ = io.WriteString(w, f.statusBody)
		return
	}
	op, found := f.ops[orderID]
	if !found || op.payToken != body["pay_token"] || op.amount != amount {
		f.errorf("status read of order %q with a pay_token or amount (%s) that do not match", orderID, amount)
		writeError(w, http.StatusBadRequest, 400, "Bad Request", "Unknown transaction")
		return
	}
	if segment != op.segment {
		f.errorf("status read of order %s in country %q, created in %q", orderID, segment, op.segment)
	}
	f.advance(op)
	writeJSON(w, http.StatusCreated, map[string]any{"status": op.status, "order_id": op.orderID, "txnid": op.txnid})
}

// advance plays the customer and the clock on op (f.mu held).
func (f *fakeOrange) advance(op *fakeOp) {
	if op.status != statusInitiated && op.status != statusPending {
		return
	}
	now := time.Now()
	if !op.delivered.IsZero() && op.outcome != "" {
		switch elapsed := now.Sub(op.delivered); {
		case elapsed >= f.payDelay:
			f.settle(op, op.outcome)
			return
		case elapsed >= f.payDelay/2:
			op.status = statusPending // the customer is on the page
		}
	}
	if now.Sub(op.created) >= f.sessionTTL {
		op.status = statusExpired
	}
}

func (f *fakeOrange) settle(op *fakeOp, status string) {
	op.status = status
	if status == statusSuccess {
		op.txnid = fmt.Sprintf("MP%s.%04d.A%05d", op.created.Format("060102"), op.created.Nanosecond()%10000, f.seq)
	}
}

// notificationOf renders the notification Orange posts about op (f.mu held).
func notificationOf(op *fakeOp) []byte {
	body, _ := json.Marshal(map[string]string{"status": op.status, "notif_token": op.notifToken, "txnid": op.txnid})
	return body
}

// customerPays ends the payment of ref with status at once, as the customer on the page, and
// posts Orange's notification to its notif_url; it returns the answer's status code.
func (f *fakeOrange) customerPays(ref, status string) int {
	orderID, _ := OrderID(ref)
	f.mu.Lock()
	op := f.ops[orderID]
	f.settle(op, status)
	body, target := notificationOf(op), op.notifURL
	f.mu.Unlock()
	resp, err := http.Post(target, "application/json", bytes.NewReader(body))
	if err != nil {
		f.errorf("post notification: %v", err)
		return 0
	}
	defer resp.Body.Close()
	return resp.StatusCode
}

// forceNext makes the next initiation answer status with body, after creating the payment if
// create (its page then never reaches the merchant).
func (f *fakeOrange) forceNext(status int, create bool, body string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.forced, f.forcedCreate, f.forcedBody = status, create, body
}

func (f *fakeOrange) op(ref string) fakeOp {
	orderID, _ := OrderID(ref)
	f.mu.Lock()
	defer f.mu.Unlock()
	if op, ok := f.ops[orderID]; ok {
		return *op
	}
	return fakeOp{}
}

func (f *fakeOrange) seen() []seenRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]seenRequest(nil), f.requests...)
}

// Controls of gatewaytest.

func (f *fakeOrange) Next(b gatewaytest.Behaviour) {
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

func (f *fakeOrange) Operations() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.ops)
}

func (f *fakeOrange) Callback(kind gateway.CallbackKind, reference string) (http.Header, []byte) {
	orderID, _ := OrderID(reference)
	f.mu.Lock()
	defer f.mu.Unlock()
	op, ok := f.ops[orderID]
	if !ok || kind != gateway.CallbackCollection {
		f.errorf("no %s notification for %s", kind, reference)
		return http.Header{}, nil
	}
	f.advance(op)
	return http.Header{"Content-Type": {"application/json"}}, notificationOf(op)
}

func (f *fakeOrange) ExpireToken() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for tok := range f.tokens {
		f.tokens[tok] = false
	}
}

func (f *fakeOrange) TokenRequests() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.tokenRequests
}
