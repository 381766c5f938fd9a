package api

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/internal/metricstest"
	"github.com/sikahq/sika/telemetry"
)

// TestMetricsFollowASandboxPayment: a real softpay through the sandbox moves the counters where
// the outcomes are decided, read from the API's own /metrics: accepted once, succeeded once at
// its gateway, the gateway's collect call timed, the route counted by its template.
// CELTIIS_BJ is a network no other test of this package pays on, so the deltas are exact.
func TestMetricsFollowASandboxPayment(t *testing.T) {
	ps := payments(t)
	acct := ps.newAccount(t, true)
	before := metricstest.Scrape(t, ps.url+"/metrics")
	body := benin("97000123")
	body["network"] = "CELTIIS_BJ"
	p := ps.pay(t, acct, body)
	d := ps.final(t, acct, p.ID, 15*time.Second)
	require.Equal(t, sika.StatusSuccess, d.Status)
	require.NotEmpty(t, d.Attempts)
	gw := d.Attempts[len(d.Attempts)-1].Gateway
	after := metricstest.Scrape(t, ps.url+"/metrics")

	delta := func(name string, labels ...string) float64 {
		return after.Sum(name, labels...) - before.Sum(name, labels...)
	}
	assert.Equal(t, 1.0, delta("sika_payments_accepted_total", "type", "PAIEMENT", "network", "CELTIIS_BJ", "environment", "TEST"))
	assert.Equal(t, 1.0, delta("sika_payments_completed_total", "type", "PAIEMENT", "network", "CELTIIS_BJ", "gateway", gw,
		"environment", "TEST", "status", "succeeded"))
	assert.Zero(t, delta("sika_payments_completed_total", "network", "CELTIIS_BJ", "status", "failed"))
	assert.GreaterOrEqual(t, delta("sika_gateway_call_duration_seconds_count", "gateway", gw, "operation", "collect", "result", "ok"), 1.0)
	assert.Greater(t, delta("sika_gateway_call_duration_seconds_sum", "gateway", gw, "operation", "collect"), 0.0)
	assert.Equal(t, 1.0, delta("sika_http_requests_total", "route", "/api/v1/payments/softpay/", "method", "POST", "status", "201"))
	// Routes are templates: a transaction's id never becomes a label.
	for _, smp := range after["sika_http_requests_total"] {
		assert.NotContains(t, smp.Labels["route"], p.ID.String())
	}
}

// TestMetricsCountAnIdempotencyConflict: a key reused with another body is refused and counted.
func TestMetricsCountAnIdempotencyConflict(t *testing.T) {
	ps := payments(t)
	acct := ps.newAccount(t, true)
	before := metricstest.Scrape(t, ps.url+"/metrics")
	key := uuid.NewString()
	first := ps.softpay(t, acct, benin("97000123"), "Idempotency-Key", key)
	require.Equal(t, http.StatusCreated, first.Status, "%s", first.Body)
	other := benin("97000123")
	other["amount"] = "2000"
	second := ps.softpay(t, acct, other, "Idempotency-Key", key)
	require.Equal(t, http.StatusConflict, second.Status, "%s", second.Body)
	require.Equal(t, string(sika.CodeIdempotencyKeyReused), second.code())
	after := metricstest.Scrape(t, ps.url+"/metrics")
	assert.Equal(t, 1.0, after.Sum("sika_idempotency_conflicts_total", "reason", "reused")-before.Sum("sika_idempotency_conflicts_total", "reason", "reused"))
}

// TestMetricsCountAWebhookDelivery: a payment's events reach a registered endpoint; the
// deliveries and their lag from the event are counted.
func TestMetricsCountAWebhookDelivery(t *testing.T) {
	ps := payments(t)
	acct := ps.newAccount(t, true)
	rc := newReceiver(t, 0)
	ps.register(t, acct, rc, nil)
	before := metricstest.Scrape(t, ps.url+"/metrics")
	p := ps.pay(t, acct, benin("97000123"))
	ps.final(t, acct, p.ID, 15*time.Second)
	require.Eventually(t, func() bool { return rc.deliveredCount() >= 2 }, settle, 50*time.Millisecond,
		"transaction.pending and transaction.succeeded delivered")
	after := metricstest.Scrape(t, ps.url+"/metrics")
	assert.GreaterOrEqual(t, after.Sum("sika_webhook_deliveries_total", "outcome", "delivered")-before.Sum("sika_webhook_deliveries_total", "outcome", "delivered"), 2.0)
	assert.GreaterOrEqual(t, after.Sum("sika_webhook_delivery_lag_seconds_count")-before.Sum("sika_webhook_delivery_lag_seconds_count"), 2.0)
}

