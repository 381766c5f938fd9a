// Package gatewaytest is the contract every gateway.Gateway adapter must honour, run against
// the adapter's own fake operator: success, decline, unavailable before acceptance, ambiguous
// timeout after acceptance (resolved by a status read, never duplicated), duplicate and
// untrusted callbacks, auth token expiry, and the cancel of a collection (adapters that are a
// gateway.Canceller), for collections and (when supported) payouts.
//
// An adapter's test implements Harness and calls Run.
package gatewaytest

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika/gateway"
)

// Behaviour is what the fake operator does with the next initiation (Collect or Disburse).
type Behaviour int

// Behaviours of the next initiation.
const (
	// Succeed: accept; the operation ends SUCCESS (at once or after a few status reads).
	Succeed Behaviour = iota
	// Decline: accept, then the customer refuses (collections: payer_declined); or refuse at
	// once with a Declined error.
	Decline
	// Unavailable503: answer 503 (or the operator's "try later") without creating anything.
	Unavailable503
	// RefuseConnection: refuse the TCP connection; nothing is sent.
	RefuseConnection
	// TimeoutAfterAccept: create the operation (it will SUCCEED), then never answer, so that
	// the adapter times out after sending.
	TimeoutAfterAccept
)

func (b Behaviour) String() string {
	return [...]string{"succeed", "decline", "unavailable-503", "refuse-connection", "timeout-after-accept"}[b]
}

// Controls drive the fake operator behind one adapter.
type Controls interface {
	// Next sets the behaviour of the next initiation; later ones Succeed again.
	Next(b Behaviour)
	// Operations counts the operations (collections and payouts) created at the operator.
	Operations() int
	// Callback returns the callback the operator would send now about the operation, as
	// received by our endpoint (headers and raw body).
	Callback(kind gateway.CallbackKind, reference string) (http.Header, []byte)
	// ExpireToken makes the operator refuse the adapter's current auth token, as if it had
	// expired early; adapters without tokens do nothing.
	ExpireToken()
	// TokenRequests counts the auth token requests the adapter made (0 without tokens).
	TokenRequests() int
}

// Features describe the adapter under test.
type Features struct {
	Payouts         bool // Disburse and DisbursementStatus are supported
	Tokens          bool // the adapter authenticates with expiring tokens (token cases run)
	SignedCallbacks bool // callbacks are signed: Trusted, and a tampered one is refused
	// LostAnswerFails is for operators whose answer to an initiation is the only way to the
	// operation: a redirect payment whose page URL (Orange WebPay's payment_url) and status
	// handle (its pay_token) come back in that answer and nowhere else. An initiation whose answer
	// was lost to a timeout then created an operation nobody can pay or ask about, so it cannot
	// SUCCEED as the ambiguous-timeout case expects by default. With LostAnswerFails that case
	// expects instead: status reads that never answer NOT_FOUND (which would invite a re-send)
	// and end FAILED, and a re-send of the reference that neither creates nor revives anything.
	LostAnswerFails bool
	// NoPayoutCallbacks is for operators that report payouts only through status reads (Wave
	// documents no payout webhook): the payout duplicate-callback case does not apply.
	NoPayoutCallbacks bool
	// Cancels says the adapter is a gateway.Canceller (the contract checks that it says so
	// truly), and runs the collection cancel case.
	Cancels bool
	// Refunds says the adapter is a gateway.Refunder (checked as Cancels is) and runs the refund
	// cases: a refund of a collection paid at the operator, through success, decline,
	// unavailability, an ambiguous timeout, a reference sent twice and a refund beyond the
	// collection. RefundsWholeOnly is for an operator that refunds whole collections only
	// (Wave): the refunds are of the whole amount. RefundCallbacks runs the duplicate-callback
	// case for refunds (an operator whose callbacks say that they are about a refund).
	Refunds, RefundsWholeOnly, RefundCallbacks bool
	// ResolveWithin bounds how long an operation takes to reach its final state (default 5s).
	ResolveWithin time.Duration
	// The request template (defaults: BJ, XOF, MTN_BJ, +22997000000, 1000).
	Country, Currency, Network, Phone string
	Amount                            decimal.Decimal
}

