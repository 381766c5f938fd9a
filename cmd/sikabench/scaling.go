package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"

	"github.com/sikahq/sika/internal/devstack"
	"github.com/sikahq/sika/payloadcodec"
	"github.com/sikahq/sika/store"
)

// scalingFigures are Sika on a real Temporal cluster (devstack.StartCluster: the Temporal
// server on Postgres, `sika api` and `sika worker` processes behind one address) with 1 API + 1
// worker and with 2 + 2, against the bare workflow's ceiling on the same server.
type scalingFigures struct {
	describe string
	ceiling  *ceilingFigures
	runs     []*scalingRun
	hist     *histories // Sika's payments of the last configuration
}

// scalingRun is one configuration's load.
type scalingRun struct {
	apis, workers int
	inFlight      int // payments in flight, each replaced when final (as the ceiling's workflows)
	load          *loadResult
	comp          *completions
	cpu           cpuUse
	db            []dbUse // Sika's and Temporal's databases, in the window
	walBytes      int64   // WAL the Postgres server wrote in the window (every database)
	stmts         *statements
	paced         *pacedRun // the same configuration below saturation
}

// pacedRun is a configuration under an offered load below its saturation: pacedShare of the
// bare ceiling's rate, sent at an even pace by enough clients that the pace, not the clients,
// sets the rate; what its accept latency is when nothing queues (the saturated run's p99 is
// the queue's).
type pacedRun struct {
	rate float64
	load *loadResult
	comp *completions
	cpu  cpuUse // in the window: what a payment costs below saturation
}

// pacedShare and pacedClients: the paced run's rate as a share of the ceiling, and its clients.
const (
	pacedShare   = 0.8
	pacedClients = 64
)

// dbUse is what one database did in a window (pg_stat_database).
type dbUse struct {
	name                  string
	commits               int64
	inserted, updated     int64
	deleted, fetched      int64
	returned, blocksDirty int64
}

// dbSnapshot reads pg_stat_database for the cluster's databases and the server's WAL bytes.
func dbSnapshot(ctx context.Context, db *pgxpool.Pool) (map[string]dbUse, int64, error) {
	rows, err := db.Query(ctx, `SELECT datname, xact_commit, tup_inserted, tup_updated, tup_deleted, tup_fetched, tup_returned
		FROM pg_stat_database WHERE datname LIKE 'sika%'`)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	out := map[string]dbUse{}
	for rows.Next() {
		var u dbUse
		if err := rows.Scan(&u.name, &u.commits, &u.inserted, &u.updated, &u.deleted, &u.fetched, &u.returned); err != nil {
			return nil, 0, err
		}
		out[u.name] = u
	}
	if err := rows.Err(); err != nil {
		return nil, 0, err
	}
	var wal int64
	if err := db.QueryRow(ctx, `SELECT wal_bytes::bigint FROM pg_stat_wal`).Scan(&wal); err != nil {
		wal = -1 // before Postgres 14
	}
	return out, wal, nil
}

// dbDelta is end minus start, per database, sorted by name.
func dbDelta(start, end map[string]dbUse) []dbUse {
	var out []dbUse
	for name, e := range end {
		s := start[name]
		out = append(out, dbUse{name: name, commits: e.commits - s.commits, inserted: e.inserted - s.inserted,
			updated: e.updated - s.updated, deleted: e.deleted - s.deleted, fetched: e.fetched - s.fetched, returned: e.returned - s.returned})
	}
	slices.SortFunc(out, func(a, b dbUse) int { return strings.Compare(a.name, b.name) })
	return out
}

// scalingReplicas is the largest configuration; the smaller one stops the replicas past the
// first of each kind.
const scalingReplicas = 2

