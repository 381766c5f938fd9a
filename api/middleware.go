package api

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/mux"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/telemetry"
)

// statusRecorder remembers what a handler wrote, for logs, metrics and the idempotency store
// (captureWriter).
type statusRecorder struct {
	http.ResponseWriter
	status int
	bytes  int
}

func (w *statusRecorder) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusRecorder) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += n
	return n, err
}

// Flush lets streaming responses (CSV export) reach the client as they are written.
func (w *statusRecorder) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *statusRecorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

var requestIDPattern = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)

// observe is the outermost middleware: request id (echoing a sane caller's X-Request-Id),
// panic recovery, structured access log and metrics. It logs the path without its query string
// and never a header, so keys, tokens and passwords never reach the logs.
func (s *Server) observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := s.cfg.Now()
		id := r.Header.Get("X-Request-Id")
		if !requestIDPattern.MatchString(id) {
			id = uuid.NewString()
		}
		w.Header().Set("X-Request-Id", id)
		info := &requestInfo{}
		// The request's span continues the caller's trace (traceparent) and is the parent of
		// the workflow's and, through it, of every gateway call the request leads to.
		ctx := otel.GetTextMapPropagator().Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		ctx, span := telemetry.Tracer().Start(ctx, r.Method, trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(attribute.String("http.request.method", r.Method), attribute.String("url.path", r.URL.Path),
				attribute.String("sika.request_id", id)))
		defer span.End()
		logger := telemetry.WithTrace(ctx, s.cfg.Logger.With("request_id", id))
		ctx = context.WithValue(ctx, ctxLogger, logger)
		ctx = context.WithValue(ctx, ctxRequestInfo, info)
		r = r.WithContext(ctx)
		rec := &statusRecorder{ResponseWriter: w}
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				logger.Error("panic", "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
				if rec.status == 0 {
					writeError(rec, r, fmt.Errorf("panic: %v", v))
				}
			}
			elapsed := s.cfg.Now().Sub(start)
			s.recordRequest(r, info, rec.status, start, elapsed, id)
			route := info.route
			if route == "" {
				route = "unmatched"
			}
			s.metrics.requests.With(prometheus.Labels{"route": route, "method": r.Method, "status": strconv.Itoa(rec.status)}).Inc()
			s.metrics.duration.With(prometheus.Labels{"route": route, "method": r.Method}).Observe(elapsed.Seconds())
			span.SetName(r.Method + " " + route)
			span.SetAttributes(attribute.String("http.route", route), attribute.Int("http.response.status_code", rec.status))
			if rec.status >= 500 {
				span.SetStatus(codes.Error, http.StatusText(rec.status))
			}
			attrs := []any{"method", r.Method, "path", r.URL.Path, "route", route, "status", rec.status,
				"bytes", rec.bytes, "duration_ms", float64(elapsed.Microseconds()) / 1000, "remote_ip", s.clientIP(r).String()}
			if info.merchant != uuid.Nil {
				attrs = append(attrs, "merchant", info.merchant.String())
			}
			level := slog.LevelInfo
			if rec.status >= 500 {
				level = slog.LevelError
			}
			logger.Log(r.Context(), level, "request", attrs...)
		}()
		next.ServeHTTP(rec, r)
	})
}

// routeName records the matched route template for logs and metrics.
func routeName(r *http.Request) {
	info, ok := r.Context().Value(ctxRequestInfo).(*requestInfo)
	if !ok {
		return
	}
	if cur := mux.CurrentRoute(r); cur != nil {
		if tpl, err := cur.GetPathTemplate(); err == nil {
			info.route = tpl
		}
	}
}

// clientIP is the caller's address: the peer address, or the last address in
// X-Forwarded-For that is not a trusted proxy when the peer is one.
func (s *Server) clientIP(r *http.Request) netip.Addr {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	peer, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}
	}
	peer = peer.Unmap()
	if !s.trusted(peer) {
		return peer
	}
	hops := strings.Split(r.Header.Get("X-Forwarded-For"), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			break
		}
		if a = a.Unmap(); !s.trusted(a) {
			return a
		}
	}
	return peer
}

func (s *Server) trusted(a netip.Addr) bool {
	for _, p := range s.cfg.TrustedProxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// notFound and methodNotAllowed answer unknown routes in the envelope.
func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	writeError(w, r, sika.Errorf(sika.CodeNotFound, "No route matches %s %s.", r.Method, r.URL.Path))
}

// methodNotAllowed names the methods the path takes in Allow (RFC 9110 §15.5.6).
func (s *Server) methodNotAllowed(w http.ResponseWriter, r *http.Request) {
	var allow []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		probe := r.Clone(r.Context())
		probe.Method = m
		var match mux.RouteMatch
		if s.router.Match(probe, &match) && match.MatchErr == nil {
			allow = append(allow, m)
		}
	}
	if len(allow) > 0 {
		w.Header().Set("Allow", strings.Join(allow, ", "))
	}
	writeError(w, r, sika.Errorf(sika.CodeMethodNotAllowed, "Method %s is not allowed on %s.", r.Method, r.URL.Path))
}

type metrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

// newMetrics registers the HTTP metrics and the service's own (telemetry.Register) on reg.
func newMetrics(reg *prometheus.Registry) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sika_http_requests_total", Help: "HTTP requests served, by route template, method and status.",
		}, []string{"route", "method", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "sika_http_request_duration_seconds", Help: "HTTP request latency, by route template and method.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}, []string{"route", "method"}),
	}
	reg.MustRegister(m.requests, m.duration)
	if err := telemetry.Register(reg); err != nil {
		panic(fmt.Sprintf("register metrics: %v", err))
	}
	return m
}

// sinceSeconds rounds a duration up to whole seconds, at least 1.
func sinceSeconds(d time.Duration) int {
	secs := int((d + time.Second - 1) / time.Second)
	return max(secs, 1)
}
