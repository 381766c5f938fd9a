package main

import (
	"fmt"
	"io"
	"runtime"
	"strings"
	"time"

	"github.com/sikahq/sika/cmd/sikabench-history/historybench"
)

// combined is the report of one run: every part that ran, in the order they ran.
type combined struct {
	o                  options
	t                  *target
	parts              []string
	loadStart, loadEnd string // /proc/loadavg
	elapsed            time.Duration

	pg       *pgbenchResult
	coll     *report
	payouts  *partLoad
	batches  *batchFigures
	webhooks *webhookFigures
	exports  []historybench.ExportResult
	scaling  *scalingFigures
	failed   string             // the part that failed, if one did
	settled  map[string]settled // how the parts after the first load began
}

// printSettled prints how a part began, when it waited for the ones before.
func (c *combined) printSettled(w io.Writer, part string) {
	if s, ok := c.settled[part]; ok {
		fmt.Fprintf(w, "  start:  %s\n", s)
	}
}

func (c *combined) print(w io.Writer) {
	fmt.Fprintf(w, "\nsikabench — Sika under load: %s\n", strings.Join(c.parts, ", "))
	fmt.Fprintf(w, "  target:  %s\n", c.t.describe)
	fmt.Fprintf(w, "  machine: %d cores; load average (1, 5, 15 min) %s at the start, %s at the end; the machine is shared\n",
		runtime.NumCPU(), c.loadStart, c.loadEnd)
	fmt.Fprintf(w, "  run:     %s in all\n", c.elapsed.Round(time.Second))
	if c.pg != nil {
		c.printPgbench(w)
	}
	if c.coll != nil {
		c.coll.print(w)
	}
	if c.payouts != nil {
		c.printPayouts(w)
	}
	if c.batches != nil {
		c.printBatches(w)
	}
	if c.webhooks != nil {
		c.printWebhooks(w)
	}
	if len(c.exports) > 0 {
		c.printExports(w)
	}
	if c.scaling != nil {
		c.printScaling(w)
	}
	c.printSummary(w)
}

func (c *combined) printPgbench(w io.Writer) {
	p := c.pg
	fmt.Fprintf(w, "\n== POSTGRES CEILING: pgbench, one softpay insert transaction per pgbench transaction\n")
	line(w, "pgbench", "%s; %d clients, %d threads, %s, prepared statements, database %s on the same server",
		p.version, p.clients, p.threads, p.duration, pgbenchDatabase)
	line(w, "script (pgbench_softpay.sql)", "%s", wrap("claim the Idempotency-Key, BEGIN, INSERT the transaction (RETURNING the record), "+
		"its status log, the transaction.pending event, match the webhook endpoints, INSERT the outbox row, COMMIT, "+
		"store the response on the key; no reads of the request (key, catalogue, pricing)", 80, 39))
	line(w, "ceiling", "%s transactions/s   (%d processed, %d failed, %d payments written; latency avg %.1f ms)",
		thousands(p.tps), p.processed, p.failed, p.inserted, p.latencyAvg)
}

func (c *combined) printPayouts(w io.Writer) {
	p := c.payouts
	fmt.Fprintf(w, "\n== PAYOUTS: POST /payouts/initialize/ (XOF 1000 on MTN_BJ to a number ending in 123: paid after one tick)\n")
	fmt.Fprintf(w, "  load:   %d clients, closed loop, warm-up %s, window %.1f s; the wallet is held at accept, settled at the end\n",
		p.plan.clients, p.plan.warmup, p.load.window().Seconds())
	c.printSettled(w, "payouts")
	a := p.load.acceptStats()
	fmt.Fprintf(w, "\nREQUESTS (sent in the window)\n")
	printRequests(w, p.load, a)
	fmt.Fprintf(w, "\nACCEPT (client side: request sent → 201 read)\n")
	printAccept(w, p.load, a)
	fmt.Fprintf(w, "\nCOMPLETION (Postgres: completed_at − created_at; accept→final)\n")
	printCompletion(w, p.comp, p.load.window())
}