// Harness builds an adapter wired to a fresh fake operator.
type Harness interface {
	Features() Features
	// New returns the adapter and its operator's controls; the harness cleans up with t.
	New(t *testing.T) (gateway.Gateway, Controls)
}

// Reference returns a fresh attempt reference (a random UUID v4, like attempt ids).
func Reference() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// Run runs the contract against h.
func Run(t *testing.T, h Harness) {
	f := h.Features()
	if f.ResolveWithin <= 0 {
		f.ResolveWithin = 5 * time.Second
	}
	if f.Country == "" {
		f.Country, f.Currency, f.Network, f.Phone = "BJ", "XOF", "MTN_BJ", "+22997000000"
	}
	if f.Amount.IsZero() {
		f.Amount = decimal.NewFromInt(1000)
	}
	c := contract{h: h, f: f}
	ops := []op{c.collection()}
	if f.Payouts {
		ops = append(ops, c.payout())
	}
	if f.Refunds {
		ops = append(ops, c.refund())
	}
	for _, o := range ops {
		t.Run(o.name, func(t *testing.T) {
			t.Run("success", func(t *testing.T) { c.success(t, o) })
			t.Run("decline", func(t *testing.T) { c.decline(t, o) })
			t.Run("unavailable-503", func(t *testing.T) { c.unavailable(t, o, Unavailable503) })
			t.Run("connection-refused", func(t *testing.T) { c.unavailable(t, o, RefuseConnection) })
			t.Run("ambiguous-timeout", func(t *testing.T) {
				if f.LostAnswerFails {
					c.ambiguousLostAnswer(t, o)
					return
				}
				c.ambiguous(t, o)
			})
			t.Run("same-reference-twice", func(t *testing.T) { c.sameReference(t, o) })
			t.Run("unknown-reference", func(t *testing.T) { c.unknown(t, o) })
			// An operator without payout callbacks has no such case: status reads decide payouts.
			if (o.kind != gateway.CallbackDisbursement || !f.NoPayoutCallbacks) && (o.kind != gateway.CallbackRefund || f.RefundCallbacks) {
				t.Run("duplicate-callback", func(t *testing.T) { c.duplicateCallback(t, o) })
			}
			if f.Tokens {
				t.Run("token-expiry", func(t *testing.T) { c.tokenExpiry(t, o) })
			}
			if f.Cancels && o.kind == gateway.CallbackCollection {
				t.Run("cancel", func(t *testing.T) { c.cancel(t, o) })
			}
			if o.kind == gateway.CallbackRefund {
				t.Run("beyond-the-collection", func(t *testing.T) { c.refundBeyond(t) })
			}
		})
	}
	t.Run("otp-without-otp-step", func(t *testing.T) {
		gw, _ := h.New(t)
		_, err := gw.ConfirmOTP(t.Context(), Reference(), "123456")
		if err != nil { // adapters with an OTP step may answer NOT_FOUND instead
			assert.Contains(t, []gateway.Kind{gateway.KindInvalid, gateway.KindDeclined}, gateway.KindOf(err), "%v", err)
		}
	})
}

// op abstracts over collections and payouts.
type op struct {
	name     string
	kind     gateway.CallbackKind
	initiate func(ctx context.Context, gw gateway.Gateway, ref string) (gateway.OperationStatus, error)
	status   func(ctx context.Context, gw gateway.Gateway, ref string) (gateway.OperationStatus, error)
	// declineCode is the failure code a Decline must produce ("" accepts any).
	declineCode string
	// prepare, when set, readies one case at a fresh operator (a refund's collection, paid)
	// before its behaviour is scripted, and returns how to initiate and how many operations it
	// created.
	prepare func(t *testing.T, gw gateway.Gateway) (func(ctx context.Context, ref string) (gateway.OperationStatus, error), int)
}

// begin readies a case of o at gw (see op.prepare).
func (o op) begin(t *testing.T, gw gateway.Gateway) (func(ctx context.Context, ref string) (gateway.OperationStatus, error), int) {
	if o.prepare != nil {
		return o.prepare(t, gw)
	}
	return func(ctx context.Context, ref string) (gateway.OperationStatus, error) {
		return o.initiate(ctx, gw, ref)
	}, 0
}

