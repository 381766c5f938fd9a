package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"syscall"
	"time"

	"github.com/sikahq/sika/internal/devstack"
)

// faultKind is one way of hurting the service.
type faultKind string

// The faults.
const (
	faultWorkerKill   faultKind = "worker-kill"        // SIGKILL the worker, start a new one
	faultAPIKill      faultKind = "api-kill"           // SIGKILL the API, start a new one
	faultAPITerm      faultKind = "api-term"           // SIGTERM the API (graceful), start a new one
	faultTemporal     faultKind = "temporal-restart"   // stop the Temporal dev server, start it again
	faultPGFast       faultKind = "postgres-fast"      // pg_ctl stop -m fast, then start
	faultPGImmediate  faultKind = "postgres-immediate" // pg_ctl stop -m immediate (crash recovery), then start
	faultRecoveryTime           = 2 * time.Minute      // bound on the service's recovery after a fault
)

// allFaultKinds is the default rotation.
var allFaultKinds = []faultKind{faultWorkerKill, faultAPIKill, faultTemporal, faultPGFast, faultWorkerKill,
	faultAPITerm, faultPGImmediate}

// faultPlan places the faults among the operations: fault f starts once at[f] operations have
// been issued, and the operations after at[f] wait until it has started, so that load and faults
// interleave whatever their speeds.
type faultPlan struct {
	kinds []faultKind
	at    []int
	down  []time.Duration // how long the component stays down

	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every change
	issued  int
	started int
	done    bool // the load has finished
}

func newFaultPlan(o options) *faultPlan {
	r := rand.New(rand.NewPCG(uint64(o.seed), 2))
	p := &faultPlan{changed: make(chan struct{})}
	order := append([]faultKind(nil), o.faultKinds...)
	for f := range o.faults {
		if f%len(order) == 0 { // every kind once per round, in a new order each round
			r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		}
		p.kinds = append(p.kinds, order[f%len(order)])
		p.at = append(p.at, (f+1)*o.ops/(o.faults+1))
		p.down = append(p.down, time.Duration(500+r.IntN(2500))*time.Millisecond)
	}
	return p
}

func (p *faultPlan) signal() {
	close(p.changed)
	p.changed = make(chan struct{})
}

func (p *faultPlan) opIssued() {
	p.mu.Lock()
	p.issued++
	p.signal()
	p.mu.Unlock()
}

func (p *faultPlan) loadDone() {
	p.mu.Lock()
	p.done = true
	p.signal()
	p.mu.Unlock()
}

// await waits until cond holds (evaluated under the plan's lock).
func (p *faultPlan) await(ctx context.Context, cond func() bool) error {
	for {
		p.mu.Lock()
		ok, changed := cond(), p.changed
		p.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changed:
		}
	}
}

// awaitTurn waits until every fault placed at or before operation i has started.
func (p *faultPlan) awaitTurn(ctx context.Context, i int) error {
	return p.await(ctx, func() bool {
		for f, at := range p.at {
			if at <= i && p.started <= f {
				return false
			}
		}
		return true
	})
}

// faultRecord is one injected fault and what it cost.
type faultRecord struct {
	kind    faultKind
	atOp    int
	down    time.Duration // how long the component was held down
	outage  time.Duration // from the fault until the service was healthy again
	err     error
	started time.Time
}

// injectFaults injects the plan's faults one after the other, each once its operations have been
// issued, and waits for the service to recover from each before the next.
func (h *harness) injectFaults(ctx context.Context, p *faultPlan, rep *report) error {
	for f, kind := range p.kinds {
		if err := p.await(ctx, func() bool { return p.issued >= p.at[f] || p.done }); err != nil {
			return err
		}
		p.mu.Lock()
		p.started = f + 1
		p.signal()
		p.mu.Unlock()
		rec := faultRecord{kind: kind, atOp: p.at[f], down: p.down[f], started: time.Now()}
		h.log.Info("fault", "n", f+1, "kind", kind, "at_op", p.at[f], "down", p.down[f])
		rec.err = h.inject(ctx, kind, p.down[f])
		if rec.err == nil {
			rec.err = h.awaitHealthy(ctx, rec.started, kind == faultWorkerKill, faultRecoveryTime)
		}
		rec.outage = time.Since(rec.started)
		rep.addFault(rec)
		if rec.err != nil {
			h.log.Warn("fault", "kind", kind, "err", rec.err)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	return nil
}

// inject stops one component, keeps it down for down, and starts it again. With -cluster, the
// faults of a kind hit its replicas in turn, one at a time.
func (h *harness) inject(ctx context.Context, kind faultKind, down time.Duration) error {
	pause := func() {
		select {
		case <-ctx.Done():
		case <-time.After(down):
		}
	}
	if h.cluster != nil {
		return h.injectCluster(ctx, kind, pause)
	}
	switch kind {
	case faultWorkerKill, faultAPIKill, faultAPITerm:
		svc, sig := h.workers[0], syscall.SIGKILL
		if kind != faultWorkerKill {
			svc = h.apis[0]
		}
		if kind == faultAPITerm {
			sig = syscall.SIGTERM
		}
		err := svc.Stop(sig, 30*time.Second)
		pause()
		svc.Release()
		return err
	case faultTemporal:
		if err := h.stopTemporal(); err != nil {
			h.log.Warn("stop temporal", "err", err)
		}
		pause()
		return retryStart(ctx, "temporal", h.startTemporal)
	case faultPGFast, faultPGImmediate:
		if err := h.stopPostgres(kind == faultPGImmediate); err != nil {
			h.log.Warn("stop postgres", "err", err)
		}
		pause()
		return retryStart(ctx, "postgres", h.startPostgres)
	}
	return fmt.Errorf("unknown fault kind %q", kind)
}

// injectCluster is inject on the cluster: one API or worker replica killed (or an API
// replica stopped gracefully), the Temporal server killed, or Postgres shut down fast or
// immediately; each held down for a while and started again.
func (h *harness) injectCluster(ctx context.Context, kind faultKind, pause func()) error {
	var target devstack.ReplicaKind
	crash := true
	switch kind {
	case faultWorkerKill:
		target = devstack.KindWorker
	case faultAPIKill:
		target = devstack.KindAPI
	case faultAPITerm:
		target, crash = devstack.KindAPI, false
	case faultTemporal:
		target = devstack.KindTemporal
	case faultPGFast:
		target, crash = devstack.KindPostgres, false
	case faultPGImmediate:
		target = devstack.KindPostgres
	default:
		return fmt.Errorf("unknown fault kind %q", kind)
	}
	i := h.clusterHits[target] % clusterReplicas // each replica of the kind in turn
	h.clusterHits[target]++
	var err error
	if crash {
		err = h.cluster.KillReplica(target, i)
	} else {
		err = h.cluster.StopReplica(target, i)
	}
	if err != nil {
		h.log.Warn("stop", "kind", target, "replica", i, "err", err)
	}
	pause()
	return retryStart(ctx, string(target), func(ctx context.Context) error { return h.cluster.StartReplica(ctx, target, i) })
}

// retryStart starts a stopped server again, a few times if it fails (its port may still be
// held for a moment).
func retryStart(ctx context.Context, name string, start func(context.Context) error) error {
	var err error
	for range 5 {
		if err = start(ctx); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
	return fmt.Errorf("start %s again: %w", name, err)
}
