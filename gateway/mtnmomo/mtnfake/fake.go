// Package mtnfake is a fake MTN MoMo Open API on loopback that speaks the documented wire format
// (token, requesttopay, transfer, status reads, error shapes) and checks every request it gets
// (subscription key, Bearer token, X-Reference-Id a UUID, X-Target-Environment, amounts as
// strings), reporting violations on the test. The adapter's tests and the service's LIVE
// end-to-end test drive it; its customer answers by the first status read.
package mtnfake

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/sikahq/sika/gateway"
	"github.com/sikahq/sika/gateway/gatewaytest"
)

// Credentials of the fake account.
const (
	CollectionKey   = "coll-sub-key"
	DisbursementKey = "disb-sub-key"
	APIUser         = "0c8a5b3e-7d1f-4c2a-9e6b-1f2d3c4b5a69"
	APIKey          = "fake-api-key"
	// Environment is the only X-Target-Environment the fake accepts.
	Environment = "mtnbenin"
)

// fakeOp is an operation the fake operator holds.
type fakeOp struct {
	product string // collection, disbursement or refund
	body    map[string]any
	status  string // PENDING, SUCCESSFUL, FAILED
	reason  string
	final   string // the status the operation reaches at its first status read
	finalR  string
	txID    string
}

// Server is an MTN MoMo Open API on loopback speaking the documented wire format. It checks
// every request (subscription key, Bearer token, X-Reference-Id a UUID, X-Target-Environment,
// amount a string) and reports violations with t.Errorf.
type Server struct {
	gatewaytest.Fake
	// Script gives Next, HTTPClient (the refusal switch) and Take.
	gatewaytest.Script

	tokens        map[string]string // token → product
	tokenRequests map[string]int    // product → count
	tokenTTL      int               // expires_in of issued tokens, seconds
	tokenDelay    time.Duration
	ops           map[string]*fakeOp // X-Reference-Id → operation
	nextStatus    int                // a forced answer to the next initiation (0: none)
	nextCreate    bool               // whether that forced answer creates the operation first
	seqTx         int
	requests      []SeenRequest
	rejectBearer  bool // refuse every Bearer token
}

// SeenRequest records what an API call carried.
type SeenRequest struct {
	Method, Path, ReferenceID string
}

// New starts a fake MTN on loopback, closed when t ends.
func New(t testing.TB) *Server {
	f := &Server{tokens: map[string]string{}, tokenRequests: map[string]int{}, tokenTTL: 3600,
		ops: map[string]*fakeOp{}}
	f.Start(t, "MTN", f.serve)
	return f
}

func writeError(w http.ResponseWriter, status int, code, message string) {
	gatewaytest.WriteJSON(w, status, map[string]string{"code": code, "message": message})
}

func (f *Server) serve(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if len(parts) < 2 {
		writeError(w, http.StatusNotFound, "NOT_FOUND", "no such path")
		return
	}
	product := parts[0]
	key := map[string]string{"collection": CollectionKey, "disbursement": DisbursementKey}[product]
	if key == "" {
		writeError(w, http.StatusNotFound, "NOT_FOUND", "no such product")
		return
	}
	if got := r.Header.Get("Ocp-Apim-Subscription-Key"); got != key {
		f.Errorf("%s %s: subscription key %q, want the %s key", r.Method, r.URL.Path, got, product)
		gatewaytest.WriteJSON(w, http.StatusUnauthorized, map[string]any{"statusCode": 401, "message": "Access denied due to invalid subscription key."})
		return
	}
	if parts[1] == "token" && r.Method == http.MethodPost {
		f.token(w, r, product)
		return
	}
	if !f.authorized(w, r, product) {
		return
	}
	if env := r.Header.Get("X-Target-Environment"); env != Environment {
		f.Errorf("%s %s: X-Target-Environment %q, want %q", r.Method, r.URL.Path, env, Environment)
	}
	resource := map[string]string{"collection": "requesttopay", "disbursement": "transfer"}[product]
	if product == "disbursement" && len(parts) >= 3 && parts[2] == "refund" {
		resource, product = "refund", productRefund // the disbursement product's refund of a request-to-pay
	}
	switch {
	case len(parts) == 3 && parts[1] == "v1_0" && parts[2] == resource && r.Method == http.MethodPost:
		f.initiate(w, r, product)
	case len(parts) == 4 && parts[1] == "v1_0" && parts[2] == resource && r.Method == http.MethodGet:
		f.status(w, product, parts[3])
	default:
		writeError(w, http.StatusNotFound, "NOT_FOUND", "no such path")
	}
}