// runScaling starts a cluster of scalingReplicas API and worker replicas on an ephemeral
// Postgres, with the sandbox operator in this process; measures the bare workflow's ceiling on
// its Temporal server; then drives softpay with 1 + 1 and 2 + 2 replicas running, as many
// payments in flight as the ceiling had workflows, each replaced when final, and reads the
// completions in Postgres.
func runScaling(ctx context.Context, o options) (_ *scalingFigures, err error) {
	f := &scalingFigures{}
	operator := &target{} // holds the sandbox until the end
	defer operator.close()
	sandboxURL, secret, err := startSandbox(operator, o.tick, slog.New(slog.NewJSONHandler(io.Discard, nil)))
	if err != nil {
		return nil, err
	}

	progress("scaling: starting a cluster (Temporal server on Postgres, %d sika api + %d sika worker processes)", scalingReplicas, scalingReplicas)
	quiet := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	cluster, err := devstack.StartCluster(ctx, devstack.ClusterOptions{
		Ephemeral: true, APIs: scalingReplicas, Workers: scalingReplicas, SikaBin: o.sikaBin, Logger: quiet,
		PostgresSettings: postgresSettings(),
		Env: []string{
			"SIKA_SANDBOX_URL=" + sandboxURL, "SIKA_SANDBOX_SECRET=" + secret,
			"SIKA_RATE_LIMIT_PER_MINUTE=100000000", // no acceptance cap: SIKA_PAYMENT_ACCEPT_PER_SECOND unset
			"SIKA_LOG_FORMAT=json",                 // at info: the cluster waits for the replicas' ready lines
		},
	})
	if err != nil {
		return nil, fmt.Errorf("scaling: %w", err)
	}
	defer func() {
		if err := cluster.Stop(); err != nil {
			progress("scaling: stop the cluster: %v", err)
		}
	}()
	f.describe = fmt.Sprintf("Temporal server %s (4 history shards, persistence and visibility on Postgres) and Sika's Postgres "+
		"on one ephemeral Postgres server (fsync off); `sika api`/`sika worker` processes (%s); sandbox tick %s in the bench process",
		devstack.TemporalServerVersion, o.sikaBin, o.tick)

	t, err := clusterTarget(ctx, o, cluster)
	if err != nil {
		return nil, fmt.Errorf("scaling: %w", err)
	}
	defer t.close()

	warmup := min(o.warmup, partWarmup)
	progress("scaling: bare-workflow ceiling, %d in flight, %s warm-up + %s measured", o.scalingInFlight, warmup, o.scalingDuration)
	if f.ceiling, err = runCeiling(ctx, cluster.TemporalAddress, cluster.Namespace, o.scalingInFlight, o.tick, warmup, o.scalingDuration); err != nil {
		return nil, fmt.Errorf("scaling: %w", err)
	}
	if f.ceiling.completed == 0 {
		return f, fmt.Errorf("scaling: the ceiling completed %d bare workflows (%s)", f.ceiling.completed, f.ceiling.errSample)
	}

	for n := 1; n <= scalingReplicas; n++ {
		for i := 1; i < scalingReplicas; i++ { // replica i runs from configuration i+1 on
			for _, kind := range []devstack.ReplicaKind{devstack.KindAPI, devstack.KindWorker} {
				switch {
				case n == 1:
					err = cluster.StopReplica(kind, i)
				case i == n-1:
					err = cluster.StartReplica(ctx, kind, i)
				}
				if err != nil {
					return f, fmt.Errorf("scaling: %s-%d: %w", kind, i+1, err)
				}
			}
		}
		if n > 1 {
			if err := cluster.AwaitHealthy(ctx, 2*time.Minute); err != nil {
				return f, fmt.Errorf("scaling: %w", err)
			}
			if s, err := settle(ctx, t, settleWait); err != nil {
				return f, err
			} else if s.pending > 0 {
				progress("scaling: %s", s)
			}
		}
		time.Sleep(time.Second) // the one address notices the replicas stopped (health checks every 250 ms)
		if _, err := preflight(ctx, t, newSoftpayClient(t, 1), "softpay"); err != nil {
			return f, fmt.Errorf("scaling %d+%d: %w", n, n, err)
		}
		r, err := runScalingLoad(ctx, t, o, n, warmup)
		if err != nil {
			return f, err
		}
		if r.paced, err = runPaced(ctx, t, o, n, pacedShare*f.ceiling.rate(), warmup); err != nil {
			return f, err
		}
		f.runs = append(f.runs, r)
	}
	last := f.runs[len(f.runs)-1]
	f.hist = countHistories(ctx, t, last.comp.successIDs, o.sample)
	return f, nil
}

