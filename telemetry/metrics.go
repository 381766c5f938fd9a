// Package telemetry is what an operator watches the service by: the Prometheus metrics of its
// money outcomes, gateway calls and webhook deliveries (counted where each is decided), the
// Temporal SDK's own metrics, OpenTelemetry traces exported over OTLP when configured, and the
// slog handler that puts the trace id on every log line of a traced step.
//
// Metric names and labels are stable and bounded: labels take values from short closed lists
// (network and gateway codes, currencies, outcome words), never a merchant, a reference or a path.
package telemetry

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Domain metrics, package-level like Prometheus' own default collectors: the store, the
// activities and the API count into them wherever the outcome is decided, and each process
// registers them once on the registry its /metrics serves (Register).
var (
	// PaymentsAccepted counts transactions recorded PENDING (a new collection, payout,
	// settlement or transfer; an idempotent replay is not counted again).
	PaymentsAccepted = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "sika_payments_accepted_total",
		Help: "Transactions accepted (recorded PENDING), by type, network and environment.",
	}, []string{"type", "network", "environment"})

	// PaymentsCompleted counts transactions that ended, once each: the store's completion when
	// it moved the transaction, and a late success that reconciled a FAILED one.
	PaymentsCompleted = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "sika_payments_completed_total",
		Help: "Transactions that ended, by type, network, gateway, environment and status (succeeded, failed; a late success that reconciles a failed one is counted as succeeded too).",
	}, []string{"type", "network", "gateway", "environment", "status"})

	// GatewayCalls times every call to an operator, with how it ended (gateway.KindOf).
	GatewayCalls = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "sika_gateway_call_duration_seconds",
		Help:    "Calls to operator gateways, by gateway, operation and result (ok, declined, invalid, unavailable, auth, ambiguous).",
		Buckets: []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
	}, []string{"gateway", "operation", "result"})

	// WebhookDeliveries counts delivery tries by what came of them.
	WebhookDeliveries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "sika_webhook_deliveries_total",
		Help: "Webhook delivery tries, by outcome (delivered, failed, gone, skipped).",
	}, []string{"outcome"})

	// WebhookDeliveryLag is how long after its event a delivery reached the endpoint.
	WebhookDeliveryLag = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "sika_webhook_delivery_lag_seconds",
		Help:    "Time from an event's creation to its successful delivery to an endpoint.",
		Buckets: []float64{.05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 7200, 86400},
	})

	// IdempotencyConflicts counts requests refused because of their Idempotency-Key.
	IdempotencyConflicts = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "sika_idempotency_conflicts_total",
		Help: "Requests refused for their Idempotency-Key, by reason (reused: another body or route; in_use: the first request still runs).",
	}, []string{"reason"})
)

// Values of the bounded labels.
const (
	StatusSucceeded = "succeeded"
	StatusFailed    = "failed"

	DeliveryDelivered = "delivered"
	DeliveryFailed    = "failed"
	DeliveryGone      = "gone"
	DeliverySkipped   = "skipped"

	ConflictReused = "reused"
	ConflictInUse  = "in_use"
)

// domainCollectors are the metrics Register puts on a registry.
var domainCollectors = []prometheus.Collector{
	PaymentsAccepted, PaymentsCompleted, GatewayCalls, WebhookDeliveries, WebhookDeliveryLag, IdempotencyConflicts,
}

// Register puts the domain metrics, and the Go and process collectors, on reg. A process may
// register them on several registries (the tests run an API and a worker in one process).
func Register(reg prometheus.Registerer) error {
	for _, c := range append(domainCollectors, prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{})) {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}
