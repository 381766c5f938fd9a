package main

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/google/uuid"
)

// runClosedPayments drives softpay the way the ceiling drives the bare workflow: inFlight
// payments at a time, each replaced by a new one as soon as it is final in Postgres, for warmup
// + d. The load therefore never runs ahead of what the service completes: no backlog builds up
// to be measured instead of the service (a payment waiting longer than two sweep intervals for
// its start would also be started by the outbox sweeper). Every request is a sample, as in
// runLoad.
func runClosedPayments(ctx context.Context, t *target, inFlight int, warmup, d time.Duration, hooks loadHooks) (*loadResult, error) {
	c := newSoftpayClient(t, inFlight)
	defer c.http.CloseIdleConnections()
	res := &loadResult{clients: inFlight, start: time.Now()}
	res.windowStart = res.start.Add(warmup)
	end := res.windowStart.Add(d)
	w := &finalWatcher{waiting: map[uuid.UUID]chan struct{}{}}
	watchCtx, stopWatching := context.WithCancel(ctx)
	var watching sync.WaitGroup
	watching.Go(func() { w.run(watchCtx, t) })
	defer func() { stopWatching(); watching.Wait() }()

	windowDone := make(chan struct{})
	go func() {
		defer close(windowDone)
		select {
		case <-time.After(time.Until(res.windowStart)):
		case <-ctx.Done():
		}
		if hooks.windowStart != nil {
			hooks.windowStart()
		}
		select {
		case <-time.After(time.Until(end)):
		case <-ctx.Done():
		}
		res.windowEnd = time.Now()
		if hooks.windowEnd != nil {
			hooks.windowEnd()
		}
	}()
	perClient := make([][]sample, inFlight)
	var wg sync.WaitGroup
	for i := range inFlight {
		wg.Go(func() {
			for time.Now().Before(end) && ctx.Err() == nil {
				s := c.send(ctx)
				perClient[i] = append(perClient[i], s)
				if s.status != http.StatusCreated || s.id == uuid.Nil {
					select { // a refusing service is not hammered
					case <-time.After(100 * time.Millisecond):
					case <-ctx.Done():
					}
					continue
				}
				select {
				case <-w.await(s.id):
				case <-time.After(2 * time.Minute):
				case <-ctx.Done():
				}
			}
		})
	}
	wg.Wait()
	<-windowDone
	return res.gather(perClient)
}

// finalWatcher tells the clients of runClosedPayments when their payment is final, reading the
// status of every payment in flight in one query ten times a second.
type finalWatcher struct {
	mu      sync.Mutex
	waiting map[uuid.UUID]chan struct{}
}

func (w *finalWatcher) await(id uuid.UUID) <-chan struct{} {
	ch := make(chan struct{})
	w.mu.Lock()
	w.waiting[id] = ch
	w.mu.Unlock()
	return ch
}

func (w *finalWatcher) run(ctx context.Context, t *target) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		w.mu.Lock()
		ids := make([]string, 0, len(w.waiting))
		for id := range w.waiting {
			ids = append(ids, id.String())
		}
		w.mu.Unlock()
		if len(ids) == 0 {
			continue
		}
		rows, err := t.db.Query(ctx, `SELECT id FROM transactions WHERE id = ANY($1::uuid[]) AND status <> 'PENDING'`, ids)
		if err != nil {
			continue
		}
		var final []uuid.UUID
		for rows.Next() {
			var id uuid.UUID
			if rows.Scan(&id) == nil {
				final = append(final, id)
			}
		}
		rows.Close()
		w.mu.Lock()
		for _, id := range final {
			if ch, ok := w.waiting[id]; ok {
				close(ch)
				delete(w.waiting, id)
			}
		}
		w.mu.Unlock()
	}
}
