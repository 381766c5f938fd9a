// Command sikabench measures Sika under load and prints one combined report:
//
//   - pgbench: the raw Postgres ceiling of the softpay write path. pgbench (next to the Postgres
//     server binaries) runs pgbench_softpay.sql, one softpay acceptance as the service writes it
//     (the Idempotency-Key claim; the record, its status log, its event and the outbox row in
//     one transaction; the stored response), with -c clients for -pgbench-d, in a
//     database of its own on the same throw-away server. The summary gives the accept
//     throughput of collections as a share of that ceiling.
//
//   - collections: softpay under load (below), against the targets.
//
//   - payouts: POST /payouts/initialize/ with -c clients for -payout-d from a funded wallet:
//     accept latency and throughput, accept→final.
//
//   - batches: one POST /payout-batches/ of 1,000 sandbox payouts from a funded wallet: the time
//     to accept it (every item validated and priced, the total held), items/s and the time to
//     complete (every item's payout final).
//
//   - webhooks: softpay paced at -webhook-rate for -webhook-d with an endpoint on a loopback
//     receiver: per event, the time from its creation in the writing transaction to its first
//     arrival, and deliveries/s.
//
//   - export: -export-rows transactions of one merchant seeded with cmd/sikabench-history's data
//     set, then exported as CSV through the API: rows/s and the memory of the process.
//
//   - scaling: Sika on a real Temporal cluster (devstack.StartCluster: the Temporal server with
//     its persistence on Postgres, `sika api` and `sika worker` processes of -sika-bin behind one
//     address), with 1 API + 1 worker and with 2 + 2: completed payments/s and accept p99,
//     each as a share of the ceiling of the same Temporal server measured first in the same run:
//     a bare workflow of the same history shape as a sandbox softpay success (3 local
//     activities that do nothing, a poll timer raced by a signal one tick after the "push"),
//     -scaling-in-flight at a time, each replaced when it completes; Sika gets the same load,
//     -scaling-in-flight payments, each replaced when final. It also gives the CPU per workflow
//     and per payment of the Temporal server, Postgres and the sika processes.
//
//     go run ./cmd/sikabench                        # make bench: every part, a few minutes
//     go run ./cmd/sikabench -short                 # every part, shortened (about a minute of load)
//     go run ./cmd/sikabench -parts collections -d 60s -c 32
//
// By default (-self) it starts everything in its own process: a throw-away Postgres (fsync
// off) and Temporal dev server (in memory) from internal/devstack, the migrations, a merchant
// with a TEST key, the sandbox operator (tick -tick), the API on loopback and the worker,
// assembled as `sika dev` assembles them, with the per-merchant rate limit lifted and webhooks
// allowed to loopback. With -base-url it drives an API that already runs (`make run`), for the
// collections part only; it then needs a TEST key with PAYIN scope (-key), Postgres
// (-database-url) and Temporal (-temporal), read from the environment or from .sika/
// ($SIKA_STATE_DIR) when not given.
//
// Collections load: -c clients, each sending one request at a time (never more than -c in
// flight): XOF 1000 on MTN_BJ from a number ending in 123 (the sandbox approves it after one
// tick), with a fresh Idempotency-Key. Without -rate the loop is closed (a client sends again as
// soon as it has its answer); -rate paces all clients together to at most that many requests per
// second. A 429 or 503 makes its client wait Retry-After (at most 1 s). The run is -warmup, then
// -d of measurement (or until -max requests); the figures cover requests sent in the window.
//
// Completion is read in Postgres, not by polling the API: once the load stops, the harness
// waits (at most 2 ticks + 30 s; 60 s for payouts) until no accepted transaction is PENDING,
// then reads created_at and completed_at of the accepted ids in one query. Both are Postgres'
// now() of the writing transaction, so accept→SUCCESS needs no clock agreement; the window is
// placed on the Postgres clock with an offset measured at start. Completed/s counts SUCCESS
// whose completed_at falls in the window, overall and per 10 s. History: the events of
// payment:<id> for a sample of successful payments, their encoded size and their payloads' (as
// stored, after the payload codec).
//
// To explain the figures it also reports, for the collections window: CPU per process (/proc),
// in -self mode timings taken inside the API (softpay handler, workflow start RPC, callback
// signal) and the service's Postgres pool waits, a CPU profile of this process and its
// allocations (by default in -self mode, with the service's top functions in the report; the
// files under -out), and pg_stat_statements of the service's database over the window (the
// statements per completed payment, the bench's own connections left out: they log in as the
// role sikabench; also for each scaling configuration). Experiment flags (-pool-max-conns, -temporal-compression) change the in-process
// service's settings to test a fix without editing it; -tracing measures the service with its
// traces exported (tracing on) against the default (off). The header gives the machine's load
// average at the start and the end: other work on the machine disturbs the figures.
//
// It exits 0 whatever the figures (it is a measurement) and 1 when the harness itself fails
// (then it prints what the parts before the failure measured).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/sikahq/sika/cmd/sikabench-history/historybench"
	"github.com/sikahq/sika/internal/devstack"
)

