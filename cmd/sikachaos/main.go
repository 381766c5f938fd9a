// Command sikachaos attacks the whole running service with load and faults and checks that no
// money is lost (issue 10, part 1):
//
//	go run ./cmd/sikachaos                       # make chaos CHAOS_FLAGS="-ops 3000 -seed 7"
//
// It starts its own stack on loopback, in a temporary directory: a durable Postgres (its own data
// directory, restarted on the same port), the Temporal dev server with its state in a database
// file (so that workflows survive its restart on the same port), the sandbox operator (in this
// process, with a short tick), a webhook receiver registered as the merchant's endpoint (it
// checks every signature), and the service itself as real processes: `sika api` and
// `sika worker`, configured by environment variables and restarted by a supervisor when they
// die on their own.
//
// With -cluster the service under attack is a devstack cluster instead (`make cluster`'s shape):
// Postgres, the Temporal server with its persistence on that Postgres, 2 `sika api` replicas
// behind one address and 2 `sika worker` replicas. A replica fault hits one replica at a time
// (the faults of a kind hit its replicas in turn), the Temporal fault kills the server
// (SIGKILL), and the Postgres faults are those of the default mode.
//
// It then funds the merchant's wallets through real collections and drives a mixed load with
// bounded concurrency (-c): softpay on every sandbox suffix and on OTP and redirect networks,
// checkout sessions paid on their hosted endpoint, payouts, settlements, wallet transfers, the
// same request sent concurrently with one Idempotency-Key, and concurrent retries of failed
// payments. The money-safety operations of issue 17 come on top: payouts and softpay to an
// operator that loses the first answer, says "not found" and then pays (sandbox suffix 010);
// softpay the customer approves after Sika's push lifetime, whose cancel the operator refuses
// (011), retried by the merchant while Sika still re-reads it; three customers paying one
// checkout session at once; and an Idempotency-Key reused with another amount after its first
// request got a 5xx because the harness cut the API's Postgres connection (it reaches Postgres
// through a proxy of the harness) just before or just after Postgres committed it. And the
// round-trip transfer loop of issue 21: a few XOF from BJ to GN, ten transfers of 8 GNF back
// (each worth less than 1 XOF, so refused), then a larger amount back.
// Meanwhile it injects -faults faults spread over the load: SIGKILL of the worker,
// SIGKILL or SIGTERM of the API, restarts of the Temporal dev server and of Postgres (fast or
// immediate shutdown). Clients ride the outages out as a merchant's backend would: a request
// whose answer was lost is sent again with the same Idempotency-Key, never a new one.
//
// At the end it waits (bounded) for quiescence and checks: every transaction in one final state
// that matches the sandbox outcome of its number, with a status log that ends in it; no push or
// disbursement made twice and none the ledger does not account for; every wallet equal to its
// ledger (`sika admin check-ledger`) and every ledger entry matching its transaction; no
// Idempotency-Key that produced two operations; every event recorded in Postgres delivered,
// signed, to the receiver; no payment left PENDING; no outbox row left. And money safety: a
// payout's hold released only on a definite failure; every operator success credited or
// debited exactly once, a second charge only with a REFUND_DUE flag; 010 payouts SUCCESS with
// their hold kept and one transfer; 011 payments reconciled FAILED → SUCCESS once, their retry
// refused 409 outcome_unresolved; 012 payments (sandbox-a answers 503, takes the push anyway and
// reports it paid while the run is at sandbox-b) SUCCESS on attempt 1, credited once per paid
// attempt, a second success flagged, no operator answer left unprocessed; one checkout payment
// in flight at a time and a session PAID by
// one; a reused key never answered with the first body's transaction; every wallet transfer
// credited its debit rounded down and none worth more than its debit at the catalogue's rates,
// so the merchant's value never grew by transfers. It prints what it did
// and what it found, and exits 1 on any violation, 2 when the harness itself failed.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

// options are the knobs of one chaos run.
type options struct {
	ops         int           // operations of the mixed load (the funding collections come on top)
	faults      int           // faults injected during the load
	duration    time.Duration // how long the load is spread over (it may take longer under faults)
	timeout     time.Duration // hard bound on the whole run
	concurrency int           // operations in flight at most
	seed        int64         // drives the mix, the numbers and the fault plan
	faultKinds  []faultKind   // the kinds the plan cycles through
	sikaBin     string        // a built `sika` binary; "" builds one into the run's directory
	tick        time.Duration // the sandbox's unit of delay (009 takes 20 ticks)
	keep        bool          // keep the run's directory (Postgres data, logs) afterwards
	cluster     bool          // run against a devstack cluster: the Temporal server, 2 API and 2 worker replicas
	logger      *slog.Logger  // the harness's progress messages
}

