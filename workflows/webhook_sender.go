package workflows

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/client"

	"github.com/sikahq/sika/activities"
	"github.com/sikahq/sika/store"
)

// The webhook sender makes the first attempt of every delivery straight from the outbox, in the
// worker, and starts a WebhookDelivery workflow only for the deliveries that attempt did not
// settle (docs/webhook-delivery.md has the measurements behind the choice). Most endpoints
// answer 2xx at once: their event then reaches them within milliseconds of its commit, with no
// workflow at all, where starting one workflow per delivery made every event wait behind
// Temporal's queue (seconds under load). Nothing merchants rely on changes:
//
//   - durability: the outbox row, written in the event's transaction, is removed only in the
//     transaction that records a final outcome (2xx, 410, endpoint gone), or once the retrying
//     workflow is started; a crash anywhere before leaves the row, claimed again once its
//     lease has run out;
//   - retries for days, with back-off, Retry-After and 410: the workflow's, resumed after the
//     first try (WebhookInput.Tried, RetryAfter); a 410 to the first try disables the endpoint
//     in the transaction that records it;
//   - at-least-once, webhook-id stable: a try is sent again only when a crash came between the
//     send and its record, with the same event id;
//   - several worker replicas: each claims rows for its own free slots (FOR UPDATE SKIP LOCKED,
//     a lease), so rows spread over the replicas and none waits for one sweeper;
//   - no order is promised between deliveries (contract §9 promises none, and retries reorder
//     anyway): merchants order by the event's created_at or read the resource.
const (
	// senderSlots bounds the first attempts one worker makes at once; past it, rows wait in the
	// outbox for a free slot here or at another replica.
	senderSlots = 128
	// endpointSlots bounds one endpoint's share of the slots: a delivery to an endpoint that
	// already has this many first attempts in flight (a slow or hanging endpoint: one that
	// answers at once has one or two) goes straight to its workflow, so that other merchants'
	// first attempts are not held behind it. It is a whole claim batch, so that a burst of one
	// merchant's events to a healthy endpoint is not handed to Temporal.
	endpointSlots = claimBatch
	// leaseMargin is how much longer than an endpoint's time to answer (15 s) a claimed row is
	// kept from the other replicas: time to record the try and start the workflow. A worker
	// that dies with rows claimed delays them by that lease (30 s), not more.
	leaseMargin = 15 * time.Second
	// claimBatch is the most rows one claim takes.
	claimBatch = 32
)

// webhookSender makes the first attempts of one worker (SweepOutbox runs it).
type webhookSender struct {
	st     *store.Store
	c      client.Client
	a      *activities.Activities
	logger *slog.Logger
	wake   chan struct{}

	mu          sync.Mutex
	inFlight    int
	perEndpoint map[uuid.UUID]int
	full        bool // a claim stopped for want of a slot: the next send to end wakes the sender
	sends       sync.WaitGroup
}

// run claims and sends whenever it is woken, until ctx ends; then it lets the sends in flight
// end (each within an endpoint's time to answer) so that their outcome is recorded.
func (s *webhookSender) run(ctx context.Context) {
	defer s.sends.Wait()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.wake:
		}
		s.claimAndSend(ctx)
	}
}

// claimAndSend claims due rows for the free slots and sends each in its own goroutine, until
// the outbox has no due row or the slots are taken.
func (s *webhookSender) claimAndSend(ctx context.Context) {
	for ctx.Err() == nil {
		s.mu.Lock()
		free := min(senderSlots-s.inFlight, claimBatch)
		s.full = free == 0
		s.mu.Unlock()
		if free == 0 {
			return
		}
		entries, err := s.st.ClaimWebhookOutbox(ctx, free, activities.DeliveryTimeout(s.a)+leaseMargin)
		if err != nil {
			if ctx.Err() == nil {
				s.logger.Warn("webhook sender: claim", "err", err)
			}
			return
		}
		for _, e := range entries {
			var target store.DeliveryTarget
			if err := json.Unmarshal(e.Input, &target); err != nil {
				s.logger.Error("webhook sender: undecodable outbox row", "outbox_id", e.ID, "err", err)
				continue // leased: it comes back after the lease, and stays visible in the outbox
			}
			handOff := s.begin(target.EndpointID) || e.Attempts > 0
			s.sends.Go(func() {
				defer s.end(target.EndpointID)
				// A worker stopping lets its sends finish: their outcome must be recorded.
				s.send(context.WithoutCancel(ctx), e, target, handOff)
			})
		}
		if len(entries) < free {
			return
		}
	}
}

// begin takes a slot for a send to the endpoint, and says whether the endpoint has used up its
// share (the delivery then goes to its workflow).
func (s *webhookSender) begin(endpoint uuid.UUID) (overShare bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inFlight++
	s.perEndpoint[endpoint]++
	return s.perEndpoint[endpoint] > endpointSlots
}

func (s *webhookSender) end(endpoint uuid.UUID) {
	s.mu.Lock()
	s.inFlight--
	if s.perEndpoint[endpoint]--; s.perEndpoint[endpoint] == 0 {
		delete(s.perEndpoint, endpoint)
	}
	wake := s.full
	s.full = false
	s.mu.Unlock()
	if wake {
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
}

// send makes the first attempt of a claimed row, or hands the whole delivery to its workflow
// when handOff is set: the endpoint has used up its share of the slots, or an earlier claim
// could not start the workflow (the row's attempts count failed starts).
func (s *webhookSender) send(ctx context.Context, e store.OutboxEntry, target store.DeliveryTarget, handOff bool) {
	in := WebhookInput{Target: target, Schedule: WebhookSchedule}
	if !handOff {
		res, err := activities.DeliverFromOutbox(ctx, s.a, e.ID, activities.DeliveryAttempt{Target: target, Attempt: 1})
		if err != nil {
			// The store failed to load or record: the row stays leased and is claimed again
			// once the lease runs out.
			s.logger.Warn("webhook sender: first attempt", "workflow_id", e.WorkflowID, "err", err)
			return
		}
		if res.Delivered || res.Stop {
			return // recorded, and the row removed with the record
		}
		in.Tried, in.RetryAfter = 1, res.RetryAfter
	}
	if err := startWebhookDelivery(ctx, s.c, e.WorkflowID, in); err != nil {
		// Temporal is unreachable: the row waits with back-off and goes to the workflow at the
		// next claim (its next try is the workflow's).
		delay := min(5<<min(e.Attempts, 6), 300)
		if derr := s.st.DeferOutbox(ctx, e.ID, err.Error(), delay); derr != nil {
			s.logger.Warn("webhook sender: defer", "workflow_id", e.WorkflowID, "err", derr)
		}
		s.logger.Warn("webhook sender: start the retries", "workflow_id", e.WorkflowID, "err", err)
		return
	}
	if err := s.st.DeleteOutbox(ctx, e.ID); err != nil {
		// Left leased: the next claim finds the workflow already started and removes the row
		// (after one more try, which at-least-once delivery allows).
		s.logger.Warn("webhook sender: remove the outbox row", "workflow_id", e.WorkflowID, "err", err)
	}
}
