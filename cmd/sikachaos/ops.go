package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"github.com/google/uuid"
)

const (
	softpayPath  = "/api/v1/payments/softpay/"
	payoutPath   = "/api/v1/payouts/initialize/"
	settlePath   = "/api/v1/settlements/"
	transferPath = "/api/v1/wallet-transfers/"
)

func (l *load) softpayBody(kind opKind, country, network, suffix, amount string) map[string]any {
	return map[string]any{"amount": amount, "currency": "XOF", "country": country, "network": network,
		"customer_phone": l.number(country, suffix), "customer_name": "Chaos Customer", "description": string(kind)}
}

// softpay sends one collection with a fresh key and returns the transaction it created.
func (l *load) softpay(ctx context.Context, kind opKind, body map[string]any) (uuid.UUID, bool) {
	return l.keyedCreate(ctx, kind, softpayPath, body, txID)
}

// postPushOTP collects on MOOV_BJ, then confirms the code the customer received.
func (l *load) postPushOTP(ctx context.Context, r *rand.Rand) {
	id, ok := l.softpay(ctx, opOTP, l.softpayBody(opOTP, "BJ", "MOOV_BJ", pickSuffix(r), amount(r, 1000, 50000)))
	if !ok {
		return
	}
	key := newKey()
	path := "/api/v1/payments/" + id.String() + "/confirm-otp/"
	a, seen, err := l.cl.do(ctx, call{kind: opOTP, method: "POST", path: path, body: map[string]string{"otp": "123456"}, key: key})
	l.book.keyed(opOTP, key, path, a, seen, err, nil)
	state := otpRefused
	switch {
	case err == nil && a.status == http.StatusOK:
		state = otpConfirmed
	case err != nil || l.book.maybe(key):
		state = otpUnknown
	}
	answered := time.Now()
	l.book.update(id, opOTP, func(n *txNote) { n.otp, n.otpAt = state, answered })
}

// duplicate sends one softpay three times at once with the same key: one operation at most.
func (l *load) duplicate(ctx context.Context, r *rand.Rand) {
	body := l.softpayBody(opDuplicate, "BJ", "MTN_BJ", pickSuffix(r), amount(r, 1000, 50000))
	key := newKey()
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			a, seen, err := l.cl.do(ctx, call{kind: opDuplicate, method: "POST", path: softpayPath, body: body, key: key})
			if id := l.book.keyed(opDuplicate, key, softpayPath, a, seen, err, txID); id != uuid.Nil {
				l.book.note(id, opDuplicate)
			}
		})
	}
	wg.Wait()
}

// checkout creates a checkout session and pays it on its hosted endpoint as the customer's
// browser would: after a lost answer it asks the session's status before paying again.
func (l *load) checkout(ctx context.Context, r *rand.Rand) {
	a, _, err := l.cl.do(ctx, call{kind: opCheckout, method: "POST", path: "/api/v1/checkout-sessions/",
		body: map[string]string{"amount": amount(r, 1000, 50000), "currency": "XOF", "country": "BJ",
			"customer_name": "Chaos Shopper", "customer_email": "shopper@example.com", "description": "chaos checkout"}})
	if err != nil {
		l.book.fail(opCheckout, err)
		return
	}
	var session struct {
		ID   uuid.UUID `json:"id"`
		Slug string    `json:"slug"`
	}
	if a.status != http.StatusCreated || a.data(&session) != nil {
		l.book.fail(opCheckout, fmt.Errorf("create a session: %s", a.describe()))
		return
	}
	l.book.mu.Lock()
	l.book.sessions++
	l.book.mu.Unlock()
	pay := call{kind: opCheckout, method: "POST", path: "/api/v1/checkout/" + session.Slug + "/pay/", public: true, once: true,
		body: map[string]string{"network": "MTN_BJ", "customer_phone": l.number("BJ", pickSuffix(r))}}
	deadline := time.Now().Add(opDeadline)
	for sent := 0; ; sent++ {
		if sent > 0 {
			if id, known := l.hostedPayment(ctx, session.Slug); known {
				if id != uuid.Nil {
					l.book.update(id, opCheckout, func(n *txNote) { n.session = session.ID })
				}
				return
			}
			l.book.mu.Lock()
			l.book.hostedDup++
			l.book.mu.Unlock()
		}
		a, _, err := l.cl.do(ctx, pay)
		if err != nil {
			l.book.fail(opCheckout, err)
			return
		}
		if a.definitive() {
			if id := txID(a); a.status == http.StatusCreated && id != uuid.Nil {
				l.book.update(id, opCheckout, func(n *txNote) { n.session = session.ID })
			} else {
				l.book.mu.Lock()
				l.book.refusals[fmt.Sprintf("%s: %d %s", opCheckout, a.status, a.code())]++
				l.book.mu.Unlock()
			}
			return
		}
		if time.Now().After(deadline) {
			l.book.fail(opCheckout, fmt.Errorf("hosted payment: %w (last: %s)", errNoAnswer, a.describe()))
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Duration(200+r.IntN(300)) * time.Millisecond):
		}
	}
}

