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

func (c contract) success(t *testing.T, o op) {
	gw, ctl := c.h.New(t)
	send, base := o.begin(t, gw)
	ref := Reference()
	st, err := send(t.Context(), ref)
	require.NoError(t, err)
	assert.Contains(t, []gateway.Status{gateway.StatusPending, gateway.StatusSuccess}, st.Status)
	final := c.final(t, gw, o, ref)
	assert.Equal(t, gateway.StatusSuccess, final.Status)
	assert.Equal(t, ref, final.Reference)
	assert.Empty(t, final.FailureCode)
	assert.Equal(t, base+1, ctl.Operations())
}

func (c contract) decline(t *testing.T, o op) {
	gw, ctl := c.h.New(t)
	send, base := o.begin(t, gw)
	ref := Reference()
	ctl.Next(Decline)
	st, err := send(t.Context(), ref)
	if err != nil { // declined at once
		require.Equal(t, gateway.KindDeclined, gateway.KindOf(err), "%v", err)
		if o.declineCode != "" {
			assert.Equal(t, o.declineCode, gateway.CodeOf(err))
		}
		return
	}
	assert.NotEqual(t, gateway.StatusSuccess, st.Status)
	final := c.final(t, gw, o, ref)
	require.Equal(t, gateway.StatusFailed, final.Status)
	assert.NotEmpty(t, final.FailureCode)
	if o.declineCode != "" {
		assert.Equal(t, o.declineCode, final.FailureCode)
	}
	// final: sending the same reference again neither creates nor revives anything
	again, err := send(t.Context(), ref)
	require.NoError(t, err)
	assert.Equal(t, gateway.StatusFailed, again.Status)
	assert.Equal(t, base+1, ctl.Operations())
	final = c.final(t, gw, o, ref)
	assert.Equal(t, gateway.StatusFailed, final.Status)
}

func (c contract) unavailable(t *testing.T, o op, b Behaviour) {
	gw, ctl := c.h.New(t)
	send, base := o.begin(t, gw)
	ref := Reference()
	ctl.Next(b)
	_, err := send(t.Context(), ref)
	require.Error(t, err)
	assert.Equal(t, gateway.KindUnavailable, gateway.KindOf(err), "%v", err)
	assert.Equal(t, base+0, ctl.Operations(), "nothing may be created at the operator")
	st, err := o.status(t.Context(), gw, ref)
	require.NoError(t, err)
	assert.Equal(t, gateway.StatusNotFound, st.Status)
	// the operator is back: the same reference goes through, once
	_, err = send(t.Context(), ref)
	require.NoError(t, err)
	assert.Equal(t, gateway.StatusSuccess, c.final(t, gw, o, ref).Status)
	assert.Equal(t, base+1, ctl.Operations())
}

func (c contract) ambiguous(t *testing.T, o op) {
	gw, ctl := c.h.New(t)
	send, base := o.begin(t, gw)
	ref := Reference()
	ctl.Next(TimeoutAfterAccept)
	_, err := send(t.Context(), ref)
	require.Error(t, err)
	assert.Equal(t, gateway.KindAmbiguous, gateway.KindOf(err), "%v", err)
	// a status read finds the operation and its outcome
	final := c.final(t, gw, o, ref)
	assert.Equal(t, gateway.StatusSuccess, final.Status)
	// sending the same reference again does not create a second operation
	again, err := send(t.Context(), ref)
	require.NoError(t, err)
	assert.Equal(t, gateway.StatusSuccess, again.Status)
	assert.Equal(t, base+1, ctl.Operations())
}

// ambiguousLostAnswer is the ambiguous case of an operator with Features.LostAnswerFails.
func (c contract) ambiguousLostAnswer(t *testing.T, o op) {
	gw, ctl := c.h.New(t)
	send, base := o.begin(t, gw)
	ref := Reference()
	ctl.Next(TimeoutAfterAccept)
	_, err := send(t.Context(), ref)
	require.Error(t, err)
	assert.Equal(t, gateway.KindAmbiguous, gateway.KindOf(err), "%v", err)
	st, err := o.status(t.Context(), gw, ref)
	require.NoError(t, err)
	assert.NotEqual(t, gateway.StatusNotFound, st.Status, "the operation may exist: it was sent")
	// status reads end it FAILED: nobody holds what is needed to pay it
	final := c.final(t, gw, o, ref)
	assert.Equal(t, gateway.StatusFailed, final.Status)
	assert.NotEmpty(t, final.FailureCode)
	// sending the same reference again neither creates a second operation nor revives it
	again, err := send(t.Context(), ref)
	require.NoError(t, err)
	assert.Equal(t, gateway.StatusFailed, again.Status)
	assert.Equal(t, base+1, ctl.Operations())
	assert.Equal(t, gateway.StatusFailed, c.final(t, gw, o, ref).Status)
}