type options struct {
	self        bool
	baseURL     string
	key         string
	temporal    string
	namespace   string
	databaseURL string
	parts       string
	short       bool

	clients     int
	duration    time.Duration
	warmup      time.Duration
	max         int
	rate        float64
	tick        time.Duration
	sample      int
	out         string // the run's files
	cpuProfile  string
	logFile     string
	poolConns   int
	acceptRate  int
	compression string
	// temporalFile: the dev server keeps its state in a SQLite file, as `sika dev` does
	temporalFile bool
	tracing      bool

	pgbenchDuration time.Duration
	payoutDuration  time.Duration
	webhookDuration time.Duration
	webhookRate     float64
	exportRows      int
	sikaBin         string
	scalingDuration time.Duration
	scalingInFlight int
}

// settleWait bounds the wait, before payouts, webhooks and export, for the transactions and
// workflow starts of the parts before to finish.
const settleWait = 2 * time.Minute

// allParts are the parts of a run, in the order they run.
var allParts = []string{"pgbench", "collections", "payouts", "batches", "webhooks", "export", "scaling"}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "sikabench:", err)
		os.Exit(1)
	}
}

func run() error {
	began := time.Now()
	o, parts, err := parseFlags()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	rep := &combined{o: o, parts: parts, loadStart: historybench.LoadAverage(), settled: map[string]settled{}}
	// The scaling part starts a cluster of its own; the in-process stack is started only for
	// the other parts, and stopped before it.
	onStack := slices.DeleteFunc(slices.Clone(parts), func(p string) bool { return p == "scaling" })
	var failure error
	if len(onStack) > 0 {
		failure = rep.runOnStack(ctx, onStack)
	} else {
		rep.t = &target{describe: "a Temporal cluster (devstack.StartCluster), see SCALING"}
	}
	if failure == nil && slices.Contains(parts, "scaling") {
		var err error
		if rep.scaling, err = runScaling(ctx, o); err != nil {
			rep.failed, failure = "scaling", err
		}
	}
	rep.loadEnd, rep.elapsed = historybench.LoadAverage(), time.Since(began)
	rep.print(os.Stdout)
	fmt.Printf("\nthe run's files (service log, CPU profile): %s\n", o.out)
	if failure != nil {
		return fmt.Errorf("%s: %w", rep.failed, failure)
	}
	return nil
}

// runOnStack runs parts on the in-process stack (or the running API of -base-url), which it
// starts and stops; it returns the failure of a part, which it records in rep.failed.
func (rep *combined) runOnStack(ctx context.Context, parts []string) error {
	o := rep.o
	var t *target
	var err error
	if o.self {
		t, err = startSelf(ctx, o)
	} else {
		t, err = connectRemote(ctx, o)
	}
	if err != nil {
		rep.t = &target{describe: "(not started)"}
		rep.failed = "start"
		return err
	}
	defer t.close()
	rep.t = t

	payment, err := preflight(ctx, t, newSoftpayClient(t, 1), "softpay")
	if err != nil {
		rep.failed = "preflight"
		return err
	}
	offset, err := dbClockOffset(ctx, t.db)
	if err != nil {
		rep.failed = "preflight"
		return err
	}
	steps := map[string]func() error{
		"pgbench":     func() (err error) { rep.pg, err = runPgbench(ctx, t, o, payment); return err },
		"collections": func() (err error) { rep.coll, err = runCollections(ctx, t, o, offset); return err },
		"payouts":     func() (err error) { rep.payouts, err = runPayouts(ctx, t, o, offset); return err },
		"batches":     func() (err error) { rep.batches, err = runBatches(ctx, t, o); return err },
		"webhooks":    func() (err error) { rep.webhooks, err = runWebhooks(ctx, t, o); return err },
		"export":      func() (err error) { rep.exports, err = runExport(ctx, t, o); return err },
	}
	for i, p := range parts {
		if i > 0 && slices.Contains([]string{"payouts", "batches", "webhooks", "export"}, p) {
			progress("%s: waiting for the work of the parts before to finish", p)
			s, err := settle(ctx, t, settleWait)
			if err != nil {
				rep.failed = p
				return err
			}
			rep.settled[p] = s
		}
		if err := steps[p](); err != nil {
			rep.failed = p
			return err
		}
		if ctx.Err() != nil {
			rep.failed = p
			return errors.New("interrupted")
		}
	}
	return nil
}