type contract struct {
	h Harness
	f Features
}

func (c contract) collection() op {
	return op{
		name: "collection",
		kind: gateway.CallbackCollection,
		initiate: func(ctx context.Context, gw gateway.Gateway, ref string) (gateway.OperationStatus, error) {
			res, err := gw.Collect(ctx, gateway.CollectRequest{
				Reference: ref, Amount: c.f.Amount, Currency: c.f.Currency, Country: c.f.Country,
				Network: c.f.Network, Phone: c.f.Phone, CustomerName: "Awa Test", Description: "Order 42",
			})
			return gateway.OperationStatus{Reference: ref, GatewayReference: res.GatewayReference, Status: res.Status,
				FailureCode: res.FailureCode, FailureMessage: res.FailureMessage}, err
		},
		status: func(ctx context.Context, gw gateway.Gateway, ref string) (gateway.OperationStatus, error) {
			return gw.CollectionStatus(ctx, ref)
		},
		declineCode: gateway.FailurePayerDeclined,
	}
}

func (c contract) payout() op {
	return op{
		name: "payout",
		kind: gateway.CallbackDisbursement,
		initiate: func(ctx context.Context, gw gateway.Gateway, ref string) (gateway.OperationStatus, error) {
			return gw.Disburse(ctx, gateway.DisburseRequest{
				Reference: ref, Amount: c.f.Amount, Currency: c.f.Currency, Country: c.f.Country,
				Network: c.f.Network, Phone: c.f.Phone, RecipientName: "Awa Test", Description: "Payout 42",
			})
		},
		status: func(ctx context.Context, gw gateway.Gateway, ref string) (gateway.OperationStatus, error) {
			return gw.DisbursementStatus(ctx, ref)
		},
	}
}

// final polls the status until it is final and returns it.
func (c contract) final(t *testing.T, gw gateway.Gateway, o op, ref string) gateway.OperationStatus {
	t.Helper()
	var last gateway.OperationStatus
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		st, err := o.status(t.Context(), gw, ref)
		require.NoError(ct, err)
		last = st
		assert.True(ct, st.Status.Final(), "status %s", st.Status)
	}, c.f.ResolveWithin, 20*time.Millisecond)
	return last
}

// kase is one case of the contract under way: a fresh operator, the operation readied at it
// (send initiates it under a reference), the operations that readying created (base) and a
// fresh reference.
type kase struct {
	t    *testing.T
	c    contract
	o    op
	gw   gateway.Gateway
	ctl  Controls
	send func(ctx context.Context, ref string) (gateway.OperationStatus, error)
	base int
	ref  string
}

// start begins a case of o at a fresh operator.
func (c contract) start(t *testing.T, o op) *kase {
	gw, ctl := c.h.New(t)
	send, base := o.begin(t, gw)
	return &kase{t: t, c: c, o: o, gw: gw, ctl: ctl, send: send, base: base, ref: Reference()}
}

// sendOK initiates ref, which the operator must accept.
func (k *kase) sendOK(ref string) gateway.OperationStatus {
	k.t.Helper()
	st, err := k.send(k.t.Context(), ref)
	require.NoError(k.t, err)
	return st
}

// sendFails initiates the case's reference with the operator scripted to b: the error must be
// of kind.
func (k *kase) sendFails(b Behaviour, kind gateway.Kind) {
	k.t.Helper()
	k.ctl.Next(b)
	_, err := k.send(k.t.Context(), k.ref)
	require.Error(k.t, err)
	assert.Equal(k.t, kind, gateway.KindOf(err), "%v", err)
}

// resend initiates the case's reference again: it answers want and creates no second
// operation.
func (k *kase) resend(want gateway.Status) {
	k.t.Helper()
	assert.Equal(k.t, want, k.sendOK(k.ref).Status)
	k.created(1)
}

// status reads ref's status once.
func (k *kase) status(ref string) gateway.OperationStatus {
	k.t.Helper()
	st, err := k.o.status(k.t.Context(), k.gw, ref)
	require.NoError(k.t, err)
	return st
}