func defaultOptions() options {
	return options{
		ops: 2000, faults: 20, duration: 5 * time.Minute, timeout: 14 * time.Minute, concurrency: 12,
		seed: time.Now().UnixNano() % 1_000_000, faultKinds: allFaultKinds, tick: 250 * time.Millisecond,
	}
}

func main() {
	o := defaultOptions()
	kinds := flag.String("fault-kinds", joinKinds(o.faultKinds), "comma-separated fault kinds the plan cycles through")
	flag.IntVar(&o.ops, "ops", o.ops, "operations of the mixed load (at least 1)")
	flag.IntVar(&o.faults, "faults", o.faults, "faults injected during the load")
	flag.DurationVar(&o.duration, "d", o.duration, "time the load is spread over")
	flag.DurationVar(&o.timeout, "timeout", o.timeout, "hard bound on the whole run (harness failure past it)")
	flag.IntVar(&o.concurrency, "c", o.concurrency, "operations in flight at most")
	flag.Int64Var(&o.seed, "seed", o.seed, "seed of the mix, the numbers and the fault plan")
	flag.StringVar(&o.sikaBin, "sika-bin", "", "a built sika binary (default: go build ./cmd/sika into the run's directory)")
	flag.DurationVar(&o.tick, "tick", o.tick, "the sandbox's unit of delay (009 succeeds after 20 ticks)")
	flag.BoolVar(&o.keep, "keep", false, "keep the run's directory (Postgres data, service logs)")
	flag.BoolVar(&o.cluster, "cluster", false, "attack a cluster (the Temporal server on Postgres, 2 API replicas behind one address, 2 workers) instead of one API, one worker and the dev server")
	verbose := flag.Bool("v", false, "log every fault and restart of the stack")
	flag.Parse()
	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelInfo
	}
	o.logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	var err error
	if o.faultKinds, err = parseKinds(*kinds); err != nil {
		fmt.Fprintln(os.Stderr, "sikachaos:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := run(ctx, o)
	if rep != nil {
		rep.print(os.Stdout)
	}
	switch {
	case err != nil:
		fmt.Fprintln(os.Stderr, "sikachaos: harness failure:", err)
		os.Exit(2)
	case rep.violations() > 0:
		fmt.Fprintf(os.Stderr, "sikachaos: %d violation(s)\n", rep.violations())
		os.Exit(1)
	}
}

// run starts the stack, funds the wallets, drives the load while injecting the faults, waits for
// quiescence and checks the invariants. The report is returned even when the harness fails
// part-way, with what it did until then.
func run(ctx context.Context, o options) (_ *report, err error) {
	if o.ops < 1 || o.concurrency < 1 || o.faults < 0 || len(o.faultKinds) == 0 {
		return nil, errors.New("need -ops ≥ 1, -c ≥ 1, -faults ≥ 0 and at least one fault kind")
	}
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	rep := newReport(o)
	h, err := startHarness(ctx, o)
	if err != nil {
		return rep, fmt.Errorf("start the stack: %w", err)
	}
	defer func() { // keep the logs and data of a run that went wrong
		keep := o.keep || rep.violations() > 0 || err != nil
		rep.addLogs(h.dir, keep)
		h.close(keep)
	}()
	rep.stackUp = time.Since(rep.started)
	l := newLoad(h, o, rep)
	if err := l.fund(ctx); err != nil {
		return rep, fmt.Errorf("fund the wallets: %w", err)
	}
	plan := newFaultPlan(o)
	faultsDone := make(chan error, 1)
	go func() { faultsDone <- h.injectFaults(ctx, plan, rep) }()
	loadErr := l.drive(ctx, plan)
	faultErr := <-faultsDone
	if err := errors.Join(loadErr, faultErr); err != nil {
		return rep, err
	}
	rep.loadDone = time.Since(rep.started)
	if err := h.awaitQuiescence(ctx, rep); err != nil {
		return rep, err
	}
	if err := h.check(ctx, l, rep); err != nil {
		return rep, fmt.Errorf("check: %w", err)
	}
	rep.finished = time.Since(rep.started)
	return rep, nil
}

// joinKinds and parseKinds convert the -fault-kinds flag.
func joinKinds(kinds []faultKind) string {
	s := make([]string, len(kinds))
	for i, k := range kinds {
		s[i] = string(k)
	}
	return strings.Join(s, ",")
}

func parseKinds(v string) ([]faultKind, error) {
	var out []faultKind
	for _, part := range strings.Split(v, ",") {
		k := faultKind(strings.TrimSpace(part))
		if k == "" {
			continue
		}
		known := false
		for _, a := range allFaultKinds {
			known = known || a == k
		}
		if !known {
			return nil, fmt.Errorf("unknown fault kind %q (known: %s)", k, joinKinds(allFaultKinds))
		}
		out = append(out, k)
	}
	if len(out) == 0 {
		return nil, errors.New("-fault-kinds is empty")
	}
	return out, nil
}
