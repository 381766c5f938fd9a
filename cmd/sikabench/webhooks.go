package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"go.temporal.io/api/serviceerror"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
	"github.com/sikahq/sika/webhook"
)

// receiver is the merchant's webhook endpoint, on loopback: it checks each delivery's signature
// as a merchant would, answers 200 at once and notes when each event first arrived.
type receiver struct {
	secret string

	mu            sync.Mutex
	first         map[string]time.Time // event id → first arrival
	posts         int                  // every delivery, retries included
	invalid       int                  // deliveries whose signature did not verify
	invalidSample string
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	at := time.Now()
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err == nil {
		err = webhook.Verify(rc.secret, r.Header, body, 5*time.Minute)
	}
	id := r.Header.Get(webhook.HeaderID)
	rc.mu.Lock()
	rc.posts++
	if err != nil {
		rc.invalid++
		rc.invalidSample = err.Error()
	} else if _, seen := rc.first[id]; !seen {
		rc.first[id] = at
	}
	rc.mu.Unlock()
	w.WriteHeader(http.StatusOK) // a refused delivery would only come back later
}

// arrival is when the event first arrived, if it did.
func (rc *receiver) arrival(id string) (time.Time, bool) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	at, ok := rc.first[id]
	return at, ok
}

// webhookFigures are the deliveries of the events produced while softpay ran at -webhook-rate.
type webhookFigures struct {
	plan           loadPlan
	load           *loadResult
	windowEvents   int             // events created in the window
	latency        []time.Duration // event created → first arrival, of the window's events that arrived; sorted
	undelivered    int             // window events that never arrived
	windowArrivals int             // first arrivals inside the window
	posts, invalid int
	invalidSample  string
	waited         time.Duration // after the load, for the stragglers
	total, missing int           // events since the endpoint exists, and those that never arrived
	queuedAtEnd    int           // delivery workflows not yet started (outbox rows) when the window closed
	// Temporal history events of the deliveries of a sample of the window's events (0 for a
	// delivery made without a workflow), and how many of the sample had no workflow.
	history    []int
	noWorkflow int
}