// final polls ref's status until it is final.
func (k *kase) final(ref string) gateway.OperationStatus {
	k.t.Helper()
	return k.c.final(k.t, k.gw, k.o, ref)
}

// created checks that the case created n operations at the operator.
func (k *kase) created(n int, msgAndArgs ...any) {
	k.t.Helper()
	assert.Equal(k.t, k.base+n, k.ctl.Operations(), msgAndArgs...)
}

func (c contract) success(t *testing.T, o op) {
	k := c.start(t, o)
	st := k.sendOK(k.ref)
	assert.Contains(t, []gateway.Status{gateway.StatusPending, gateway.StatusSuccess}, st.Status)
	final := k.final(k.ref)
	assert.Equal(t, gateway.StatusSuccess, final.Status)
	assert.Equal(t, k.ref, final.Reference)
	assert.Empty(t, final.FailureCode)
	k.created(1)
}

func (c contract) decline(t *testing.T, o op) {
	k := c.start(t, o)
	k.ctl.Next(Decline)
	st, err := k.send(t.Context(), k.ref)
	if err != nil { // declined at once
		require.Equal(t, gateway.KindDeclined, gateway.KindOf(err), "%v", err)
		if o.declineCode != "" {
			assert.Equal(t, o.declineCode, gateway.CodeOf(err))
		}
		return
	}
	assert.NotEqual(t, gateway.StatusSuccess, st.Status)
	final := k.final(k.ref)
	require.Equal(t, gateway.StatusFailed, final.Status)
	assert.NotEmpty(t, final.FailureCode)
	if o.declineCode != "" {
		assert.Equal(t, o.declineCode, final.FailureCode)
	}
	// final: sending the same reference again neither creates nor revives anything
	k.resend(gateway.StatusFailed)
	assert.Equal(t, gateway.StatusFailed, k.final(k.ref).Status)
}

func (c contract) unavailable(t *testing.T, o op, b Behaviour) {
	k := c.start(t, o)
	k.sendFails(b, gateway.KindUnavailable)
	k.created(0, "nothing may be created at the operator")
	assert.Equal(t, gateway.StatusNotFound, k.status(k.ref).Status)
	// the operator is back: the same reference goes through, once
	k.sendOK(k.ref)
	assert.Equal(t, gateway.StatusSuccess, k.final(k.ref).Status)
	k.created(1)
}

func (c contract) ambiguous(t *testing.T, o op) {
	k := c.start(t, o)
	k.sendFails(TimeoutAfterAccept, gateway.KindAmbiguous)
	// a status read finds the operation and its outcome
	assert.Equal(t, gateway.StatusSuccess, k.final(k.ref).Status)
	// sending the same reference again does not create a second operation
	k.resend(gateway.StatusSuccess)
}

// ambiguousLostAnswer is the ambiguous case of an operator with Features.LostAnswerFails.
func (c contract) ambiguousLostAnswer(t *testing.T, o op) {
	k := c.start(t, o)
	k.sendFails(TimeoutAfterAccept, gateway.KindAmbiguous)
	assert.NotEqual(t, gateway.StatusNotFound, k.status(k.ref).Status, "the operation may exist: it was sent")
	// status reads end it FAILED: nobody holds what is needed to pay it
	final := k.final(k.ref)
	assert.Equal(t, gateway.StatusFailed, final.Status)
	assert.NotEmpty(t, final.FailureCode)
	// sending the same reference again neither creates a second operation nor revives it
	k.resend(gateway.StatusFailed)
	assert.Equal(t, gateway.StatusFailed, k.final(k.ref).Status)
}

func (c contract) sameReference(t *testing.T, o op) {
	k := c.start(t, o)
	k.sendOK(k.ref)
	assert.NotEqual(t, gateway.StatusFailed, k.sendOK(k.ref).Status)
	assert.Equal(t, gateway.StatusSuccess, k.final(k.ref).Status)
	k.created(1)
}