// clusterTarget is the bench's view of the cluster: its one address, a merchant with a TEST key
// made in its database, and clients of its Postgres and Temporal.
func clusterTarget(ctx context.Context, o options, c *devstack.Cluster) (_ *target, err error) {
	t := &target{baseURL: c.BaseURL + "/api/v1"}
	defer func() {
		if err != nil {
			t.close()
		}
	}()
	st, err := store.Open(ctx, c.DatabaseURL)
	if err != nil {
		return nil, err
	}
	t.closers = append(t.closers, st.Close)
	if t.merchant, t.key, err = benchMerchant(ctx, st); err != nil {
		return nil, err
	}
	if t.db, t.statementsOff, err = harnessDB(ctx, c.DatabaseURL); err != nil {
		return nil, err
	}
	t.closers = append(t.closers, t.db.Close)
	quiet := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	keys, err := payloadcodec.ParseKeys(c.PayloadKeys) // the replicas' ring
	if err != nil {
		return nil, err
	}
	if t.tc, err = client.DialContext(ctx, client.Options{HostPort: c.TemporalAddress, Namespace: c.Namespace, Logger: tlog.NewStructuredLogger(quiet),
		DataConverter: keys.DataConverter()}); err != nil {
		return nil, err
	}
	t.closers = append(t.closers, t.tc.Close)
	return t, nil
}

// runScalingLoad drives softpay through the one address (runClosedPayments) and reads the
// completions.
func runScalingLoad(ctx context.Context, t *target, o options, n int, warmup time.Duration) (*scalingRun, error) {
	r := &scalingRun{apis: n, workers: n, inFlight: o.scalingInFlight}
	offset, err := dbClockOffset(ctx, t.db)
	if err != nil {
		return nil, err
	}
	var track *cpuTracker
	var dbStart map[string]dbUse
	var walStart int64
	stmts := &windowStatements{db: t.db, off: t.statementsOff}
	hooks := loadHooks{
		windowStart: func() {
			stmts.start(ctx)
			track = startCPUTracker()
			if dbStart, walStart, err = dbSnapshot(ctx, t.db); err != nil {
				progress("scaling: pg_stat_database: %v", err)
			}
		},
		windowEnd: func() {
			r.cpu = track.finish()
			r.stmts = stmts.end(ctx)
			if dbEnd, walEnd, err := dbSnapshot(ctx, t.db); err == nil && dbStart != nil {
				r.db, r.walBytes = dbDelta(dbStart, dbEnd), walEnd-walStart
				if walEnd < 0 || walStart < 0 {
					r.walBytes = -1
				}
			}
		},
	}
	progress("scaling %d API + %d worker: %d payments in flight, %s warm-up + %s measured", n, n, r.inFlight, warmup, o.scalingDuration)
	if r.load, err = runClosedPayments(ctx, t, r.inFlight, warmup, o.scalingDuration, hooks); err != nil {
		return nil, fmt.Errorf("scaling %d+%d: %w", n, n, err)
	}
	if r.comp, err = collectCompletions(ctx, t.db, r.load.acceptedIDs(), offset, r.load, 2*o.tick+30*time.Second); err != nil {
		return nil, fmt.Errorf("scaling %d+%d: %w", n, n, err)
	}
	return r, nil
}

