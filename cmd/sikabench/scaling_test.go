package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sikahq/sika/internal/devstack"
)

// TestScalingHarness runs the scaling part for a few seconds per measurement: a cluster starts,
// the bare workflow and both configurations complete work, and the bare workflow's history has
// the shape of Sika's payments (the ceiling is only a ceiling of the same work if it does).
// It starts a whole cluster: about 30 s on the shared 2-core machine, part of make test, which
// builds the Temporal server; the test builds what is missing itself. Skipped with -short only.
func TestScalingHarness(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a whole cluster")
	}
	root, err := devstack.FindRepoRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	// What the cluster runs, built when missing: the Temporal server and its SQL tool in bin/
	// (as make test does), and this checkout's sika.
	if _, err := devstack.EnsureTemporalServer(ctx, root, nil); err != nil {
		t.Fatal(err)
	}
	sikaBin := filepath.Join(t.TempDir(), "sika")
	build := exec.CommandContext(ctx, "go", "build", "-o", sikaBin, "./cmd/sika")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/sika: %v\n%s", err, out)
	}
	o := options{clients: 4, warmup: time.Second, tick: time.Second, sample: 3, scalingDuration: 3 * time.Second,
		scalingInFlight: 16, sikaBin: sikaBin}
	f, err := runScaling(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if f.ceiling.completed == 0 {
		t.Fatalf("the ceiling completed no bare workflow: %d failures, e.g. %s", f.ceiling.failures, f.ceiling.errSample)
	}
	if got, want := len(f.runs), scalingReplicas; got != want {
		t.Fatalf("configurations measured: got %d, want %d", got, want)
	}
	var report strings.Builder
	(&combined{scaling: f}).printScaling(&report)
	t.Logf("report:\n%s", report.String())
	for _, r := range f.runs {
		if r.comp.windowSuccess == 0 {
			t.Errorf("%d API + %d worker: no payment completed in the window (%d accepted)", r.apis, r.workers, r.comp.accepted)
		}
		// The paced run below saturation: offered at its share of the ceiling, and completed.
		if p := r.paced; p == nil || p.rate != pacedShare*f.ceiling.rate() || p.comp.windowSuccess == 0 {
			t.Errorf("%d API + %d worker: paced run %+v", r.apis, r.workers, p)
		}
		// The sika processes' statements, told from the bench's (its watcher reads the payments
		// in flight ten times a second, as the role sikabench).
		if st := r.stmts; devstack.PostgresHasLibrary("pg_stat_statements") && (st == nil || st.skipped != "" || st.all.calls == 0 || st.harness == 0) {
			t.Errorf("%d API + %d worker: statements %+v", r.apis, r.workers, st)
		}
	}
	if len(f.ceiling.history) == 0 || f.hist == nil || len(f.hist.counts) == 0 {
		t.Fatalf("histories not counted: bare %v, Sika %+v", f.ceiling.history, f.hist)
	}
	if f.hist.payloads.bytes == 0 {
		t.Errorf("no payload bytes in Sika's histories: %+v", f.hist.payloads)
	}
	// The shape is the shortest history of each: on a loaded machine a workflow task that waits
	// past its schedule-to-start timeout adds two events (WorkflowTaskTimedOut, WorkflowTaskScheduled)
	// to a few histories of either, which says how busy the machine was, not what the work is.
	if got, want := slices.Min(f.ceiling.history), slices.Min(f.hist.counts); got != want {
		t.Errorf("bare workflow history: got %d events (%v), want %d, a Sika payment's (%v)", got, f.ceiling.history, want, f.hist.counts)
	}
}
