package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
)

// Pace of the live streams (GET /events/stream/ and /request-logs/stream/). They read Postgres,
// not the memory of one process, so a client reconnecting to another replica misses nothing.
// One poller per replica reads a merchant's environment for all of its streams there
// (streamHub) every streamPollInterval; a stream reads on its own only to catch up (a resume,
// a batch it missed) and every streamIdleRead.
const (
	streamPollInterval = 300 * time.Millisecond
	streamIdleRead     = 10 * time.Second
	streamKeepAlive    = 15 * time.Second
	streamPage         = 100
	// streamRetryMS is the reconnection delay a client is told to wait after a drop.
	streamRetryMS = 1000
	// streamLeaseTTL is how long a stream's lease lives unrenewed (a replica that died).
	streamLeaseTTL = time.Minute
)

// Defaults of the live streams' caps and lifetime (Config; SIKA_STREAMS_PER_MERCHANT,
// SIKA_STREAMS_PER_KEY, SIKA_STREAM_LIFETIME).
const (
	DefaultStreamsPerMerchant = 10
	DefaultStreamsPerKey      = 3
	DefaultStreamLifetime     = 30 * time.Minute
)

// sseMessage is one server-sent event. need and apiKey are who may see it: the scope its
// money direction needs, and for a request log the key that made the request.
type sseMessage struct {
	id, event string
	data      []byte
	pos       store.StreamPosition
	need      sika.Scope
	apiKey    *uuid.UUID
}

// streamSource is what a live stream reads: where a Last-Event-ID resumes, and the messages
// committed after a position. kind names the table, for the replica's poller.
type streamSource struct {
	kind   string
	resume func(ctx context.Context, merchant uuid.UUID, env sika.Environment, lastID string) (store.StreamPosition, error)
	after  func(ctx context.Context, merchant uuid.UUID, env sika.Environment, pos store.StreamPosition) ([]sseMessage, error)
}

// visible reports whether the caller may see a message: its scope allows the message's money
// direction, and a key of one scope sees only its own requests in the request log.
func visible(p *Principal, m sseMessage) bool {
	if m.need != "" && !p.Scope.Allows(m.need) {
		return false
	}
	if m.event == "request" && p.Kind == PrincipalAPIKey && p.Scope != sika.ScopeBoth {
		return m.apiKey != nil && *m.apiKey == p.APIKeyID
	}
	return true
}

// streamEvents serves the merchant's events of the key's environment as server-sent events, as
// they commit: each with its event id, its type and the payload webhooks carry.
func (s *Server) streamEvents(w http.ResponseWriter, r *http.Request) error {
	return s.serveStream(w, r, streamSource{
		kind: "events",
		resume: func(ctx context.Context, merchant uuid.UUID, env sika.Environment, lastID string) (store.StreamPosition, error) {
			return s.store.EventStreamPosition(ctx, merchant, env, lastID)
		},
		after: func(ctx context.Context, merchant uuid.UUID, env sika.Environment, pos store.StreamPosition) ([]sseMessage, error) {
			events, err := s.store.EventsAfter(ctx, merchant, env, pos, streamPage)
			out := make([]sseMessage, len(events))
			for i, e := range events {
				out[i] = sseMessage{id: e.ID, event: string(e.Type), data: e.Payload, pos: e.Position, need: e.Need}
			}
			return out, err
		},
	})
}

// requestLogView is one request of the log as the stream sends it.
type requestLogView struct {
	ID             string           `json:"id"`
	Environment    sika.Environment `json:"environment"`
	APIKeyID       *uuid.UUID       `json:"api_key_id"`
	Method         string           `json:"method"`
	Route          string           `json:"route"`
	Path           string           `json:"path"`
	Status         int              `json:"status"`
	LatencyMS      float64          `json:"latency_ms"`
	IdempotencyKey *string          `json:"idempotency_key"`
	RequestID      string           `json:"request_id"`
	CreatedAt      time.Time        `json:"created_at"`
}

// streamRequestLogs serves the merchant's API requests of the key's environment as
// server-sent events, as the API records them.
func (s *Server) streamRequestLogs(w http.ResponseWriter, r *http.Request) error {
	return s.serveStream(w, r, streamSource{
		kind: "request-logs",
		resume: func(ctx context.Context, merchant uuid.UUID, env sika.Environment, lastID string) (store.StreamPosition, error) {
			id, err := strconv.ParseInt(lastID, 10, 64)
			if err != nil {
				return store.StreamPosition{}, sika.NotFound("Request log")
			}
			return s.store.APIRequestLogStreamPosition(ctx, merchant, env, id)
		},
		after: func(ctx context.Context, merchant uuid.UUID, env sika.Environment, pos store.StreamPosition) ([]sseMessage, error) {
			logs, err := s.store.APIRequestLogsAfter(ctx, merchant, env, pos, streamPage)
			if err != nil {
				return nil, err
			}
			out := make([]sseMessage, len(logs))
			for i, l := range logs {
				v := requestLogView{ID: l.Position.Key, Environment: l.Environment, APIKeyID: l.APIKey, Method: l.Method, Route: l.Route,
					Path: l.Path, Status: l.Status, LatencyMS: l.LatencyMS, RequestID: l.RequestID, CreatedAt: l.CreatedAt}
				if l.IdempotencyKey != "" {
					v.IdempotencyKey = &l.IdempotencyKey
				}
				data, err := json.Marshal(v)
				if err != nil {
					return nil, fmt.Errorf("encode request log: %w", err)
				}
				out[i] = sseMessage{id: v.ID, event: "request", data: data, pos: l.Position, apiKey: l.APIKey}
			}
			return out, nil
		},
	})
}

