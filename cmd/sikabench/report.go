package main

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"
)

// The targets of the issue.
const (
	targetAcceptP99     = 50 * time.Millisecond
	targetAcceptClients = 32
	targetCompletedRate = 30.0
	targetSustained     = 60 * time.Second
	targetHistoryEvents = 20
)

type report struct {
	o    options
	t    *target
	load *loadResult
	comp *completions
	hist *histories
	cpu  cpuUse
	// stmts are the service's statements in the window; prof the CPU profile of the window and
	// allocs what the process allocated in it (nil without -cpuprofile).
	stmts  *statements
	prof   *cpuProfile
	allocs *allocUse
	// serverCalls are the dev server's persistence calls at the window's start and end (nil
	// without its metrics).
	serverCalls [2]persistenceCalls
}

// percentile is the nearest-rank percentile of sorted durations.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*p/100+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d)/float64(time.Millisecond)) }

// msUnit is ms with its unit.
func msUnit(d time.Duration) string { return ms(d) + " ms" }
func sec(d time.Duration) string {
	return fmt.Sprintf("%.2f", d.Seconds())
}

// acceptStats are the requests a load sent in its window, as the clients saw them.
type acceptStats struct {
	sent, accepted int
	lat            []time.Duration // of the accepted requests, sorted
	errs           map[string]int  // by status ("transport" when none came)
	errSample      map[string]string
}

func (l *loadResult) acceptStats() acceptStats {
	a := acceptStats{errs: map[string]int{}, errSample: map[string]string{}}
	for _, s := range l.samples {
		if !l.inWindow(s) {
			continue
		}
		a.sent++
		if s.status == http.StatusCreated && s.err == "" {
			a.accepted++
			a.lat = append(a.lat, s.latency)
			continue
		}
		k := fmt.Sprint(s.status)
		if s.status == 0 {
			k = "transport"
		} else if s.status == http.StatusCreated {
			k = "201 unreadable"
		}
		a.errs[k]++
		if a.errSample[k] == "" {
			a.errSample[k] = strings.TrimSpace(s.err)
		}
	}
	slices.Sort(a.lat)
	return a
}

func (a acceptStats) rate(l *loadResult) float64 { return float64(a.accepted) / l.window().Seconds() }

// line prints a labelled figure of a section.
func line(w io.Writer, label, format string, args ...any) {
	fmt.Fprintf(w, "  %-34s %s\n", label, fmt.Sprintf(format, args...))
}

// printRequests prints what a load sent in its window and the answers that were not a 201.
func printRequests(w io.Writer, l *loadResult, a acceptStats) {
	line(w, "requests sent", "%d   (%d in the whole run)", a.sent, len(l.samples))
	line(w, "accepted (201)", "%d", a.accepted)
	if len(a.errs) == 0 {
		line(w, "errors by status", "none")
		return
	}
	keys := make([]string, 0, len(a.errs))
	for k := range a.errs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		line(w, "errors "+k, "%d   e.g. %.160s", a.errs[k], a.errSample[k])
	}
	if a.errs["429"] > 0 {
		line(w, "", "429: the merchant's rate limit (SIKA_RATE_LIMIT_PER_MINUTE, default 300/min) caps the load")
	}
}

// printAccept prints the accept latency and throughput.
func printAccept(w io.Writer, l *loadResult, a acceptStats) {
	line(w, "latency p50 / p95 / p99 / max", "%s / %s / %s / %s ms", ms(percentile(a.lat, 50)), ms(percentile(a.lat, 95)),
		ms(percentile(a.lat, 99)), ms(percentile(a.lat, 100)))
	line(w, "throughput", "%.1f accepted/s", a.rate(l))
}

