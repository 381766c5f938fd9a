// Command sikabench measures the softpay path under load: it drives POST
// /api/v1/payments/softpay/ with a bounded number of concurrent clients for a bounded time and
// prints the accept latency and throughput, the time from accept to SUCCESS, the completed
// payments per second and the Temporal history events per payment, against the targets.
//
//	go run ./cmd/sikabench -d 60s -c 32            # make bench BENCH_FLAGS="-d 60s -c 32"
//
// By default (-self) it starts everything in its own process: a throw-away Postgres (fsync
// off) and Temporal dev server (in memory) from internal/devstack, the migrations, a merchant
// with a TEST key, the sandbox operator (tick -tick), the API on loopback and the worker,
// assembled as `sika dev` assembles them, with the per-merchant rate limit lifted. With
// -base-url it drives an API that already runs (`make run`); it then needs a TEST key with
// PAYIN scope (-key), Postgres (-database-url) and Temporal (-temporal), read from the
// environment or from .sika/ ($SIKA_STATE_DIR) when not given.
//
// Load: -c clients, each sending one request at a time (never more than -c in flight): XOF
// 1000 on MTN_BJ from a number ending in 123 (the sandbox approves it after one tick), with a
// fresh Idempotency-Key. Without -rate the loop is closed (a client sends again as soon as it
// has its answer); -rate paces all clients together to at most that many requests per second.
// A 429 or 503 makes its client wait Retry-After (at most 1 s). The run is -warmup, then -d of
// measurement (or until -max requests); the figures cover requests sent in the window.
//
// Completion is read in Postgres, not by polling the API: once the load stops, the harness
// waits (at most 2 ticks + 30 s) until no accepted payment is PENDING, then reads created_at
// and completed_at of the accepted ids in one query. Both are Postgres' now() of the writing
// transaction, so accept→SUCCESS needs no clock agreement; the window is placed on the Postgres
// clock with an offset measured at start. Completed/s counts SUCCESS whose completed_at falls in
// the window, overall and per 10 s. History: the events of payment:<id> for a sample of
// successful payments.
//
// To explain the figures it also reports, for the window: CPU per process (/proc), in -self
// mode timings taken inside the API (softpay handler, workflow start RPC, callback signal) and
// the service's Postgres pool waits, and with -cpuprofile a CPU profile of this process. Two
// experiment flags (-pool-max-conns, -temporal-no-gzip) change the in-process service's
// settings to test a fix without editing it.
//
// It exits 0 whatever the figures (it is a measurement) and 1 when the harness itself fails.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
	"time"
)

type options struct {
	self        bool
	baseURL     string
	key         string
	temporal    string
	namespace   string
	databaseURL string

	clients    int
	duration   time.Duration
	warmup     time.Duration
	max        int
	rate       float64
	tick       time.Duration
	sample     int
	cpuProfile string
	logFile    string
	poolConns  int
	acceptRate int
	noGzip     bool
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "sikabench:", err)
		os.Exit(1)
	}
}

