package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/sikahq/sika/gateway"
)

// callbackRetries is how many times a failed delivery is tried again, 1 tick apart.
const callbackRetries = 3

// sendCallbacksLocked starts delivering the callbacks of an operation that just became final,
// as its scenario says: one, none (007), or two then a late PENDING (008).
func (s *Server) sendCallbacksLocked(op *operation) {
	switch {
	case s.closed || op.callbackURL == "":
		return
	case op.scenario.callbacks == callbacksNone:
		op.log.Info("sandbox callback withheld", "suffix", op.scenario.suffix)
		return
	}
	final := callbackBody{
		Type:             op.kind,
		Reference:        op.reference,
		GatewayReference: op.gatewayRef,
		Status:           op.status,
		FailureCode:      op.failureCode,
		FailureMessage:   op.failureMessage,
	}
	sequence := []callbackBody{final}
	if op.scenario.callbacks == callbacksTwiceThenLatePending {
		late := final
		late.Status, late.FailureCode, late.FailureMessage = gateway.StatusPending, "", ""
		sequence = append(sequence, final, late)
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.deliverSequence(op, sequence)
	}()
}

// deliverSequence delivers callbacks one after the other; a PENDING one after a final one
// comes a tick late, as a delayed network message would.
func (s *Server) deliverSequence(op *operation, sequence []callbackBody) {
	for i, cb := range sequence {
		if i > 0 && cb.Status == gateway.StatusPending && !s.wait(s.cfg.Tick) {
			return
		}
		if !s.deliver(op, cb) && s.ctx.Err() != nil {
			return
		}
	}
}

// deliver posts one callback, retrying a connection error or a non-2xx answer up to
// callbackRetries times; it reports whether the receiver acknowledged it.
func (s *Server) deliver(op *operation, cb callbackBody) bool {
	for attempt := 1; attempt <= 1+callbackRetries; attempt++ {
		if attempt > 1 && !s.wait(s.cfg.Tick) {
			return false
		}
		err := s.post(op, cb)
		s.mu.Lock()
		op.callbackTries++
		if err == nil {
			op.callbacksSent++
		}
		s.mu.Unlock()
		if err == nil {
			op.log.Info("sandbox callback delivered", "status", cb.Status, "attempt", attempt)
			return true
		}
		if s.ctx.Err() != nil {
			return false
		}
		op.log.Warn("sandbox callback failed", "status", cb.Status, "attempt", attempt, "error", err)
	}
	op.log.Warn("sandbox callback abandoned", "status", cb.Status, "attempts", 1+callbackRetries)
	return false
}

// post sends one signed callback.
func (s *Server) post(op *operation, cb callbackBody) error {
	now := s.cfg.Now()
	cb.SentAt = now.UTC().Format(time.RFC3339Nano)
	raw, err := json.Marshal(cb)
	if err != nil {
		return fmt.Errorf("encode callback: %w", err)
	}
	req, err := http.NewRequestWithContext(s.ctx, http.MethodPost, op.callbackURL, bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("build callback request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "sika-sandbox")
	req.Header.Set(SignatureHeader, sign(op.gateway.CallbackSecret, now, raw))
	resp, err := s.cfg.HTTPClient.Do(req)
	if err != nil {
		// The URL may carry a token of the receiver's: keep it out of the logs.
		if ue, ok := errors.AsType[*url.Error](err); ok {
			err = ue.Err
		}
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxBody)) // lets the connection be reused
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("answered %s", resp.Status)
	}
	return nil
}

// wait sleeps for d unless the server closes first; it reports whether d passed.
func (s *Server) wait(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-s.ctx.Done():
		return false
	}
}