// printCompletion prints accept→final, the completion rate and the outcomes of a load's
// transactions.
func printCompletion(w io.Writer, c *completions, win time.Duration) {
	slices.Sort(c.toSuccess)
	line(w, "accept→SUCCESS p50 / p99", "%s / %s   (%d SUCCESS of the window's %d accepted; %d unfinished count as slowest)",
		toSuccess(c, 50), toSuccess(c, 99), len(c.toSuccess), c.windowAccepted, c.windowPending)
	line(w, "completed/s overall", "%.1f /s   (%d SUCCESS with completed_at in the window)", c.rate(win), c.windowSuccess)
	failed := 0
	var codes []string
	for k, v := range c.failed {
		failed += v
		codes = append(codes, fmt.Sprintf("%s ×%d", k, v))
	}
	sort.Strings(codes)
	line(w, "outcomes of the run's transactions", "%d accepted: %d SUCCESS, %d failed %v, %d still PENDING (waited %.1f s)",
		c.accepted, c.success, failed, codes, c.pending, c.waited.Seconds())
}

func (c *completions) rate(win time.Duration) float64 {
	return float64(c.windowSuccess) / win.Seconds()
}

// collectionFigures are the collections' figures the targets are judged on.
type collectionFigures struct {
	accept     acceptStats
	p99        time.Duration
	minRate    float64
	buckets    string
	historyMax int // 0: not counted
}

func (r *report) figures() collectionFigures {
	f := collectionFigures{accept: r.load.acceptStats()}
	f.p99 = percentile(f.accept.lat, 99)
	f.minRate, f.buckets = minBucket(r.comp)
	for _, n := range r.hist.counts {
		f.historyMax = max(f.historyMax, n)
	}
	return f
}