// serveStream runs one live stream until the client leaves, the server stops streams or its
// lifetime ends (the client resumes with Last-Event-ID on any replica). It starts after the
// Last-Event-ID the client sends (a reconnection: nothing lost, nothing repeated) or, without
// one, at what commits from now on. The merchant and the key hold at most their caps of streams
// over every replica (a lease each in Postgres): past them, 429 rate_limited. Errors before the
// first byte are answered in the envelope; after it, the stream just ends and the client
// resumes. It sends only what the caller's scope allows (visible).
func (s *Server) serveStream(w http.ResponseWriter, r *http.Request, src streamSource) error {
	ctx := r.Context()
	p := principalFrom(ctx)
	merchant, env := tenant(ctx)
	var pos store.StreamPosition
	var err error
	last := r.Header.Get("Last-Event-ID")
	switch {
	case strings.HasPrefix(last, "@"):
		// A bare position, sent at the start of a stream: a client that loses the stream before
		// its first message resumes there, not at "now".
		xid, perr := strconv.ParseUint(last[1:], 10, 64)
		if perr != nil {
			return sika.FieldError("Last-Event-ID", "Not an id this stream sent for this merchant and environment.")
		}
		pos = store.StreamPosition{XID: xid}
	case last != "":
		pos, err = src.resume(ctx, merchant, env, last)
		var e *sika.Error
		if errors.As(err, &e) && e.Code == sika.CodeNotFound {
			return sika.FieldError("Last-Event-ID", "Not an id this stream sent for this merchant and environment.")
		}
	default:
		pos, err = s.store.StreamNow(ctx)
	}
	if err != nil {
		return err
	}
	var key *uuid.UUID
	if p.Kind == PrincipalAPIKey {
		key = &p.APIKeyID
	}
	lease, err := s.store.AcquireStreamLease(ctx, merchant, env, key, s.cfg.StreamsPerMerchant, s.cfg.StreamsPerKey, streamLeaseTTL)
	var capErr *store.ErrStreamCap
	if errors.As(err, &capErr) {
		w.Header().Set("Retry-After", "30")
		limit := s.cfg.StreamsPerMerchant
		if capErr.Scope == "key" {
			limit = s.cfg.StreamsPerKey
		}
		return sika.Errorf(sika.CodeRateLimited, "Too many live streams open for this %s: at most %d at a time; close one first.", capErr.Scope, limit)
	}
	if err != nil {
		return err
	}
	defer func() {
		if err := s.store.ReleaseStreamLease(context.WithoutCancel(ctx), lease); err != nil {
			logFrom(ctx).Warn("stream lease not released; it expires", "err", err)
		}
	}()
	if info, ok := ctx.Value(ctxRequestInfo).(*requestInfo); ok {
		info.unlogged = true
	}
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if _, err := fmt.Fprintf(w, "retry: %d\n\n", streamRetryMS); err != nil {
		return nil
	}
	if last == "" {
		if _, err := fmt.Fprintf(w, "id: @%d\n\n", pos.XID); err != nil {
			return nil
		}
	}
	if err := rc.Flush(); err != nil {
		logFrom(ctx).Warn("stream cannot flush", "err", err)
		return nil
	}
	sub := s.streams.subscribe(src, merchant, env)
	defer s.streams.unsubscribe(sub)
	lifetime := time.NewTimer(s.cfg.StreamLifetime)
	defer lifetime.Stop()
	idle := time.NewTimer(0) // a first read of its own: a resume catches up at once
	defer idle.Stop()
	lastWrite := time.Now()
	// send writes the messages after pos the caller may see and moves pos past them all.
	send := func(msgs []sseMessage) error {
		for _, m := range msgs {
			if !pos.Before(m.pos) {
				continue // already sent (a batch overlapping what the stream read itself)
			}
			if visible(p, m) {
				if _, err := fmt.Fprintf(w, "id: %s\nevent: %s\ndata: %s\n\n", m.id, m.event, m.data); err != nil {
					return err
				}
				lastWrite = time.Time{}
			}
			pos = m.pos
		}
		return nil
	}
	// catchUp reads on the stream's own until it has everything up to the poller's batch.
	catchUp := func(until *store.StreamPosition) error {
		for {
			msgs, err := src.after(ctx, merchant, env, pos)
			if err != nil {
				return err
			}
			if err := send(msgs); err != nil {
				return err
			}
			if len(msgs) < streamPage || (until != nil && !pos.Before(*until)) {
				return nil
			}
		}
	}
	for {
		var err error
		select {
		case <-ctx.Done():
			return nil
		case <-s.streamsDone:
			return nil
		case <-lifetime.C:
			return nil // the client resumes after its last id, on any replica
		case b := <-sub.batches:
			if pos.Before(b.from) {
				err = catchUp(&b.from)
			}
			if err == nil {
				err = send(b.msgs)
			}
		case <-idle.C:
			var ok bool
			if ok, err = s.store.RenewStreamLease(ctx, lease, streamLeaseTTL); err == nil && !ok {
				return nil // the lease expired and may have been taken: end, the client resumes
			}
			if err == nil {
				err = catchUp(nil)
			}
			idle.Reset(streamIdleRead)
		}
		if err != nil {
			if ctx.Err() == nil {
				logFrom(ctx).Warn("stream read failed; the client will resume", "err", err)
			}
			return nil
		}
		wrote := lastWrite.IsZero()
		if !wrote && time.Since(lastWrite) >= streamKeepAlive {
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return nil
			}
			wrote = true
		}
		if wrote {
			if err := rc.Flush(); err != nil {
				return nil
			}
			lastWrite = time.Now()
		}
	}
}

