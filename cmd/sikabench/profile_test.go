package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sikahq/sika/internal/devstack"
)

// TestCollectionsExplainers runs a short collections window on the in-process stack (its own
// Postgres with pg_stat_statements and Temporal dev server, as make bench starts them) and
// checks that what the report gives per payment is read from the run: the service's statements
// (the softpay insert among them, the bench's own connections left out), the payload bytes of
// the sampled histories, and the service's functions in the CPU profile. Content, not speed.
func TestCollectionsExplainers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dir := t.TempDir()
	o := options{self: true, namespace: "default", tick: time.Second, acceptRate: 60, clients: 4, rate: 10,
		warmup: time.Second, duration: 5 * time.Second, sample: 10, out: dir,
		cpuProfile: filepath.Join(dir, "cpu.pprof"), logFile: filepath.Join(dir, "service.log")}
	tg := startSelfChecked(ctx, t, o)
	defer tg.close()
	offset, err := dbClockOffset(ctx, tg.db)
	if err != nil {
		t.Fatal(err)
	}
	r, err := runCollections(ctx, tg, o, offset)
	if err != nil {
		t.Fatal(err)
	}
	if r.comp.windowSuccess == 0 {
		t.Fatalf("no payment completed in the window (%d accepted, %d pending)", r.comp.accepted, r.comp.pending)
	}
	var out strings.Builder
	r.print(&out)
	t.Logf("report:\n%s", out.String())

	// Statements: the softpay insert ran in the window, as the service's (not the bench's).
	switch st := r.stmts; {
	case st == nil:
		t.Error("no statements read")
	case st.skipped != "" && !devstack.PostgresHasLibrary("pg_stat_statements"):
		t.Logf("pg_stat_statements not installed beside the Postgres binaries: %s", st.skipped)
	case st.skipped != "":
		t.Errorf("statements not read: %s", st.skipped)
	default:
		var insert *statement
		for i, s := range st.top {
			if strings.HasPrefix(s.query, "INSERT INTO transactions ") {
				insert = &st.top[i]
			}
		}
		if insert == nil || insert.calls == 0 || insert.rows == 0 {
			t.Errorf("the softpay insert is not among the service's statements: %+v", insert)
		}
		if st.all.calls < int64(r.comp.windowSuccess) {
			t.Errorf("%d statements for %d payments completed in the window", st.all.calls, r.comp.windowSuccess)
		}
		for _, s := range st.top {
			if strings.Contains(s.query, "pg_stat_statements") {
				t.Errorf("the bench's own statement counted as the service's: %s", s.query)
			}
		}
	}

	// History: every sampled payment's payloads, the workflow's input first among them.
	h := r.hist
	if len(h.counts) == 0 {
		t.Fatalf("no history read: %v", h.errors)
	}
	if h.payloads.bytes <= 0 || h.payloads.count < len(h.counts) || h.bytes <= h.payloads.bytes {
		t.Errorf("history of %d payments: %d bytes, %d payloads of %d bytes", len(h.counts), h.bytes, h.payloads.count, h.payloads.bytes)
	}
	if h.payloads.by["WorkflowExecutionStarted.input"] <= 0 {
		t.Errorf("no input payload in the started events: %v", h.payloads.by)
	}

	// CPU profile: the service's samples, attributed to Sika's own functions.
	p := r.prof
	if p == nil {
		t.Fatal("no CPU profile read")
	}
	if p.service() <= 0 || p.total < p.service() {
		t.Errorf("profile: service %s of %s sampled, by component %v", p.service(), p.total, p.by)
	}
	if len(p.byFlat(profileTop)) == 0 || len(p.byCum(profileTop)) == 0 {
		t.Errorf("profile: no function of the service (%d functions)", len(p.funcs))
	}
	if a := r.allocs; a == nil || a.bytes == 0 || a.objects == 0 || a.startFile == "" || a.endFile == "" {
		t.Errorf("allocations over the window: %+v", a)
	}
}

// startSelfChecked starts the in-process stack for the test, which closes it, and sends one
// payment through it to success.
func startSelfChecked(ctx context.Context, t *testing.T, o options) *target {
	t.Helper()
	tg, err := startSelf(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := preflight(ctx, tg, newSoftpayClient(tg, 1), "softpay"); err != nil {
		tg.close()
		t.Fatal(err)
	}
	return tg
}
