package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
)

// load drives the operations of a run and keeps the merchant's book.
type load struct {
	h      *harness
	o      options
	cl     *apiClient
	book   *book
	stats  *requestStats
	issued atomic.Int64
	seq    atomic.Int64 // numbers: every customer gets a distinct one
	// follow runs what an operation goes on doing outside the concurrency bound (a wait of a
	// push lifetime before a retry); drive waits for it.
	follow sync.WaitGroup
}

func newLoad(h *harness, o options, rep *report) *load {
	stats := newRequestStats()
	cl := newAPIClient(h.apiURL, stats)
	cl.key = h.setup.key
	l := &load{h: h, o: o, cl: cl, book: newBook(), stats: stats}
	rep.load = l
	return l
}

// mix is the share of each operation in the load (weights out of 100).
var mix = []struct {
	kind   opKind
	weight int
}{
	{opSoftpay, 20}, {opOTP, 5}, {opPreOTP, 5}, {opRedirect, 5}, {opDuplicate, 8}, {opCheckout, 9},
	{opPayout, 12}, {opSettlement, 5}, {opTransfer, 6}, {opRoundTrip, 2}, {opRetry, 12},
	{opNotFound, 3}, {opLate, 2}, {opCheckoutRace, 2}, {opKeyReuse, 2}, {opClosedPaid, 2},
}

func pickKind(r *rand.Rand) opKind {
	n := r.IntN(100)
	for _, m := range mix {
		if n < m.weight {
			return m.kind
		}
		n -= m.weight
	}
	return opSoftpay
}

// fund credits the BJ and SN wallets through real collections before the load, and waits until
// they have succeeded: payouts, settlements and transfers need money.
func (l *load) fund(ctx context.Context) error {
	var ids []uuid.UUID
	for i := range 16 {
		country, network, amount := "BJ", "MTN_BJ", "400000"
		if i%3 == 2 {
			country, network, amount = "SN", "WAVE_SN", "300000"
		}
		start := time.Now()
		body := l.softpayBody(opFunding, country, network, okSuffixes[i%len(okSuffixes)], amount)
		id, ok := l.softpay(ctx, opFunding, body)
		l.stats.op(opFunding, time.Since(start))
		if !ok {
			return fmt.Errorf("funding softpay %d was not accepted", i)
		}
		ids = append(ids, id)
	}
	for _, id := range ids {
		status, err := l.awaitFinal(ctx, opFunding, id, 2*time.Minute)
		if err != nil {
			return err
		}
		if status != "SUCCESS" {
			return fmt.Errorf("funding payment %s ended %s", id, status)
		}
	}
	return nil
}

