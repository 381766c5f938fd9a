package main

import (
	"fmt"
	"io"
	"sort"
	"sync"
	"time"

	"github.com/sikahq/sika/internal/devstack"
)

// report is what a run did and found.
type report struct {
	o       options
	started time.Time
	// Offsets from started.
	stackUp, loadDone, finished time.Duration
	quiescence                  time.Duration
	notQuiet                    string

	load       *load
	mu         sync.Mutex
	faults     []faultRecord
	checks     []*checkResult
	txCount    int
	eventCount int
	settle     map[string][]time.Duration
	logDir     string
}

func newReport(o options) *report { return &report{o: o, started: time.Now()} }

func (r *report) addFault(f faultRecord) {
	r.mu.Lock()
	r.faults = append(r.faults, f)
	r.mu.Unlock()
}

// addLogs remembers where the service's logs are when the run's directory is kept.
func (r *report) addLogs(dir string, kept bool) {
	if kept {
		r.logDir = dir
	}
}

// violations counts the problems found by the checks.
func (r *report) violations() int {
	n := 0
	for _, c := range r.checks {
		n += len(c.problems)
	}
	return n
}

// print writes the report as tables.
func (r *report) print(w io.Writer) {
	o := r.o
	fmt.Fprintf(w, "\nSika chaos run: seed %d, %d operations, %d faults (%s), at most %d in flight, sandbox tick %s\n",
		o.seed, o.ops, o.faults, joinKinds(o.faultKinds), o.concurrency, o.tick)
	fmt.Fprintf(w, "stack up %s · load done %s · quiet after %s more · finished %s\n",
		round(r.stackUp), round(r.loadDone), round(r.quiescence), round(r.finished))
	if r.load != nil {
		r.printOps(w)
	}
	r.printFaults(w)
	if r.load != nil {
		r.printService(w)
	}
	r.printChecks(w)
}

func (r *report) printOps(w io.Writer) {
	s := r.load.stats
	s.mu.Lock()
	defer s.mu.Unlock()
	fmt.Fprintf(w, "\nWhat it did: operations\n")
	fmt.Fprintf(w, "  %-18s %6s %9s %6s %6s %5s %7s %5s %8s %9s %9s\n", "operation", "ops", "requests", "lost", "503", "500", "in-use", "429", "replayed", "mean", "longest")
	kinds := make([]string, 0, len(s.kinds))
	for k := range s.kinds {
		kinds = append(kinds, string(k))
	}
	sort.Strings(kinds)
	var total kindStats
	for _, k := range kinds {
		ks := s.kinds[opKind(k)]
		mean := time.Duration(0)
		if ks.ops > 0 {
			mean = ks.took / time.Duration(ks.ops)
		}
		fmt.Fprintf(w, "  %-18s %6d %9d %6d %6d %5d %7d %5d %8d %9s %9s\n", k, ks.ops, ks.requests, ks.lost, ks.unavailable,
			ks.internal, ks.inUse, ks.limited, ks.replayed, round(mean), round(ks.longest))
		total.ops += ks.ops
		total.requests += ks.requests
		total.lost += ks.lost
		total.unavailable += ks.unavailable
		total.internal += ks.internal
		total.inUse += ks.inUse
		total.limited += ks.limited
		total.replayed += ks.replayed
	}
	fmt.Fprintf(w, "  %-18s %6d %9d %6d %6d %5d %7d %5d %8d\n", "total", total.ops, total.requests, total.lost, total.unavailable, total.internal, total.inUse, total.limited, total.replayed)
	fmt.Fprintf(w, "  (lost: no answer, the connection failed or was cut; 503/500/in-use/429: answered, sent again with the\n"+
		"   same key; mean/longest: whole operations, waits for a payment's failure and retries included)\n")
}