func (c contract) unknown(t *testing.T, o op) {
	gw, _ := c.h.New(t)
	st, err := o.status(t.Context(), gw, Reference())
	require.NoError(t, err)
	assert.Equal(t, gateway.StatusNotFound, st.Status)
	_, cancels := gw.(gateway.Canceller)
	assert.Equal(t, c.f.Cancels, cancels, "Features.Cancels must say whether the adapter is a gateway.Canceller")
	_, refunds := gw.(gateway.Refunder)
	assert.Equal(t, c.f.Refunds, refunds, "Features.Refunds must say whether the adapter is a gateway.Refunder")
}

// cancel: the answer to a cancel is the collection's truth, which status reads and a second
// cancel repeat: withdrawn (FAILED cancelled), or paid first (SUCCESS). A collection already paid
// stays paid, and a reference never sent is NOT_FOUND, never a confirmed cancel.
func (c contract) cancel(t *testing.T, o op) {
	k := c.start(t, o)
	canceller := k.gw.(gateway.Canceller)
	st, err := canceller.CancelCollection(t.Context(), Reference())
	require.NoError(t, err)
	assert.Equal(t, gateway.StatusNotFound, st.Status)

	k.sendOK(k.ref)
	st, err = canceller.CancelCollection(t.Context(), k.ref)
	require.NoError(t, err)
	assert.Equal(t, k.ref, st.Reference)
	require.Contains(t, []gateway.Status{gateway.StatusFailed, gateway.StatusSuccess}, st.Status,
		"a cancel of a collection the customer did not refuse")
	if st.Status == gateway.StatusFailed {
		assert.Equal(t, gateway.FailureCancelled, st.FailureCode)
	}
	assert.Equal(t, st.Status, k.final(k.ref).Status, "status reads agree with the cancel")
	again, err := canceller.CancelCollection(t.Context(), k.ref)
	require.NoError(t, err)
	assert.Equal(t, st.Status, again.Status, "a second cancel changes nothing")

	paid := Reference()
	k.sendOK(paid)
	require.Equal(t, gateway.StatusSuccess, k.final(paid).Status)
	st, err = canceller.CancelCollection(t.Context(), paid)
	require.NoError(t, err)
	assert.Equal(t, gateway.StatusSuccess, st.Status, "a paid collection stays paid")
	k.created(2)
}

func (c contract) duplicateCallback(t *testing.T, o op) {
	k := c.start(t, o)
	k.sendOK(k.ref)
	final := k.final(k.ref)
	header, body := k.ctl.Callback(o.kind, k.ref)
	first, err := k.gw.ParseCallback(t.Context(), header.Clone(), body)
	require.NoError(t, err)
	second, err := k.gw.ParseCallback(t.Context(), header.Clone(), body)
	require.NoError(t, err)
	assert.Equal(t, first, second, "the same callback twice must decode to the same outcome")
	assert.Equal(t, o.kind, first.Kind)
	assert.Equal(t, k.ref, first.Reference)
	assert.Equal(t, final.Status, first.Status)
	assert.Equal(t, c.f.SignedCallbacks, first.Trusted, "only signed callbacks may be Trusted")
	if c.f.SignedCallbacks {
		tampered := append([]byte(nil), body...)
		tampered[len(tampered)/2] ^= 1
		_, err := k.gw.ParseCallback(t.Context(), header.Clone(), tampered)
		assert.Error(t, err, "a tampered signed callback must be refused")
	}
	k.created(1)
}

func (c contract) tokenExpiry(t *testing.T, o op) {
	k := c.start(t, o)
	first := k.ref
	k.sendOK(first)
	before := k.ctl.TokenRequests()
	require.Positive(t, before)
	k.ctl.ExpireToken()
	ref := Reference()
	_, err := k.send(t.Context(), ref)
	require.NoError(t, err, "the adapter must refresh an expired token and go on")
	assert.Equal(t, before+1, k.ctl.TokenRequests(), "exactly one refresh")
	assert.Equal(t, gateway.StatusSuccess, k.final(ref).Status)
	k.created(2, "the refused call must not have created an operation twice")
	// status reads after the refresh need no new token
	k.status(first)
	assert.Equal(t, before+1, k.ctl.TokenRequests())
}
