// Package api is the HTTP layer of the service: the router, the middleware chain (request id,
// recovery, access log, authentication, tenancy, rate limit, scopes, idempotency), one file per
// resource, the envelope with the one error-to-HTTP mapping, pagination helpers and the
// embedded OpenAPI document.
package api

import (
	"cmp"
	"context"
	"crypto/sha256"
	"log/slog"
	"net/http"
	"net/netip"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/mux"
	"github.com/prometheus/client_golang/prometheus"
	"go.temporal.io/sdk/client"

	"github.com/sikahq/sika/api/ratelimit"
	"github.com/sikahq/sika/gateway"
	"github.com/sikahq/sika/payloadcodec"
	"github.com/sikahq/sika/store"
	"github.com/sikahq/sika/webhook"
)

// Config is what the HTTP layer needs to know; cmd/sika fills it from the environment.
type Config struct {
	// PublicURL is the scheme and host the service is reached at, without /api/v1
	// (absolute URLs in pagination links and hosted pages are built on it).
	PublicURL string
	// JWTSecret signs dashboard session tokens; it also keys cursor signatures.
	JWTSecret []byte
	// TokenTTL is the lifetime of a dashboard token (contract: 1 hour).
	TokenTTL time.Duration
	// RateLimitPerMinute is the default request rate per merchant account.
	RateLimitPerMinute int
	// PublicRateLimitPerMinute bounds unauthenticated calls (login, register) per client IP
	// (an IPv6 client by its /64).
	PublicRateLimitPerMinute int
	// CallbackRateLimitPerMinute bounds the callbacks of one gateway from one source address
	// (default 6000: an operator's callbacks come from a few addresses).
	CallbackRateLimitPerMinute int
	// StreamsPerMerchant and StreamsPerKey cap the live streams open at once over every replica
	// (defaults 10 and 3); StreamLifetime ends a stream, which the client resumes with
	// Last-Event-ID (default 30 min).
	StreamsPerMerchant int
	StreamsPerKey      int
	StreamLifetime     time.Duration
	// LoginPolicy is how failed logins slow an account down (store.DefaultLoginPolicy when zero).
	LoginPolicy store.LoginPolicy
	// LinkStartsPerClient and LinkStartsPerPhone bound the payments one client address and one
	// phone number may start on one payment link in LinkStartWindow (defaults 20, 5, 10 min).
	LinkStartsPerClient int
	LinkStartsPerPhone  int
	LinkStartWindow     time.Duration
	// Limiter counts requests; Redis-backed when shared by replicas, in-process otherwise.
	Limiter ratelimit.Limiter
	// Pacer spaces accepted collections evenly (PaymentAcceptPerSecond); in-process by default.
	Pacer ratelimit.Pacer
	// PaymentAcceptPerSecond caps how many collections the service accepts per second, over
	// every replica when the limiter is shared (0: no cap). Past it, softpay answers 503
	// service_unavailable with Retry-After before any work: a service that accepts more payments
	// than its workflows can finish only makes every payment slower.
	PaymentAcceptPerSecond int
	// IdempotencyTTL is how long an Idempotency-Key is kept (contract: 24 hours).
	IdempotencyTTL time.Duration
	// IdempotencyLease is how long an in-flight claim is protected before another request may
	// take it over (its process is presumed dead); default DefaultIdempotencyLease.
	IdempotencyLease time.Duration
	// TrustedProxies are the addresses whose X-Forwarded-For is believed.
	TrustedProxies []netip.Prefix
	// ReadinessChecks are run by /readyz (Postgres, Temporal).
	ReadinessChecks map[string]func(context.Context) error
	// Temporal starts workflows and talks to running ones (updates, signals).
	Temporal client.Client
	// Gateways reaches the operators (verify re-checks at the gateway; callbacks are parsed by
	// the gateway that sent them).
	Gateways *gateway.Router
	// PayloadKeys are the keys the Temporal clients encrypt payloads with (payloadcodec): the
	// support console serves the Temporal UI's codec server with them (nil: none).
	PayloadKeys *payloadcodec.Ring
	// TemporalUIURL and TemporalNamespace make links to workflows in the Temporal UI for support.
	TemporalUIURL     string
	TemporalNamespace string
	// WebhookGuard validates webhook endpoint URLs (no internal address unless allowed).
	WebhookGuard webhook.Guard
	// Logger receives access and error logs.
	Logger *slog.Logger
	// Registry is what /metrics serves: the HTTP and domain metrics are registered on it, and
	// the process may have put others there (its Temporal client's). A new one when nil.
	Registry *prometheus.Registry
	// Now is the clock (tests may replace it).
	Now func() time.Time
	// CheckoutMinExpiry lowers the 5-minute floor of a checkout session's expires_at (tests
	// only; zero keeps the contract's floor).
	CheckoutMinExpiry time.Duration
	// Availability says when a network is degraded or down (GET /networks/); the zero value
	// uses gateway.AvailabilityPolicy's defaults. AvailabilityTTL is how long a replica serves
	// one read of the gateways' recent answers (default 15 s).
	Availability    gateway.AvailabilityPolicy
	AvailabilityTTL time.Duration
	// Files keeps KYC uploads under content-addressed names (a filestore.Dir); uploads and
	// downloads answer 500 without it.
	Files FileStore
}