func (c contract) sameReference(t *testing.T, o op) {
	gw, ctl := c.h.New(t)
	send, base := o.begin(t, gw)
	ref := Reference()
	_, err := send(t.Context(), ref)
	require.NoError(t, err)
	again, err := send(t.Context(), ref)
	require.NoError(t, err)
	assert.NotEqual(t, gateway.StatusFailed, again.Status)
	assert.Equal(t, gateway.StatusSuccess, c.final(t, gw, o, ref).Status)
	assert.Equal(t, base+1, ctl.Operations())
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
	gw, ctl := c.h.New(t)
	send, base := o.begin(t, gw)
	canceller := gw.(gateway.Canceller)
	st, err := canceller.CancelCollection(t.Context(), Reference())
	require.NoError(t, err)
	assert.Equal(t, gateway.StatusNotFound, st.Status)

	ref := Reference()
	_, err = send(t.Context(), ref)
	require.NoError(t, err)
	st, err = canceller.CancelCollection(t.Context(), ref)
	require.NoError(t, err)
	assert.Equal(t, ref, st.Reference)
	require.Contains(t, []gateway.Status{gateway.StatusFailed, gateway.StatusSuccess}, st.Status,
		"a cancel of a collection the customer did not refuse")
	if st.Status == gateway.StatusFailed {
		assert.Equal(t, gateway.FailureCancelled, st.FailureCode)
	}
	assert.Equal(t, st.Status, c.final(t, gw, o, ref).Status, "status reads agree with the cancel")
	again, err := canceller.CancelCollection(t.Context(), ref)
	require.NoError(t, err)
	assert.Equal(t, st.Status, again.Status, "a second cancel changes nothing")

	paid := Reference()
	_, err = send(t.Context(), paid)
	require.NoError(t, err)
	require.Equal(t, gateway.StatusSuccess, c.final(t, gw, o, paid).Status)
	st, err = canceller.CancelCollection(t.Context(), paid)
	require.NoError(t, err)
	assert.Equal(t, gateway.StatusSuccess, st.Status, "a paid collection stays paid")
	assert.Equal(t, base+2, ctl.Operations())
}

func (c contract) duplicateCallback(t *testing.T, o op) {
	gw, ctl := c.h.New(t)
	send, base := o.begin(t, gw)
	ref := Reference()
	_, err := send(t.Context(), ref)
	require.NoError(t, err)
	final := c.final(t, gw, o, ref)
	header, body := ctl.Callback(o.kind, ref)
	first, err := gw.ParseCallback(t.Context(), header.Clone(), body)
	require.NoError(t, err)
	second, err := gw.ParseCallback(t.Context(), header.Clone(), body)
	require.NoError(t, err)
	assert.Equal(t, first, second, "the same callback twice must decode to the same outcome")
	assert.Equal(t, o.kind, first.Kind)
	assert.Equal(t, ref, first.Reference)
	assert.Equal(t, final.Status, first.Status)
	assert.Equal(t, c.f.SignedCallbacks, first.Trusted, "only signed callbacks may be Trusted")
	if c.f.SignedCallbacks {
		tampered := append([]byte(nil), body...)
		tampered[len(tampered)/2] ^= 1
		_, err := gw.ParseCallback(t.Context(), header.Clone(), tampered)
		assert.Error(t, err, "a tampered signed callback must be refused")
	}
	assert.Equal(t, base+1, ctl.Operations())
}

func (c contract) tokenExpiry(t *testing.T, o op) {
	gw, ctl := c.h.New(t)
	send, base := o.begin(t, gw)
	first := Reference()
	_, err := send(t.Context(), first)
	require.NoError(t, err)
	before := ctl.TokenRequests()
	require.Positive(t, before)
	ctl.ExpireToken()
	ref := Reference()
	_, err = send(t.Context(), ref)
	require.NoError(t, err, "the adapter must refresh an expired token and go on")
	assert.Equal(t, before+1, ctl.TokenRequests(), "exactly one refresh")
	assert.Equal(t, gateway.StatusSuccess, c.final(t, gw, o, ref).Status)
	assert.Equal(t, base+2, ctl.Operations(), "the refused call must not have created an operation twice")
	// status reads after the refresh need no new token
	_, err = o.status(t.Context(), gw, first)
	require.NoError(t, err)
	assert.Equal(t, before+1, ctl.TokenRequests())
}
