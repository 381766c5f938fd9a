// Package orangefake is a fake Orange Money WebPay on loopback (Orange's OAuth v3 token endpoint,
// webpayment and transactionstatus) that speaks the wire format of Orange's documentation and
// checks every request it gets (Basic auth and form of the token request, a valid Bearer on every
// call, the merchant key, an order_id of at most 30 characters, the amount a whole JSON number),
// reporting violations on the test. The Orange adapter's tests and the service's LIVE end-to-end
// test drive it.
//
// The fake is a pure operator: it knows payments by order_id, pay_token and payment_url, never
// by the service's references. Its customers act only when the test says so (Pay, Decline), and
// Notify posts Orange's notification to the payment's notif_url; after SettleAfter, the customer
// of a page that reached the merchant acts by itself instead. A payment whose page never reached
// the merchant is never paid, and every unpaid payment expires after its session (SetSessionTTL).
//
// Server has every method of gatewaytest.Controls but Callback, which names a payment by the
// service's reference: a harness adds it by turning the reference into its order_id and calling
// Notification.
package orangefake

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sikahq/sika/gateway/gatewaytest"
)

// Credentials of the fake account.
const (
	// ClientID and ClientSecret are the application's OAuth credentials (Basic auth of the token
	// request).
	ClientID     = "sika-orange-app"
	ClientSecret = "client-secret-9f2c"
	// MerchantKey is the WebPay merchant key every initiation must carry.
	MerchantKey = "merchant-key-77ab"
)

// States of a WebPay payment, as status reads and notifications carry them.
const (
	Initiated = "INITIATED" // created; the customer has not reached the payment page
	Pending   = "PENDING"   // the customer is on the payment page
	Success   = "SUCCESS"   // paid
	Failed    = "FAILED"    // the customer cancelled, or the page refused their PIN or OTP
	Expired   = "EXPIRED"   // the session ended unpaid
)

// Defaults of New.
const (
	// DefaultSessionTTL is how long a payment waits for its customer before it expires.
	DefaultSessionTTL = 10 * time.Minute
)

// tokenPath is Orange's OAuth client-credentials endpoint.
const tokenPath = "/oauth/v3/token"

// pagePath is the path of the fake's payment pages; a page's last segment is its pay_token.
const pagePath = "/payment/pay_token/"

// payment is a WebPay payment the fake holds.
type payment struct {
	segment, orderID, amount, notifURL string
	payToken, notifToken, txnid        string
	status                             string
	// outcome is what the customer does, after SettleAfter, once the page reaches them: Success,
	// Failed, or "" (never comes back).
	outcome   string
	created   time.Time
	delivered time.Time // when the answer left, with payment_url; zero: the merchant never got it
}

// Payment is a snapshot of a payment the fake holds.
type Payment struct {
	OrderID    string // the merchant's order_id
	Segment    string // the {country} path segment it was created in
	Amount     string // the amount, as the JSON number sent
	NotifURL   string // where Orange posts its notification
	PayToken   string // Orange's handle of the payment (status reads need it)
	NotifToken string // the token its notification carries
	PaymentURL string // the payment page
	TxnID      string // Orange's transaction id, once paid
	Status     string // Initiated, Pending, Success, Failed or Expired
	Delivered  bool   // whether the answer with payment_url reached the merchant
}

// SeenRequest records one call the adapter made.
type SeenRequest struct {
	Path          string // the URL's path
	Authorization string // the Authorization header, as sent
	ContentType   string // the Content-Type header
	Body          string // the raw body
}

// Server is Orange Money WebPay on loopback. Its methods are safe for concurrent use.
type Server struct {
	gatewaytest.Fake
	// Script gives Next, HTTPClient (the refusal switch) and Take.
	gatewaytest.Script

	tokens        map[string]bool // issued token → still valid
	tokenRequests int
	tokenTTL      int                 // expires_in of new tokens, seconds
	rejectBearer  bool                // refuse every Bearer token with 403 (the application may not use WebPay)
	stillborn     bool                // every token is issued already expired
	payments      map[string]*payment // by order_id
	byPayToken    map[string]*payment
	nextOutcome   []string // overrides of the next payments' customer outcome
	forced        int      // a forced answer to the next initiation (0: none)
	forcedCreate  bool     // whether that forced answer creates the payment first
	forcedBody    string   // its body
	statusDelay   time.Duration
	statusForced  int    // a forced answer to the next status read (0: none)
	statusBody    string // its body
	settleAfter   time.Duration
	sessionTTL    time.Duration
	seq           int
	requests      []SeenRequest
}

