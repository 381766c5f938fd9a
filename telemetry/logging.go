package telemetry

import (
	"context"
	"log/slog"

	"go.opentelemetry.io/otel/trace"
)

// Log attribute keys of the trace, the same on every log line (the API's, the worker's, the
// workflows' and the activities').
const (
	LogTraceID = "trace_id"
	LogSpanID  = "span_id"
)

// LogHandler puts trace_id and span_id on every record logged with a context that holds a
// span (logger.InfoContext(ctx, …)), so that the lines of one request, its workflow and its
// gateway calls are found by one trace id. A logger that already carries them (WithTrace, the
// Temporal loggers) is left as it is. With tracing off, ids still come from a caller's
// traceparent when it sent one; otherwise nothing is added.
func LogHandler(h slog.Handler) slog.Handler { return traceHandler{Handler: h} }

type traceHandler struct {
	slog.Handler
	bound bool // the logger's own attributes hold the trace id
}

func (h traceHandler) Handle(ctx context.Context, r slog.Record) error {
	if sc := trace.SpanContextFromContext(ctx); !h.bound && sc.IsValid() {
		r = r.Clone()
		r.AddAttrs(slog.String(LogTraceID, sc.TraceID().String()), slog.String(LogSpanID, sc.SpanID().String()))
	}
	return h.Handler.Handle(ctx, r)
}

func (h traceHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	bound := h.bound
	for _, a := range attrs {
		bound = bound || a.Key == LogTraceID
	}
	return traceHandler{Handler: h.Handler.WithAttrs(attrs), bound: bound}
}

func (h traceHandler) WithGroup(name string) slog.Handler {
	return traceHandler{Handler: h.Handler.WithGroup(name), bound: h.bound}
}

// WithTrace is logger with the trace_id and span_id of ctx's span, for a logger that lives as
// long as the span (a request's): its lines carry them whether or not they pass the context.
func WithTrace(ctx context.Context, logger *slog.Logger) *slog.Logger {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return logger
	}
	return logger.With(LogTraceID, sc.TraceID().String(), LogSpanID, sc.SpanID().String())
}
