package telemetry

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// State is what Postgres says, at scrape time, about work waiting and money held.
type State struct {
	// OutboxDepth is how many workflow starts wait in the outbox; OutboxOldest is the age of
	// the oldest (zero when empty). A depth that grows, or an age past a few sweep intervals,
	// means workflows are not being started.
	OutboxDepth  int
	OutboxOldest time.Duration
	// Holds is the money held for outbound operations in flight, per currency and environment.
	Holds []Hold
}

// Hold is the money held in one currency and environment: the wallets' pending amounts and
// the payouts in flight that hold them.
type Hold struct {
	Currency    string
	Environment string
	Count       int
	Amount      float64 // for a gauge only: money is never computed from it
}

// StateReader reads the State (the store implements it).
type StateReader interface {
	OperationalState(ctx context.Context) (State, error)
}

// stateCollector queries the State at each scrape, so the gauges are never stale and nothing
// runs between scrapes.
type stateCollector struct {
	reader  StateReader
	timeout time.Duration
	logger  *slog.Logger

	up, outboxDepth, outboxOldest, holds, held *prometheus.Desc
}

// NewStateCollector reports the outbox depth and the wallet holds read from r at each scrape,
// each query bounded by timeout. Register it on one process kind only (the worker), so that
// the same database is not reported by every API replica too.
func NewStateCollector(r StateReader, timeout time.Duration, logger *slog.Logger) prometheus.Collector {
	if logger == nil {
		logger = slog.Default()
	}
	return &stateCollector{
		reader: r, timeout: timeout, logger: logger,
		up: prometheus.NewDesc("sika_state_up", "1 when the last scrape could read the database state (outbox, holds), 0 otherwise.", nil, nil),
		outboxDepth: prometheus.NewDesc("sika_outbox_depth",
			"Workflow starts waiting in the outbox.", nil, nil),
		outboxOldest: prometheus.NewDesc("sika_outbox_oldest_seconds",
			"Age of the oldest workflow start waiting in the outbox (0 when empty).", nil, nil),
		holds: prometheus.NewDesc("sika_wallet_holds",
			"Outbound operations in flight holding wallet money, by currency and environment.", []string{"currency", "environment"}, nil),
		held: prometheus.NewDesc("sika_wallet_held_amount",
			"Money held in wallets for outbound operations in flight (the wallets' pending amounts), by currency and environment, in major units.",
			[]string{"currency", "environment"}, nil),
	}
}

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.up, c.outboxDepth, c.outboxOldest, c.holds, c.held} {
		ch <- d
	}
}

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	st, err := c.reader.OperationalState(ctx)
	if err != nil {
		c.logger.Warn("metrics: read database state", "err", err)
		ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, 0)
		return
	}
	ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, 1)
	ch <- prometheus.MustNewConstMetric(c.outboxDepth, prometheus.GaugeValue, float64(st.OutboxDepth))
	ch <- prometheus.MustNewConstMetric(c.outboxOldest, prometheus.GaugeValue, st.OutboxOldest.Seconds())
	for _, h := range st.Holds {
		ch <- prometheus.MustNewConstMetric(c.holds, prometheus.GaugeValue, float64(h.Count), h.Currency, h.Environment)
		ch <- prometheus.MustNewConstMetric(c.held, prometheus.GaugeValue, h.Amount, h.Currency, h.Environment)
	}
}