// Server serves the merchant API.
type Server struct {
	cfg       Config
	store     *store.Store
	router    *mux.Router
	metrics   *metrics
	registry  *prometheus.Registry
	cursorKey []byte
	// starts bounds the workflow starts made after the answer (startPaymentAsync).
	starts chan struct{}
	// requestLog records merchant requests for `sika logs tail` (nil without a store).
	requestLog *requestLog
	// fallbackLimiter counts the budgets in process while the shared limiter fails.
	fallbackLimiter ratelimit.Limiter
	// streamsDone ends the live streams (StopStreams).
	streamsDone chan struct{}
	// streams runs the replica's stream pollers.
	streams     *streamHub
	stopStreams sync.Once
	// availability caches the gateways' recent answers per environment (GET /networks/).
	availability availabilityCache
}

// DefaultIdempotencyLease outlasts the longest idempotent request (a confirm-otp waits at most
// 30 s for the gateway), so a live request is never taken over.
const DefaultIdempotencyLease = time.Minute

// maxConcurrentStarts bounds the workflow starts in flight from one API process.
const maxConcurrentStarts = 32

// NewServer builds the router with every route.
func NewServer(cfg Config, st *store.Store) *Server {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	// A zero value takes its default (cmp.Or: the first value that is not zero).
	cfg.TokenTTL = cmp.Or(cfg.TokenTTL, time.Hour)
	cfg.RateLimitPerMinute = cmp.Or(cfg.RateLimitPerMinute, 300)
	cfg.PublicRateLimitPerMinute = cmp.Or(cfg.PublicRateLimitPerMinute, 60)
	cfg.CallbackRateLimitPerMinute = cmp.Or(cfg.CallbackRateLimitPerMinute, 6000)
	cfg.StreamsPerMerchant = cmp.Or(cfg.StreamsPerMerchant, DefaultStreamsPerMerchant)
	cfg.StreamsPerKey = cmp.Or(cfg.StreamsPerKey, DefaultStreamsPerKey)
	cfg.StreamLifetime = cmp.Or(cfg.StreamLifetime, DefaultStreamLifetime)
	cfg.LoginPolicy = cmp.Or(cfg.LoginPolicy, store.DefaultLoginPolicy)
	cfg.LinkStartsPerClient = cmp.Or(cfg.LinkStartsPerClient, 20)
	cfg.LinkStartsPerPhone = cmp.Or(cfg.LinkStartsPerPhone, 5)
	cfg.LinkStartWindow = cmp.Or(cfg.LinkStartWindow, 10*time.Minute)
	if cfg.Pacer == nil {
		cfg.Pacer = ratelimit.NewMemoryPacer(nil)
	}
	if cfg.Limiter == nil {
		cfg.Limiter = ratelimit.NewMemory(nil)
	}
	cfg.IdempotencyTTL = cmp.Or(cfg.IdempotencyTTL, 24*time.Hour)
	cfg.AvailabilityTTL = cmp.Or(cfg.AvailabilityTTL, defaultAvailabilityTTL)
	cfg.IdempotencyLease = cmp.Or(cfg.IdempotencyLease, DefaultIdempotencyLease)
	cfg.PublicURL = strings.TrimRight(cfg.PublicURL, "/")
	key := sha256.Sum256(append([]byte("sika cursor key\x00"), cfg.JWTSecret...))
	if cfg.Registry == nil {
		cfg.Registry = prometheus.NewRegistry()
	}
	s := &Server{cfg: cfg, store: st, registry: cfg.Registry, cursorKey: key[:], starts: make(chan struct{}, maxConcurrentStarts),
		fallbackLimiter: ratelimit.NewMemory(nil)}
	s.metrics = newMetrics(s.registry)
	s.streamsDone = make(chan struct{})
	s.streams = newStreamHub(st, s.streamsDone, cfg.Logger)
	if st != nil {
		s.requestLog = newRequestLog(st, s.registry, cfg.Logger)
	}
	s.router = s.routes()
	return s
}

// ServeHTTP serves a request. Paths under /api/v1 are served with or without their trailing
// slash (no redirect: a 301 turns a POST into a GET in many clients); a file name such as
// openapi.json keeps its form.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, basePath) && !strings.HasSuffix(r.URL.Path, "/") &&
		!strings.Contains(path.Base(r.URL.Path), ".") {
		r.URL.Path += "/"
		r.URL.RawPath = ""
	}
	s.router.ServeHTTP(w, r)
}

// basePath is the version segment every merchant route lives under.
const basePath = "/api/v1"

// StopStreams ends the live event and request-log streams (their clients reconnect, to another
// replica, with Last-Event-ID). Register it with http.Server.RegisterOnShutdown: a stream
// never ends by itself, so a graceful shutdown would otherwise wait for it.
func (s *Server) StopStreams() { s.stopStreams.Do(func() { close(s.streamsDone) }) }

// Close ends the streams and writes the request log's queued records; call it once the HTTP
// server has shut down.
func (s *Server) Close() {
	s.StopStreams()
	if s.requestLog != nil {
		s.requestLog.close()
	}
}