// print prints the collections part: requests, accept, completion, history, timeline and CPU.
func (r *report) print(w io.Writer) {
	ld, c := r.load, r.comp
	win := ld.window()
	f := r.figures()
	stopped := ""
	if ld.stoppedByMax {
		stopped = fmt.Sprintf(", stopped by -max %d", r.o.max)
	}
	paced := "closed loop (no think time)"
	if r.o.rate > 0 {
		paced = fmt.Sprintf("paced at ≤ %.0f req/s", r.o.rate)
	}
	fmt.Fprintf(w, "\n== COLLECTIONS: POST /payments/softpay/ (XOF 1000 on MTN_BJ, sandbox approves after one tick)\n")
	fmt.Fprintf(w, "  load:   %d clients, %s, warm-up %s, window %.1f s%s\n", ld.clients, paced, r.o.warmup, win.Seconds(), stopped)
	if r.o.self && r.o.acceptRate > 0 {
		fmt.Fprintf(w, "          the service accepts at most %d payments/s (-accept-rate; 503 + Retry-After past it)\n", r.o.acceptRate)
	}

	fmt.Fprintf(w, "\nREQUESTS (sent in the window)\n")
	printRequests(w, ld, f.accept)

	fmt.Fprintf(w, "\nACCEPT (client side: request sent → 201 read)\n")
	printAccept(w, ld, f.accept)
	if tm := r.t.timings; tm != nil {
		tm.mu.Lock()
		handler := between(tm.softpay, ld.windowStart, ld.windowEnd)
		start := between(tm.start, ld.windowStart, ld.windowEnd)
		signal := between(tm.signal, ld.windowStart, ld.windowEnd)
		tm.mu.Unlock()
		for _, x := range [][]time.Duration{handler, start, signal} {
			slices.Sort(x)
		}
		line(w, "server: softpay handler p50/p99", "%s / %s ms   (whole handler chain incl. middleware)", ms(percentile(handler, 50)), ms(percentile(handler, 99)))
		line(w, "server: workflow start p50/p99", "%s / %s ms   (ExecuteWorkflow RPC, after the answer)", ms(percentile(start, 50)), ms(percentile(start, 99)))
		line(w, "server: callback signal p50/p99", "%s / %s ms   (%d SignalWorkflow calls)", ms(percentile(signal, 50)), ms(percentile(signal, 99)), len(signal))
	}
	if r.t.poolStart != nil && r.t.poolEnd != nil {
		a, b := r.t.poolStart, r.t.poolEnd
		acq := b.AcquireCount() - a.AcquireCount()
		waited := b.EmptyAcquireCount() - a.EmptyAcquireCount()
		waitTime := b.EmptyAcquireWaitTime() - a.EmptyAcquireWaitTime()
		avg := time.Duration(0)
		if waited > 0 {
			avg = waitTime / time.Duration(waited)
		}
		line(w, "service Postgres pool", "max %d conns; %d acquires, %d waited for a free conn (%.0f%%), avg wait %s ms",
			b.MaxConns(), acq, waited, pct(waited, acq), ms(avg))
	}

	fmt.Fprintf(w, "\nCOMPLETION (Postgres: completed_at − created_at)\n")
	printCompletion(w, c, win)
	rate, accepted := c.rate(win), f.accept.rate(ld)
	if growth := accepted - rate; growth > 0.1*rate && growth > 1 {
		line(w, "backlog", "grew by %.1f payments/s (accepted %.1f/s, completed %.1f/s): the load exceeds what the pipeline completes",
			growth, accepted, rate)
	}
	line(w, "completed/s min 10 s bucket", "%s", fmtRate(f.minRate))
	line(w, "  per 10 s bucket", "%s", f.buckets)

	r.printHistory(w)
	if r.t.rpcs != nil {
		fmt.Fprintf(w, "\nTEMPORAL CALLS (the in-process service's client, whole run: every part, waits included)\n")
		for _, l := range strings.Split(strings.TrimRight(r.t.rpcs.table(), "\n"), "\n") {
			fmt.Fprintf(w, "  %s\n", l)
		}
	}
	if r.serverCalls[1] != nil {
		fmt.Fprintf(w, "\nDEV SERVER PERSISTENCE (Temporal's calls to its SQLite store over the window, from its metrics; per accepted payment)\n")
		r.serverCalls[1].print(w, r.serverCalls[0], c.windowAccepted, 12)
	}
	r.printTimeline(w)
	r.printCPU(w)
	if acc, done := float64(c.windowAccepted), float64(c.windowSuccess); (r.stmts != nil || r.prof != nil) && (acc > 1.1*done || done > 1.1*acc) {
		fmt.Fprintf(w, "\nNOTE: the window accepted %.0f payments and completed %.0f: the figures per completed payment below count\n"+
			"      the accept path's work %.1f times over; the scaling part's closed loop, or a -rate the machine keeps up\n"+
			"      with, gives per-payment figures that are not skewed by a backlog\n", acc, done, acc/max(done, 1))
	}
	if r.stmts != nil {
		fmt.Fprintf(w, "\nPOSTGRES STATEMENTS (pg_stat_statements in Sika's database over the window, the service's; per completed payment)\n")
		r.stmts.print(w, c.windowSuccess, statementsTop)
	}
	if r.prof != nil {
		fmt.Fprintf(w, "\nCPU PROFILE (this process over the window; the service is the api, worker and shared goroutines)\n")
		r.prof.print(w, c.windowSuccess)
		if r.allocs != nil {
			r.allocs.print(w, c.windowSuccess)
		}
	}
}

func (r *report) printHistory(w io.Writer) {
	fmt.Fprintf(w, "\nHISTORY (Temporal, payment:<id> of successful payments)\n")
	h := r.hist
	switch {
	case h.skipped != "":
		line(w, "events per payment", "not counted: %s", h.skipped)
		return
	case len(h.counts) == 0:
		line(w, "events per payment", "not counted: %d errors", len(h.errors))
		return
	}
	hMin, hMax, sum := h.counts[0], 0, 0
	for _, n := range h.counts {
		hMin, hMax, sum = min(hMin, n), max(hMax, n), sum+n
	}
	line(w, "events min / avg / max", "%d / %.1f / %d   (sample of %d)", hMin, float64(sum)/float64(len(h.counts)), hMax, len(h.counts))
	line(w, "bytes per payment", "%s", h.sizes())
	type kv struct {
		k string
		v int
	}
	var kinds []kv
	for k, v := range h.types {
		kinds = append(kinds, kv{k, v})
	}
	sort.Slice(kinds, func(i, j int) bool {
		return kinds[i].v > kinds[j].v || kinds[i].v == kinds[j].v && kinds[i].k < kinds[j].k
	})
	var parts []string
	for _, x := range kinds {
		parts = append(parts, fmt.Sprintf("%s %.1f", x.k, float64(x.v)/float64(len(h.counts))))
	}
	line(w, "avg per payment by event type", "%s", wrap(strings.Join(parts, ", "), 80, 39))
	if h.stalled != "" {
		fmt.Fprintf(w, "  a sampled payment whose workflow task timed out:\n")
		for _, l := range strings.Split(h.stalled, "\n") {
			fmt.Fprintf(w, "    %s\n", l)
		}
	}
}

