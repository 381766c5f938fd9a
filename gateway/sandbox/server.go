// Package sandbox is the TEST-mode operator: a real HTTP server that behaves like a
// mobile-money operator (pushes, delays, OTP, redirect pages, signed callbacks that are
// sometimes missing, duplicated or late, outcomes chosen by the customer's number), serving
// several gateways at once so that routing fallback is real; and Client, the gateway.Gateway
// adapter the service uses to talk to it.
//
// Each gateway lives under /gw/{name}/ with its own API key and callback secret:
//
//	POST /gw/{name}/v1/collections                    initiate a collection (201, or 200 for a replay)
//	GET  /gw/{name}/v1/collections/{reference}        read its status (404 not_found)
//	POST /gw/{name}/v1/collections/{reference}/otp    confirm a post-push OTP
//	POST /gw/{name}/v1/collections/{reference}/cancel withdraw a pending collection
//	POST /gw/{name}/v1/disbursements                  initiate a payout
//	GET  /gw/{name}/v1/disbursements/{reference}      read its status
//	POST /gw/{name}/v1/refunds                        refund (part of) a successful collection
//	GET  /gw/{name}/v1/refunds/{reference}            read its status
//	GET  /gw/{name}/checkout/{reference}              the redirect networks' payment page (no auth)
//
// and, for people and tests playing the customer:
//
//	POST /sandbox/pushes/{reference}/approve|decline  resolve a pending operation now
//	GET  /sandbox/operations[/{reference}]            inspect operations and their counters
//	GET  /healthz                                     liveness
//
// The outcome is chosen by the last three digits of the number (see operators.md).
package sandbox

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"
)

// Names of the gateways DefaultGateways returns.
const (
	GatewayA = "sandbox-a" // answers 503 to numbers ending in 005
	GatewayB = "sandbox-b"
)

// ValidOTP is the only one-time code the sandbox accepts.
const ValidOTP = "123456"

// DefaultLateAfter is Config.LateAfter's default: a minute past Sika's default push lifetime.
const DefaultLateAfter = 6 * time.Minute

// GatewayConfig is one simulated operator account served by the sandbox.
type GatewayConfig struct {
	Name           string // path segment and routing name, e.g. "sandbox-a"
	APIKey         string // callers send Authorization: Bearer <APIKey>
	CallbackSecret string // signs the callbacks (Sandbox-Signature)
	// UnavailableOn005 makes numbers ending in 005 answer 503 at initiation, so that routing
	// falls back to the next gateway; other gateways treat 005 like any other number.
	UnavailableOn005 bool
}

// Config configures a Server. Zero durations take their defaults.
type Config struct {
	Gateways []GatewayConfig
	// Tick is the sandbox's unit of delay ("about 1 s" in operators.md; default 1s). Outcomes
	// come after 1 tick, 006 after 2, 009 after 20, 010 1 tick after NotFoundFor (011 after
	// LateAfter); callback retries are 1 tick apart.
	Tick time.Duration
	// PushTTL is how long an operation may stay PENDING before it fails with "expired"
	// (default 2m).
	PushTTL time.Duration
	// HoldTimeout bounds how long a 006 initiation response is held (default 60s); the hold
	// also ends when the client gives up.
	HoldTimeout time.Duration
	// NotFoundFor is how long a 010 operation stays unknown after its first initiation (default
	// 3 ticks): status reads answer NOT_FOUND and re-sends 503, as an operator still creating
	// it would. It must be shorter than the client's NotFoundSettle (ClientConfig), or Sika
	// would take the operation for one never created.
	NotFoundFor time.Duration
	// LateAfter is when a 011 operation succeeds (default DefaultLateAfter, 6m). It must be
	// longer than Sika's push lifetime (SIKA_PUSH_LIFETIME, default 5m), so that the success
	// comes after Sika ended the collection, and shorter than that plus the client's
	// LateSuccess window, so that Sika still re-reads it.
	LateAfter time.Duration
	// HTTPClient delivers callbacks; by default the server uses a client of its own whose idle
	// connections Close releases.
	HTTPClient *http.Client
	Logger     *slog.Logger // default slog.Default()
	// Now stamps records, callbacks and signatures (default time.Now); delays run on the real
	// clock in Tick units.
	Now func() time.Time
}

