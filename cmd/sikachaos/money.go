package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/sikahq/sika/activities"
)

// The money-safety operations of issue 17: an operator that says "not found" and then pays, one
// that pays after Sika's deadline, two customers paying one checkout session, and an
// Idempotency-Key reused with another body after a 5xx. checks_money.go holds their invariants.

// Sandbox suffixes of the money-safety scenarios (operators.md).
const (
	suffixNotFound = "010" // the initiation's answer is lost, status reads say NOT_FOUND for a while, then it pays
	suffixLate     = "011" // stays PENDING past Sika's push lifetime, refuses the cancel, pays after LateAfter
	// sandbox-a answers 503 yet takes the push and reports it paid (signed) two ticks later,
	// while the run is at sandbox-b, which holds its push for the customer (issue 21)
	suffixClosedPaid = "012"
)

// closedAttemptPaid sends a softpay, or one time in two a payout, to a number ending in 012:
// sandbox-a answers 503 (attempt 1 closed), the run goes on at sandbox-b, and sandbox-a then
// reports attempt 1 paid by a signed callback. Sika must keep that answer and settle it at the
// run's end: SUCCESS on attempt 1 when sandbox-b's push is withdrawn (or, for a payout, expires);
// one time in two the customer also approves the second push at sandbox-b (by hand), and the
// second success is credited and flagged REFUND_DUE (for a payout: the hold is settled once and
// the second transfer flagged PAYOUT_PAID_TWICE).
func (l *load) closedAttemptPaid(ctx context.Context, r *rand.Rand) {
	kind := "collection"
	var id uuid.UUID
	var ok bool
	if r.IntN(2) == 0 {
		kind = "disbursement"
		body := map[string]string{"amount": amount(r, 1000, 5000), "currency": "XOF", "country": "BJ", "method": "MTN_BJ",
			"recipient": l.number("BJ", suffixClosedPaid), "recipient_name": "Chaos Payee", "description": "chaos payout, closed attempt paid"}
		id, ok = l.keyedCreate(ctx, opClosedPaid, payoutPath, body, txID)
	} else {
		id, ok = l.softpay(ctx, opClosedPaid, l.softpayBody(opClosedPaid, "BJ", "MTN_BJ", suffixClosedPaid, amount(r, 1000, 50000)))
	}
	if !ok || r.IntN(2) == 0 {
		return
	}
	l.follow.Go(func() { l.approveAtSandbox(ctx, activities.AttemptID(id, 1, 2), "sandbox-b", kind) })
}

