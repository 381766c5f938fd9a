package main

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/sikahq/sika/internal/devstack"
	"github.com/sikahq/sika/store"
)

// pgbenchScript is one softpay acceptance as the service writes it (see its comment).
//
//go:embed pgbench_softpay.sql
var pgbenchScript string

// pgbenchDatabase is where pgbench writes, on the service's Postgres server: migrated like the
// service's database, with a merchant of its own, so that the service's data stays as it was.
const pgbenchDatabase = "sika_pgbench"

// pgbenchResult is the raw Postgres ceiling of the softpay write path.
type pgbenchResult struct {
	version          string
	clients, threads int
	duration         time.Duration
	tps              float64 // without the initial connection time
	processed        int64
	failed           int64
	latencyAvg       float64 // ms
	inserted         int64   // transactions in the database afterwards: one per pgbench transaction
}

var (
	pgbenchTPS       = regexp.MustCompile(`(?m)^tps = ([0-9.]+) \(without initial connection time\)`)
	pgbenchProcessed = regexp.MustCompile(`(?m)^number of transactions actually processed: ([0-9]+)`)
	pgbenchFailed    = regexp.MustCompile(`(?m)^number of failed transactions: ([0-9]+)`)
	pgbenchLatency   = regexp.MustCompile(`(?m)^latency average = ([0-9.]+) ms`)
)

// runPgbench runs pgbench (found next to the Postgres server binaries, as internal/devstack
// finds them) with pgbench_softpay.sql, -c clients for -pgbench-d, against a database of its own
// on the service's Postgres server. The event payload it writes is the real transaction.pending
// event of the payment the pre-flight made.
func runPgbench(ctx context.Context, t *target, o options, preflightPayment uuid.UUID) (*pgbenchResult, error) {
	dir, err := devstack.FindPostgresBinaries()
	if err != nil {
		return nil, fmt.Errorf("pgbench: %w", err)
	}
	bin := filepath.Join(dir, "pgbench")
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("pgbench is not next to the Postgres server binaries: %w", err)
	}
	res := &pgbenchResult{clients: o.clients, threads: min(o.clients, runtime.NumCPU()),
		duration: max(time.Second, o.pgbenchDuration.Round(time.Second))}
	if out, err := exec.CommandContext(ctx, bin, "--version").Output(); err == nil {
		res.version = strings.TrimSpace(string(out))
	}
	if err := devstack.CreateDatabase(ctx, t.adminURL, pgbenchDatabase); err != nil {
		return nil, fmt.Errorf("pgbench: %w", err)
	}
	dbURL, err := devstack.DatabaseURL(t.adminURL, pgbenchDatabase)
	if err != nil {
		return nil, fmt.Errorf("pgbench: %w", err)
	}
	st, err := store.Open(ctx, dbURL)
	if err != nil {
		return nil, fmt.Errorf("pgbench: open %s: %w", pgbenchDatabase, err)
	}
	defer st.Close()
	if _, err := st.Migrate(ctx); err != nil {
		return nil, fmt.Errorf("pgbench: migrate %s: %w", pgbenchDatabase, err)
	}
	merchant, _, err := benchMerchant(ctx, st)
	if err != nil {
		return nil, fmt.Errorf("pgbench: %w", err)
	}
	network, err := st.NetworkByCode(ctx, "MTN_BJ")
	if err != nil {
		return nil, fmt.Errorf("pgbench: %w", err)
	}
	var payload string
	if err := t.db.QueryRow(ctx, `SELECT payload::text FROM events WHERE transaction_id = $1 AND type = 'transaction.pending'`,
		preflightPayment).Scan(&payload); err != nil {
		return nil, fmt.Errorf("pgbench: read the pre-flight payment's event: %w", err)
	}
	script, err := os.CreateTemp("", "sikabench-pgbench-*.sql")
	if err != nil {
		return nil, err
	}
	defer os.Remove(script.Name())
	if _, err := script.WriteString(pgbenchScript); err != nil {
		return nil, err
	}
	if err := script.Close(); err != nil {
		return nil, err
	}

	progress("pgbench: %d clients, %d threads, %s against %s", res.clients, res.threads, res.duration, pgbenchDatabase)
	cmd := exec.CommandContext(ctx, bin, "--no-vacuum", "--protocol=prepared",
		"--client="+strconv.Itoa(res.clients), "--jobs="+strconv.Itoa(res.threads),
		"--time="+strconv.Itoa(int(res.duration/time.Second)), "--file="+script.Name(),
		"--define=merchant="+merchant.String(), "--define=network="+network.ID.String(), "--define=payload="+payload,
		dbURL)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("pgbench: %w\n%s", err, tail(string(out), 20))
	}
	text := string(out)
	tps, ok := number(pgbenchTPS, text)
	if !ok {
		return nil, fmt.Errorf("pgbench: no tps in its output:\n%s", tail(text, 20))
	}
	res.tps = tps
	if n, ok := number(pgbenchProcessed, text); ok {
		res.processed = int64(n)
	}
	if n, ok := number(pgbenchFailed, text); ok {
		res.failed = int64(n)
	}
	res.latencyAvg, _ = number(pgbenchLatency, text)
	if err := st.Pool().QueryRow(ctx, `SELECT count(*) FROM transactions`).Scan(&res.inserted); err != nil {
		return nil, fmt.Errorf("pgbench: count its transactions: %w", err)
	}
	if res.inserted < res.processed {
		return nil, fmt.Errorf("pgbench processed %d transactions but %d payments are in %s: the script does not insert", res.processed, res.inserted, pgbenchDatabase)
	}
	return res, nil
}

// number is the first submatch of re in text, as a number.
func number(re *regexp.Regexp, text string) (float64, bool) {
	m := re.FindStringSubmatch(text)
	if m == nil {
		return 0, false
	}
	v, err := strconv.ParseFloat(m[1], 64)
	return v, err == nil
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