var (
	spansOnce sync.Once
	spans     *tracetest.SpanRecorder
)

// recordSpans installs, once for the package, a tracer provider that keeps every span in
// memory, as an exporter would receive them.
func recordSpans() *tracetest.SpanRecorder {
	spansOnce.Do(func() {
		spans = tracetest.NewSpanRecorder()
		otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans)))
		otel.SetTextMapPropagator(propagation.TraceContext{})
	})
	return spans
}

// TestOneTraceFromRequestToGatewayCall: the softpay request's span, the payment workflow's run,
// its StartCollection activity and the sandbox collect call it makes share one trace id; the
// caller's traceparent is continued.
func TestOneTraceFromRequestToGatewayCall(t *testing.T) {
	rec := recordSpans()
	ps := payments(t)
	acct := ps.newAccount(t, true)
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	requestID := "trace-" + uuid.NewString()
	r := ps.softpay(t, acct, benin("97000123"), "X-Request-Id", requestID,
		"Traceparent", "00-"+traceID+"-00f067aa0ba902b7-01")
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	var p payResponse
	r.data(t, &p)
	ps.final(t, acct, p.ID, 15*time.Second)

	var names []string
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		names = names[:0]
		for _, s := range rec.Ended() {
			if s.SpanContext().TraceID().String() == traceID {
				names = append(names, s.Name())
			}
		}
		assert.Contains(c, names, "POST /api/v1/payments/softpay/")
		assert.Contains(c, names, "RunWorkflow:Payment")
		assert.Contains(c, names, "RunActivity:StartCollection")
		assert.Contains(c, names, "gateway.collect")
	}, settle, 50*time.Millisecond)
	// The gateway call is a child of the activity that made it.
	byID := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range rec.Ended() {
		byID[s.SpanContext().SpanID().String()] = s
	}
	for _, s := range rec.Ended() {
		if s.SpanContext().TraceID().String() == traceID && s.Name() == "gateway.collect" {
			parent, ok := byID[s.Parent().SpanID().String()]
			require.True(t, ok, "the parent of gateway.collect was recorded")
			assert.Equal(t, "RunActivity:StartCollection", parent.Name())
		}
	}
}

// BenchmarkRequestTracing is the cost tracing adds to one request through the middleware chain
// (GET /healthz, in process: no network, no database, so that only the instrumentation differs):
// off is the service's default (no exporter); on exports every span, batched, over OTLP/HTTP to
// an in-process collector that discards them, as OTEL_EXPORTER_OTLP_ENDPOINT does.
//
//	./bin/sika stack -- go test ./api -run '^$' -bench BenchmarkRequestTracing -benchmem
func BenchmarkRequestTracing(b *testing.B) {
	srv := NewServer(Config{JWTSecret: []byte("test secret of at least thirty-two bytes"), Logger: testLogger()}, testStore)
	request := func(b *testing.B) {
		for b.Loop() {
			rec := httptest.NewRecorder()
			srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
			if rec.Code != http.StatusOK {
				b.Fatalf("healthz answered %d", rec.Code)
			}
		}
	}
	b.Run("off", request)
	b.Run("on", func(b *testing.B) {
		collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/x-protobuf")
		}))
		defer collector.Close()
		env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": collector.URL}
		b.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
		shutdown, err := telemetry.SetupTracing(b.Context(), "sika-bench", func(k string) string { return env[k] })
		require.NoError(b, err)
		defer func() {
			require.NoError(b, shutdown(context.Background()))
			otel.SetTracerProvider(noop.NewTracerProvider())
		}()
		request(b)
	})
}