// streamHub runs one poller per merchant environment and table with streams open on this
// replica, whatever their number: it reads what committed after its own position every
// streamPollInterval and hands each batch to every stream of that environment. A stream
// behind the batch (it resumed from an older id, or missed a batch) reads the gap itself.
type streamHub struct {
	mu      sync.Mutex
	pollers map[streamKey]*streamPoller
	store   *store.Store
	done    <-chan struct{}
	log     *slog.Logger
}

type streamKey struct {
	kind     string
	merchant uuid.UUID
	env      sika.Environment
}

// streamBatch is what a poller read: every message after from, in order.
type streamBatch struct {
	from store.StreamPosition
	msgs []sseMessage
}

type streamSub struct {
	key     streamKey
	batches chan streamBatch
}

type streamPoller struct {
	subs map[*streamSub]bool
	stop chan struct{}
}

func newStreamHub(st *store.Store, done <-chan struct{}, log *slog.Logger) *streamHub {
	return &streamHub{pollers: map[streamKey]*streamPoller{}, store: st, done: done, log: log}
}

// subscribe adds a stream to its environment's poller, starting the poller when it is the
// first.
func (h *streamHub) subscribe(src streamSource, merchant uuid.UUID, env sika.Environment) *streamSub {
	sub := &streamSub{key: streamKey{src.kind, merchant, env}, batches: make(chan streamBatch, 16)}
	h.mu.Lock()
	defer h.mu.Unlock()
	pl := h.pollers[sub.key]
	if pl == nil {
		pl = &streamPoller{subs: map[*streamSub]bool{}, stop: make(chan struct{})}
		h.pollers[sub.key] = pl
		go h.poll(src, sub.key, pl)
	}
	pl.subs[sub] = true
	return sub
}

// unsubscribe removes a stream; the last one stops its poller.
func (h *streamHub) unsubscribe(sub *streamSub) {
	h.mu.Lock()
	defer h.mu.Unlock()
	pl := h.pollers[sub.key]
	if pl == nil {
		return
	}
	delete(pl.subs, sub)
	if len(pl.subs) == 0 {
		close(pl.stop)
		delete(h.pollers, sub.key)
	}
}

// poll reads an environment's table for its streams until the last one leaves. A stream whose
// queue is full misses the batch and reads the gap itself at the next one.
func (h *streamHub) poll(src streamSource, key streamKey, pl *streamPoller) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-pl.stop:
		case <-h.done:
		}
		cancel()
	}()
	pos, err := h.store.StreamNow(ctx)
	for err != nil {
		if ctx.Err() != nil {
			return
		}
		h.log.Warn("stream poller cannot start; retrying", "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
		pos, err = h.store.StreamNow(ctx)
	}
	timer := time.NewTimer(streamPollInterval)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		msgs, err := src.after(ctx, key.merchant, key.env, pos)
		if err != nil {
			if ctx.Err() == nil {
				h.log.Warn("stream poller read failed", "err", err)
			}
			timer.Reset(streamPollInterval)
			continue
		}
		if len(msgs) > 0 {
			b := streamBatch{from: pos, msgs: msgs}
			h.mu.Lock()
			for sub := range pl.subs {
				select {
				case sub.batches <- b:
				default: // a slow stream: it reads the gap itself
				}
			}
			h.mu.Unlock()
			pos = msgs[len(msgs)-1].pos
		}
		next := streamPollInterval
		if len(msgs) == streamPage {
			next = 0
		}
		timer.Reset(next)
	}
}
