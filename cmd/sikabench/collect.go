package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/sikahq/sika/workflows"
)

// dbClockOffset is Postgres' clock minus ours, so that the window (taken on our clock) can be
// compared with created_at / completed_at (taken by Postgres).
func dbClockOffset(ctx context.Context, db *pgxpool.Pool) (time.Duration, error) {
	best := time.Duration(1<<63 - 1)
	var offset time.Duration
	for range 5 { // keep the reading with the shortest round trip
		before := time.Now()
		var dbNow time.Time
		if err := db.QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&dbNow); err != nil {
			return 0, fmt.Errorf("read the Postgres clock: %w", err)
		}
		rtt := time.Since(before)
		if rtt < best {
			best, offset = rtt, dbNow.Sub(before.Add(rtt/2))
		}
	}
	return offset, nil
}

// completions is what Postgres says about the accepted payments once they are final.
type completions struct {
	accepted       int // during the whole run
	success        int
	failed         map[string]int // failure code → count
	pending        int            // still PENDING when the wait ended
	waited         time.Duration
	toSuccess      []time.Duration // completed_at - created_at of the window's payments that succeeded
	windowSuccess  int             // SUCCESS with completed_at inside the window
	bucketCounts   []int           // of windowSuccess, per 10 s from the window's start
	bucketSpans    []time.Duration
	successIDs     []uuid.UUID
	windowAccepted int // accepted payments sent in the window
	windowPending  int // of which still PENDING when the wait ended
}

const bucket = 10 * time.Second

// collectCompletions waits (at most maxWait) until no accepted payment is PENDING, then reads
// them all in one query.
func collectCompletions(ctx context.Context, db *pgxpool.Pool, ids []uuid.UUID, offset time.Duration, ld *loadResult, maxWait time.Duration) (*completions, error) {
	strs := make([]string, len(ids))
	for i, id := range ids {
		strs[i] = id.String()
	}
	c := &completions{accepted: len(ids), failed: map[string]int{}}
	began := time.Now()
	for {
		var pending int
		if err := db.QueryRow(ctx, `SELECT count(*) FROM transactions WHERE id = ANY($1::uuid[]) AND status = 'PENDING'`, strs).Scan(&pending); err != nil {
			return nil, fmt.Errorf("count pending payments: %w", err)
		}
		if pending == 0 || time.Since(began) > maxWait {
			break
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
	c.waited = time.Since(began)

	inWindow := map[uuid.UUID]bool{}
	for _, s := range ld.samples {
		if s.status == http.StatusCreated && ld.inWindow(s) {
			inWindow[s.id] = true
		}
	}
	c.windowAccepted = len(inWindow)
	from, to := ld.windowStart.Add(offset), ld.windowEnd.Add(offset)
	for start := from; start.Before(to); start = start.Add(bucket) {
		span := min(bucket, to.Sub(start))
		if n := len(c.bucketSpans); n > 0 && span < time.Second {
			c.bucketSpans[n-1] += span // a sliver at the end joins the last bucket
			break
		}
		c.bucketCounts = append(c.bucketCounts, 0)
		c.bucketSpans = append(c.bucketSpans, span)
	}
	rows, err := db.Query(ctx, `SELECT id::text, status, failure_code, created_at, completed_at
		FROM transactions WHERE id = ANY($1::uuid[])`, strs)
	if err != nil {
		return nil, fmt.Errorf("read payments: %w", err)
	}
	defer rows.Close()
	found := 0
	for rows.Next() {
		var idText, status, code string
		var created time.Time
		var completed *time.Time
		if err := rows.Scan(&idText, &status, &code, &created, &completed); err != nil {
			return nil, err
		}
		found++
		id := uuid.MustParse(idText)
		switch status {
		case "PENDING":
			c.pending++
			if inWindow[id] {
				c.windowPending++
			}
			continue
		case "SUCCESS":
		default:
			c.failed[status+" "+code]++
			continue
		}
		c.success++
		c.successIDs = append(c.successIDs, id)
		if completed == nil {
			continue
		}
		if inWindow[id] {
			c.toSuccess = append(c.toSuccess, completed.Sub(created))
		}
		if !completed.Before(from) && completed.Before(to) {
			c.windowSuccess++
			c.bucketCounts[min(int(completed.Sub(from)/bucket), len(c.bucketCounts)-1)]++
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if found != len(ids) {
		return nil, fmt.Errorf("%d of the %d accepted payments are not in Postgres: is -database-url the API's database?", len(ids)-found, len(ids))
	}
	return c, nil
}

// histories counts the Temporal history events of a sample of successful payments, and their
// size as the server stores them.
type histories struct {
	skipped  string
	counts   []int
	types    map[string]int // event type → events over the sample
	errors   []string
	stalled  string // the timeline of the first sampled payment with a WorkflowTaskTimedOut
	bytes    int    // encoded size of the sample's events
	payloads payloadSum
}

// payloadSum is the payloads of a sample's histories: their number and encoded size as stored
// (data and metadata, after the payload codec), in all and by place.
type payloadSum struct {
	count, bytes int
	by           map[string]int // "WorkflowExecutionStarted.input" → bytes
}

func countHistories(ctx context.Context, t *target, ids []uuid.UUID, n int) *histories {
	h := &histories{types: map[string]int{}, payloads: payloadSum{by: map[string]int{}}}
	switch {
	case t.tc == nil:
		h.skipped = "no Temporal client (-temporal)"
		return h
	case n == 0:
		h.skipped = "-sample 0"
		return h
	case len(ids) == 0:
		h.skipped = "no successful payment"
		return h
	}
	sorted := append([]uuid.UUID(nil), ids...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].String() < sorted[j].String() }) // v7: by time
	step := max(1, len(sorted)/n)
	for i := 0; i < len(sorted) && len(h.counts) < n; i += step {
		wf := workflows.PaymentWorkflowID(sorted[i])
		timedOut := h.types["WORKFLOW_TASK_TIMED_OUT"]
		count, err := countHistory(ctx, t, wf, h)
		if err != nil {
			h.errors = append(h.errors, fmt.Sprintf("%s: %v", wf, err))
			continue
		}
		h.counts = append(h.counts, count)
		if h.stalled == "" && h.types["WORKFLOW_TASK_TIMED_OUT"] > timedOut {
			if tl, err := readTimeline(ctx, t.tc, wf); err == nil {
				h.stalled = wf + "\n" + tl.String()
			}
		}
	}
	if len(h.errors) > 0 {
		fmt.Fprintf(os.Stderr, "sikabench: %d histories could not be read, e.g. %s\n", len(h.errors), h.errors[0])
	}
	return h
}

// countHistory waits for the workflow to close (the record is written just before it returns),
// then counts its events by type, their size and their payloads into h.
func countHistory(ctx context.Context, t *target, wf string, h *histories) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := t.tc.GetWorkflow(ctx, wf, "").Get(ctx, nil); err != nil {
		return 0, fmt.Errorf("wait for the run to close: %w", err)
	}
	it := t.tc.GetWorkflowHistory(ctx, wf, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	count := 0
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return 0, err
		}
		count++
		h.types[strings.TrimPrefix(ev.GetEventType().String(), "EVENT_TYPE_")]++
		h.bytes += proto.Size(ev)
		h.payloads.add(ev)
	}
	return count, nil
}

