package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/sikahq/sika"
)

// StreamPosition is where a live stream stands in a table read in commit-safe order: the
// Postgres transaction that wrote the last row sent (XID) and that row's key (Key). See
// migration 0019: rows are read by (stream_xid, key) and only below the oldest running
// transaction, so no row can later appear behind a position already passed.
type StreamPosition struct {
	XID uint64
	Key string
}

// streamHorizon is the SQL of the commit-safe horizon: every transaction below it has ended.
const streamHorizon = `pg_snapshot_xmin(pg_current_snapshot())`

// StreamNow is the position of "from now on": past every transaction that has ended.
func (s *Store) StreamNow(ctx context.Context) (StreamPosition, error) {
	var xid string
	if err := s.pool.QueryRow(ctx, `SELECT `+streamHorizon+`::text`).Scan(&xid); err != nil {
		return StreamPosition{}, fmt.Errorf("read stream horizon: %w", err)
	}
	n, err := strconv.ParseUint(xid, 10, 64)
	if err != nil {
		return StreamPosition{}, fmt.Errorf("parse stream horizon %q: %w", xid, err)
	}
	// The horizon's own transaction is still running: its rows (every key is above the empty
	// one) are ahead of the position, every ended transaction's rows behind it.
	return StreamPosition{XID: n}, nil
}

// StreamedEvent is an event as a stream sends it: its id, type and the payload webhook
// deliveries carry, byte for byte.
type StreamedEvent struct {
	ID       string
	Type     sika.EventType
	Payload  []byte
	Position StreamPosition
	// Need is the API-key scope the event needs to be seen ("": any key; see eventScopeSQL).
	Need sika.Scope
}

// EventStreamPosition is the position of one of the merchant's events (a stream resuming after
// it), or not_found when the event is not the merchant's in that environment.
func (s *Store) EventStreamPosition(ctx context.Context, merchantID uuid.UUID, env sika.Environment, eventID string) (StreamPosition, error) {
	var pos StreamPosition
	var xid string
	var key uuid.UUID
	err := s.pool.QueryRow(ctx, `SELECT stream_xid::text, id FROM events WHERE event_id = $1 AND merchant_id = $2 AND environment = $3`,
		eventID, merchantID, env).Scan(&xid, &key)
	if err := rowErr(err, "Event", "select event position"); err != nil {
		return pos, err
	}
	return parsePosition(xid, key.String())
}

// EventsAfter returns up to limit of the merchant's events committed after pos, in commit-safe
// order.
func (s *Store) EventsAfter(ctx context.Context, merchantID uuid.UUID, env sika.Environment, pos StreamPosition, limit int) ([]StreamedEvent, error) {
	key := uuid.Nil
	if pos.Key != "" {
		var err error
		if key, err = uuid.Parse(pos.Key); err != nil {
			return nil, fmt.Errorf("event stream key %q: %w", pos.Key, err)
		}
	}
	return collect(ctx, s.pool, "event stream", func(r pgx.Row) (StreamedEvent, error) {
		var e StreamedEvent
		var payload, xid string
		var id uuid.UUID
		if err := r.Scan(&e.ID, &e.Type, &payload, &xid, &id, &e.Need); err != nil {
			return e, err
		}
		e.Payload = []byte(payload)
		p, err := parsePosition(xid, id.String())
		e.Position = p
		return e, err
	}, `SELECT e.event_id, e.type, e.payload::text, e.stream_xid::text, e.id, `+eventScopeSQL+` FROM events e
		WHERE e.merchant_id = $1 AND e.environment = $2 AND (e.stream_xid, e.id) > ($3::text::xid8, $4)
		  AND e.stream_xid < `+streamHorizon+`
		ORDER BY e.stream_xid, e.id LIMIT $5`, merchantID, env, strconv.FormatUint(pos.XID, 10), key, limit)
}