// parseFlags reads the flags and returns the parts to run, in their order.
func parseFlags() (options, []string, error) {
	var o options
	flag.BoolVar(&o.self, "self", true, "start Postgres, Temporal, sandbox, API and worker in-process (the default unless -base-url is given)")
	flag.StringVar(&o.baseURL, "base-url", "", "drive an API that already runs, e.g. http://127.0.0.1:8080/api/v1 (default from .sika/dev.json with -self=false); collections only")
	flag.StringVar(&o.key, "key", "", "TEST API key with PAYIN scope for -base-url (default from .sika/dev.json)")
	flag.StringVar(&o.temporal, "temporal", "", "Temporal frontend host:port for history counting with -base-url (default $TEMPORAL_ADDRESS, then .sika/temporal.db.ports)")
	flag.StringVar(&o.namespace, "namespace", "default", "Temporal namespace")
	flag.StringVar(&o.databaseURL, "database-url", "", "Postgres of the running API, read for completion times with -base-url (default $DATABASE_URL, then .sika/postgres.ports)")
	flag.StringVar(&o.parts, "parts", strings.Join(allParts, ","), "the parts to run, comma-separated, among "+strings.Join(allParts, ", ")+" (with -base-url: collections)")
	flag.BoolVar(&o.short, "short", false, "shorten every part whose length is not given: -d 10s -warmup 2s -pgbench-d 5s -payout-d 5s -webhook-d 5s -export-rows 20000 -scaling-d 10s")
	flag.IntVar(&o.clients, "c", 32, "concurrent clients of collections, payouts and webhooks, and pgbench's clients (never more requests in flight)")
	flag.DurationVar(&o.duration, "d", 60*time.Second, "collections: measured duration, after the warm-up")
	flag.DurationVar(&o.warmup, "warmup", 5*time.Second, "collections: warm-up before the measurement, excluded from the figures (other parts: at most 2 s)")
	flag.IntVar(&o.max, "max", 0, "collections: stop after this many requests in all (0: no cap)")
	flag.Float64Var(&o.rate, "rate", 0, "collections: pace the clients to at most this many requests/s in all (0: each client sends as soon as its previous answer arrives)")
	flag.DurationVar(&o.tick, "tick", time.Second, "sandbox tick: the operator approves a push after one tick (-self); bounds the straggler wait")
	flag.IntVar(&o.sample, "sample", 100, "collections and scaling: successful payments whose Temporal history is read (events, bytes, payload bytes)")
	flag.StringVar(&o.out, "out", "", "directory for the run's files: the service's log, the CPU profile (default .sika/bench/<UTC time> at the module root, $SIKA_STATE_DIR/bench/… when set)")
	flag.StringVar(&o.cpuProfile, "cpuprofile", "", "CPU profile of this process over the collections window, its goroutines labelled by component (api, worker, service, sandbox, load); the report lists the service's top functions (default in -self mode: collections-cpu.pprof in -out; \"none\": no profile)")
	flag.StringVar(&o.logFile, "log", "", "where the in-process service logs go in -self mode (default service.log in -out)")
	flag.IntVar(&o.acceptRate, "accept-rate", 60, "(-self) the service's payment acceptance cap per second (SIKA_PAYMENT_ACCEPT_PER_SECOND; 0: none)")
	flag.IntVar(&o.poolConns, "pool-max-conns", 0, "experiment (-self): pool_max_conns of the service's Postgres pool (0: the service's default)")
	flag.BoolVar(&o.temporalFile, "temporal-file", false, "(-self) the Temporal dev server keeps its state in a SQLite file, as `sika dev` (make run) does, instead of in memory")
	flag.StringVar(&o.compression, "temporal-compression", "", "-self: the gRPC compression of the service's Temporal client, gzip or none (default: as the service, none towards a loopback frontend)")
	flag.BoolVar(&o.tracing, "tracing", false, "(-self) tracing on: every span exported over OTLP/HTTP, batched, to an in-process collector that discards them (as OTEL_EXPORTER_OTLP_ENDPOINT does); default off, as the service runs without it")
	flag.DurationVar(&o.pgbenchDuration, "pgbench-d", 20*time.Second, "pgbench: duration (whole seconds)")
	flag.DurationVar(&o.payoutDuration, "payout-d", 20*time.Second, "payouts: measured duration, after the warm-up")
	flag.DurationVar(&o.webhookDuration, "webhook-d", 20*time.Second, "webhooks: measured duration, after the warm-up")
	flag.Float64Var(&o.webhookRate, "webhook-rate", 30, "webhooks: softpay payments/s while deliveries are measured (the collections target: 30/s)")
	flag.IntVar(&o.exportRows, "export-rows", 100_000, "export: transactions of the exported merchant")
	flag.StringVar(&o.sikaBin, "sika-bin", "", "scaling: the sika binary the cluster's replicas run (default bin/sika at the module root; make bench builds it)")
	flag.DurationVar(&o.scalingDuration, "scaling-d", 30*time.Second, "scaling: measured duration of the ceiling and of each configuration, after the warm-up")
	flag.IntVar(&o.scalingInFlight, "scaling-in-flight", 64, "scaling: bare workflows, then payments, in flight at a time")
	flag.Parse()
	if flag.NArg() > 0 {
		return o, nil, fmt.Errorf("unexpected arguments %q", flag.Args())
	}
	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if set["base-url"] {
		if set["self"] && o.self {
			return o, nil, errors.New("-self and -base-url exclude each other")
		}
		o.self = false
	}
	if o.short {
		for name, v := range map[string]string{"d": "10s", "warmup": "2s", "pgbench-d": "5s", "payout-d": "5s", "webhook-d": "5s", "export-rows": "20000", "scaling-d": "10s"} {
			if !set[name] {
				_ = flag.Set(name, v)
			}
		}
	}
	switch {
	case o.clients < 1:
		return o, nil, errors.New("-c must be at least 1")
	case o.duration <= 0 || o.payoutDuration <= 0 || o.webhookDuration <= 0 || o.pgbenchDuration <= 0:
		return o, nil, errors.New("-d, -payout-d, -webhook-d and -pgbench-d must be positive")
	case o.warmup < 0:
		return o, nil, errors.New("-warmup must not be negative")
	case o.tick <= 0:
		return o, nil, errors.New("-tick must be positive")
	case o.max < 0 || o.sample < 0 || o.poolConns < 0 || o.rate < 0:
		return o, nil, errors.New("-max, -rate, -sample and -pool-max-conns must not be negative")
	case o.webhookRate <= 0 || o.exportRows < 1:
		return o, nil, errors.New("-webhook-rate and -export-rows must be positive")
	case o.scalingDuration <= 0 || o.scalingInFlight < 1:
		return o, nil, errors.New("-scaling-d and -scaling-in-flight must be positive")
	}
	if o.out == "" {
		o.out = filepath.Join(stateDir(), "bench", time.Now().UTC().Format("20060102T150405Z"))
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return o, nil, fmt.Errorf("-out: %w", err)
	}
	switch {
	case o.cpuProfile == "none":
		o.cpuProfile = ""
	case o.cpuProfile == "" && o.self:
		o.cpuProfile = filepath.Join(o.out, "collections-cpu.pprof")
	}
	if o.sikaBin == "" {
		root, err := devstack.FindRepoRoot(".")
		if err != nil {
			return o, nil, fmt.Errorf("-sika-bin: %w", err)
		}
		o.sikaBin = filepath.Join(root, "bin", "sika")
	}
	var parts []string
	for _, p := range strings.Split(o.parts, ",") {
		p = strings.TrimSpace(p)
		if !slices.Contains(allParts, p) {
			return o, nil, fmt.Errorf("-parts: unknown part %q (known: %s)", p, strings.Join(allParts, ", "))
		}
		parts = append(parts, p)
	}
	slices.SortFunc(parts, func(a, b string) int { return slices.Index(allParts, a) - slices.Index(allParts, b) })
	parts = slices.Compact(parts)
	if !o.self {
		if set["parts"] && !slices.Equal(parts, []string{"collections"}) && !slices.Equal(parts, []string{"scaling"}) {
			return o, nil, errors.New("with -base-url only the collections part runs (-parts collections): the others set up data in the service's store")
		}
		if !slices.Equal(parts, []string{"scaling"}) {
			parts = []string{"collections"}
		}
	}
	return o, parts, nil
}
