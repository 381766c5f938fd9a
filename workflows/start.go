package workflows

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/google/uuid"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"

	"github.com/sikahq/sika/activities"
	"github.com/sikahq/sika/store"
)

// Workflow type names as written in the outbox.
const (
	PaymentWorkflowType = "Payment"
	PayoutWorkflowType  = "Payout"
)

// PaymentStart is the outbox entry that starts a payment run.
func PaymentStart(in activities.PaymentInput) store.WorkflowStart {
	return store.WorkflowStart{ID: PaymentWorkflowID(in.TransactionID), Type: PaymentWorkflowType, Input: in}
}

// PayoutStart is the outbox entry that starts a payout.
func PayoutStart(in activities.PaymentInput) store.WorkflowStart {
	return store.WorkflowStart{ID: PayoutWorkflowID(in.TransactionID), Type: PayoutWorkflowType, Input: in}
}

// StartPayout starts a payout (see StartPayment for why a duplicate start is harmless).
func StartPayout(ctx context.Context, c client.Client, in activities.PaymentInput) error {
	return startOperation(ctx, c, PayoutWorkflowID(in.TransactionID), Payout, in)
}

// StartPayment starts a payment run. The same run already going under the id is fine (the
// outbox sweeper and the API may both start it). An older run still open is not: it will end
// without acting on this run, so the start answers an error and its outbox row stays for the
// sweeper to try again once the older run has closed. The run number is kept in the memo.
func StartPayment(ctx context.Context, c client.Client, in activities.PaymentInput) error {
	return startOperation(ctx, c, PaymentWorkflowID(in.TransactionID), Payment, in)
}

// Payloads is the data converter of the service's Temporal clients (payloadcodec: the memo is
// encrypted like every payload), with which a start reads the run of the execution open under
// its id. It is set once at startup, like TaskQueue, by whatever dials Temporal.
var Payloads = converter.GetDefaultDataConverter()

// ClientCompression is the gRPC compression of a Temporal client from the service's setting
// (TEMPORAL_GRPC_COMPRESSION): "gzip", "none", or "" for the default, which is none when the
// frontend is on this machine (a loopback host: gzip costs both ends CPU and saves no network)
// and gzip otherwise (the SDK's default, for a cluster across a network). See decision 0029.
func ClientCompression(setting, hostPort string) (client.GrpcCompression, error) {
	switch setting {
	case "gzip":
		return &client.GrpcCompressionGzip{}, nil
	case "none":
		return &client.GrpcCompressionNone{}, nil
	case "":
		host, _, err := net.SplitHostPort(hostPort)
		if err != nil {
			host = hostPort
		}
		if ip := net.ParseIP(host); host == "localhost" || (ip != nil && ip.IsLoopback()) {
			return &client.GrpcCompressionNone{}, nil
		}
		return &client.GrpcCompressionGzip{}, nil
	}
	return nil, fmt.Errorf("TEMPORAL_GRPC_COMPRESSION=%q is not gzip or none", setting)
}

func startOperation(ctx context.Context, c client.Client, id string, wf any, in activities.PaymentInput) error {
	_, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:                                       id,
		TaskQueue:                                TaskQueue,
		WorkflowIDReusePolicy:                    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		WorkflowIDConflictPolicy:                 enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		WorkflowExecutionErrorWhenAlreadyStarted: true,
		Memo:                                     map[string]any{"run": in.Run},
		// No eager workflow start (the first workflow task handed back in the start's answer to
		// the worker of the same process, `sika dev`): with it, under load on the dev server the
		// worker's sticky queue delivered a fraction of its tasks, they timed out after 5 s and
		// were dispatched again from the normal queue with a full replay, which loaded the
		// server more; at 30 payments/s 362–502 of ~580 payments had a WorkflowTaskTimedOut,
		// against 0–58 without it, back to back (docs/performance.md).
	}, wf, in)
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if err == nil {
		return nil
	}
	if !errors.As(err, &started) && !temporal.IsWorkflowExecutionAlreadyStartedError(err) {
		return fmt.Errorf("start %s: %w", id, err)
	}
	// The execution open under the id may be an older run of the transaction that has not closed
	// yet: it will end without acting on this run, so this start must happen again later.
	d, err := c.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		return fmt.Errorf("describe %s: %w", id, err)
	}
	info := d.GetWorkflowExecutionInfo()
	if info.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return fmt.Errorf("start %s run %d: the open execution closed meanwhile; start again", id, in.Run)
	}
	var run int
	if p := info.GetMemo().GetFields()["run"]; p != nil {
		if err := Payloads.FromPayload(p, &run); err != nil {
			return fmt.Errorf("start %s run %d: read the open execution's run: %w", id, in.Run, err)
		}
	}
	if run != 0 && run < in.Run {
		return fmt.Errorf("start %s run %d: run %d is still open; start again once it has closed", id, in.Run, run)
	}
	return nil
}