// APIRequestLog is one API request of a merchant as `sika logs tail` shows it. It holds no body,
// key, query string or phone number.
type APIRequestLog struct {
	Merchant       uuid.UUID
	Environment    sika.Environment
	APIKey         *uuid.UUID
	Method         string
	Route          string
	Path           string
	Status         int
	LatencyMS      float64
	IdempotencyKey string
	RequestID      string
	CreatedAt      time.Time
	Position       StreamPosition
}

// InsertAPIRequestLogs writes a batch of request logs in one COPY.
func (s *Store) InsertAPIRequestLogs(ctx context.Context, logs []APIRequestLog) error {
	if len(logs) == 0 {
		return nil
	}
	_, err := s.pool.CopyFrom(ctx, pgx.Identifier{"api_request_logs"},
		[]string{"merchant_id", "environment", "api_key_id", "method", "route", "path", "status", "latency_ms", "idempotency_key", "request_id", "created_at"},
		pgx.CopyFromSlice(len(logs), func(i int) ([]any, error) {
			l := logs[i]
			var idem *string
			if l.IdempotencyKey != "" {
				idem = &l.IdempotencyKey
			}
			return []any{l.Merchant, string(l.Environment), l.APIKey, l.Method, l.Route, l.Path, l.Status, l.LatencyMS, idem, l.RequestID, l.CreatedAt}, nil
		}))
	if err != nil {
		return fmt.Errorf("insert api request logs: %w", err)
	}
	return nil
}

// APIRequestLogStreamPosition is the position of one of the merchant's request logs, by its
// stream id (as APIRequestLogsAfter returns it), or not_found.
func (s *Store) APIRequestLogStreamPosition(ctx context.Context, merchantID uuid.UUID, env sika.Environment, id int64) (StreamPosition, error) {
	var xid string
	err := s.pool.QueryRow(ctx, `SELECT stream_xid::text FROM api_request_logs WHERE id = $1 AND merchant_id = $2 AND environment = $3`,
		id, merchantID, env).Scan(&xid)
	if err := rowErr(err, "Request log", "select request log position"); err != nil {
		return StreamPosition{}, err
	}
	return parsePosition(xid, strconv.FormatInt(id, 10))
}

// APIRequestLogsAfter returns up to limit of the merchant's request logs committed after pos, in
// commit-safe order.
func (s *Store) APIRequestLogsAfter(ctx context.Context, merchantID uuid.UUID, env sika.Environment, pos StreamPosition, limit int) ([]APIRequestLog, error) {
	var key int64
	if pos.Key != "" {
		var err error
		if key, err = strconv.ParseInt(pos.Key, 10, 64); err != nil {
			return nil, fmt.Errorf("request log stream key %q: %w", pos.Key, err)
		}
	}
	return collect(ctx, s.pool, "request log stream", func(r pgx.Row) (APIRequestLog, error) {
		var l APIRequestLog
		var xid string
		var id int64
		if err := r.Scan(&l.Merchant, &l.Environment, &l.APIKey, &l.Method, &l.Route, &l.Path, &l.Status, &l.LatencyMS,
			&l.IdempotencyKey, &l.RequestID, &l.CreatedAt, &xid, &id); err != nil {
			return l, err
		}
		p, err := parsePosition(xid, strconv.FormatInt(id, 10))
		l.Position = p
		return l, err
	}, `SELECT merchant_id, environment, api_key_id, method, route, path, status, latency_ms,
		       coalesce(idempotency_key, ''), request_id, created_at, stream_xid::text, id
		FROM api_request_logs
		WHERE merchant_id = $1 AND environment = $2 AND (stream_xid, id) > ($3::text::xid8, $4)
		  AND stream_xid < `+streamHorizon+`
		ORDER BY stream_xid, id LIMIT $5`, merchantID, env, strconv.FormatUint(pos.XID, 10), key, limit)
}

