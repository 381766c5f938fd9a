package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
)

// Pace of the live streams (GET /events/stream/ and /request-logs/stream/). They read Postgres,
// not the memory of one process, so a client reconnecting to another replica misses nothing.
const (
	streamPollInterval = 300 * time.Millisecond
	streamKeepAlive    = 15 * time.Second
	streamPage         = 100
	// streamRetryMS is the reconnection delay a client is told to wait after a drop.
	streamRetryMS = 1000
)

// sseMessage is one server-sent event.
type sseMessage struct {
	id, event string
	data      []byte
	pos       store.StreamPosition
}

// streamSource is what a live stream reads: where a Last-Event-ID resumes, and the messages
// committed after a position.
type streamSource struct {
	resume func(ctx context.Context, merchant uuid.UUID, env sika.Environment, lastID string) (store.StreamPosition, error)
	after  func(ctx context.Context, merchant uuid.UUID, env sika.Environment, pos store.StreamPosition) ([]sseMessage, error)
}

// streamEvents serves the merchant's events of the key's environment as server-sent events, as
// they commit: each with its event id, its type and the payload webhooks carry.
func (s *Server) streamEvents(w http.ResponseWriter, r *http.Request) error {
	return s.serveStream(w, r, streamSource{
		resume: func(ctx context.Context, merchant uuid.UUID, env sika.Environment, lastID string) (store.StreamPosition, error) {
			return s.store.EventStreamPosition(ctx, merchant, env, lastID)
		},
		after: func(ctx context.Context, merchant uuid.UUID, env sika.Environment, pos store.StreamPosition) ([]sseMessage, error) {
			events, err := s.store.EventsAfter(ctx, merchant, env, pos, streamPage)
			out := make([]sseMessage, len(events))
			for i, e := range events {
				out[i] = sseMessage{id: e.ID, event: string(e.Type), data: e.Payload, pos: e.Position}
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
				out[i] = sseMessage{id: v.ID, event: "request", data: data, pos: l.Position}
			}
			return out, nil
		},
	})
}

// serveStream runs one live stream until the client leaves or the server stops streams. It
// starts after the Last-Event-ID the client sends (a reconnection: nothing lost, nothing
// repeated) or, without one, at what commits from now on. Errors before the first byte are
// answered in the envelope; after it, the stream just ends and the client resumes.
func (s *Server) serveStream(w http.ResponseWriter, r *http.Request, src streamSource) error {
	ctx := r.Context()
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
	poll := time.NewTimer(0)
	defer poll.Stop()
	lastWrite := time.Now()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-s.streamsDone:
			return nil
		case <-poll.C:
		}
		msgs, err := src.after(ctx, merchant, env, pos)
		if err != nil {
			if ctx.Err() == nil {
				logFrom(ctx).Warn("stream read failed; the client will resume", "err", err)
			}
			return nil
		}
		for _, m := range msgs {
			if _, err := fmt.Fprintf(w, "id: %s\nevent: %s\ndata: %s\n\n", m.id, m.event, m.data); err != nil {
				return nil
			}
			pos = m.pos
		}
		wrote := len(msgs) > 0
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
		next := streamPollInterval
		if len(msgs) == streamPage {
			next = 0
		}
		poll.Reset(next)
	}
}