// Server is the sandbox operator, an http.Handler. Its state lives in memory.
type Server struct {
	cfg       Config
	gateways  map[string]GatewayConfig
	handler   http.Handler
	log       *slog.Logger
	ownClient bool // cfg.HTTPClient was created here: Close releases its connections

	// ctx is cancelled by Close: it ends held responses, callback deliveries and retry waits.
	ctx    context.Context
	cancel context.CancelFunc
	// wg counts armed timers and running callback deliveries; Close waits for it.
	wg        sync.WaitGroup
	closeOnce sync.Once

	mu     sync.Mutex
	closed bool
	ops    map[opKey]*operation
	order  []*operation // creation order, for listings
}

// NewServer returns a sandbox serving cfg.Gateways. It panics when a gateway has no name or
// two share one: that is a programming error, not a runtime condition.
func NewServer(cfg Config) *Server {
	if cfg.Tick <= 0 {
		cfg.Tick = time.Second
	}
	if cfg.PushTTL <= 0 {
		cfg.PushTTL = 2 * time.Minute
	}
	if cfg.HoldTimeout <= 0 {
		cfg.HoldTimeout = 60 * time.Second
	}
	if cfg.NotFoundFor <= 0 {
		cfg.NotFoundFor = 3 * cfg.Tick
	}
	if cfg.LateAfter <= 0 {
		cfg.LateAfter = DefaultLateAfter
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	s := &Server{
		cfg:      cfg,
		gateways: make(map[string]GatewayConfig, len(cfg.Gateways)),
		log:      cfg.Logger.With("component", "sandbox"),
		ops:      make(map[opKey]*operation),
	}
	if s.cfg.HTTPClient == nil {
		s.cfg.HTTPClient = &http.Client{
			Transport: http.DefaultTransport.(*http.Transport).Clone(),
			Timeout:   10 * time.Second,
		}
		s.ownClient = true
	}
	for _, gw := range cfg.Gateways {
		if gw.Name == "" {
			panic("sandbox: gateway without a name")
		}
		if _, dup := s.gateways[gw.Name]; dup {
			panic("sandbox: two gateways named " + gw.Name)
		}
		s.gateways[gw.Name] = gw
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.handler = s.routes()
	return s
}

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("POST /gw/{name}/v1/collections", s.initiate(kindCollection))
	mux.HandleFunc("GET /gw/{name}/v1/collections/{reference}", s.readStatus(kindCollection))
	mux.HandleFunc("POST /gw/{name}/v1/collections/{reference}/otp", s.confirmOTP)
	mux.HandleFunc("POST /gw/{name}/v1/collections/{reference}/cancel", s.cancelCollection)
	mux.HandleFunc("POST /gw/{name}/v1/disbursements", s.initiate(kindDisbursement))
	mux.HandleFunc("GET /gw/{name}/v1/disbursements/{reference}", s.readStatus(kindDisbursement))
	mux.HandleFunc("POST /gw/{name}/v1/refunds", s.initiate(kindRefund))
	mux.HandleFunc("GET /gw/{name}/v1/refunds/{reference}", s.readStatus(kindRefund))
	mux.HandleFunc("GET /gw/{name}/checkout/{reference}", s.checkoutPage)
	mux.HandleFunc("POST /sandbox/pushes/{reference}/approve", s.resolveByHand(true))
	mux.HandleFunc("POST /sandbox/pushes/{reference}/decline", s.resolveByHand(false))
	mux.HandleFunc("GET /sandbox/operations", s.listOperations)
	mux.HandleFunc("GET /sandbox/operations/{reference}", s.getOperation)
	return mux
}

// ServeHTTP serves the sandbox's routes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// Close stops every timer, abandons pending callbacks and held responses, and waits until no
// goroutine of the server is left. Requests after Close answer 503. Close is idempotent.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		for _, op := range s.order {
			s.stopTimersLocked(op)
		}
		s.mu.Unlock()
		s.cancel()
		s.wg.Wait()
		if s.ownClient {
			s.cfg.HTTPClient.CloseIdleConnections()
		}
	})
}

// DefaultGateways returns the two gateways of the dev stack, sandbox-a (which answers 503 to
// numbers ending in 005) and sandbox-b, with credentials derived from master by Credentials.
func DefaultGateways(master string) []GatewayConfig {
	gateways := []GatewayConfig{{Name: GatewayA, UnavailableOn005: true}, {Name: GatewayB}}
	for i := range gateways {
		gateways[i].APIKey, gateways[i].CallbackSecret = Credentials(master, gateways[i].Name)
	}
	return gateways
}