func (f *Server) token(w http.ResponseWriter, r *http.Request, product string) {
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte(APIUser+":"+APIKey))
	if r.Header.Get("Authorization") != want {
		gatewaytest.WriteJSON(w, http.StatusUnauthorized, map[string]string{"error": "login_failed"})
		return
	}
	f.Mu.Lock()
	delay := f.tokenDelay
	f.tokenRequests[product]++
	tok := fmt.Sprintf("tok-%s-%d", product, f.tokenRequests[product])
	f.tokens[tok] = product
	ttl := f.tokenTTL
	f.Mu.Unlock()
	time.Sleep(delay)
	gatewaytest.WriteJSON(w, http.StatusOK, map[string]any{"access_token": tok, "token_type": "access_token", "expires_in": ttl})
}

func (f *Server) authorized(w http.ResponseWriter, r *http.Request, product string) bool {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	f.Mu.Lock()
	valid := ok && f.tokens[tok] == product && !f.rejectBearer
	f.Mu.Unlock()
	if !valid {
		if r.Method == http.MethodPost {
			f.Mu.Lock()
			f.requests = append(f.requests, SeenRequest{r.Method, r.URL.Path, r.Header.Get("X-Reference-Id")})
			f.Mu.Unlock()
		}
		gatewaytest.WriteJSON(w, http.StatusUnauthorized, map[string]any{"statusCode": 401, "message": "Access denied due to invalid access token."})
	}
	return valid
}

func (f *Server) initiate(w http.ResponseWriter, r *http.Request, product string) {
	ref := r.Header.Get("X-Reference-Id")
	f.Mu.Lock()
	f.requests = append(f.requests, SeenRequest{r.Method, r.URL.Path, ref})
	f.Mu.Unlock()
	if _, err := uuid.Parse(ref); err != nil || len(ref) != 36 {
		f.Errorf("X-Reference-Id %q is not a UUID", ref)
		writeError(w, http.StatusBadRequest, "INVALID_REFERENCE_ID", "X-Reference-Id must be a UUID")
		return
	}
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		writeError(w, http.StatusBadRequest, "BAD_REQUEST", "body is not JSON")
		return
	}
	f.checkBody(product, body)

	f.Mu.Lock()
	b := f.Take()
	forced, create := f.nextStatus, f.nextCreate
	f.nextStatus = 0
	if existing, ok := f.ops[ref]; ok {
		if existing.body["amount"] != body["amount"] {
			f.Errorf("reference %s sent again with amount %v, first %v", ref, body["amount"], existing.body["amount"])
		}
		f.Mu.Unlock()
		writeError(w, http.StatusConflict, "RESOURCE_ALREADY_EXIST", "Duplicated reference id. Creation of resource failed.")
		return
	}
	if b == gatewaytest.Unavailable503 {
		f.Mu.Unlock()
		writeError(w, http.StatusServiceUnavailable, "SERVICE_UNAVAILABLE", "Service unavailable, try again later")
		return
	}
	if forced != 0 && !create {
		f.Mu.Unlock()
		writeError(w, forced, "INTERNAL_PROCESSING_ERROR", "forced answer")
		return
	}
	op := &fakeOp{product: product, body: body, status: "PENDING", final: "SUCCESSFUL"}
	switch {
	case b == gatewaytest.Decline && product == productRefund:
		op.final, op.finalR = "FAILED", "NOT_ALLOWED"
	case b == gatewaytest.Decline:
		op.final, op.finalR = "FAILED", "APPROVAL_REJECTED"
		if product == "disbursement" {
			op.finalR = "PAYEE_NOT_FOUND"
		}
	case product == productRefund && !f.refundableLocked(body):
		op.final, op.finalR = "FAILED", "NOT_ALLOWED"
	}
	f.ops[ref] = op
	f.Mu.Unlock()

	switch {
	case forced != 0:
		writeError(w, forced, "INTERNAL_PROCESSING_ERROR", "forced answer")
	case b == gatewaytest.TimeoutAfterAccept:
		<-r.Context().Done() // accepted, but the answer never comes
	default:
		w.WriteHeader(http.StatusAccepted)
	}
}

// checkBody checks the documented shape of a requesttopay or transfer body.
func (f *Server) checkBody(product string, body map[string]any) {
	if _, ok := body["amount"].(string); !ok {
		f.Errorf("amount %#v is not a string", body["amount"])
	}
	if s, _ := body["amount"].(string); strings.Contains(s, ".") && body["currency"] == "XOF" {
		f.Errorf("XOF amount %q has decimals", s)
	}
	if product == productRefund {
		f.checkRefundBody(body)
		return
	}
	partyKey := map[string]string{"collection": "payer", "disbursement": "payee"}[product]
	p, ok := body[partyKey].(map[string]any)
	if !ok {
		f.Errorf("%s body without %s", product, partyKey)
		return
	}
	if p["partyIdType"] != "MSISDN" {
		f.Errorf("partyIdType %v", p["partyIdType"])
	}
	if id, _ := p["partyId"].(string); id == "" || strings.Trim(id, "0123456789") != "" {
		f.Errorf("partyId %q is not digits", id)
	}
	for _, k := range []string{"currency", "externalId", "payerMessage", "payeeNote"} {
		if _, ok := body[k].(string); !ok {
			f.Errorf("body field %s missing", k)
		}
	}
}