func (r *report) printTimeline(w io.Writer) {
	ld, c := r.load, r.comp
	fmt.Fprintf(w, "\nTIMELINE (per 10 s of the window, by send time / completion time)\n")
	fmt.Fprintf(w, "  %-8s %10s %12s %12s %12s\n", "from", "accepted/s", "accept p50", "accept p99", "completed/s")
	for i := range c.bucketCounts {
		from := ld.windowStart.Add(time.Duration(i) * bucket)
		to := from.Add(c.bucketSpans[i])
		var bl []time.Duration
		for _, s := range ld.samples {
			if s.status == http.StatusCreated && !s.sent.Before(from) && s.sent.Before(to) {
				bl = append(bl, s.latency)
			}
		}
		slices.Sort(bl)
		span := to.Sub(from).Seconds()
		fmt.Fprintf(w, "  %-8s %10.1f %9s ms %9s ms %12.1f\n", fmt.Sprintf("+%ds", i*10), float64(len(bl))/span,
			ms(percentile(bl, 50)), ms(percentile(bl, 99)), float64(c.bucketCounts[i])/span)
	}
}

func (r *report) printCPU(w io.Writer) {
	c := r.comp
	if r.cpu.span <= 0 || r.cpu.busy+r.cpu.idle <= 0 {
		return
	}
	total := r.cpu.busy + r.cpu.idle
	fmt.Fprintf(w, "\nCPU DURING THE WINDOW (%d cores × %.1f s = %.1f core-s)\n", r.cpu.cores, r.cpu.span.Seconds(), total.Seconds())
	line(w, "busy (all processes + kernel)", "%.1f core-s (%.0f%%)", r.cpu.busy.Seconds(), 100*r.cpu.busy.Seconds()/total.Seconds())
	accounted := time.Duration(0)
	var perPayment []string
	for i, g := range r.cpu.groups {
		accounted += g.cpu
		if i >= 8 || g.cpu < 500*time.Millisecond {
			continue
		}
		line(w, "  "+g.name, "%.1f core-s (%.0f%%)", g.cpu.Seconds(), 100*g.cpu.Seconds()/total.Seconds())
		if !strings.HasPrefix(g.name, "other") && c.windowSuccess > 0 {
			perPayment = append(perPayment, fmt.Sprintf("%s %s ms", strings.Fields(g.name)[0], ms(g.cpu/time.Duration(c.windowSuccess))))
		}
	}
	for _, k := range []struct {
		name string
		d    time.Duration
	}{{"  irq + softirq (loopback network)", r.cpu.irq}, {"  steal (hypervisor)", r.cpu.steal},
		{"  unattributed", r.cpu.busy - r.cpu.irq - r.cpu.steal - accounted}} {
		if k.d > 500*time.Millisecond {
			line(w, k.name, "%.1f core-s (%.0f%%)", k.d.Seconds(), 100*k.d.Seconds()/total.Seconds())
		}
	}
	if len(perPayment) > 0 {
		line(w, "CPU per completed payment", "%s", strings.Join(perPayment, ", "))
	}
	if !r.o.self {
		line(w, "", "(with -base-url the service's own processes count as \"other\")")
	} else if others := r.cpu.others(); others > total/10 {
		fmt.Fprintf(w, "  WARNING: the machine was not quiet: %.1f core-s (%.0f%%) went to other processes;\n"+
			"           latency and throughput figures are disturbed\n", others.Seconds(), 100*others.Seconds()/total.Seconds())
	}
}

