package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/sikahq/sika/workflows"
)

// The bare workflow is the ceiling Sika's payments are compared with: the shape of a sandbox
// softpay success's history (workflows.Payment), with no Sika code. Two local activities (the
// plan, the push), a poll timer raced with the operator's callback signal, a third local
// activity (the record) and the end: the same events, the same two workflow tasks, the same
// external signal. Its activities do nothing, so what it costs is Temporal's alone.
const (
	bareTaskQueue = "sikabench-bare"
	bareSignal    = "callback"
	barePoll      = 3 * time.Second // workflows.pollStart: the timer the callback cancels
)

// bareCompletions counts the bare workflows whose last activity ran, by when it ran.
type bareCompletions struct {
	mu     sync.Mutex
	at     []time.Time
	pushed map[string]chan struct{} // workflow id → closed when its "push" ran
	done   map[string]chan struct{} // workflow id → closed when it completes
}

func (b *bareCompletions) plan(context.Context) error { return nil }

// push tells the driver that the workflow has made its "push": the operator's callback (the
// signal) comes one tick later, as the sandbox's does.
func (b *bareCompletions) push(ctx context.Context, id string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if ch, ok := b.pushed[id]; ok {
		close(ch)
		delete(b.pushed, id)
	}
	return nil
}

func (b *bareCompletions) finish(ctx context.Context, id string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.at = append(b.at, time.Now())
	if ch, ok := b.done[id]; ok {
		close(ch)
		delete(b.done, id)
	}
	return nil
}

func (b *bareCompletions) between(from, to time.Time) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, at := range b.at {
		if !at.Before(from) && at.Before(to) {
			n++
		}
	}
	return n
}

// bare is the completions of the ceiling running in this process; the bare workflow's local
// activities are its methods.
var bare *bareCompletions

// bareWorkflow is the ceiling's workflow (see bareTaskQueue).
func bareWorkflow(ctx workflow.Context) error {
	b := bare
	ctx = workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{StartToCloseTimeout: 30 * time.Second})
	signalled := false
	ch := workflow.GetSignalChannel(ctx, bareSignal)
	workflow.Go(ctx, func(ctx workflow.Context) {
		ch.Receive(ctx, nil)
		signalled = true
	})
	id := workflow.GetInfo(ctx).WorkflowExecution.ID
	if err := workflow.ExecuteLocalActivity(ctx, b.plan).Get(ctx, nil); err != nil {
		return err
	}
	if err := workflow.ExecuteLocalActivity(ctx, b.push, id).Get(ctx, nil); err != nil {
		return err
	}
	if _, err := workflow.AwaitWithTimeout(ctx, barePoll, func() bool { return signalled }); err != nil {
		return err
	}
	return workflow.ExecuteLocalActivity(ctx, b.finish, id).Get(ctx, nil)
}

// ceilingFigures are the bare workflow's throughput on the cluster's Temporal server.
type ceilingFigures struct {
	inFlight  int
	window    time.Duration
	completed int
	failures  int
	errSample string
	history   []int // events of a sample of bare workflows
	cpu       cpuUse
}

func (c *ceilingFigures) rate() float64 { return float64(c.completed) / c.window.Seconds() }