// runWebhooks registers a loopback endpoint for the bench merchant, drives softpay at
// -webhook-rate for -webhook-d (every payment makes transaction.pending and, a tick later,
// transaction.succeeded) and measures, per event, the time from its creation in the writing
// transaction to its first arrival at the receiver.
func runWebhooks(ctx context.Context, t *target, o options) (*webhookFigures, error) {
	secret, err := webhook.NewSecret()
	if err != nil {
		return nil, err
	}
	rc := &receiver{secret: secret, first: map[string]time.Time{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("webhooks: listen: %w", err)
	}
	serve(t, &http.Server{Handler: rc, ReadHeaderTimeout: 10 * time.Second}, ln)
	endpoint, err := t.store.CreateWebhookEndpoint(ctx, sika.WebhookEndpoint{Merchant: t.merchant, Environment: sika.EnvironmentTest,
		URL: "http://" + ln.Addr().String() + "/sika-webhooks", Description: "sikabench receiver", IsActive: true}, secret)
	if err != nil {
		return nil, fmt.Errorf("webhooks: create the endpoint: %w", err)
	}
	f := &webhookFigures{plan: loadPlan{clients: o.clients, warmup: min(o.warmup, partWarmup), duration: o.webhookDuration, rate: o.webhookRate}}
	progress("webhooks: softpay paced at %.0f/s with %d clients, %s warm-up + %s measured", o.webhookRate, o.clients, f.plan.warmup, f.plan.duration)
	queued := func() {
		if err := t.db.QueryRow(ctx, `SELECT count(*) FROM workflow_outbox WHERE workflow_type = $1`,
			store.WebhookDeliveryWorkflowType).Scan(&f.queuedAtEnd); err != nil {
			f.queuedAtEnd = -1
		}
	}
	if f.load, err = runLoad(ctx, newSoftpayClient(t, o.clients), f.plan, loadHooks{windowEnd: queued}); err != nil {
		return nil, fmt.Errorf("webhooks: %w", err)
	}
	progress("webhooks: load done; waiting for the last deliveries")
	events, err := waitDeliveries(ctx, t, rc, f.load, 2*o.tick+30*time.Second, &f.waited)
	if err != nil {
		return nil, fmt.Errorf("webhooks: %w", err)
	}
	ws, we := f.load.windowStart, f.load.windowEnd
	for _, ev := range events {
		at, ok := rc.arrival(ev.id)
		if !ok {
			f.missing++
		}
		if ok && !at.Before(ws) && at.Before(we) {
			f.windowArrivals++
		}
		if ev.created.Before(ws) || !ev.created.Before(we) {
			continue
		}
		f.windowEvents++
		if ok {
			f.latency = append(f.latency, at.Sub(ev.created))
		} else {
			f.undelivered++
		}
	}
	slices.Sort(f.latency)
	f.total = len(events)
	f.countHistories(ctx, t, events, endpoint.ID, ws, we)
	rc.mu.Lock()
	f.posts, f.invalid, f.invalidSample = rc.posts, rc.invalid, rc.invalidSample
	rc.mu.Unlock()
	return f, nil
}

type createdEvent struct {
	id      string
	created time.Time
}

// waitDeliveries waits (at most maxWait) until the load's payments are final and every event of
// the merchant created since the load began has arrived, then returns those events. Their
// created_at is the service's clock, which in -self mode is ours.
func waitDeliveries(ctx context.Context, t *target, rc *receiver, ld *loadResult, maxWait time.Duration, waited *time.Duration) ([]createdEvent, error) {
	ids := make([]string, 0, len(ld.samples))
	for _, id := range ld.acceptedIDs() {
		ids = append(ids, id.String())
	}
	began := time.Now()
	for {
		var pending int
		if err := t.db.QueryRow(ctx, `SELECT count(*) FROM transactions WHERE id = ANY($1::uuid[]) AND status = 'PENDING'`, ids).Scan(&pending); err != nil {
			return nil, fmt.Errorf("count pending payments: %w", err)
		}
		rows, err := t.db.Query(ctx, `SELECT event_id, created_at FROM events WHERE merchant_id = $1 AND environment = 'TEST' AND created_at >= $2`,
			t.merchant, ld.start)
		if err != nil {
			return nil, fmt.Errorf("read events: %w", err)
		}
		events, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (createdEvent, error) {
			var e createdEvent
			return e, r.Scan(&e.id, &e.created)
		})
		if err != nil {
			return nil, fmt.Errorf("read events: %w", err)
		}
		missing := 0
		for _, e := range events {
			if _, ok := rc.arrival(e.id); !ok {
				missing++
			}
		}
		*waited = time.Since(began)
		if (pending == 0 && missing == 0) || *waited > maxWait {
			return events, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// historySample is how many of the window's deliveries have their Temporal history counted.
const historySample = 50

// countHistories counts the Temporal history events of the deliveries of a sample of the
// window's events: a delivery with no workflow (made from the outbox) counts 0.
func (f *webhookFigures) countHistories(ctx context.Context, t *target, events []createdEvent, endpoint uuid.UUID, ws, we time.Time) {
	var window []createdEvent
	for _, ev := range events {
		if !ev.created.Before(ws) && ev.created.Before(we) {
			window = append(window, ev)
		}
	}
	step := max(1, len(window)/historySample)
	for i := 0; i < len(window) && len(f.history) < historySample; i += step {
		d, err := t.tc.DescribeWorkflowExecution(ctx, store.WebhookDeliveryWorkflowID(window[i].id, endpoint), "")
		var notFound *serviceerror.NotFound
		switch {
		case errors.As(err, &notFound):
			f.history = append(f.history, 0)
			f.noWorkflow++
		case err != nil:
			fmt.Fprintf(os.Stderr, "sikabench: webhooks: describe the delivery of %s: %v\n", window[i].id, err)
		default:
			f.history = append(f.history, int(d.GetWorkflowExecutionInfo().GetHistoryLength()))
		}
	}
}

// historyPerDelivery is the mean of the sample's history events per delivery.
func (f *webhookFigures) historyPerDelivery() float64 {
	if len(f.history) == 0 {
		return 0
	}
	sum := 0
	for _, n := range f.history {
		sum += n
	}
	return float64(sum) / float64(len(f.history))
}