func run() error {
	var o options
	flag.BoolVar(&o.self, "self", true, "start Postgres, Temporal, sandbox, API and worker in-process (the default unless -base-url is given)")
	flag.StringVar(&o.baseURL, "base-url", "", "drive an API that already runs, e.g. http://127.0.0.1:8080/api/v1 (default from .sika/dev.json with -self=false)")
	flag.StringVar(&o.key, "key", "", "TEST API key with PAYIN scope for -base-url (default from .sika/dev.json)")
	flag.StringVar(&o.temporal, "temporal", "", "Temporal frontend host:port for history counting with -base-url (default $TEMPORAL_ADDRESS, then .sika/temporal.db.ports)")
	flag.StringVar(&o.namespace, "namespace", "default", "Temporal namespace")
	flag.StringVar(&o.databaseURL, "database-url", "", "Postgres of the running API, read for completion times with -base-url (default $DATABASE_URL, then .sika/postgres.ports)")
	flag.IntVar(&o.clients, "c", 32, "concurrent clients (never more requests in flight)")
	flag.DurationVar(&o.duration, "d", 60*time.Second, "measured duration, after the warm-up")
	flag.DurationVar(&o.warmup, "warmup", 5*time.Second, "warm-up before the measurement, excluded from the figures")
	flag.IntVar(&o.max, "max", 0, "stop after this many requests in all (0: no cap)")
	flag.Float64Var(&o.rate, "rate", 0, "pace the clients to at most this many requests/s in all (0: each client sends as soon as its previous answer arrives)")
	flag.DurationVar(&o.tick, "tick", time.Second, "sandbox tick: the operator approves a push after one tick (-self); bounds the straggler wait")
	flag.IntVar(&o.sample, "sample", 20, "successful payments whose Temporal history is counted")
	flag.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of this process over the measurement window (in -self mode: API, worker, sandbox and clients)")
	flag.StringVar(&o.logFile, "log", "", "where the in-process service logs go in -self mode (default a file in the temp dir)")
	flag.IntVar(&o.acceptRate, "accept-rate", 60, "(-self) the service's payment acceptance cap per second (SIKA_PAYMENT_ACCEPT_PER_SECOND; 0: none)")
	flag.IntVar(&o.poolConns, "pool-max-conns", 0, "experiment (-self): pool_max_conns of the service's Postgres pool (0: the service's default)")
	flag.BoolVar(&o.noGzip, "temporal-no-gzip", false, "experiment (-self): the service's Temporal client sends uncompressed gRPC (the SDK gzips by default)")
	flag.Parse()
	if flag.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", flag.Args())
	}
	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if set["base-url"] {
		if set["self"] && o.self {
			return errors.New("-self and -base-url exclude each other")
		}
		o.self = false
	}
	switch {
	case o.clients < 1:
		return errors.New("-c must be at least 1")
	case o.duration <= 0:
		return errors.New("-d must be positive")
	case o.warmup < 0:
		return errors.New("-warmup must not be negative")
	case o.tick <= 0:
		return errors.New("-tick must be positive")
	case o.max < 0 || o.sample < 0 || o.poolConns < 0 || o.rate < 0:
		return errors.New("-max, -rate, -sample and -pool-max-conns must not be negative")
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	var t *target
	var err error
	if o.self {
		t, err = startSelf(ctx, o)
	} else {
		t, err = connectRemote(ctx, o)
	}
	if err != nil {
		return err
	}
	defer t.close()

	if err := preflight(ctx, t); err != nil {
		return err
	}
	offset, err := dbClockOffset(ctx, t.db)
	if err != nil {
		return err
	}

	var prof *os.File
	if o.cpuProfile != "" {
		if prof, err = os.Create(o.cpuProfile); err != nil {
			return err
		}
		defer prof.Close()
	}
	var cpuTrack *cpuTracker
	var cpu cpuUse
	hooks := loadHooks{
		windowStart: func() {
			cpuTrack = startCPUTracker()
			if t.pool != nil {
				t.poolStart = t.pool.Stat()
			}
			if prof != nil {
				if err := pprof.StartCPUProfile(prof); err != nil {
					slog.Warn("cpu profile", "err", err)
					prof = nil
				}
			}
		},
		windowEnd: func() {
			if prof != nil {
				pprof.StopCPUProfile()
			}
			cpu = cpuTrack.finish()
			if t.pool != nil {
				t.poolEnd = t.pool.Stat()
			}
		},
	}
	fmt.Fprintf(os.Stderr, "sikabench: %d clients, %s warm-up + %s measured against %s\n", o.clients, o.warmup, o.duration, t.baseURL)
	ld, err := runLoad(ctx, t, o, hooks)
	if err != nil {
		return err
	}
	if ctx.Err() != nil {
		return errors.New("interrupted")
	}
	if ld.window() < time.Second {
		return fmt.Errorf("the measurement window lasted %s: -max %d was reached during the warm-up", ld.window(), o.max)
	}
	fmt.Fprintf(os.Stderr, "sikabench: load done (%d requests); waiting for the payments to finish\n", len(ld.samples))

	comp, err := collectCompletions(ctx, t.db, ld.acceptedIDs(), offset, ld, 2*o.tick+30*time.Second)
	if err != nil {
		return err
	}
	hist := countHistories(ctx, t, comp.successIDs, o.sample)

	r := report{o: o, t: t, load: ld, comp: comp, hist: hist, cpu: cpu}
	r.print(os.Stdout)
	if o.cpuProfile != "" {
		fmt.Printf("\nCPU profile of the window written to %s (go tool pprof -top %s)\n", o.cpuProfile, o.cpuProfile)
	}
	return nil
}