// printTargets prints the collections' targets with their verdicts.
func (r *report) printTargets(w io.Writer) {
	f := r.figures()
	note := ""
	if r.load.clients != targetAcceptClients {
		note = fmt.Sprintf("   (target is at %d clients; measured at %d)", targetAcceptClients, r.load.clients)
	}
	printTarget(w, "accept p99 ≤ 50 ms at 32 clients", ms(f.p99)+" ms", verdict(len(f.accept.lat) > 0 && f.p99 <= targetAcceptP99)+note)
	sustained := verdict(f.minRate >= targetCompletedRate)
	if win := r.load.window(); win < targetSustained-time.Second {
		sustained = fmt.Sprintf("n/a (window %.0f s < 60 s)", win.Seconds())
	}
	printTarget(w, "≥ 30 completed/s sustained 60 s (min bucket)", fmtRate(f.minRate), sustained)
	if f.historyMax > 0 {
		printTarget(w, "≤ 20 history events per successful payment", fmt.Sprintf("%d max", f.historyMax), verdict(f.historyMax <= targetHistoryEvents))
	} else {
		printTarget(w, "≤ 20 history events per successful payment", "-", "n/a")
	}
}

// printTarget prints one target of the summary.
func printTarget(w io.Writer, what, measured, judged string) {
	fmt.Fprintf(w, "  %-46s %-14s %s\n", what, measured, judged)
}

func verdict(ok bool) string {
	if ok {
		return "PASS"
	}
	return "MISS"
}

// minBucket is the lowest completion rate over the window's full 10 s buckets (the whole
// window when it is shorter than one), and every bucket's rate.
func minBucket(c *completions) (float64, string) {
	minRate, any := 0.0, false
	var parts []string
	for i, n := range c.bucketCounts {
		span := c.bucketSpans[i]
		r := float64(n) / span.Seconds()
		if span < bucket-time.Second/2 {
			parts = append(parts, fmt.Sprintf("(%.1f s: %.1f)", span.Seconds(), r))
			if len(c.bucketCounts) > 1 {
				continue // a trailing partial bucket does not count
			}
		} else {
			parts = append(parts, fmt.Sprintf("%.1f", r))
		}
		if !any || r < minRate {
			minRate, any = r, true
		}
	}
	return minRate, strings.Join(parts, " ")
}

func fmtRate(r float64) string { return fmt.Sprintf("%.1f /s", r) }

func pct(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

// wrap breaks s at commas so that lines stay under width, indenting the continuation lines.
func wrap(s string, width, indent int) string {
	var b strings.Builder
	col := 0
	for i, part := range strings.Split(s, ", ") {
		if i > 0 {
			if col+len(part)+2 > width {
				b.WriteString(",\n" + strings.Repeat(" ", indent))
				col = 0
			} else {
				b.WriteString(", ")
				col += 2
			}
		}
		b.WriteString(part)
		col += len(part)
	}
	return b.String()
}

// toSuccess is a percentile of accept→SUCCESS over the window's successful and unfinished
// payments, in seconds.
func toSuccess(c *completions, p float64) string {
	return rankPercentile(c.toSuccess, c.windowPending, p, c.waited, func(d time.Duration) string { return sec(d) + " s" })
}

// rankPercentile is a percentile of sorted durations and of unfinished cases ranking last:
// those are only known to exceed the wait.
func rankPercentile(sorted []time.Duration, unfinished int, p float64, waited time.Duration, format func(time.Duration) string) string {
	n := len(sorted) + unfinished
	if n == 0 {
		return "-"
	}
	i := min(max(int(float64(n)*p/100+0.999999)-1, 0), n-1)
	if i >= len(sorted) {
		return fmt.Sprintf(">%.0f s (unfinished)", waited.Seconds())
	}
	return format(sorted[i])
}
