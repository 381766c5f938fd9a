package api

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sikahq/sika/store"
)

// Bounds of the request log (what `sika logs tail` shows): the API records each merchant request
// into a bounded buffer that one goroutine writes to Postgres in batches. A full buffer drops
// the record and counts it: the log is for developers, it must never slow a payment down.
const (
	requestLogBuffer        = 4096
	requestLogBatch         = 500
	requestLogFlushInterval = 200 * time.Millisecond
	requestLogWriteTimeout  = 5 * time.Second
	maxLoggedIdempotencyKey = 255
)

// requestLog is the buffer of request records and its writer.
type requestLog struct {
	st      *store.Store
	logger  *slog.Logger
	entries chan store.APIRequestLog
	dropped prometheus.Counter
	failed  prometheus.Counter
	stop    chan struct{}
	done    chan struct{}
	once    sync.Once
}

func newRequestLog(st *store.Store, reg prometheus.Registerer, logger *slog.Logger) *requestLog {
	l := &requestLog{st: st, logger: logger, entries: make(chan store.APIRequestLog, requestLogBuffer),
		dropped: prometheus.NewCounter(prometheus.CounterOpts{Name: "sika_request_log_dropped_total",
			Help: "API request records dropped because the request log's buffer was full."}),
		failed: prometheus.NewCounter(prometheus.CounterOpts{Name: "sika_request_log_write_failures_total",
			Help: "Batches of API request records that could not be written to Postgres (their records are lost)."}),
		stop: make(chan struct{}), done: make(chan struct{})}
	reg.MustRegister(l.dropped, l.failed)
	go l.run()
	return l
}

// record queues one request without ever blocking.
func (l *requestLog) record(e store.APIRequestLog) {
	select {
	case l.entries <- e:
	default:
		l.dropped.Inc()
	}
}

// run writes the queued records every flush interval or full batch, until close.
func (l *requestLog) run() {
	defer close(l.done)
	tick := time.NewTicker(requestLogFlushInterval)
	defer tick.Stop()
	batch := make([]store.APIRequestLog, 0, requestLogBatch)
	flush := func() {
		if len(batch) == 0 {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), requestLogWriteTimeout)
		defer cancel()
		if err := l.st.InsertAPIRequestLogs(ctx, batch); err != nil {
			l.failed.Inc()
			l.logger.Warn("request log batch lost", "records", len(batch), "err", err)
		}
		batch = batch[:0]
	}
	for {
		select {
		case e := <-l.entries:
			if batch = append(batch, e); len(batch) == requestLogBatch {
				flush()
			}
		case <-tick.C:
			flush()
		case <-l.stop:
			for {
				select {
				case e := <-l.entries:
					batch = append(batch, e)
				default:
					flush()
					return
				}
			}
		}
	}
}

// close writes what is queued and stops the writer.
func (l *requestLog) close() {
	l.once.Do(func() { close(l.stop) })
	<-l.done
}

// recordRequest queues a merchant request for the request log: the calls of an API key or of a
// dashboard session acting for a merchant, never a body, a header value other than the
// Idempotency-Key, or the query string.
func (s *Server) recordRequest(r *http.Request, info *requestInfo, status int, start time.Time, elapsed time.Duration, requestID string) {
	p := info.principal
	if s.requestLog == nil || p == nil || p.Merchant == nil || info.unlogged {
		return
	}
	e := store.APIRequestLog{Merchant: p.Merchant.ID, Environment: p.Environment, Method: r.Method, Route: info.route,
		Path: r.URL.Path, Status: status, LatencyMS: float64(elapsed.Microseconds()) / 1000, RequestID: requestID,
		CreatedAt: start.UTC(), IdempotencyKey: r.Header.Get("Idempotency-Key")}
	if len(e.IdempotencyKey) > maxLoggedIdempotencyKey {
		e.IdempotencyKey = e.IdempotencyKey[:maxLoggedIdempotencyKey]
	}
	if p.Kind == PrincipalAPIKey {
		id := p.APIKeyID
		e.APIKey = &id
	}
	s.requestLog.record(e)
}