// runPaced offers rate softpays/s, evenly paced, to configuration n+n for a warm-up and the
// scaling part's duration, and collects them.
func runPaced(ctx context.Context, t *target, o options, n int, rate float64, warmup time.Duration) (*pacedRun, error) {
	offset, err := dbClockOffset(ctx, t.db)
	if err != nil {
		return nil, err
	}
	p := &pacedRun{rate: rate}
	progress("scaling %d API + %d worker: paced at %.1f payments/s (%.0f %% of the ceiling), %s warm-up + %s measured", n, n, rate, 100*pacedShare, warmup, o.scalingDuration)
	c := newSoftpayClient(t, pacedClients)
	var track *cpuTracker
	hooks := loadHooks{windowStart: func() { track = startCPUTracker() }, windowEnd: func() { p.cpu = track.finish() }}
	if p.load, err = runLoad(ctx, c, loadPlan{clients: pacedClients, warmup: warmup, duration: o.scalingDuration, rate: rate}, hooks); err != nil {
		return nil, fmt.Errorf("scaling %d+%d paced: %w", n, n, err)
	}
	if p.comp, err = collectCompletions(ctx, t.db, p.load.acceptedIDs(), offset, p.load, 2*o.tick+30*time.Second); err != nil {
		return nil, fmt.Errorf("scaling %d+%d paced: %w", n, n, err)
	}
	return p, nil
}

// benchTransactions are the transactions of the bench's own connections in database d during the
// window: its statements in Sika's database (pg_stat_statements), each a transaction of its own
// (reads outside any BEGIN); 0 when they were not read.
func (r *scalingRun) benchTransactions(d dbUse) int64 {
	if d.name != "sika" || r.stmts == nil || r.stmts.skipped != "" {
		return 0
	}
	return r.stmts.harness
}

// cpuOf is the CPU the processes named name (ours) spent in the window.
func cpuOf(u cpuUse, name string) time.Duration {
	var d time.Duration
	for _, g := range u.groups {
		if g.name == name+" (ours)" {
			d += g.cpu
		}
	}
	return d
}

// perUnit is d per n, in ms.
func perUnit(d time.Duration, n int) string {
	if n == 0 {
		return "-"
	}
	return ms(d / time.Duration(n))
}

