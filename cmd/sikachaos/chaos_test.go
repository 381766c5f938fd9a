package main

import (
	"bytes"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestChaosShort is the short version of `make chaos` that `make test` runs: the same harness
// (its own durable Postgres and Temporal, real `sika api` and `sika worker` processes) with a
// few hundred operations and five faults: a worker SIGKILL, a graceful API restart, a Temporal
// restart and both Postgres shutdowns. It leaves out the API SIGKILL of the full run: that
// strands the Idempotency-Keys of the requests in flight for the API's 2-minute lease, which
// the merchant's retries must wait out. (A Postgres shutdown in the middle of a request can
// strand one too: then the test takes about 2 minutes longer than its load.) The mix includes a
// few of each money-safety operation (010 "not found, then pays", 011 "pays after the deadline"
// with its retry, three customers paying one checkout, a key reused after a cut commit); the
// 011 payments add up to lateAfter (a minute) to the end of the load. It must report zero
// violations.
func TestChaosShort(t *testing.T) {
	o := defaultOptions()
	o.ops, o.faults, o.duration, o.concurrency = 250, 5, 30*time.Second, 12
	o.faultKinds = []faultKind{faultWorkerKill, faultAPITerm, faultTemporal, faultPGFast, faultPGImmediate}
	o.seed = 20261121
	o.timeout = 9 * time.Minute
	o.sikaBin = os.Getenv("SIKACHAOS_SIKA_BIN") // a prebuilt sika; by default the test builds one
	level := slog.LevelWarn
	if testing.Verbose() {
		level = slog.LevelInfo
	}
	o.logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))

	rep, err := run(t.Context(), o)
	if rep != nil {
		var out bytes.Buffer
		rep.print(&out)
		t.Log(out.String())
	}
	require.NoError(t, err)
	assert.Zero(t, rep.violations(), "violations: see the report above")
	assert.Len(t, rep.faults, o.faults)
	assert.EqualValues(t, o.ops, rep.load.issued.Load())
	for _, k := range []opKind{opNotFound, opLate, opCheckoutRace, opKeyReuse, opClosedPaid} {
		assert.NotZero(t, rep.load.stats.of(k).ops, "no %s operation ran: change the seed", k)
	}
	afterCommit := 0
	for _, r := range rep.load.book.reuses {
		if r.cut == cutDone && r.when == cutAfterCommit {
			afterCommit++
		}
	}
	assert.NotZero(t, afterCommit, "no key reuse had its commit's answer cut: the store's backstop was not exercised")
}