// Credentials derives a gateway's API key and callback secret from one master secret, so
// that the service and the sandbox agree without exchanging per-gateway secrets:
// hex(HMAC-SHA256(master, name+"|api-key")) and hex(HMAC-SHA256(master, name+"|callback")).
func Credentials(master, name string) (apiKey, callbackSecret string) {
	derive := func(purpose string) string {
		mac := hmac.New(sha256.New, []byte(master))
		mac.Write([]byte(name + "|" + purpose))
		return hex.EncodeToString(mac.Sum(nil))
	}
	return derive("api-key"), derive("callback")
}

// authorize resolves the {name} gateway of r and checks its API key; on failure it has
// already answered.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) (GatewayConfig, bool) {
	gw, ok := s.gateways[r.PathValue("name")]
	if !ok {
		writeError(w, errUnknownGateway)
		return GatewayConfig{}, false
	}
	want := "Bearer " + gw.APIKey
	if gw.APIKey == "" || subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), []byte(want)) != 1 {
		writeError(w, errUnauthorized)
		return GatewayConfig{}, false
	}
	return gw, true
}

// authorizeJSON is authorize, then the request's JSON body read into v; ok is false once an
// error has been answered.
func (s *Server) authorizeJSON(w http.ResponseWriter, r *http.Request, v any) (GatewayConfig, bool) {
	gw, ok := s.authorize(w, r)
	if !ok {
		return gw, false
	}
	if e := readJSON(r, v); e != nil {
		writeError(w, e)
		return gw, false
	}
	return gw, true
}

// apiError is an error answer of the sandbox's API: {"error":{"code","message"}}.
type apiError struct {
	status  int
	code    string
	message string
}

func (e *apiError) Error() string { return e.code + ": " + e.message }

var (
	errUnknownGateway = &apiError{http.StatusNotFound, "unknown_gateway", "No such gateway."}
	errUnauthorized   = &apiError{http.StatusUnauthorized, "unauthorized", "Missing or wrong API key."}
	errNotFound       = &apiError{http.StatusNotFound, "not_found", "No operation with this reference."}
	errUnavailable    = &apiError{http.StatusServiceUnavailable, "unavailable", "The gateway is temporarily unavailable."}
	errClosed         = &apiError{http.StatusServiceUnavailable, "unavailable", "The sandbox is shutting down."}
	errInvalidNumber  = &apiError{http.StatusBadRequest, "invalid_number", "The number is not a valid mobile-money account."}
	errMissingOTP     = &apiError{http.StatusBadRequest, "invalid_otp", "This network needs the OTP the customer obtained by USSD."}
	errWrongOTP       = &apiError{http.StatusBadRequest, "invalid_otp", "The OTP is wrong."}
	errConflict       = &apiError{http.StatusConflict, "reference_conflict", "This reference was already used with another amount, number or network."}
	errNotAwaitingOTP = &apiError{http.StatusConflict, "not_awaiting_otp", "This operation is not waiting for an OTP."}
	errAlreadyFinal   = &apiError{http.StatusConflict, "already_final", "This operation is already final."}
	errAmbiguousRef   = &apiError{http.StatusConflict, "ambiguous_reference", "Several pending operations have this reference; add ?gateway= or ?kind=."}
)

func invalidRequest(format string, args ...any) *apiError {
	return &apiError{http.StatusBadRequest, "invalid_request", fmt.Sprintf(format, args...)}
}

type errorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func writeError(w http.ResponseWriter, e *apiError) {
	var body errorBody
	body.Error.Code, body.Error.Message = e.code, e.message
	writeJSON(w, e.status, body)
}

// answer writes 200 with body, or e when there is one.
func answer(w http.ResponseWriter, body any, e *apiError) {
	if e != nil {
		writeError(w, e)
		return
	}
	writeJSON(w, http.StatusOK, body)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v) // the client may be gone; nothing to do about it
}

// maxBody bounds request bodies: the sandbox's requests are a few hundred bytes.
const maxBody = 64 << 10

// readJSON decodes r's body into v. It reads the body to its end so that the server notices
// a client that disconnects while its response is held.
func readJSON(r *http.Request, v any) *apiError {
	raw, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return invalidRequest("could not read the body: %v", err)
	}
	if len(raw) > maxBody {
		return invalidRequest("the body is larger than %d bytes", maxBody)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		var syntax *json.SyntaxError
		var typ *json.UnmarshalTypeError
		switch {
		case errors.As(err, &typ):
			return invalidRequest("field %q has the wrong type", typ.Field)
		case errors.As(err, &syntax), len(raw) == 0:
			return invalidRequest("the body is not valid JSON")
		}
		return invalidRequest("the body is not valid JSON: %v", err)
	}
	return nil
}