func (c *combined) printScaling(w io.Writer) {
	f := c.scaling
	fmt.Fprintf(w, "\n== SCALING: Sika on a Temporal cluster against the bare-workflow ceiling of the same server\n")
	fmt.Fprintf(w, "  target: %s\n", wrap(f.describe, 90, 10))
	if cl := f.ceiling; cl != nil {
		fmt.Fprintf(w, "\nCEILING (workflow \"Bare\": 3 local activities that do nothing, a %s poll timer raced by a signal sent one tick\n"+
			"         after the second: the shape of a sandbox softpay success; worker in the bench process, SDK defaults)\n", barePoll)
		line(w, "in flight", "%d workflows, each replaced when it completes", cl.inFlight)
		line(w, "completed/s", "%.1f /s   (%d in %.1f s; %d failed starts/signals %s)", cl.rate(), cl.completed, cl.window.Seconds(), cl.failures, cl.errSample)
		line(w, "history events per workflow", "%s", countList(cl.history))
		line(w, "CPU in the window", "%s", cpuSummary(cl.cpu, cl.completed, "workflow"))
	}
	for _, r := range f.runs {
		a := r.load.acceptStats()
		win := r.load.window()
		fmt.Fprintf(w, "\nSIKA %d API + %d WORKER (softpay through the one address, %d payments in flight, each replaced when final, window %.1f s)\n",
			r.apis, r.workers, r.inFlight, win.Seconds())
		printRequests(w, r.load, a)
		printAccept(w, r.load, a)
		printCompletion(w, r.comp, win)
		line(w, "CPU in the window", "%s", cpuSummary(r.cpu, r.comp.windowSuccess, "payment"))
		if n := float64(r.comp.windowSuccess); n > 0 {
			for _, d := range r.db {
				own := ""
				if bench := r.benchTransactions(d); bench > 0 {
					own = fmt.Sprintf(" (the bench's own %.1f left out)", float64(bench)/n)
				}
				line(w, "Postgres "+d.name, "per completed payment: %.1f transactions%s, %.1f rows inserted, %.1f updated, %.1f deleted, %.0f fetched",
					float64(d.commits-r.benchTransactions(d))/n, own, float64(d.inserted)/n, float64(d.updated)/n, float64(d.deleted)/n, float64(d.fetched)/n)
			}
			if r.walBytes >= 0 {
				line(w, "Postgres WAL", "%.1f KiB per completed payment (every database)", float64(r.walBytes)/1024/n)
			}
		}
		fmt.Fprintf(w, "  Postgres statements of the sika processes in Sika's database (pg_stat_statements), per completed payment:\n")
		r.stmts.print(w, r.comp.windowSuccess, statementsTop)
		if p := r.paced; p != nil {
			pa := p.load.acceptStats()
			fmt.Fprintf(w, "  PACED at %.1f payments/s offered (%.0f %% of the ceiling), %d clients, window %.1f s:\n", p.rate, 100*pacedShare, pacedClients, p.load.window().Seconds())
			printAccept(w, p.load, pa)
			printCompletion(w, p.comp, p.load.window())
		}
	}
	if h := f.hist; h != nil && len(h.counts) > 0 {
		line(w, "Sika history events per payment", "%s", countList(h.counts))
		line(w, "Sika history bytes per payment", "%s", h.sizes())
	}
	fmt.Fprintf(w, "\nSCALING TABLE (load average at the end of the run: %s)\n", c.loadEnd)
	fmt.Fprintf(w, "  %-18s %12s %12s %10s %17s %14s %17s %10s %10s %12s %10s\n", "configuration", "completed/s", "accept p99", "÷ ceiling",
		"Temporal CPU/pay", "sika CPU/pay", "machine CPU/pay", "÷ by CPU", "PG tx/pay", "rows wr/pay", "stmts/pay")
	var bareCPU time.Duration
	if cl := f.ceiling; cl != nil && cl.completed > 0 {
		// The bare worker and its driver run in the bench process: they count.
		bareCPU = (clusterCPU(cl.cpu) + cpuSelf(cl.cpu)) / time.Duration(cl.completed)
		fmt.Fprintf(w, "  %-18s %12.1f %12s %10s %14s ms %11s ms %14s ms %10s %10s %12s %10s\n", "bare workflow", cl.rate(), "-", "1.00",
			perUnit(cpuOf(cl.cpu, "temporal-server"), cl.completed), perUnit(cpuSelf(cl.cpu), cl.completed), ms(bareCPU), "1.00", "-", "-", "-")
	}
	for _, r := range f.runs {
		a := r.load.acceptStats()
		rate := r.comp.rate(r.load.window())
		byCPU, sikaCPU := "-", time.Duration(0)
		if n := r.comp.windowSuccess; n > 0 {
			// The load's clients and the sandbox operator run in the bench process: they do not.
			sikaCPU = clusterCPU(r.cpu) / time.Duration(n)
			if bareCPU > 0 {
				byCPU = fmt.Sprintf("%.2f", bareCPU.Seconds()/sikaCPU.Seconds())
			}
		}
		txs, written, stmts := "-", "-", "-"
		if st := r.stmts; st != nil && st.skipped == "" && r.comp.windowSuccess > 0 {
			stmts = fmt.Sprintf("%.1f", float64(st.all.calls)/float64(r.comp.windowSuccess))
		}
		for _, d := range r.db {
			if n := float64(r.comp.windowSuccess); d.name == "sika" && n > 0 {
				txs = fmt.Sprintf("%.1f", float64(d.commits-r.benchTransactions(d))/n)
				written = fmt.Sprintf("%.1f", float64(d.inserted+d.updated+d.deleted)/n)
			}
		}
		fmt.Fprintf(w, "  %-18s %12.1f %9s ms %10s %14s ms %11s ms %14s ms %10s %10s %12s %10s\n", fmt.Sprintf("Sika %d API + %d wkr", r.apis, r.workers), rate,
			ms(percentile(a.lat, 99)), f.ratio(rate), perUnit(cpuOf(r.cpu, "temporal-server"), r.comp.windowSuccess),
			perUnit(cpuOf(r.cpu, "sika"), r.comp.windowSuccess), ms(sikaCPU), byCPU, txs, written, stmts)
		if p := r.paced; p != nil {
			pr := p.comp.rate(p.load.window())
			n := p.comp.windowSuccess
			fmt.Fprintf(w, "  %-18s %12.1f %9s ms %10s %14s ms %11s ms %14s ms %10s %10s %12s %10s\n", fmt.Sprintf("  paced %.0f %%", 100*pacedShare), pr,
				ms(percentile(p.load.acceptStats().lat, 99)), f.ratio(pr), perUnit(cpuOf(p.cpu, "temporal-server"), n),
				perUnit(cpuOf(p.cpu, "sika"), n), perUnit(clusterCPU(p.cpu), n), "-", "-", "-", "-")
		}
	}
	fmt.Fprintf(w, "  (paced: the configuration above offered %.0f %% of the bare ceiling's rate at an even pace, below saturation:\n"+
		"   its accept p99 is the service's own, not a queue's, and its CPU per payment is measured below saturation;\n", 100*pacedShare)
	fmt.Fprintf(w, "   ÷ by CPU: the bare workflow's CPU per workflow over Sika's per payment, the Temporal server, Postgres and the\n"+
		"   sika processes counted: what the ratio is on a machine bound by CPU, whatever else runs on it; sika CPU: the\n"+
		"   sika api and worker processes (for the bare workflow, its worker in the bench process); PG tx and rows written\n"+
		"   (inserted, updated, deleted) per payment in Sika's own database, reads included in the transactions, the bench's\n"+
		"   own reads left out when pg_stat_statements counted them; stmts: the statements of the sika processes there,\n"+
		"   pg_stat_statements, BEGIN and COMMIT included)\n")
}