// New starts a fake Orange on loopback, closed when t ends. Its customers act only when told
// (Pay, Decline) and its unpaid payments expire after DefaultSessionTTL.
func New(t testing.TB) *Server {
	f := &Server{tokens: map[string]bool{}, tokenTTL: 3600, payments: map[string]*payment{},
		byPayToken: map[string]*payment{}, sessionTTL: DefaultSessionTTL}
	f.Start(t, "Orange", f.serve)
	return f
}

// writeError answers in the shape of Orange's API errors.
func writeError(w http.ResponseWriter, status, code int, message, description string) {
	gatewaytest.WriteJSON(w, status, map[string]any{"code": code, "message": message, "description": description})
}

// writeRaw answers status with a body given as is.
func writeRaw(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

func (f *Server) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	f.Mu.Lock()
	f.requests = append(f.requests, SeenRequest{Path: r.URL.Path, Authorization: r.Header.Get("Authorization"),
		ContentType: r.Header.Get("Content-Type"), Body: string(raw)})
	f.Mu.Unlock()
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
		f.Errorf("%s: Content-Type %q", r.URL.Path, ct)
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

func (f *Server) token(w http.ResponseWriter, r *http.Request, raw []byte) {
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte(ClientID+":"+ClientSecret))
	if r.Header.Get("Authorization") != want {
		gatewaytest.WriteJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client",
			"error_description": "The requested service needs credentials, but the ones provided were invalid."})
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/x-www-form-urlencoded" {
		f.Errorf("token request Content-Type %q", ct)
	}
	if string(raw) != "grant_type=client_credentials" {
		f.Errorf("token request body %q", raw)
	}
	f.Mu.Lock()
	f.tokenRequests++
	tok := fmt.Sprintf("tok-%d", f.tokenRequests)
	f.tokens[tok] = !f.stillborn
	ttl := f.tokenTTL
	f.Mu.Unlock()
	gatewaytest.WriteJSON(w, http.StatusOK, map[string]any{"token_type": "Bearer", "access_token": tok, "expires_in": ttl})
}