// runCeiling runs the bare workflow on the Temporal server at address: inFlight workflows at a
// time, each started, signalled one tick after its push (as the sandbox operator calls back one
// tick after the push) and replaced as soon as it completes; warm-up then a measured window. The worker runs in
// this process with the SDK's default options, as `sika worker`'s does. inFlight is a bound, not
// a target: too many at once on a small machine only makes starts time out.
func runCeiling(ctx context.Context, address, namespace string, inFlight int, tick, warmup, d time.Duration) (*ceilingFigures, error) {
	quiet := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	compression, err := workflows.ClientCompression("", address) // as the service's clients
	if err != nil {
		return nil, err
	}
	c, err := client.DialContext(ctx, client.Options{HostPort: address, Namespace: namespace, Logger: tlog.NewStructuredLogger(quiet),
		ConnectionOptions: client.ConnectionOptions{GrpcCompression: compression}})
	if err != nil {
		return nil, fmt.Errorf("ceiling: connect to temporal: %w", err)
	}
	defer c.Close()
	b := &bareCompletions{pushed: map[string]chan struct{}{}, done: map[string]chan struct{}{}}
	bare = b
	w := worker.New(c, bareTaskQueue, worker.Options{})
	w.RegisterWorkflowWithOptions(bareWorkflow, workflow.RegisterOptions{Name: "Bare"})
	if err := w.Start(); err != nil {
		return nil, fmt.Errorf("ceiling: start worker: %w", err)
	}
	defer w.Stop()

	f := &ceilingFigures{inFlight: inFlight}
	var seq atomic.Int64
	var fails atomic.Int64
	var errMu sync.Mutex
	prefix := fmt.Sprintf("bare-%d-", time.Now().UnixNano())
	var ids []string
	var idsMu sync.Mutex
	start := time.Now()
	windowStart, end := start.Add(warmup), start.Add(warmup+d)
	var cpuTrack *cpuTracker
	windowOpened := make(chan struct{})
	go func() {
		select {
		case <-time.After(time.Until(windowStart)):
		case <-ctx.Done():
		}
		cpuTrack = startCPUTracker()
		close(windowOpened)
	}()
	var wg sync.WaitGroup
	for range inFlight {
		wg.Go(func() {
			for time.Now().Before(end) && ctx.Err() == nil {
				id := fmt.Sprintf("%s%d", prefix, seq.Add(1))
				pushed, done := make(chan struct{}), make(chan struct{})
				b.mu.Lock()
				b.pushed[id], b.done[id] = pushed, done
				b.mu.Unlock()
				err := runBare(ctx, c, b, id, pushed, done, tick)
				if err != nil {
					fails.Add(1)
					errMu.Lock()
					f.errSample = err.Error()
					errMu.Unlock()
					select { // a failing server is not hammered
					case <-time.After(100 * time.Millisecond):
					case <-ctx.Done():
					}
					continue
				}
				idsMu.Lock()
				if len(ids) < 1000 {
					ids = append(ids, id)
				}
				idsMu.Unlock()
			}
		})
	}
	select {
	case <-time.After(time.Until(end)):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	<-windowOpened
	f.cpu = cpuTrack.finish()
	f.window, f.completed = end.Sub(windowStart), b.between(windowStart, end)
	wg.Wait()
	f.failures = int(fails.Load())
	for i := 0; i < len(ids) && len(f.history) < 10; i += max(1, len(ids)/10) {
		n, err := historyLength(ctx, c, ids[i])
		if err == nil {
			f.history = append(f.history, n)
		}
	}
	return f, nil
}

// runBare starts one bare workflow, signals it one tick after its push and waits for its
// completion.
func runBare(ctx context.Context, c client.Client, b *bareCompletions, id string, pushed, done chan struct{}, tick time.Duration) error {
	_, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: bareTaskQueue,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE}, "Bare")
	if err != nil {
		b.mu.Lock()
		delete(b.pushed, id)
		delete(b.done, id)
		b.mu.Unlock()
		return fmt.Errorf("start: %w", err)
	}
	select {
	case <-pushed:
	case <-time.After(time.Minute):
		return errors.New("no push within a minute")
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-time.After(tick):
	case <-ctx.Done():
		return ctx.Err()
	}
	if err := c.SignalWorkflow(ctx, id, "", bareSignal, nil); err != nil {
		return fmt.Errorf("signal: %w", err)
	}
	select {
	case <-done:
		return nil
	case <-time.After(time.Minute):
		return errors.New("not completed within a minute")
	case <-ctx.Done():
		return ctx.Err()
	}
}

// historyLength is the number of events of a closed workflow.
func historyLength(ctx context.Context, c client.Client, id string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	d, err := c.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		return 0, err
	}
	return int(d.GetWorkflowExecutionInfo().GetHistoryLength()), nil
}
