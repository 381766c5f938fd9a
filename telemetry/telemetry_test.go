package telemetry

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

func spanContext(t *testing.T) context.Context {
	t.Helper()
	tid, err := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	require.NoError(t, err)
	sid, err := trace.SpanIDFromHex("00f067aa0ba902b7")
	require.NoError(t, err)
	return trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid}))
}

func lines(t *testing.T, buf *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	dec := json.NewDecoder(buf)
	for {
		var m map[string]any
		if err := dec.Decode(&m); err == io.EOF {
			return out
		} else {
			require.NoError(t, err)
		}
		out = append(out, m)
	}
}

// TestLogHandlerPutsTheTraceOnEveryLine: a line logged with a traced context carries its
// trace_id and span_id once, also through WithTrace's logger; a line without a span has none.
func TestLogHandlerPutsTheTraceOnEveryLine(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(LogHandler(slog.NewJSONHandler(&buf, nil)))
	ctx := spanContext(t)
	logger.InfoContext(ctx, "traced", "k", "v")
	logger.Info("untraced")
	WithTrace(ctx, logger.With("request_id", "r1")).InfoContext(ctx, "bound")
	WithTrace(context.Background(), logger).Info("no span")
	got := lines(t, &buf)
	require.Len(t, got, 4)
	assert.Equal(t, "4bf92f3577b34da6a3ce929d0e0e4736", got[0][LogTraceID])
	assert.Equal(t, "00f067aa0ba902b7", got[0][LogSpanID])
	assert.NotContains(t, got[1], LogTraceID)
	assert.Equal(t, "4bf92f3577b34da6a3ce929d0e0e4736", got[2][LogTraceID])
	assert.NotContains(t, got[3], LogTraceID)
	// The JSON handler would write a repeated key twice: the bound logger writes it once.
	assert.Equal(t, 1, bytes.Count([]byte(mustJSON(t, got[2])), []byte(LogTraceID)))
}

func mustJSON(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// TestTracingIsOffWithoutAnEndpoint: no OTLP endpoint, no exporter; an unknown protocol is
// refused at start-up rather than silently dropping traces.
func TestTracingIsOffWithoutAnEndpoint(t *testing.T) {
	shutdown, err := SetupTracing(t.Context(), "sika-test", func(string) string { return "" })
	require.NoError(t, err)
	require.NoError(t, shutdown(t.Context()))
	_, span := Tracer().Start(t.Context(), "nothing")
	assert.False(t, span.IsRecording(), "without an exporter, spans are not recorded")
	span.End()

	env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}
	_, err = SetupTracing(t.Context(), "sika-test", func(k string) string { return env[k] })
	require.ErrorContains(t, err, "http/json")
}

// TestTracingExportsOverOTLPHTTP: with OTEL_EXPORTER_OTLP_ENDPOINT set, spans reach the
// collector at <endpoint>/v1/traces as OTLP protobuf when the provider flushes.
func TestTracingExportsOverOTLPHTTP(t *testing.T) {
	var mu sync.Mutex
	var paths []string
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		paths = append(paths, r.URL.Path+" "+r.Header.Get("Content-Type"))
		mu.Unlock()
		assert.NotEmpty(t, body)
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	}))
	defer collector.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	t.Cleanup(func() { otel.SetTracerProvider(noop.NewTracerProvider()) })
	shutdown, err := SetupTracing(t.Context(), "sika-test", os.Getenv)
	require.NoError(t, err)
	_, span := Tracer().Start(t.Context(), "exported")
	assert.True(t, span.IsRecording())
	span.End()
	require.NoError(t, shutdown(t.Context()))
	mu.Lock()
	defer mu.Unlock()
	assert.Contains(t, paths, "/v1/traces application/x-protobuf")
}