func (f *Server) status(w http.ResponseWriter, product, ref string) {
	f.Mu.Lock()
	op, ok := f.ops[ref]
	if !ok || op.product != product {
		f.Mu.Unlock()
		writeError(w, http.StatusNotFound, "RESOURCE_NOT_FOUND", "Requested resource was not found.")
		return
	}
	if op.status == "PENDING" { // the customer answers by the first status read
		op.status, op.reason = op.final, op.finalR
		if op.status == "SUCCESSFUL" {
			f.seqTx++
			op.txID = fmt.Sprintf("%d", 1000000+f.seqTx)
		}
	}
	answer := f.statusJSON(ref, op)
	f.Mu.Unlock()
	gatewaytest.WriteJSON(w, http.StatusOK, answer)
}

// statusJSON renders an operation as MTN does (for status reads and callbacks).
func (f *Server) statusJSON(_ string, op *fakeOp) map[string]any {
	out := map[string]any{
		"amount":       op.body["amount"],
		"currency":     op.body["currency"],
		"externalId":   op.body["externalId"],
		"payerMessage": op.body["payerMessage"],
		"payeeNote":    op.body["payeeNote"],
		"status":       op.status,
	}
	if op.txID != "" {
		out["financialTransactionId"] = op.txID
	}
	switch op.product {
	case "collection":
		out["payer"] = op.body["payer"]
	case productRefund: // the refund pays the collection's payer
		if col := f.ops[fmt.Sprint(op.body["referenceIdToRefund"])]; col != nil {
			out["payee"] = col.body["payer"]
		}
	default:
		out["payee"] = op.body["payee"]
	}
	if op.reason != "" {
		out["reason"] = op.reason
	}
	return out
}

// ForceNext makes the next initiation answer status, after creating the operation if create.
func (f *Server) ForceNext(status int, create bool) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	f.nextStatus, f.nextCreate = status, create
}

// Seen lists the initiations and refused calls received, in order.
func (f *Server) Seen() []SeenRequest {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	return append([]SeenRequest(nil), f.requests...)
}

// TokenCount counts the token requests of a product (collection or disbursement).
func (f *Server) TokenCount(product string) int {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	return f.tokenRequests[product]
}

// Controls of gatewaytest.

// Operations counts the operations created (gatewaytest.Controls).
func (f *Server) Operations() int {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	return len(f.ops)
}

// Callback renders the callback MTN would send about reference now (gatewaytest.Controls).
func (f *Server) Callback(kind gateway.CallbackKind, reference string) (http.Header, []byte) {
	f.Mu.Lock()
	op, ok := f.ops[reference]
	var body []byte
	if ok {
		body, _ = json.Marshal(f.statusJSON(reference, op))
	}
	f.Mu.Unlock()
	if !ok {
		f.Errorf("callback for unknown %s %s", kind, reference)
	}
	return http.Header{"Content-Type": {"application/json"}}, body
}

// ExpireToken invalidates every issued token (gatewaytest.Controls).
func (f *Server) ExpireToken() {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	clear(f.tokens)
}

// TokenRequests counts every token request (gatewaytest.Controls).
func (f *Server) TokenRequests() int {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	n := 0
	for _, c := range f.tokenRequests {
		n += c
	}
	return n
}

// Body returns the JSON body the operation under reference was created with (nil if none).
func (f *Server) Body(reference string) map[string]any {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	if op, ok := f.ops[reference]; ok {
		return op.body
	}
	return nil
}

// RejectBearer makes the fake refuse every Bearer token (true) or accept valid ones again.
func (f *Server) RejectBearer(reject bool) { gatewaytest.Set(&f.Fake, &f.rejectBearer, reject) }

// SetTokenDelay delays every token answer by d.
func (f *Server) SetTokenDelay(d time.Duration) { gatewaytest.Set(&f.Fake, &f.tokenDelay, d) }

// SetTokenTTL sets the expires_in, in seconds, of the tokens issued from now on.
func (f *Server) SetTokenTTL(seconds int) { gatewaytest.Set(&f.Fake, &f.tokenTTL, seconds) }
