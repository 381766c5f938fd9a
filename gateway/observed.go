package gateway

import (
	"context"
	"net/http"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/sikahq/sika/telemetry"
)

// Operation names of gateway calls, as the operation label of sika_gateway_call_duration_seconds
// and the names of their spans (gateway.<operation>).
const (
	OpCollect            = "collect"
	OpConfirmOTP         = "confirm_otp"
	OpCollectionStatus   = "collection_status"
	OpCancelCollection   = "cancel_collection"
	OpDisburse           = "disburse"
	OpDisbursementStatus = "disbursement_status"
)

// observed is a configured gateway as the Router hands it out: every call to the operator is
// timed into sika_gateway_call_duration_seconds with how it ended, and traced as a child span of
// the caller's (the activity's, or the API request's for a verify). Callbacks are parsed as
// they are: they are the operator calling us.
type observed struct{ g Gateway }

// observe wraps g; the capability helpers (WindowsOf, SupportsPayouts, ConfirmsOnOwnPage,
// CancellerOf) look through the wrapper to the adapter.
func observe(g Gateway) Gateway { return observed{g} }

// adapter is the operator adapter under the Router's wrapper.
func adapter(g Gateway) Gateway {
	if o, ok := g.(observed); ok {
		return o.g
	}
	return g
}

// call starts the span of one operation; done ends it and counts the call.
func (o observed) call(ctx context.Context, op string) (context.Context, func(error)) {
	start := time.Now()
	ctx, span := telemetry.Tracer().Start(ctx, "gateway."+op, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("sika.gateway", o.g.Name()), attribute.String("sika.gateway.operation", op)))
	return ctx, func(err error) {
		result := "ok"
		if err != nil {
			result = KindOf(err).String()
			span.SetAttributes(attribute.String("sika.gateway.result", result))
			telemetry.RecordError(span, err)
		}
		span.End()
		telemetry.GatewayCalls.WithLabelValues(o.g.Name(), op, result).Observe(time.Since(start).Seconds())
	}
}

func (o observed) Name() string { return o.g.Name() }

// observeCall makes the call of op to the operator, timed and traced.
func observeCall[A, R any](ctx context.Context, o observed, op string, call func(context.Context, A) (R, error), arg A) (R, error) {
	ctx, done := o.call(ctx, op)
	res, err := call(ctx, arg)
	done(err)
	return res, err
}

func (o observed) Collect(ctx context.Context, req CollectRequest) (CollectResult, error) {
	return observeCall(ctx, o, OpCollect, o.g.Collect, req)
}

func (o observed) ConfirmOTP(ctx context.Context, reference, otp string) (OperationStatus, error) {
	return observeCall(ctx, o, OpConfirmOTP, func(ctx context.Context, otp string) (OperationStatus, error) {
		return o.g.ConfirmOTP(ctx, reference, otp)
	}, otp)
}

func (o observed) CollectionStatus(ctx context.Context, reference string) (OperationStatus, error) {
	return observeCall(ctx, o, OpCollectionStatus, o.g.CollectionStatus, reference)
}

func (o observed) Disburse(ctx context.Context, req DisburseRequest) (OperationStatus, error) {
	return observeCall(ctx, o, OpDisburse, o.g.Disburse, req)
}

func (o observed) DisbursementStatus(ctx context.Context, reference string) (OperationStatus, error) {
	return observeCall(ctx, o, OpDisbursementStatus, o.g.DisbursementStatus, reference)
}

func (o observed) ParseCallback(ctx context.Context, header http.Header, body []byte) (Callback, error) {
	return o.g.ParseCallback(ctx, header, body)
}

// observedCanceller is the cancel of an observed gateway whose adapter can cancel.
type observedCanceller struct {
	observed
	c Canceller
}

func (o observedCanceller) CancelCollection(ctx context.Context, reference string) (OperationStatus, error) {
	return observeCall(ctx, o.observed, OpCancelCollection, o.c.CancelCollection, reference)
}

// CancellerOf returns g's cancel when its operator can withdraw a collection (see Canceller).
func CancellerOf(g Gateway) (Canceller, bool) {
	return optional(g, func(o observed, c Canceller) Canceller { return observedCanceller{o, c} })
}

// optional returns g's adapter as the optional capability T (a Canceller, a Refunder) when it
// has it, observed as g is (wrap makes the observed T).
func optional[T any](g Gateway, wrap func(observed, T) T) (T, bool) {
	t, ok := adapter(g).(T)
	if !ok {
		var zero T
		return zero, false
	}
	if o, wrapped := g.(observed); wrapped {
		return wrap(o, t), true
	}
	return t, true
}

// says answers ask of g's adapter when it implements T, otherwise when it does not (the
// capability helpers: SupportsPayouts, ConfirmsOnOwnPage, ...).
func says[T any](g Gateway, ask func(T) bool, otherwise bool) bool {
	if t, ok := adapter(g).(T); ok {
		return ask(t)
	}
	return otherwise
}
