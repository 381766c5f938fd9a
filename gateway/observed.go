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

func (o observed) Collect(ctx context.Context, req CollectRequest) (CollectResult, error) {
	ctx, done := o.call(ctx, OpCollect)
	res, err := o.g.Collect(ctx, req)
	done(err)
	return res, err
}

func (o observed) ConfirmOTP(ctx context.Context, reference, otp string) (OperationStatus, error) {
	ctx, done := o.call(ctx, OpConfirmOTP)
	st, err := o.g.ConfirmOTP(ctx, reference, otp)
	done(err)
	return st, err
}

func (o observed) CollectionStatus(ctx context.Context, reference string) (OperationStatus, error) {
	ctx, done := o.call(ctx, OpCollectionStatus)
	st, err := o.g.CollectionStatus(ctx, reference)
	done(err)
	return st, err
}

func (o observed) Disburse(ctx context.Context, req DisburseRequest) (OperationStatus, error) {
	ctx, done := o.call(ctx, OpDisburse)
	st, err := o.g.Disburse(ctx, req)
	done(err)
	return st, err
}

func (o observed) DisbursementStatus(ctx context.Context, reference string) (OperationStatus, error) {
	ctx, done := o.call(ctx, OpDisbursementStatus)
	st, err := o.g.DisbursementStatus(ctx, reference)
	done(err)
	return st, err
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
	ctx, done := o.call(ctx, OpCancelCollection)
	st, err := o.c.CancelCollection(ctx, reference)
	done(err)
	return st, err
}

// CancellerOf returns g's cancel when its operator can withdraw a collection (see Canceller).
func CancellerOf(g Gateway) (Canceller, bool) {
	c, ok := adapter(g).(Canceller)
	if !ok {
		return nil, false
	}
	if o, wrapped := g.(observed); wrapped {
		return observedCanceller{o, c}, true
	}
	return c, true
}