// drive runs o.ops operations, paced over o.duration, at most o.concurrency at once, and never
// ahead of the fault plan: the operations scheduled after a fault are issued once it has begun.
func (l *load) drive(ctx context.Context, plan *faultPlan) error {
	r := rand.New(rand.NewPCG(uint64(l.o.seed), 1))
	interval := l.o.duration / time.Duration(l.o.ops)
	sem := make(chan struct{}, l.o.concurrency)
	var wg sync.WaitGroup
	next := time.Now()
	var err error
	for i := range l.o.ops {
		if err = plan.awaitTurn(ctx, i); err != nil {
			break
		}
		if d := time.Until(next); d > 0 {
			select {
			case <-ctx.Done():
			case <-time.After(d):
			}
		}
		next = later(next.Add(interval), time.Now().Add(-interval))
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if err = ctx.Err(); err != nil {
			break
		}
		kind := pickKind(r)
		opSeed := r.Uint64()
		l.issued.Add(1)
		plan.opIssued()
		wg.Go(func() {
			defer func() { <-sem }()
			start := time.Now()
			l.runOp(ctx, kind, rand.New(rand.NewPCG(opSeed, uint64(i))))
			l.stats.op(kind, time.Since(start))
		})
	}
	wg.Wait()
	plan.loadDone()
	l.follow.Wait()
	if err != nil {
		return fmt.Errorf("drive the load: %w", err)
	}
	return nil
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// runOp runs one operation; what goes wrong is in the book, never an error of the load.
func (l *load) runOp(ctx context.Context, kind opKind, r *rand.Rand) {
	switch kind {
	case opSoftpay:
		l.softpay(ctx, kind, l.softpayBody(kind, "BJ", "MTN_BJ", pickSuffix(r), amount(r, 1000, 50000)))
	case opOTP:
		l.postPushOTP(ctx, r)
	case opPreOTP:
		body := l.softpayBody(kind, "SN", "ORANGE_SN", pickSuffix(r), amount(r, 1000, 50000))
		body["otp"] = "123456"
		l.softpay(ctx, kind, body)
	case opRedirect:
		l.softpay(ctx, kind, l.softpayBody(kind, "SN", "WAVE_SN", pickSuffix(r), amount(r, 1000, 50000)))
	case opDuplicate:
		l.duplicate(ctx, r)
	case opCheckout:
		l.checkout(ctx, r)
	case opPayout:
		l.payout(ctx, r)
	case opSettlement:
		l.settlement(ctx, r)
	case opTransfer:
		l.transfer(ctx, r)
	case opRoundTrip:
		l.roundTripOp(ctx, r)
	case opRetry:
		l.retryFailed(ctx, r)
	case opNotFound:
		l.notFoundThenPays(ctx, r)
	case opLate:
		l.paysAfterDeadline(ctx, r)
	case opCheckoutRace:
		l.checkoutRace(ctx, r)
	case opKeyReuse:
		l.keyReuse(ctx, r)
	case opClosedPaid:
		l.closedAttemptPaid(ctx, r)
	}
}

// okSuffixes are numbers the sandbox lets succeed after one tick; specialSuffixes are the
// operators.md table.
var (
	okSuffixes      = []string{"123", "456", "789", "250"}
	specialSuffixes = []string{"001", "002", "003", "004", "005", "006", "007", "008", "009"}
)

// pickSuffix chooses a number's last three digits: one in three succeeds plainly, the others
// cover every row of the sandbox table evenly.
func pickSuffix(r *rand.Rand) string {
	if r.IntN(3) == 0 {
		return okSuffixes[r.IntN(len(okSuffixes))]
	}
	return specialSuffixes[r.IntN(len(specialSuffixes))]
}

// amount returns a whole XOF amount in [lo, hi], a multiple of 100.
func amount(r *rand.Rand, lo, hi int) string {
	return fmt.Sprint(lo + 100*r.IntN((hi-lo)/100+1))
}

// number returns a distinct national number of the country ending in suffix: 10 digits in
// Benin, 9 in Senegal.
func (l *load) number(country, suffix string) string {
	n := l.seq.Add(1) % 10000
	if country == "SN" {
		return fmt.Sprintf("77%04d%s", n, suffix)
	}
	return fmt.Sprintf("019%04d%s", n, suffix)
}

// awaitFinal polls a transaction until it leaves PENDING and returns its status: every 300 ms
// at first, then less often (every 1.5 s at most: waits of a push lifetime are common).
func (l *load) awaitFinal(ctx context.Context, kind opKind, id uuid.UUID, bound time.Duration) (string, error) {
	deadline := time.Now().Add(bound)
	interval := 300 * time.Millisecond
	for {
		a, _, err := l.cl.do(ctx, call{kind: kind, method: "GET", path: "/api/v1/transactions/" + id.String() + "/"})
		if err != nil {
			return "", err
		}
		var t struct {
			Status string `json:"status"`
		}
		if err := a.data(&t); err != nil {
			return "", fmt.Errorf("read transaction %s: %w", id, err)
		}
		if t.Status != "PENDING" {
			return t.Status, nil
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("transaction %s still PENDING after %s", id, bound)
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(interval):
		}
		interval = min(interval*3/2, 1500*time.Millisecond)
	}
}

// errNotAccepted marks an operation the service refused (a legitimate business answer).
var errNotAccepted = errors.New("not accepted")