// StartFromOutbox starts the workflow an outbox entry describes.
func StartFromOutbox(ctx context.Context, c client.Client, e store.OutboxEntry) error {
	switch e.Type {
	case store.WebhookDeliveryWorkflowType:
		var target store.DeliveryTarget
		if err := json.Unmarshal(e.Input, &target); err != nil {
			return fmt.Errorf("decode outbox %d: %w", e.ID, err)
		}
		return startWebhookDelivery(ctx, c, e.WorkflowID, WebhookInput{Target: target, Schedule: WebhookSchedule})
	case CheckoutExpiryWorkflowType:
		var in CheckoutExpiryInput
		if err := json.Unmarshal(e.Input, &in); err != nil {
			return fmt.Errorf("decode outbox %d: %w", e.ID, err)
		}
		return StartCheckoutExpiry(ctx, c, in)
	case PayoutBatchWorkflowType:
		var in PayoutBatchInput
		if err := json.Unmarshal(e.Input, &in); err != nil {
			return fmt.Errorf("decode outbox %d: %w", e.ID, err)
		}
		return StartPayoutBatch(ctx, c, in)
	case PaymentWorkflowType, PayoutWorkflowType, RefundWorkflowType:
		var in activities.PaymentInput
		if err := json.Unmarshal(e.Input, &in); err != nil {
			return fmt.Errorf("decode outbox %d: %w", e.ID, err)
		}
		switch e.Type {
		case PayoutWorkflowType:
			return StartPayout(ctx, c, in)
		case RefundWorkflowType:
			return StartRefund(ctx, c, in)
		}
		return StartPayment(ctx, c, in)
	}
	return fmt.Errorf("outbox %d: unknown workflow type %q", e.ID, e.Type)
}

// startWebhookDelivery starts a delivery's workflow; one already started under the id (a
// sweep or a replica before) is the same delivery.
func startWebhookDelivery(ctx context.Context, c client.Client, id string, in WebhookInput) error {
	return startOnce(ctx, c, id, WebhookTaskQueue(), WebhookDelivery, in)
}

// startOnce starts the workflow wf under id on queue, once: an execution already started under
// the id (by the API, the outbox sweeper or a replica before) is the same work, and fine.
func startOnce(ctx context.Context, c client.Client, id, queue string, wf, in any) error {
	_, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: id, TaskQueue: queue, WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
	}, wf, in)
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if err != nil && !errors.As(err, &started) && !temporal.IsWorkflowExecutionAlreadyStartedError(err) {
		return fmt.Errorf("start %s: %w", id, err)
	}
	return nil
}

// SweepOutbox empties the outbox until ctx ends. Webhook deliveries go to the webhook sender
// (SendWebhooks, which makes their first attempt itself) as soon as their event commits: a
// Postgres notification wakes it (and it looks every interval, in case one was missed).
// Payments, payouts and checkout expiries whose start did not happen (the API died in between,
// or Temporal was down) are started: no record is ever left without its workflow. Those are
// looked for every interval, not at each commit: only rows older than two intervals are taken
// (the API starts the others), so a commit never makes one due, and waking every worker
// replica at every payment would cost each replica queries that grow with the payment rate.
func SweepOutbox(ctx context.Context, st *store.Store, c client.Client, a *activities.Activities, interval time.Duration, logger *slog.Logger) {
	wake, send := make(chan struct{}, 1), make(chan struct{}, 1)
	signal := func(ch chan struct{}) {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	signal(wake) // what a crash left behind, at once
	signal(send)
	go func() { _ = st.ListenOutbox(ctx, interval, func() { signal(send) }) }()
	go func() {
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				signal(wake)
			}
		}
	}()
	// The retries of what the sender could not deliver run on their own task queue and worker;
	// stopped after the sender, which may still start some.
	retries := worker.New(c, WebhookTaskQueue(), WorkerOptions())
	RegisterWebhookRetries(retries, a)
	if err := retries.Start(); err != nil {
		// The retry workflows wait, durable, in Temporal until a worker polls their queue.
		logger.Error("webhook retries: start worker", "task_queue", WebhookTaskQueue(), "err", err)
	} else {
		defer retries.Stop()
	}
	sender := &webhookSender{st: st, c: c, a: a, logger: logger, wake: send, perEndpoint: map[uuid.UUID]int{}}
	var sending sync.WaitGroup
	sending.Go(func() { sender.run(ctx) })
	defer sending.Wait()
	for {
		select {
		case <-ctx.Done():
			return
		case <-wake:
		}
		// Only rows old enough that the API's own start has clearly failed.
		n, err := SweepOutboxOnce(ctx, st, c, max(1, int(2*interval/time.Second)))
		if err != nil && ctx.Err() == nil {
			logger.Warn("outbox sweep", "err", err)
		}
		if n > 0 {
			logger.Info("outbox sweep started workflows", "count", n)
		}
	}
}

// sweepConcurrency bounds the workflow starts one sweep makes at once: a burst of webhook
// events must not wait for each other's round trip to Temporal.
const sweepConcurrency = 16

// SweepOutboxOnce starts the due entries older than minAgeSeconds, up to sweepConcurrency at
// a time, and returns how many it started.
func SweepOutboxOnce(ctx context.Context, st *store.Store, c client.Client, minAgeSeconds int) (int, error) {
	entries, err := st.DueOutbox(ctx, minAgeSeconds, 100)
	if err != nil {
		return 0, err
	}
	var (
		mu      sync.Mutex
		started int
		errs    []error
		wg      sync.WaitGroup
		slots   = make(chan struct{}, sweepConcurrency)
	)
	for _, e := range entries {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			ok, err := startOutboxEntry(ctx, st, c, e)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
			}
			if ok {
				started++
			}
		})
	}
	wg.Wait()
	return started, errors.Join(errs...)
}

// startOutboxEntry starts one entry's workflow and deletes the entry (started); a start that
// fails is deferred with backoff (not started, and not an error of the sweep).
func startOutboxEntry(ctx context.Context, st *store.Store, c client.Client, e store.OutboxEntry) (started bool, err error) {
	if err := StartFromOutbox(ctx, c, e); err != nil {
		delay := min(5<<min(e.Attempts, 6), 300)
		if derr := st.DeferOutbox(ctx, e.ID, err.Error(), delay); derr != nil {
			return false, errors.Join(err, derr)
		}
		return false, nil
	}
	if err := st.DeleteOutbox(ctx, e.ID); err != nil {
		return false, err
	}
	return true, nil
}
