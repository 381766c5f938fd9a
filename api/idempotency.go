package api

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"net/http"
	"time"
	"unicode/utf8"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
	"github.com/sikahq/sika/telemetry"
)

// maxIdempotencyKeyLen is the longest Idempotency-Key accepted (spec: 255 characters).
const maxIdempotencyKeyLen = 255

// captureWriter passes a response through, remembering its status (statusRecorder) and keeping
// a copy of its body for the idempotency store.
type captureWriter struct {
	statusRecorder
	body bytes.Buffer
}

func (w *captureWriter) Write(b []byte) (int, error) {
	w.body.Write(b)
	return w.statusRecorder.Write(b)
}

// idempotent is the Idempotency-Key layer of contract §6 that money-moving routes plug into.
// Without the header each call is a new request. With it, the first request claims the key
// atomically and its response is stored; a replay with the same method, path and body gets that
// response byte for byte with `Idempotent-Replayed: true`; another body or route is 409
// idempotency_key_reused; a replay while the first still runs is 409 idempotency_key_in_use.
// A 5xx (or a panic) releases the key so that the client may retry with it.
//
// A claim whose process died mid-request is taken over once its lease has passed; handlers
// whose effect is not idempotent by itself must dedupe on the key too: the record they write
// carries the key and the request's hash (see idempotencyFrom), which is why the hash is kept in
// the request context with the body.
func (s *Server) idempotent(w http.ResponseWriter, r *http.Request, h handlerFunc) error {
	key := r.Header.Get("Idempotency-Key")
	if key == "" && len(r.Header.Values("Idempotency-Key")) == 0 {
		return h(w, r)
	}
	if n := utf8.RuneCountInString(key); n == 0 || n > maxIdempotencyKeyLen {
		return sika.FieldError("Idempotency-Key", "Must be between 1 and 255 characters.")
	}
	body, err := readBody(r, maxJSONBody)
	if err != nil {
		return err
	}
	ctx := r.Context()
	merchant, env := tenant(ctx)
	hash := requestHash(r.Method, r.URL.Path, body)
	req := store.IdempotencyRequest{
		Merchant: merchant, Environment: env, Key: key,
		Method: r.Method, Path: r.URL.Path, Hash: hash,
	}
	outcome, stored, err := s.store.ClaimIdempotencyKey(ctx, req, s.cfg.IdempotencyLease, s.cfg.IdempotencyTTL)
	if err != nil {
		return err
	}
	switch outcome {
	case store.ClaimMismatch:
		telemetry.IdempotencyConflicts.WithLabelValues(telemetry.ConflictReused).Inc()
		return sika.Errorf(sika.CodeIdempotencyKeyReused, "This Idempotency-Key was already used with another request body or route.")
	case store.ClaimInUse:
		telemetry.IdempotencyConflicts.WithLabelValues(telemetry.ConflictInUse).Inc()
		return sika.Errorf(sika.CodeIdempotencyKeyInUse, "A request with this Idempotency-Key is still being processed; retry shortly.")
	case store.ClaimReplay:
		if stored.ContentType != "" {
			w.Header().Set("Content-Type", stored.ContentType)
		}
		w.Header().Set("Idempotent-Replayed", "true")
		w.WriteHeader(stored.Status)
		_, _ = w.Write(stored.Body)
		return nil
	}

	completed := false
	defer func() {
		if !completed {
			s.persist(ctx, "release idempotency key", func(ctx context.Context) error {
				return s.store.ReleaseIdempotencyKey(ctx, req)
			})
		}
	}()
	rec := &captureWriter{statusRecorder: statusRecorder{ResponseWriter: w}}
	// The body, read once here, and its hash, which records that dedupe on the key keep (see
	// idempotencyFrom): they tell a replay from another request once this key's record is gone.
	r = r.WithContext(context.WithValue(context.WithValue(ctx, ctxBody, body), ctxRequestHash, hash))
	if err := h(rec, r); err != nil {
		writeError(rec, r, err)
	}
	if rec.status >= 500 {
		return nil
	}
	resp := store.StoredResponse{Status: rec.status, ContentType: rec.Header().Get("Content-Type"), Body: rec.body.Bytes()}
	completed = true
	s.persist(ctx, "store idempotent response", func(ctx context.Context) error {
		return s.store.CompleteIdempotencyKey(ctx, req, resp)
	})
	return nil
}

// persist runs a write that must not be lost to a short Postgres outage (the key's release
// after a 5xx, its stored response): at once, and when that fails again in the background with
// backoff for up to persistFor. Without it, a key would stay claimed until its lease ends and
// the merchant's retry with the same key would get idempotency_key_in_use meanwhile.
func (s *Server) persist(ctx context.Context, what string, write func(context.Context) error) {
	ctx = context.WithoutCancel(ctx)
	err := write(ctx)
	if err == nil {
		return
	}
	logFrom(ctx).Warn(what+" failed; retrying in the background", "err", err)
	go func() {
		deadline := time.Now().Add(persistFor)
		for wait := 250 * time.Millisecond; time.Now().Before(deadline); wait = min(2*wait, 5*time.Second) {
			time.Sleep(wait)
			wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			err = write(wctx)
			cancel()
			if err == nil {
				logFrom(ctx).Info(what + " done after a retry")
				return
			}
		}
		logFrom(ctx).Error(what+" abandoned; the key's lease will free it", "err", err)
	}()
}

// persistFor bounds the background retries of persist.
const persistFor = time.Minute

// requestHash identifies a request for idempotency: method, path and the body, canonicalised
// when it is JSON so that key order and spacing do not make two equal requests differ.
func requestHash(method, path string, body []byte) []byte {
	h := sha256.New()
	h.Write([]byte(method + "\n" + path + "\n"))
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err == nil && !dec.More() {
		if canon, err := json.Marshal(v); err == nil {
			body = canon
		}
	}
	h.Write(body)
	return h.Sum(nil)
}