func (f *Server) authorized(w http.ResponseWriter, r *http.Request) bool {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	f.Mu.Lock()
	valid, issued := f.tokens[tok]
	reject := f.rejectBearer
	f.Mu.Unlock()
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

func (f *Server) webpayment(w http.ResponseWriter, r *http.Request, segment string, body map[string]any) {
	if body["merchant_key"] != MerchantKey {
		writeError(w, http.StatusForbidden, 50, "Access denied", fmt.Sprintf("merchant key %v is not valid", body["merchant_key"]))
		return
	}
	orderID, _ := body["order_id"].(string)
	if orderID == "" || len(orderID) > 30 {
		f.Errorf("order_id %q: empty or longer than 30", orderID)
		writeError(w, http.StatusBadRequest, 400, "Bad Request", "order_id must have 1 to 30 characters")
		return
	}
	amount, ok := wholeNumber(body["amount"])
	if !ok {
		f.Errorf("amount %#v is not a whole JSON number", body["amount"])
	}
	for _, k := range []string{"currency", "return_url", "cancel_url", "notif_url", "lang", "reference"} {
		if s, _ := body[k].(string); s == "" {
			f.Errorf("webpayment without %s", k)
		}
	}
	f.Mu.Lock()
	b := f.Take()
	forced, create, forcedBody := f.forced, f.forcedCreate, f.forcedBody
	f.forced = 0
	if existing, dup := f.payments[orderID]; dup {
		if existing.amount != amount {
			f.Errorf("order_id %s sent again with amount %s, first %s", orderID, amount, existing.amount)
		}
		f.Mu.Unlock()
		writeError(w, http.StatusConflict, 409, "Conflict", "Duplicate order_id")
		return
	}
	if b == gatewaytest.Unavailable503 {
		f.Mu.Unlock()
		writeError(w, http.StatusServiceUnavailable, 5, "Service unavailable", "The service is temporarily unavailable, try again later")
		return
	}
	if forced != 0 && !create {
		f.Mu.Unlock()
		writeRaw(w, forced, forcedBody)
		return
	}
	f.seq++
	p := &payment{segment: segment, orderID: orderID, amount: amount,
		notifURL: fmt.Sprint(body["notif_url"]), status: Initiated, outcome: Success, created: time.Now(),
		payToken: fmt.Sprintf("pt%062x", f.seq), notifToken: fmt.Sprintf("nt%030x", f.seq)}
	if b == gatewaytest.Decline {
		p.outcome = Failed
	}
	if len(f.nextOutcome) > 0 {
		p.outcome, f.nextOutcome = f.nextOutcome[0], f.nextOutcome[1:]
	}
	f.payments[orderID] = p
	f.byPayToken[p.payToken] = p
	if forced == 0 && b != gatewaytest.TimeoutAfterAccept {
		p.delivered = time.Now()
	}
	f.Mu.Unlock()

	switch {
	case forced != 0:
		writeRaw(w, forced, forcedBody)
	case b == gatewaytest.TimeoutAfterAccept:
		<-r.Context().Done() // created, but the answer never comes
	default:
		gatewaytest.WriteJSON(w, http.StatusCreated, map[string]any{"status": 201, "message": "OK", "pay_token": p.payToken,
			"payment_url": f.pageURL(p), "notif_token": p.notifToken})
	}
}

func (f *Server) pageURL(p *payment) string { return f.URL() + pagePath + p.payToken }

func (f *Server) transactionStatus(w http.ResponseWriter, r *http.Request, segment string, body map[string]any) {
	f.Mu.Lock()
	delay := f.statusDelay
	f.Mu.Unlock()
	select { // accepted, then slow to answer
	case <-time.After(delay):
	case <-r.Context().Done():
		return
	}
	orderID, _ := body["order_id"].(string)
	amount, ok := wholeNumber(body["amount"])
	if !ok {
		f.Errorf("status read amount %#v is not a whole JSON number", body["amount"])
	}
	f.Mu.Lock()
	defer f.Mu.Unlock()
	if forced := f.statusForced; forced != 0 {
		f.statusForced = 0
		writeRaw(w, forced, f.statusBody)
		return
	}
	p, found := f.payments[orderID]
	if !found || p.payToken != body["pay_token"] || p.amount != amount {
		f.Errorf("status read of order %q with a pay_token or amount (%s) that do not match", orderID, amount)
		writeError(w, http.StatusBadRequest, 400, "Bad Request", "Unknown transaction")
		return
	}
	if segment != p.segment {
		f.Errorf("status read of order %s in country %q, created in %q", orderID, segment, p.segment)
	}
	f.advance(p)
	gatewaytest.WriteJSON(w, http.StatusCreated, map[string]any{"status": p.status, "order_id": p.orderID, "txnid": p.txnid})
}

// open reports whether p still waits for its customer.
func (p *payment) open() bool { return p.status == Initiated || p.status == Pending }

// advance plays the clock on p, and its customer after SettleAfter (f.Mu held).
func (f *Server) advance(p *payment) {
	if !p.open() {
		return
	}
	now := time.Now()
	if f.settleAfter > 0 && !p.delivered.IsZero() && p.outcome != "" {
		switch elapsed := now.Sub(p.delivered); {
		case elapsed >= f.settleAfter:
			f.settle(p, p.outcome)
			return
		case elapsed >= f.settleAfter/2:
			p.status = Pending // the customer is on the page
		}
	}
	if now.Sub(p.created) >= f.sessionTTL {
		p.status = Expired
	}
}

// settle ends p with status (f.Mu held).
func (f *Server) settle(p *payment, status string) {
	p.status = status
	if status == Success {
		p.txnid = fmt.Sprintf("MP%s.%04d.A%05d", p.created.Format("060102"), p.created.Nanosecond()%10000, f.seq)
	}
}

// notificationOf renders the notification Orange posts about p (f.Mu held).
func notificationOf(p *payment) []byte {
	body, _ := json.Marshal(map[string]string{"status": p.status, "notif_token": p.notifToken, "txnid": p.txnid})
	return body
}

// snapshot copies p for the test (f.Mu held).
func (f *Server) snapshot(p *payment) Payment {
	return Payment{OrderID: p.orderID, Segment: p.segment, Amount: p.amount, NotifURL: p.notifURL,
		PayToken: p.payToken, NotifToken: p.notifToken, PaymentURL: f.pageURL(p), TxnID: p.txnid,
		Status: p.status, Delivered: !p.delivered.IsZero()}
}