// hostedPayment asks a session's public status whether a payment exists: known is false when
// none does (the customer may pay again), id is the payment when one does.
func (l *load) hostedPayment(ctx context.Context, slug string) (id uuid.UUID, known bool) {
	a, _, err := l.cl.do(ctx, call{kind: opCheckout, method: "GET", path: "/api/v1/checkout/" + slug + "/status/", public: true})
	if err != nil {
		l.book.fail(opCheckout, err)
		return uuid.Nil, true
	}
	var status struct {
		Status      string `json:"status"`
		Transaction *struct {
			ID uuid.UUID `json:"id"`
		} `json:"transaction"`
	}
	if a.data(&status) != nil {
		return uuid.Nil, false
	}
	if status.Transaction != nil {
		return status.Transaction.ID, true
	}
	return uuid.Nil, status.Status != "PENDING"
}

// payout sends money from the BJ wallet to a number on every sandbox suffix.
func (l *load) payout(ctx context.Context, r *rand.Rand) {
	body := map[string]string{"amount": amount(r, 1000, 5000), "currency": "XOF", "country": "BJ", "method": "MTN_BJ",
		"recipient": l.number("BJ", pickSuffix(r)), "recipient_name": "Chaos Payee", "description": "chaos payout"}
	l.keyedCreate(ctx, opPayout, payoutPath, body, txID)
}

// settlement moves BJ balance to one of the verified payout methods.
func (l *load) settlement(ctx context.Context, r *rand.Rand) {
	suffix := settlementSuffixes[r.IntN(len(settlementSuffixes))]
	body := map[string]string{"amount": amount(r, 1000, 5000), "currency": "XOF", "country": "BJ",
		"payout_method": l.h.setup.payoutMethods[suffix].String()}
	l.keyedCreate(ctx, opSettlement, settlePath, body, txField)
}

// transfer moves money between the BJ and SN wallets (both XOF).
func (l *load) transfer(ctx context.Context, r *rand.Rand) {
	from, to := "BJ", "SN"
	if r.IntN(2) == 0 {
		from, to = to, from
	}
	body := map[string]string{"amount": amount(r, 1000, 5000), "from_country": from, "to_country": to}
	l.keyedCreate(ctx, opTransfer, transferPath, body, txField)
}

// keyedCreate sends one creation with a fresh key and notes the transaction it created.
func (l *load) keyedCreate(ctx context.Context, kind opKind, path string, body any, txOf func(answer) uuid.UUID) (uuid.UUID, bool) {
	key := newKey()
	a, seen, err := l.cl.do(ctx, call{kind: kind, method: "POST", path: path, body: body, key: key})
	id := l.book.keyed(kind, key, path, a, seen, err, txOf)
	if id == uuid.Nil {
		return id, false
	}
	l.book.note(id, kind)
	return id, true
}

// retryFailed makes a payment that fails, waits for its failure, then retries it with three
// concurrent requests, two of them with one key: the transaction gains one run per key that
// was answered 200, never more.
func (l *load) retryFailed(ctx context.Context, r *rand.Rand) {
	failing := []string{"001", "002", "003"}[r.IntN(3)]
	id, ok := l.softpay(ctx, opRetry, l.softpayBody(opRetry, "BJ", "MTN_BJ", failing, amount(r, 1000, 50000)))
	if !ok {
		return
	}
	status, err := l.awaitFinal(ctx, opRetry, id, 3*time.Minute)
	if err != nil {
		l.book.fail(opRetry, err)
		return
	}
	if status != "FAILED" {
		return // the final-state check judges it
	}
	path := "/api/v1/payments/" + id.String() + "/retry/"
	body := map[string]string{"customer_phone": l.number("BJ", pickSuffix(r))}
	keys := []string{newKey(), newKey()}
	l.book.update(id, opRetry, func(n *txNote) { n.retryKeys = append(n.retryKeys, keys...) })
	var wg sync.WaitGroup
	for _, key := range []string{keys[0], keys[0], keys[1]} {
		wg.Go(func() {
			a, seen, err := l.cl.do(ctx, call{kind: opRetry, method: "POST", path: path, body: body, key: key})
			l.book.keyed(opRetry, key, path, a, seen, err, txID)
		})
	}
	wg.Wait()
}