// clusterCPU is the CPU of the cluster's own processes: the Temporal server, Postgres and sika.
func clusterCPU(u cpuUse) time.Duration {
	return cpuOf(u, "temporal-server") + cpuOf(u, "postgres") + cpuOf(u, "sika")
}

// ratio is rate as a share of the ceiling.
func (f *scalingFigures) ratio(rate float64) string {
	if f.ceiling == nil || f.ceiling.rate() == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", rate/f.ceiling.rate())
}

// cpuSummary is the CPU of the cluster's processes in a window, in all and per payment, and how
// busy the machine was.
func cpuSummary(u cpuUse, payments int, unit string) string {
	var parts []string
	for _, name := range []string{"temporal-server", "sika", "postgres"} {
		d := cpuOf(u, name)
		parts = append(parts, fmt.Sprintf("%s %.1f core-s (%s ms/%s)", name, d.Seconds(), perUnit(d, payments), unit))
	}
	parts = append(parts, fmt.Sprintf("bench process %.1f core-s", cpuSelf(u).Seconds()))
	if total := u.busy + u.idle; total > 0 {
		// A lock or a single sweeper shows as idle cores while throughput stops; a saturated
		// machine is bound by CPU.
		parts = append(parts, fmt.Sprintf("machine busy %.0f%% (other processes %.1f core-s)", 100*u.busy.Seconds()/total.Seconds(), u.others().Seconds()))
	}
	return wrap(strings.Join(parts, ", "), 80, 39)
}

func cpuSelf(u cpuUse) time.Duration {
	for _, g := range u.groups {
		if g.name == "sikabench (this process)" {
			return g.cpu
		}
	}
	return 0
}

// countList is how many times each value occurs: "13 ×93, 18 ×7".
func countList(xs []int) string {
	if len(xs) == 0 {
		return "-"
	}
	times := map[int]int{}
	for _, x := range xs {
		times[x]++
	}
	keys := slices.Sorted(maps.Keys(times))
	s := make([]string, len(keys))
	for i, k := range keys {
		s[i] = fmt.Sprintf("%d ×%d", k, times[k])
	}
	return strings.Join(s, ", ")
}