// PurgeAPIRequestLogs deletes request logs older than before, in batches, and returns how many.
func (s *Store) PurgeAPIRequestLogs(ctx context.Context, before time.Time, batch int) (int64, error) {
	var total int64
	for {
		tag, err := s.pool.Exec(ctx, `DELETE FROM api_request_logs WHERE id IN
			(SELECT id FROM api_request_logs WHERE created_at < $1 ORDER BY created_at LIMIT $2)`, before, batch)
		if err != nil {
			return total, fmt.Errorf("purge api request logs: %w", err)
		}
		total += tag.RowsAffected()
		if tag.RowsAffected() < int64(batch) {
			return total, nil
		}
	}
}

func parsePosition(xid, key string) (StreamPosition, error) {
	n, err := strconv.ParseUint(xid, 10, 64)
	if err != nil {
		return StreamPosition{}, fmt.Errorf("parse stream xid %q: %w", xid, err)
	}
	return StreamPosition{XID: n, Key: key}, nil
}

// Before reports whether p comes before q in a stream's order: by transaction, then by key
// (keys of digits, the request logs', compare as numbers; the empty key is the smallest).
func (p StreamPosition) Before(q StreamPosition) bool {
	if p.XID != q.XID {
		return p.XID < q.XID
	}
	if len(p.Key) != len(q.Key) && isDigits(p.Key) && isDigits(q.Key) {
		return len(p.Key) < len(q.Key)
	}
	return p.Key < q.Key
}

func isDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// ErrStreamCap is returned by AcquireStreamLease when the merchant or the key holds its cap of
// streams; Scope says which ("merchant" or "key").
type ErrStreamCap struct{ Scope string }

func (e *ErrStreamCap) Error() string { return "stream cap reached for the " + e.Scope }

// AcquireStreamLease records an open stream of the merchant (and API key, nil for a dashboard
// session) for ttl, unless the merchant already holds perMerchant live streams or the key
// perKey (*ErrStreamCap). Leases of one merchant are taken one at a time (an advisory
// transaction lock), so two replicas cannot both take the last place.
func (s *Store) AcquireStreamLease(ctx context.Context, merchantID uuid.UUID, env sika.Environment, apiKey *uuid.UUID, perMerchant, perKey int, ttl time.Duration) (uuid.UUID, error) {
	id := uuid.New()
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('stream:' || $1::text, 0))`, merchantID); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM stream_leases WHERE merchant_id = $1 AND expires_at <= now()`, merchantID); err != nil {
			return err
		}
		var merchant, key int
		if err := tx.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE api_key_id = $2) FROM stream_leases WHERE merchant_id = $1`,
			merchantID, apiKey).Scan(&merchant, &key); err != nil {
			return err
		}
		switch {
		case merchant >= perMerchant:
			return &ErrStreamCap{Scope: "merchant"}
		case apiKey != nil && key >= perKey:
			return &ErrStreamCap{Scope: "key"}
		}
		_, err := tx.Exec(ctx, `INSERT INTO stream_leases (id, merchant_id, environment, api_key_id, expires_at) VALUES ($1, $2, $3, $4, now() + make_interval(secs => $5))`,
			id, merchantID, string(env), apiKey, ttl.Seconds())
		return err
	})
	var capErr *ErrStreamCap
	if errors.As(err, &capErr) {
		return uuid.Nil, capErr
	}
	if err != nil {
		return uuid.Nil, fmt.Errorf("acquire stream lease: %w", err)
	}
	return id, nil
}

// RenewStreamLease extends a lease by ttl from now; false when it is gone (expired and taken
// over, or released).
func (s *Store) RenewStreamLease(ctx context.Context, id uuid.UUID, ttl time.Duration) (bool, error) {
	tag, err := s.pool.Exec(ctx, `UPDATE stream_leases SET expires_at = now() + make_interval(secs => $2) WHERE id = $1`, id, ttl.Seconds())
	if err != nil {
		return false, fmt.Errorf("renew stream lease: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// ReleaseStreamLease deletes a lease (its stream ended).
func (s *Store) ReleaseStreamLease(ctx context.Context, id uuid.UUID) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM stream_leases WHERE id = $1`, id); err != nil {
		return fmt.Errorf("release stream lease: %w", err)
	}
	return nil
}