// sizes is the mean encoded size of a sampled history, of its payloads, and the payloads'
// bytes by place, largest first.
func (h *histories) sizes() string {
	n := float64(len(h.counts))
	if n == 0 {
		return "-"
	}
	type kv struct {
		k string
		v int
	}
	var by []kv
	for k, v := range h.payloads.by {
		by = append(by, kv{k, v})
	}
	sort.Slice(by, func(i, j int) bool { return by[i].v > by[j].v || by[i].v == by[j].v && by[i].k < by[j].k })
	parts := []string{fmt.Sprintf("history %.0f, payloads %.0f in %.1f payloads (as stored, after the codec)",
		float64(h.bytes)/n, float64(h.payloads.bytes)/n, float64(h.payloads.count)/n)}
	for _, x := range by {
		parts = append(parts, fmt.Sprintf("%s %.0f", x.k, float64(x.v)/n))
	}
	return wrap(strings.Join(parts, ", "), 80, 39)
}

var payloadType = (&commonpb.Payload{}).ProtoReflect().Descriptor().FullName()

// add counts the payloads an event holds (inputs, results, signal and marker details, memo,
// headers, search attributes), keyed by the event type and the field of its attributes that
// holds them.
func (p *payloadSum) add(ev *historypb.HistoryEvent) {
	m := ev.ProtoReflect()
	fd := m.WhichOneof(m.Descriptor().Oneofs().ByName("attributes"))
	if fd == nil {
		return
	}
	kind := strings.TrimPrefix(ev.GetEventType().String(), "EVENT_TYPE_")
	m.Get(fd).Message().Range(func(f protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if n, b := payloadsIn(f, v); n > 0 {
			p.count, p.bytes = p.count+n, p.bytes+b
			p.by[kind+"."+string(f.Name())] += b
		}
		return true
	})
}

// payloadsIn is the number and encoded size of the payloads in a field's value, at any depth.
func payloadsIn(f protoreflect.FieldDescriptor, v protoreflect.Value) (n, bytes int) {
	each := func(m protoreflect.Message) {
		if m.Descriptor().FullName() == payloadType {
			n, bytes = n+1, bytes+proto.Size(m.Interface())
			return
		}
		m.Range(func(f protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			c, b := payloadsIn(f, v)
			n, bytes = n+c, bytes+b
			return true
		})
	}
	switch {
	case f.IsList() && f.Message() != nil:
		for i := range v.List().Len() {
			each(v.List().Get(i).Message())
		}
	case f.IsMap() && f.MapValue().Message() != nil:
		v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
			each(mv.Message())
			return true
		})
	case !f.IsList() && !f.IsMap() && f.Message() != nil:
		each(v.Message())
	}
	return n, bytes
}

// settled is how a part began: after how long a wait for the previous part's work to finish, and
// what was still unfinished then.
type settled struct {
	waited          time.Duration
	pending, outbox int // the bench merchant's PENDING transactions; unstarted workflows
}

func (s settled) String() string {
	if s.pending == 0 && s.outbox == 0 {
		return fmt.Sprintf("began once the previous part's work had finished (waited %.1f s)", s.waited.Seconds())
	}
	return fmt.Sprintf("began with %d transactions still PENDING and %d workflow starts waiting (waited %.0f s)",
		s.pending, s.outbox, s.waited.Seconds())
}

// settle waits (at most maxWait) until the bench merchant has no PENDING transaction and no
// workflow waits in the outbox, so that a part does not measure the backlog of the one before.
func settle(ctx context.Context, t *target, maxWait time.Duration) (settled, error) {
	began := time.Now()
	for {
		var s settled
		if err := t.db.QueryRow(ctx, `SELECT
				(SELECT count(*) FROM transactions WHERE merchant_id = $1 AND status = 'PENDING'),
				(SELECT count(*) FROM workflow_outbox)`, t.merchant).Scan(&s.pending, &s.outbox); err != nil {
			return s, fmt.Errorf("wait for the previous part to finish: %w", err)
		}
		s.waited = time.Since(began)
		if (s.pending == 0 && s.outbox == 0) || s.waited > maxWait {
			return s, nil
		}
		select {
		case <-ctx.Done():
			return s, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}