// approveAtSandbox plays the customer (kind collection) or the beneficiary's operator (kind
// disbursement) approving a push by hand, once the sandbox has it, for up to a push lifetime.
func (l *load) approveAtSandbox(ctx context.Context, ref uuid.UUID, gw, kind string) {
	deadline := time.Now().Add(pushLifetime)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		req, err := http.NewRequestWithContext(ctx, "POST", l.h.sandboxURL+"/sandbox/pushes/"+ref.String()+"/approve?kind="+kind+"&gateway="+gw, nil)
		if err != nil {
			return
		}
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode != http.StatusNotFound {
				return // approved, or already final (withdrawn first)
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// notFoundThenPays sends a payout (two in three) or a softpay to a number ending in 010: the
// sandbox drops the answer to the first send, answers NOT_FOUND to status reads and 503 to
// re-sends for notFoundFor, then pays. Sika must keep the payout's hold and end it SUCCESS.
func (l *load) notFoundThenPays(ctx context.Context, r *rand.Rand) {
	if r.IntN(3) != 0 {
		body := map[string]string{"amount": amount(r, 1000, 5000), "currency": "XOF", "country": "BJ", "method": "MTN_BJ",
			"recipient": l.number("BJ", suffixNotFound), "recipient_name": "Chaos Payee", "description": "chaos payout, not found first"}
		l.keyedCreate(ctx, opNotFound, payoutPath, body, txID)
		return
	}
	l.softpay(ctx, opNotFound, l.softpayBody(opNotFound, "BJ", "MTN_BJ", suffixNotFound, amount(r, 1000, 50000)))
}

// paysAfterDeadline sends a softpay to a number ending in 011: the customer approves after
// Sika's push lifetime, the cancel is refused, so Sika records it FAILED expired and re-reads
// it; the sandbox pays it after lateAfter and Sika must reconcile it FAILED → SUCCESS. Once the
// harness sees it FAILED it retries it, as a merchant would: the retry must be refused 409
// outcome_unresolved (a second push could charge the customer twice). The wait for the failure
// runs outside the load's concurrency bound.
func (l *load) paysAfterDeadline(ctx context.Context, r *rand.Rand) {
	body := l.softpayBody(opLate, "BJ", "MTN_BJ", suffixLate, amount(r, 1000, 50000))
	id, ok := l.softpay(ctx, opLate, body)
	if !ok {
		return
	}
	l.follow.Go(func() { l.retryWhileUnresolved(ctx, id, body["customer_phone"].(string)) })
}

// retryWhileUnresolved waits until a 011 payment leaves PENDING and, when it is FAILED, retries
// it once with a fresh key.
func (l *load) retryWhileUnresolved(ctx context.Context, id uuid.UUID, phone string) {
	lr := &lateRetry{}
	defer l.book.update(id, opLate, func(n *txNote) { n.late = lr })
	status, err := l.awaitFinal(ctx, opLate, id, pushLifetime+3*time.Minute)
	if err != nil {
		lr.err = err
		l.book.fail(opLate, err)
		return
	}
	lr.seen = status
	if status != "FAILED" {
		return // its run ended after the operator paid: nothing to retry
	}
	key := newKey()
	path := "/api/v1/payments/" + id.String() + "/retry/"
	l.book.update(id, opLate, func(n *txNote) { n.retryKeys = append(n.retryKeys, key) })
	a, seen, err := l.cl.do(ctx, call{kind: opLate, method: "POST", path: path, body: map[string]string{"customer_phone": phone}, key: key})
	l.book.keyed(opLate, key, path, a, seen, err, txID)
	lr.sent, lr.answer, lr.answeredAt, lr.err = true, a, time.Now(), err
}

// raceRecord is one checkout session paid by several customers at once, round after round
// while the payment in flight fails.
type raceRecord struct {
	session uuid.UUID
	rounds  [][]raceAnswer
	// retries are the merchant's retries of the payment that failed in the previous round, sent
	// with the customers' payments of the next one.
	retries []raceAnswer
	// afterPaid is the answer to one more payment once the session was paid (nil: none sent).
	afterPaid *raceAnswer
}

// raceAnswer is what one customer's pay call got.
type raceAnswer struct {
	phone  string
	status int // 0: no answer
	code   string
	tx     uuid.UUID // of a 201
	// internal is the request id of a 500 internal_error answered on the way, if any.
	internal string
}

func (a raceAnswer) String() string {
	switch {
	case a.status == 0:
		return "no answer"
	case a.code != "":
		return fmt.Sprintf("%d %s", a.status, a.code)
	}
	return fmt.Sprint(a.status)
}

// raceCustomers is how many customers pay one session at once.
const raceCustomers = 3

// checkoutRace creates a checkout session and has three customers pay it on its hosted
// endpoint at the same moment, each with a number of their own (one may decline, one may be
// slow): one payment may be in flight, the others are answered 409 checkout_payment_in_progress.
// While the payment in flight fails, they pay again (up to three rounds), and with them the
// merchant retries the payment that failed; once one succeeds, one more customer pays: the
// session is no longer payable.
func (l *load) checkoutRace(ctx context.Context, r *rand.Rand) {
	slug, sessionID, ok := l.createSession(ctx, opCheckoutRace, r)
	if !ok {
		return
	}
	rec := &raceRecord{session: sessionID}
	defer func() {
		l.book.mu.Lock()
		l.book.races = append(l.book.races, rec)
		l.book.mu.Unlock()
	}()
	phones := make([]string, raceCustomers)
	for i := range phones {
		suffix := okSuffixes[r.IntN(len(okSuffixes))]
		switch r.IntN(4) {
		case 0:
			suffix = "001" // declines: the others pay again
		case 1:
			suffix = "009" // approves slowly: a long time in flight
		}
		phones[i] = l.number("BJ", suffix)
	}
	pay := func(phone string) raceAnswer {
		a, _, err := l.cl.do(ctx, call{kind: opCheckoutRace, method: "POST", path: "/api/v1/checkout/" + slug + "/pay/", public: true, once: true,
			body: map[string]string{"network": "MTN_BJ", "customer_phone": phone}})
		out := raceAnswer{phone: phone}
		if err != nil || a.err != nil {
			return out
		}
		out.status, out.code = a.status, a.code()
		if a.status == http.StatusInternalServerError {
			out.internal = a.requestID
		}
		if a.status == http.StatusCreated {
			if out.tx = txID(a); out.tx != uuid.Nil {
				l.book.update(out.tx, opCheckoutRace, func(n *txNote) { n.session = sessionID })
			}
		}
		return out
	}
	var failed uuid.UUID // the payment that failed in the previous round
	for range 3 {
		round := make([]raceAnswer, len(phones))
		var retried *raceAnswer
		var wg sync.WaitGroup
		for i, phone := range phones {
			wg.Go(func() { round[i] = pay(phone) })
		}
		if failed != uuid.Nil {
			wg.Go(func() {
				a := l.retryCheckoutPayment(ctx, failed, l.number("BJ", okSuffixes[r.IntN(len(okSuffixes))]))
				retried = &a
			})
		}
		wg.Wait()
		rec.rounds = append(rec.rounds, round)
		// The payment in flight: the one answered 201 (or retried), else the one the session shows.
		var inFlight []uuid.UUID
		for _, a := range round {
			if a.tx != uuid.Nil {
				inFlight = append(inFlight, a.tx)
			}
		}
		if retried != nil {
			rec.retries = append(rec.retries, *retried)
			if retried.tx != uuid.Nil {
				inFlight = append(inFlight, retried.tx)
			}
		}
		if len(inFlight) == 0 {
			id, known := l.hostedPayment(ctx, slug)
			if !known || id == uuid.Nil {
				return // nothing to wait for: the checks judge what exists
			}
			inFlight = append(inFlight, id)
		}
		paid := false
		for _, id := range inFlight {
			status, err := l.awaitFinal(ctx, opCheckoutRace, id, pushLifetime+3*time.Minute)
			if err != nil {
				l.book.fail(opCheckoutRace, err)
				return
			}
			paid = paid || status == "SUCCESS"
			failed = id
		}
		if paid {
			a := pay(l.number("BJ", okSuffixes[r.IntN(len(okSuffixes))]))
			rec.afterPaid = &a
			return
		}
	}
}

// retryCheckoutPayment is the merchant retrying a failed payment of a checkout session (with
// the customer's new number) while customers pay the session: 200 when the retry is the one
// payment in flight, else 409 checkout_payment_in_progress (or session_not_payable once paid).
func (l *load) retryCheckoutPayment(ctx context.Context, id uuid.UUID, phone string) raceAnswer {
	key := newKey()
	path := "/api/v1/payments/" + id.String() + "/retry/"
	l.book.update(id, opCheckoutRace, func(n *txNote) { n.retryKeys = append(n.retryKeys, key) })
	a, seen, err := l.cl.do(ctx, call{kind: opCheckoutRace, method: "POST", path: path, body: map[string]string{"customer_phone": phone}, key: key})
	l.book.keyed(opCheckoutRace, key, path, a, seen, err, txID)
	out := raceAnswer{phone: phone}
	for _, s := range seen {
		if s.err == nil && s.status == http.StatusInternalServerError {
			out.internal = s.requestID
		}
	}
	if err != nil || a.err != nil {
		return out
	}
	out.status, out.code = a.status, a.code()
	if a.status == http.StatusOK {
		out.tx = id
	}
	return out
}

// createSession creates a checkout session as the merchant's backend does and returns its slug
// and id.
func (l *load) createSession(ctx context.Context, kind opKind, r *rand.Rand) (string, uuid.UUID, bool) {
	a, _, err := l.cl.do(ctx, call{kind: kind, method: "POST", path: "/api/v1/checkout-sessions/",
		body: map[string]string{"amount": amount(r, 1000, 50000), "currency": "XOF", "country": "BJ",
			"customer_name": "Chaos Shopper", "customer_email": "shopper@example.com", "description": "chaos checkout"}})
	if err != nil {
		l.book.fail(kind, err)
		return "", uuid.Nil, false
	}
	var session struct {
		ID   uuid.UUID `json:"id"`
		Slug string    `json:"slug"`
	}
	if a.status != http.StatusCreated || a.data(&session) != nil {
		l.book.fail(kind, fmt.Errorf("create a session: %s", a.describe()))
		return "", uuid.Nil, false
	}
	l.book.mu.Lock()
	l.book.sessions++
	l.book.mu.Unlock()
	return session.Slug, session.ID, true
}

// reuseRecord is one Idempotency-Key sent with a body whose commit's answer was cut, then with
// another amount.
type reuseRecord struct {
	key, path       string
	amountA, amount decimal.Decimal // the first body's amount, the second's
	when            cutWhen
	cut             cutResult
	first           answer // the answer to the first body (a 5xx when the cut happened)
	released        bool   // the API's record of the key was gone before the second body was sent
	second          answer // the definitive answer to the second body
	secondErr       error
	secondTx        uuid.UUID // of a 2xx
}

// keyReuse sends a payout or a softpay whose Postgres connection the cutter cuts, at random
// just before the INSERT or just after Postgres committed it: either way the API answers a 5xx
// and releases the key. Once the key's record is gone, the same key is sent with another
// amount. When the first body was committed, the answer must be 409 idempotency_key_reused (the
// store's backstop compares the request's fingerprint); when it was not, a 201 for the new body;
// never the first body's transaction.
func (l *load) keyReuse(ctx context.Context, r *rand.Rand) {
	marker := "chaos-cut-" + uuid.NewString()
	first := amount(r, 1000, 5000)
	second := decimal.RequireFromString(first).Add(decimal.NewFromInt(int64(100 * (1 + r.IntN(10)))))
	var path string
	var bodyA, bodyB map[string]any
	if r.IntN(2) == 0 {
		path = payoutPath
		bodyA = map[string]any{"amount": first, "currency": "XOF", "country": "BJ", "method": "MTN_BJ",
			"recipient": l.number("BJ", okSuffixes[r.IntN(len(okSuffixes))]), "recipient_name": "Chaos Payee", "description": marker}
	} else {
		path = softpayPath
		bodyA = l.softpayBody(opKeyReuse, "BJ", "MTN_BJ", okSuffixes[r.IntN(len(okSuffixes))], first)
		bodyA["description"] = marker
	}
	bodyB = map[string]any{}
	for k, v := range bodyA {
		bodyB[k] = v
	}
	bodyB["amount"] = second.String()
	rec := &reuseRecord{key: newKey(), path: path, amountA: decimal.RequireFromString(first), amount: second, when: cutAfterCommit}
	if r.IntN(3) == 0 {
		rec.when = cutBeforeCommit
	}
	defer func() {
		l.book.mu.Lock()
		l.book.reuses = append(l.book.reuses, rec)
		l.book.mu.Unlock()
	}()
	cut := l.h.cutter.arm(marker, rec.when)
	a, seen, err := l.cl.do(ctx, call{kind: opKeyReuse, method: "POST", path: path, body: bodyA, key: rec.key, once: true})
	l.h.cutter.disarm(cut) // the second body carries the marker too
	rec.cut, rec.first = cut.get(), a
	l.book.seen(opKeyReuse, rec.key, path, seen, txID)
	if err != nil {
		l.book.fail(opKeyReuse, err)
		return
	}
	rec.released = l.awaitKeyReleased(ctx, rec.key, 30*time.Second)
	b, seen, err := l.cl.do(ctx, call{kind: opKeyReuse, method: "POST", path: path, body: bodyB, key: rec.key})
	l.book.keyed(opKeyReuse, rec.key, path, b, seen, err, txID)
	rec.second, rec.secondErr = b, err
	if err == nil && isSuccess(b) {
		rec.secondTx = txID(b)
		l.book.note(rec.secondTx, opKeyReuse)
	}
}

// awaitKeyReleased waits until the API's record of an Idempotency-Key is gone (released after
// its 5xx), and reports whether it went within bound.
func (l *load) awaitKeyReleased(ctx context.Context, key string, bound time.Duration) bool {
	deadline := time.Now().Add(bound)
	for {
		var n int
		err := l.h.st.Pool().QueryRow(ctx, `SELECT count(*) FROM idempotency_keys WHERE merchant_id = $1 AND key = $2`,
			l.h.setup.merchantID, key).Scan(&n)
		if err == nil && n == 0 {
			return true
		}
		if time.Now().After(deadline) || errors.Is(err, context.Canceled) {
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// backstopAnswer reports whether a 409 idempotency_key_reused came from the store's backstop
// (it names the transaction the key created) rather than from the API's record of the key.
func backstopAnswer(a answer) bool {
	return a.status == http.StatusConflict && a.code() == "idempotency_key_reused" && strings.Contains(string(a.body), "already created transaction")
}
