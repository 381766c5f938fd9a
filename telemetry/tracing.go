package telemetry

import (
	"context"
	"fmt"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	temporalotel "go.temporal.io/sdk/contrib/opentelemetry"
	"go.temporal.io/sdk/interceptor"
	tlog "go.temporal.io/sdk/log"
)

// instrumentation names the tracer of Sika's own spans (HTTP requests, gateway calls, webhook
// deliveries); Temporal's interceptor names its own.
const instrumentation = "github.com/sikahq/sika"

// Tracer is the tracer of Sika's own spans. It goes through the global provider, so that it is
// a no-op until SetupTracing installs an exporting one (or a test installs a recorder).
func Tracer() trace.Tracer { return otel.Tracer(instrumentation) }

// SetupTracing installs the process's tracer provider from the standard OpenTelemetry
// environment: with OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) set,
// spans are batched to that OTLP collector, over HTTP unless OTEL_EXPORTER_OTLP_PROTOCOL (or
// its _TRACES_ form) is grpc, sampled by OTEL_TRACES_SAMPLER (default: every trace, or as the
// caller's traceparent says); the exporter reads its other OTEL_EXPORTER_OTLP_* settings
// (headers, timeout, certificates) itself. Without an endpoint nothing is exported and spans
// cost next to nothing (the global no-op provider stays). service names the process when
// OTEL_SERVICE_NAME does not. The W3C trace context is propagated either way. The returned
// function flushes and stops the exporter.
func SetupTracing(ctx context.Context, service string, getenv func(string) string) (shutdown func(context.Context) error, err error) {
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	if getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "" {
		return func(context.Context) error { return nil }, nil
	}
	protocol := getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if protocol == "" {
		protocol = getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	var exp sdktrace.SpanExporter
	switch protocol {
	case "", "http/protobuf":
		exp, err = otlptracehttp.New(ctx)
	case "grpc":
		exp, err = otlptracegrpc.New(ctx)
	default:
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL=%q: only grpc and http/protobuf are supported", protocol)
	}
	if err != nil {
		return nil, fmt.Errorf("otlp trace exporter: %w", err)
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(attribute.String("service.name", serviceName(service, getenv))))
	if err != nil {
		return nil, fmt.Errorf("trace resource: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	otel.SetTracerProvider(tp)
	return tp.Shutdown, nil
}

func serviceName(service string, getenv func(string) string) string {
	if v := strings.TrimSpace(getenv("OTEL_SERVICE_NAME")); v != "" {
		return v
	}
	return service
}

// TemporalTracing is the Temporal client interceptor that carries the trace through workflow
// starts, updates and signals, workflow runs and activities (OpenTelemetry spans in Temporal's
// headers). Set on the client, it also applies to the workers built from it. Workflow and
// activity loggers get the trace_id and span_id of their span, named as on every other log line.
func TemporalTracing() (interceptor.Interceptor, error) {
	t, err := temporalotel.NewTracer(temporalotel.TracerOptions{
		// The SDK's default tracer would bind the provider at construction; this one follows
		// the global provider, so that SetupTracing (or a test's recorder) may come later.
		Tracer: otel.Tracer("temporal-sdk-go"),
	})
	if err != nil {
		return nil, fmt.Errorf("temporal tracing: %w", err)
	}
	return interceptor.NewTracingInterceptor(logFieldsTracer{t}), nil
}

// logFieldsTracer is Temporal's OpenTelemetry tracer with the log fields of this service.
type logFieldsTracer struct{ interceptor.Tracer }

// GetLogger adds trace_id and span_id (the SDK's own tracer names them TraceID and SpanID).
func (t logFieldsTracer) GetLogger(logger tlog.Logger, ref interceptor.TracerSpanRef) tlog.Logger {
	s, ok := ref.(interface{ SpanContext() trace.SpanContext })
	if !ok || !s.SpanContext().IsValid() {
		return logger
	}
	sc := s.SpanContext()
	return tlog.With(logger, LogTraceID, sc.TraceID().String(), LogSpanID, sc.SpanID().String())
}

// RecordError marks span failed with err (a no-op on a nil error).
func RecordError(span trace.Span, err error) {
	if err == nil {
		return
	}
	span.RecordError(err)
	span.SetStatus(codes.Error, err.Error())
}