func (r *report) printFaults(w io.Writer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fmt.Fprintf(w, "\nWhat it did: faults\n")
	fmt.Fprintf(w, "  %-20s %6s %12s %14s %12s\n", "fault", "count", "held down", "outage total", "outage max")
	type agg struct {
		n                 int
		down, outage, max time.Duration
	}
	byKind := map[faultKind]*agg{}
	var order []faultKind
	var total agg
	for _, f := range r.faults {
		a := byKind[f.kind]
		if a == nil {
			a = &agg{}
			byKind[f.kind] = a
			order = append(order, f.kind)
		}
		for _, x := range []*agg{a, &total} {
			x.n++
			x.down += f.down
			x.outage += f.outage
			x.max = max(x.max, f.outage)
		}
	}
	sort.Slice(order, func(i, j int) bool { return order[i] < order[j] })
	for _, k := range order {
		a := byKind[k]
		fmt.Fprintf(w, "  %-20s %6d %12s %14s %12s\n", k, a.n, round(a.down), round(a.outage), round(a.max))
	}
	fmt.Fprintf(w, "  %-20s %6d %12s %14s %12s\n", "total", total.n, round(total.down), round(total.outage), round(total.max))
	fmt.Fprintf(w, "  (outage: from the fault until /readyz answered 200 again, and a new worker polled)\n")
}

func (r *report) printService(w io.Writer) {
	h := r.load.h
	fmt.Fprintf(w, "\nWhat it saw\n")
	for _, s := range append(append([]*devstack.Replica(nil), h.apis...), h.workers...) {
		starts, unplanned, fails, _ := s.Counts()
		fmt.Fprintf(w, "  sika %-8s started %d times, exited on its own %d times, failed to start %d times\n", s.Name(), starts, unplanned, fails)
	}
	rs := h.receiver.stats()
	fmt.Fprintf(w, "  webhooks: %d events in Postgres, %d deliveries received, %d refused on purpose (503), %d bad signatures\n",
		r.eventCount, rs.deliveries, rs.refused, rs.badSig)
	ops := h.sandbox.Operations()
	resent := 0
	for _, op := range ops {
		if op.Requests > 1 {
			resent++
		}
	}
	fmt.Fprintf(w, "  sandbox: %d operations, %d of them initiated again with the same reference (deduped)\n", len(ops), resent)
	b := r.load.book
	b.mu.Lock()
	fmt.Fprintf(w, "  %d transactions; %d checkout sessions, %d hosted payments sent again after a lost answer\n",
		r.txCount, b.sessions, b.hostedDup)
	b.mu.Unlock()
	for _, typ := range []string{"PAIEMENT", "RETRAIT"} {
		if d := r.settle[typ]; len(d) > 0 {
			sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
			fmt.Fprintf(w, "  %s creation to final state (first runs): p50 %s, p95 %s, max %s over %d\n", typ,
				round(d[len(d)/2]), round(d[len(d)*95/100]), round(d[len(d)-1]), len(d))
		}
	}
	if lines := b.refusalLines(); len(lines) > 0 {
		fmt.Fprintf(w, "  definitive refusals (business answers, not violations):\n")
		for _, l := range lines {
			fmt.Fprintf(w, "    %s\n", l)
		}
	}
	if r.notQuiet != "" {
		fmt.Fprintf(w, "  %s\n", r.notQuiet)
	}
	if r.logDir != "" {
		fmt.Fprintf(w, "  logs and data kept in %s (api.log, worker.log, sandbox.log, postgres.log, temporal.log)\n", r.logDir)
	}
}

func (r *report) printChecks(w io.Writer) {
	fmt.Fprintf(w, "\nWhat it found\n")
	if len(r.checks) == 0 {
		fmt.Fprintf(w, "  no checks ran\n")
		return
	}
	fmt.Fprintf(w, "  %-60s %8s  %s\n", "check", "checked", "result")
	for _, c := range r.checks {
		result := "pass"
		if len(c.problems) > 0 {
			result = fmt.Sprintf("FAIL (%d)", len(c.problems))
		}
		fmt.Fprintf(w, "  %-60s %8d  %s\n", c.name, c.checked, result)
		if c.figures != "" {
			fmt.Fprintf(w, "      (%s)\n", c.figures)
		}
		for i, p := range c.problems {
			if i == 10 {
				fmt.Fprintf(w, "      … %d more\n", len(c.problems)-10)
				break
			}
			fmt.Fprintf(w, "      %s\n", p)
		}
	}
	if n := r.violations(); n > 0 {
		fmt.Fprintf(w, "\n%d violation(s)\n", n)
	} else {
		fmt.Fprintf(w, "\nzero violations\n")
	}
}

func round(d time.Duration) string {
	if d == 0 {
		return "-"
	}
	return d.Round(100 * time.Millisecond).String()
}
