package telemetry

import (
	"fmt"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.temporal.io/sdk/client"
	temporalotel "go.temporal.io/sdk/contrib/opentelemetry"
)

// temporalBuckets are the bounds of the SDK's latency histograms, in seconds: the SDK times
// everything from a poll's round trip to a workflow's end-to-end run.
var temporalBuckets = []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300}

// TemporalMetrics is the Temporal SDK's metrics handler (set on client.Options), writing into
// reg: the SDK's contrib/opentelemetry handler on an OpenTelemetry meter that the OpenTelemetry
// Prometheus exporter reads at each scrape. Names are the SDK's with Prometheus suffixes
// (temporal_request_total, temporal_workflow_task_execution_latency_seconds, …).
func TemporalMetrics(reg prometheus.Registerer, logger *slog.Logger) (client.MetricsHandler, error) {
	exp, err := otelprom.New(otelprom.WithRegisterer(reg), otelprom.WithoutScopeInfo(), otelprom.WithoutTargetInfo())
	if err != nil {
		return nil, fmt.Errorf("temporal metrics exporter: %w", err)
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp), sdkmetric.WithView(sdkmetric.NewView(
		sdkmetric.Instrument{Kind: sdkmetric.InstrumentKindHistogram},
		sdkmetric.Stream{Aggregation: sdkmetric.AggregationExplicitBucketHistogram{Boundaries: temporalBuckets}},
	)))
	if logger == nil {
		logger = slog.Default()
	}
	return temporalotel.NewMetricsHandler(temporalotel.MetricsHandlerOptions{
		Meter:                mp.Meter("temporal-sdk-go"),
		UseMonotonicCounters: true,
		// The SDK's default panics; a metric that cannot be made is not worth a worker.
		OnError: func(err error) { logger.Warn("temporal metric", "err", err) },
	}), nil
}