func (c *combined) printWebhooks(w io.Writer) {
	f := c.webhooks
	win := f.load.window()
	fmt.Fprintf(w, "\n== WEBHOOKS: event written in its transaction → first arrival at a loopback receiver\n")
	fmt.Fprintf(w, "  load:   softpay paced at %.0f payments/s, %d clients, warm-up %s, window %.1f s; one endpoint, which verifies\n"+
		"          signatures and answers 200; two events per payment (transaction.pending, then .succeeded)\n",
		f.plan.rate, f.plan.clients, f.plan.warmup, win.Seconds())
	c.printSettled(w, "webhooks")
	fmt.Fprintf(w, "\nDELIVERY\n")
	line(w, "events created in the window", "%d   (%.1f/s)", f.windowEvents, float64(f.windowEvents)/win.Seconds())
	line(w, "latency p50 / p95 / p99 / max", "%s / %s / %s / %s   (%d never arrived, counted as slowest)",
		rankPercentile(f.latency, f.undelivered, 50, f.waited, msUnit), rankPercentile(f.latency, f.undelivered, 95, f.waited, msUnit),
		rankPercentile(f.latency, f.undelivered, 99, f.waited, msUnit), rankPercentile(f.latency, f.undelivered, 100, f.waited, msUnit), f.undelivered)
	line(w, "deliveries/s", "%.1f /s   (events first arriving inside the window)", float64(f.windowArrivals)/win.Seconds())
	line(w, "deliveries queued at the end", "%d   (outbox rows not yet sent or handed to a workflow)", f.queuedAtEnd)
	line(w, "deliveries received", "%d, retries included; %d with a signature that did not verify %s", f.posts, f.invalid, f.invalidSample)
	line(w, "Temporal history per delivery", "%.1f events   (mean over %d of the window's deliveries; %d of them made without a workflow)",
		f.historyPerDelivery(), len(f.history), f.noWorkflow)
	line(w, "after the load", "%d of the %d events since the load began arrived (waited %.1f s for the last ones)",
		f.total-f.missing, f.total, f.waited.Seconds())
}

func (c *combined) printExports(w io.Writer) {
	fmt.Fprintf(w, "\n== EXPORT: GET /transactions/export/ (CSV, streamed) of a merchant with %d TEST transactions\n", c.o.exportRows)
	fmt.Fprintf(w, "  served by the in-process API; RSS and heap are this process's (API, idle worker and the client reading the CSV)\n")
	c.printSettled(w, "export")
	for _, e := range c.exports {
		fmt.Fprintf(w, "  %s\n", e)
	}
	if len(c.exports) >= 2 {
		small, big := c.exports[0], c.exports[1]
		fmt.Fprintf(w, "  memory: peak RSS %s above the RSS before for %d rows, %s for %d rows (growth that does not follow the rows: streamed)\n",
			historybench.MiB(small.PeakRSS-small.BaseRSS), small.Rows, historybench.MiB(big.PeakRSS-big.BaseRSS), big.Rows)
	}
}

