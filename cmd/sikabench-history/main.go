// Command sikabench-history measures the transaction history on a million transactions: the
// filtered cursor list, the search and the streaming CSV export, over HTTP against the real API
// (api.NewServer on loopback) and a real Postgres.
//
// It is self-contained: it starts a throw-away Postgres (internal/devstack, ephemeral), applies
// the migrations (store.Migrate), seeds -rows transactions with COPY (pgx CopyFrom, generated
// row by row from a fixed seed: a big merchant holding most rows in LIVE and exactly
// -export-rows in TEST, and 20 small merchants), their gateway attempts and status logs, then
// VACUUM ANALYZE. With -database-url it uses that server instead (an admin URL; the data goes
// to database sika_history_bench, reused when it already holds the same data set).
//
// With -export-only the data set is one merchant's TEST history of -rows transactions alone,
// and only its export is measured: by default the goal's export of 1,000,000 rows (make
// bench-export).
//
// With -dashboard it measures the merchant dashboard instead (dashboard.go): the server time
// and the page weight of every page, for the big merchant's TEST history.
//
// Otherwise it sends each scenario -n times, one request at a time, and prints p50, p95, p99 and
// max per scenario and per group against the targets (list p99 <= 30 ms, search p99 <= 50 ms),
// then exports -export-rows rows and prints rows/s and the peak RSS of the process during the
// export (its high-water mark reset just before, /proc/self/clear_refs), next to a small
// export's peak for comparison: equal peaks mean constant memory. It exits 0 whatever the
// figures (it is a measurement) and 1 when the harness itself fails.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sikahq/sika/api"
	"github.com/sikahq/sika/cmd/sikabench-history/historybench"
	"github.com/sikahq/sika/internal/devstack"
	"github.com/sikahq/sika/store"
)

type options struct {
	rows        int
	exportRows  int
	n           int
	databaseURL string
	hold        bool
	exportLive  bool
	only        string
	dashboard   bool
	cpuProfile  string
	exportOnly  bool
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "sikabench-history:", err)
		os.Exit(1)
	}
}

const benchDatabase = "sika_history_bench"

func run() error {
	var o options
	flag.IntVar(&o.rows, "rows", 1_000_000, "transactions to seed in all")
	flag.IntVar(&o.exportRows, "export-rows", 100_000, "transactions of the big merchant in TEST: the size of the measured export")
	flag.IntVar(&o.n, "n", 100, "measured requests per scenario (after 10 warm-up requests)")
	flag.StringVar(&o.databaseURL, "database-url", "", "admin URL of a Postgres server to use instead of an ephemeral one")
	flag.BoolVar(&o.hold, "hold", false, "after seeding, print the database URL and wait for Ctrl-C (for EXPLAIN sessions)")
	flag.BoolVar(&o.exportLive, "export-live", true, "also export the big merchant's LIVE history (most rows), to show the memory does not grow")
	flag.StringVar(&o.only, "only", "", "run only the scenarios of this group (list, search, attempts) and no export, or only the exports (export)")
	flag.BoolVar(&o.dashboard, "dashboard", false, "measure the merchant dashboard's pages instead (server time and weight of each GET page, for the big merchant's -export-rows TEST transactions)")
	flag.BoolVar(&o.exportOnly, "export-only", false, "seed -rows transactions of one merchant in TEST alone (no other tenant, no attempts or status logs) and measure only their export, in full and a small part: with the default -rows, the goal's export of 1,000,000 rows")
	flag.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of this process (the API in process and the client) over the exports")
	flag.Parse()
	if flag.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", flag.Args())
	}
	if o.exportOnly {
		o.exportRows, o.only = o.rows, "export"
	}
	if o.rows < 1000 || o.exportRows < 1 || (o.exportRows > o.rows/2 && !o.exportOnly) || o.n < 1 {
		return errors.New("-rows must be at least 1000, -export-rows between 1 and rows/2, -n at least 1")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logf := func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "sikabench-history: "+format+"\n", args...)
	}

	adminURL := o.databaseURL
	if adminURL == "" {
		dir, err := os.MkdirTemp("", "sika-history-bench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		quiet := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
		logf("starting an ephemeral Postgres")
		pg, err := devstack.StartPostgres(ctx, devstack.PostgresOptions{DataDir: filepath.Join(dir, "postgres"), Ephemeral: true, Logger: quiet})
		if err != nil {
			return err
		}
		defer pg.Stop()
		adminURL = pg.URL("postgres")
	}
	database := benchDatabase
	if o.exportOnly {
		database += "_export" // another data set of as many rows
	}
	if err := devstack.CreateDatabase(ctx, adminURL, database); err != nil {
		return err
	}
	dbURL, err := devstack.DatabaseURL(adminURL, database)
	if err != nil {
		return err
	}
	st, err := store.Open(ctx, dbURL)
	if err != nil {
		return err
	}
	defer st.Close()
	if _, err := st.Migrate(ctx); err != nil {
		return err
	}
	pool, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		return err
	}
	defer pool.Close()

	d := &historybench.Dataset{Rows: o.rows, ExportRows: o.exportRows, Others: 20,
		End: time.Now().UTC().Add(-time.Hour).Truncate(time.Hour)}
	if o.exportOnly {
		d.Others, d.TransactionsOnly = 0, true
	}
	d.Start = d.End.AddDate(-2, 0, 0)
	if err := d.Prepare(ctx, st, pool, logf); err != nil {
		return fmt.Errorf("database %s: %w", database, err)
	}
	if o.hold {
		logf("data set ready in %s; Ctrl-C to stop", dbURL)
		<-ctx.Done()
		return nil
	}

	// Seeding garbage must not count in the export's peak RSS.
	runtime.GC()
	debug.FreeOSMemory()

	base, closeAPI, err := serveAPI(st)
	if err != nil {
		return err
	}
	defer closeAPI()
	if o.dashboard {
		pages, err := runDashboard(ctx, base, o.n, logf)
		if err != nil {
			return err
		}
		printDashboardReport(os.Stdout, o, pages)
		return nil
	}
	b := &bench{base: base, d: d, pool: pool, client: &http.Client{Timeout: 5 * time.Minute}, n: o.n, logf: logf}
	b.only = o.only
	results, err := b.runScenarios(ctx)
	if err != nil {
		return err
	}
	var exports []historybench.ExportResult
	if o.only == "" || o.only == "export" {
		stopProfile, err := startCPUProfile(o.cpuProfile)
		if err != nil {
			return err
		}
		exports, err = historybench.RunExports(ctx, b.client, base, d, o.exportLive && !o.exportOnly, logf)
		stopProfile()
		if err != nil {
			return err
		}
	}
	printReport(os.Stdout, o, results, exports)
	return nil
}

// serveAPI serves the API on a loopback port and returns its base URL.
func serveAPI(st *store.Store) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	base := "http://" + ln.Addr().String()
	srv := api.NewServer(api.Config{
		PublicURL: base, JWTSecret: []byte("sikabench-history secret of at least 32 bytes"),
		RateLimitPerMinute: 1 << 30, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}, st)
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	return base, func() { _ = hs.Close() }, nil
}

// startCPUProfile writes a CPU profile to path until the returned function is called ("" : none).
func startCPUProfile(path string) (func(), error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}
