package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime/pprof"
	"time"

	"github.com/sikahq/sika/internal/devstack"
)

// runCollections drives softpay with -c clients for -warmup + -d, waits for the accepted
// payments to finish and counts the histories of a sample, with the CPU, the service's pool,
// its statements (pg_stat_statements) and (with -cpuprofile) a CPU profile and the allocations
// over the window.
func runCollections(ctx context.Context, t *target, o options, offset time.Duration) (*report, error) {
	var prof *os.File
	var err error
	if o.cpuProfile != "" {
		if prof, err = os.Create(o.cpuProfile); err != nil {
			return nil, fmt.Errorf("-cpuprofile: %w", err)
		}
		defer prof.Close()
	}
	var cpuTrack *cpuTracker
	var cpu cpuUse
	var allocs *allocWindow
	var allocated *allocUse
	stmts := &windowStatements{db: t.db, off: t.statementsOff}
	var stmtsRead *statements
	var serverCalls [2]persistenceCalls // the dev server's, at the window's start and end
	readServerCalls := func(i int) {
		if t.temporalMetrics == "" {
			return
		}
		calls, err := devstack.PersistenceCalls(ctx, t.temporalMetrics)
		if err != nil {
			slog.Warn("dev server metrics", "err", err)
			return
		}
		serverCalls[i] = calls
	}
	hooks := loadHooks{
		windowStart: func() {
			stmts.start(ctx)
			readServerCalls(0)
			cpuTrack = startCPUTracker()
			if t.pool != nil {
				t.poolStart = t.pool.Stat()
			}
			if prof != nil {
				allocs = startAllocs(o.out)
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
			if allocs != nil {
				allocated = allocs.finish(o.out)
			}
			cpu = cpuTrack.finish()
			stmtsRead = stmts.end(ctx)
			readServerCalls(1)
			if t.pool != nil {
				t.poolEnd = t.pool.Stat()
			}
		},
	}
	progress("collections: %d clients, %s warm-up + %s measured against %s", o.clients, o.warmup, o.duration, t.baseURL)
	plan := loadPlan{clients: o.clients, warmup: o.warmup, duration: o.duration, max: o.max, rate: o.rate}
	var ld *loadResult
	labelled(ctx, compLoad, func() { ld, err = runLoad(ctx, newSoftpayClient(t, o.clients), plan, hooks) })
	if err != nil {
		return nil, fmt.Errorf("collections: %w", err)
	}
	if ctx.Err() != nil {
		return nil, errors.New("interrupted")
	}
	if ld.window() < time.Second {
		return nil, fmt.Errorf("the measurement window lasted %s: -max %d was reached during the warm-up", ld.window(), o.max)
	}
	progress("collections: load done (%d requests); waiting for the payments to finish", len(ld.samples))
	comp, err := collectCompletions(ctx, t.db, ld.acceptedIDs(), offset, ld, 2*o.tick+30*time.Second)
	if err != nil {
		return nil, fmt.Errorf("collections: %w", err)
	}
	hist := countHistories(ctx, t, comp.successIDs, o.sample)
	r := &report{o: o, t: t, load: ld, comp: comp, hist: hist, cpu: cpu, stmts: stmtsRead, allocs: allocated}
	if serverCalls[0] != nil && serverCalls[1] != nil {
		r.serverCalls = serverCalls
	}
	if prof != nil {
		if err := prof.Close(); err != nil {
			return nil, fmt.Errorf("-cpuprofile: %w", err)
		}
		if r.prof, err = readCPUProfile(o.cpuProfile); err != nil {
			return nil, fmt.Errorf("read the CPU profile: %w", err)
		}
	}
	return r, nil
}

// progress tells, on stderr, what the harness is doing.
func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "sikabench: "+format+"\n", args...)
}