func (c *combined) printSummary(w io.Writer) {
	fmt.Fprintf(w, "\n== SUMMARY\n")
	if c.coll != nil {
		f, comp := c.coll.figures(), c.coll.comp
		line(w, "collections", "accept p99 %s ms, %.1f accepted/s; accept→SUCCESS p50 %s, p99 %s; %.1f completed/s (min 10 s: %.1f)",
			ms(f.p99), f.accept.rate(c.coll.load), toSuccess(comp, 50), toSuccess(comp, 99), comp.rate(c.coll.load.window()), f.minRate)
	}
	if p := c.payouts; p != nil {
		a := p.load.acceptStats()
		line(w, "payouts", "accept p99 %s ms, %.1f accepted/s; accept→SUCCESS p50 %s, p99 %s; %.1f completed/s",
			ms(percentile(a.lat, 99)), a.rate(p.load), toSuccess(p.comp, 50), toSuccess(p.comp, 99), p.comp.rate(p.load.window()))
	}
	if b := c.batches; b != nil {
		line(w, "payout batch", "%d items: accepted in %s, %.1f items/s, complete %s after the accept",
			b.items, b.accept.Round(time.Millisecond), b.itemsPerSecond(), b.complete.Round(time.Millisecond))
	}
	if f := c.webhooks; f != nil {
		line(w, "webhooks", "event → arrival p50 %s, p99 %s; %.1f deliveries/s for %.1f events/s created; %.1f history events per delivery",
			rankPercentile(f.latency, f.undelivered, 50, f.waited, msUnit), rankPercentile(f.latency, f.undelivered, 99, f.waited, msUnit),
			float64(f.windowArrivals)/f.load.window().Seconds(), float64(f.windowEvents)/f.load.window().Seconds(), f.historyPerDelivery())
	}
	if len(c.exports) >= 2 {
		e := c.exports[1]
		line(w, "export", "%d rows at %s rows/s; peak RSS %s above the RSS before", e.Rows, thousands(e.RowsPerSecond()), historybench.MiB(e.PeakRSS-e.BaseRSS))
	}
	if f := c.scaling; f != nil {
		for _, r := range f.runs {
			rate := r.comp.rate(r.load.window())
			line(w, fmt.Sprintf("scaling %d API + %d worker", r.apis, r.workers), "%.1f completed/s = %s × the bare-workflow ceiling (%.1f/s); accept p99 %s ms",
				rate, f.ratio(rate), f.ceiling.rate(), ms(percentile(r.load.acceptStats().lat, 99)))
		}
	}
	if c.pg != nil {
		line(w, "Postgres ceiling (pgbench)", "%s softpay insert transactions/s at %d clients", thousands(c.pg.tps), c.pg.clients)
	}
	if c.coll != nil && c.pg != nil && c.pg.tps > 0 {
		rate := c.coll.figures().accept.rate(c.coll.load)
		fmt.Fprintf(w, "\n  accept %s/s = %.1f%% of the Postgres ceiling of %s/s measured in this run\n", thousands(rate), 100*rate/c.pg.tps, thousands(c.pg.tps))
		if c.o.self && c.o.acceptRate > 0 {
			fmt.Fprintf(w, "    (the service's back-pressure caps collections and payouts together at %d/s: -accept-rate; 0 lifts it)\n", c.o.acceptRate)
		}
	}
	if c.payouts != nil && c.pg != nil && c.pg.tps > 0 {
		rate := c.payouts.load.acceptStats().rate(c.payouts.load)
		fmt.Fprintf(w, "  payouts accept %s/s = %.1f%% of the same ceiling (paced by the same cap)\n", thousands(rate), 100*rate/c.pg.tps)
	}
	if c.coll != nil || len(c.exports) >= 2 {
		fmt.Fprintf(w, "\nTARGETS\n")
	}
	if c.coll != nil {
		c.coll.printTargets(w)
	}
	if len(c.exports) >= 2 {
		e := c.exports[1]
		printTarget(w, fmt.Sprintf("export ≥ %s rows/s", thousands(historybench.TargetExportRowsPerSecond)),
			thousands(e.RowsPerSecond())+" /s", verdict(e.RowsPerSecond() >= historybench.TargetExportRowsPerSecond))
	}
	if c.failed != "" {
		fmt.Fprintf(w, "\n  HARNESS FAILURE in %s: the parts after it did not run\n", c.failed)
	}
	if c.t.logPath != "" {
		fmt.Fprintf(w, "\n  service logs: %s\n", c.t.logPath)
	}
}

// thousands formats a rate with no decimals and thousands separators: 2,345.
func thousands(v float64) string {
	s := fmt.Sprintf("%.0f", v)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
