package sandbox

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika/gateway"
)

// opKind drives collections and payouts through the same assertions.
type opKind struct {
	kind  gateway.CallbackKind
	start func(h *harness, gw, ref, msisdn string) (gateway.OperationStatus, error)
	read  func(h *harness, gw, ref string) (gateway.OperationStatus, error)
}

var opKinds = []opKind{
	{
		kind: gateway.CallbackCollection,
		start: func(h *harness, gw, ref, msisdn string) (gateway.OperationStatus, error) {
			res, err := h.collect(gw, ref, "MTN_BJ", msisdn, "")
			return gateway.OperationStatus{Reference: ref, GatewayReference: res.GatewayReference, Status: res.Status}, err
		},
		read: func(h *harness, gw, ref string) (gateway.OperationStatus, error) {
			return h.clients[gw].CollectionStatus(context.Background(), ref)
		},
	},
	{
		kind: gateway.CallbackDisbursement,
		start: func(h *harness, gw, ref, msisdn string) (gateway.OperationStatus, error) {
			return h.disburse(gw, ref, "MTN_BJ", msisdn)
		},
		read: func(h *harness, gw, ref string) (gateway.OperationStatus, error) {
			return h.clients[gw].DisbursementStatus(context.Background(), ref)
		},
	},
}

// eachKind runs test in parallel for collections and payouts against one harness, each with
// a fresh reference.
func eachKind(t *testing.T, configure func(*Config, *ClientConfig), test func(t *testing.T, h *harness, k opKind, ref string)) {
	t.Helper()
	h := newHarness(t, configure)
	for _, k := range opKinds {
		t.Run(string(k.kind), func(t *testing.T) {
			t.Parallel()
			test(t, h, k, newRef())
		})
	}
}

// byKind holds a failure code for collections and one for payouts.
type byKind [2]string

func (b byKind) of(kind gateway.CallbackKind) string {
	if kind == gateway.CallbackDisbursement {
		return b[1]
	}
	return b[0]
}

func TestSuffixRules(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	cases := []struct {
		name    string
		suffix  string
		gateway string
		// An initiation refused before any operation exists.
		errKind gateway.Kind
		errCode string
		// Otherwise: how long the operation stays PENDING with no callback, its outcome and the
		// callbacks it sends, in order.
		pendingTicks int
		status       gateway.Status
		code         byKind
		callbacks    []gateway.Status
	}{
		{name: "other succeeds", suffix: "000", status: gateway.StatusSuccess,
			callbacks: []gateway.Status{gateway.StatusSuccess}},
		{name: "001 declined", suffix: "001", status: gateway.StatusFailed,
			code:      byKind{gateway.FailurePayerDeclined, gateway.FailureRecipientNotFound},
			callbacks: []gateway.Status{gateway.StatusFailed}},
		{name: "002 funds or limit", suffix: "002", status: gateway.StatusFailed,
			code:      byKind{gateway.FailureInsufficientFunds, gateway.FailureRecipientLimit},
			callbacks: []gateway.Status{gateway.StatusFailed}},
		{name: "003 invalid number", suffix: "003", errKind: gateway.KindInvalid, errCode: gateway.FailureInvalidNumber},
		{name: "004 expires", suffix: "004", pendingTicks: 10, status: gateway.StatusFailed,
			code:      byKind{gateway.FailureExpired, gateway.FailureExpired},
			callbacks: []gateway.Status{gateway.StatusFailed}},
		{name: "005 unavailable on a", suffix: "005", gateway: GatewayA,
			errKind: gateway.KindUnavailable, errCode: gateway.FailureGatewayUnavailable},
		{name: "005 ordinary on b", suffix: "005", gateway: GatewayB, status: gateway.StatusSuccess,
			callbacks: []gateway.Status{gateway.StatusSuccess}},
		{name: "007 no callback", suffix: "007", status: gateway.StatusSuccess},
		{name: "008 twice then late pending", suffix: "008", status: gateway.StatusSuccess,
			callbacks: []gateway.Status{gateway.StatusSuccess, gateway.StatusSuccess, gateway.StatusPending}},
		{name: "009 slow", suffix: "009", pendingTicks: 10, status: gateway.StatusSuccess,
			callbacks: []gateway.Status{gateway.StatusSuccess}},
	}
	for _, tc := range cases {
		for _, k := range opKinds {
			t.Run(string(k.kind)+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				gw := tc.gateway
				if gw == "" {
					gw = GatewayA
				}
				ref := newRef()
				started, err := k.start(h, gw, ref, phone(tc.suffix))
				if tc.errKind != 0 {
					requireKind(t, err, tc.errKind, tc.errCode)
					got, err := k.read(h, gw, ref)
					require.NoError(t, err)
					require.Equal(t, gateway.StatusNotFound, got.Status)
					_, exists := h.operation(t, ref)
					require.False(t, exists, "a refused initiation created an operation")
					h.receiver.requireCallbacks(t, ref)
					return
				}
				require.NoError(t, err)
				require.Equal(t, gateway.StatusPending, started.Status)
				require.NotEmpty(t, started.GatewayReference)

				if tc.pendingTicks > 0 {
					require.Never(t, func() bool {
						got, err := k.read(h, gw, ref)
						return err != nil || got.Status != gateway.StatusPending || len(h.receiver.statuses(ref)) > 0
					}, time.Duration(tc.pendingTicks)*tick, tick, "left PENDING or called back too early")
				}
				require.EventuallyWithT(t, func(c *assert.CollectT) {
					got, err := k.read(h, gw, ref)
					require.NoError(c, err)
					assert.Equal(c, tc.status, got.Status)
					assert.Equal(c, tc.code.of(k.kind), got.FailureCode)
					assert.Equal(c, started.GatewayReference, got.GatewayReference)
				}, patience, tick/2)

				h.receiver.requireCallbacks(t, ref, tc.callbacks...)
				for _, cb := range h.receiver.callbacks(ref) {
					assert.Equal(t, k.kind, cb.Kind)
					assert.Equal(t, ref, cb.Reference)
					assert.Equal(t, started.GatewayReference, cb.GatewayReference)
					assert.True(t, cb.Trusted)
					if cb.Status.Final() {
						assert.Equal(t, tc.code.of(k.kind), cb.FailureCode)
					}
				}
				view := h.requireOneOperation(t, ref, 1, len(tc.callbacks))
				assert.Equal(t, gw, view.Gateway)
				assert.Equal(t, k.kind, view.Kind)
			})
		}
	}
}

// 006: the initiation times out at the client although the sandbox accepted it; status reads
// show it PENDING, then SUCCESS, and a retried initiation answers at once without a new push.
func TestHeldInitiationIsAmbiguous(t *testing.T) {
	t.Parallel()
	slow := func(cfg *Config, client *ClientConfig) {
		longTTL(cfg, client)
		cfg.Tick = time.Second // the outcome comes 2 s after creation
	}
	eachKind(t, slow, func(t *testing.T, h *harness, k opKind, ref string) {
		impatient := *h.clients[GatewayA]
		impatient.cfg.Timeout = time.Second // short against the 5 s hold, long enough to be sent
		_, err := k.start(h.with(GatewayA, &impatient), GatewayA, ref, phone("006"))
		requireKind(t, err, gateway.KindAmbiguous, "")

		// On a loaded machine the request may still be in flight: NOT_FOUND first is honest.
		var got gateway.OperationStatus
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			got, err = k.read(h, GatewayA, ref)
			require.NoError(c, err)
			assert.NotEqual(c, gateway.StatusNotFound, got.Status)
		}, patience, tick)
		require.Equal(t, gateway.StatusPending, got.Status)
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			got, err := k.read(h, GatewayA, ref)
			require.NoError(c, err)
			assert.Equal(c, gateway.StatusSuccess, got.Status)
		}, patience, tick)
		h.receiver.requireCallbacks(t, ref, gateway.StatusSuccess)

		again, err := k.start(h, GatewayA, ref, phone("006"))
		require.NoError(t, err)
		require.Equal(t, gateway.StatusSuccess, again.Status)
		require.Equal(t, got.GatewayReference, again.GatewayReference)
		h.requireOneOperation(t, ref, 2, 1)
	})
}

// HoldTimeout ends a 006 hold for a patient client, which then gets the operation's state.
func TestHoldTimeoutReleasesTheAnswer(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(cfg *Config, _ *ClientConfig) {
		cfg.Tick = time.Second
		cfg.HoldTimeout = 3 * tick
	})
	start := time.Now()
	res, err := h.collect(GatewayA, newRef(), "MTN_BJ", phone("006"), "")
	require.NoError(t, err)
	require.Equal(t, gateway.StatusPending, res.Status)
	require.GreaterOrEqual(t, time.Since(start), 3*tick)
}

// 005: sandbox-a refuses before accepting anything, so the same reference goes to sandbox-b.
func TestUnavailableGatewayFallsBack(t *testing.T) {
	t.Parallel()
	eachKind(t, nil, func(t *testing.T, h *harness, k opKind, ref string) {
		_, err := k.start(h, GatewayA, ref, phone("005"))
		requireKind(t, err, gateway.KindUnavailable, gateway.FailureGatewayUnavailable)

		started, err := k.start(h, GatewayB, ref, phone("005"))
		require.NoError(t, err)
		require.Equal(t, gateway.StatusPending, started.Status)
		h.receiver.requireCallbacks(t, ref, gateway.StatusSuccess)
		view := h.requireOneOperation(t, ref, 1, 1)
		require.Equal(t, GatewayB, view.Gateway)
		for _, op := range h.server.Operations() {
			require.False(t, op.Reference == ref && op.Gateway == GatewayA, "sandbox-a kept an operation")
		}
	})
}

func TestSameReferenceStartsOnePush(t *testing.T) {
	t.Parallel()
	eachKind(t, nil, func(t *testing.T, h *harness, k opKind, ref string) {
		const n = 5
		results := make([]gateway.OperationStatus, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { results[i], errs[i] = k.start(h, GatewayA, ref, phone("000")) })
		}
		wg.Wait()
		for i := range n {
			require.NoError(t, errs[i])
			require.Equal(t, results[0].GatewayReference, results[i].GatewayReference)
		}
		h.receiver.requireCallbacks(t, ref, gateway.StatusSuccess)
		h.requireOneOperation(t, ref, n, 1)

		_, err := k.start(h, GatewayA, ref, phone("111"))
		requireKind(t, err, gateway.KindInvalid, gateway.FailureGatewayError)
		h.requireOneOperation(t, ref, n+1, 1)
	})
}

func TestReferenceConflictOnAmount(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	ref := newRef()
	_, err := h.collect(GatewayA, ref, "MTN_BJ", phone("000"), "")
	require.NoError(t, err)
	c := h.clients[GatewayA]
	_, err = c.Collect(context.Background(), gateway.CollectRequest{
		Reference: ref, Amount: decimal.RequireFromString("1501"), Currency: "XOF", Country: "BJ", Network: "MTN_BJ", Phone: phone("000"),
	})
	requireKind(t, err, gateway.KindInvalid, gateway.FailureGatewayError)
	require.Contains(t, err.Error(), "reference_conflict")
}

// A callback the receiver refuses is retried 1 tick apart, up to 3 times.
func TestCallbackRetries(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	t.Run("delivered on the third try", func(t *testing.T) {
		t.Parallel()
		ref := newRef()
		h.receiver.failDeliveries(ref, 2)
		_, err := h.collect(GatewayA, ref, "MTN_BJ", phone("000"), "")
		require.NoError(t, err)
		h.receiver.requireCallbacks(t, ref, gateway.StatusSuccess)
		view := h.requireOneOperation(t, ref, 1, 1)
		require.Equal(t, 3, view.CallbackAttempts)
	})
	t.Run("abandoned after four tries", func(t *testing.T) {
		t.Parallel()
		ref := newRef()
		h.receiver.failDeliveries(ref, 100)
		_, err := h.disburse(GatewayB, ref, "MTN_BJ", phone("000"))
		require.NoError(t, err)
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			v, _ := h.operation(c, ref)
			assert.Equal(c, 4, v.CallbackAttempts)
		}, patience, tick/2)
		require.Never(t, func() bool { // no fifth try
			for _, v := range h.server.Operations() {
				if v.Reference == ref && v.CallbackAttempts != 4 {
					return true
				}
			}
			return false
		}, 4*tick, tick)
		h.requireOneOperation(t, ref, 1, 0)
	})
}

// 010: the first initiation is accepted but its answer is lost at once (the connection drops);
// for NotFoundFor status reads answer NOT_FOUND and re-sends 503; then the operation shows
// PENDING and succeeds a tick later, with its callback. One push, whatever was sent.
func TestNotFoundThenPays(t *testing.T) {
	t.Parallel()
	const notFoundFor = time.Second
	slow := func(cfg *Config, client *ClientConfig) {
		longTTL(cfg, client)
		cfg.Tick = 300 * time.Millisecond // PENDING for a tick: long enough to be seen
		cfg.NotFoundFor = notFoundFor
	}
	eachKind(t, slow, func(t *testing.T, h *harness, k opKind, ref string) {
		start := time.Now()
		_, err := k.start(h, GatewayA, ref, phone("010"))
		requireKind(t, err, gateway.KindAmbiguous, "")
		require.Less(t, time.Since(start), notFoundFor, "the answer is lost at once, not held")

		// Within the window (judged from before the initiation, so on the safe side) the
		// operator does not know the reference: reads NOT_FOUND, re-sends 503, cancel 404.
		got, err := k.read(h, GatewayA, ref)
		require.NoError(t, err)
		if time.Since(start) < notFoundFor {
			require.Equal(t, gateway.StatusNotFound, got.Status)
		}
		_, err = k.start(h, GatewayA, ref, phone("010"))
		if time.Since(start) < notFoundFor {
			requireKind(t, err, gateway.KindUnavailable, gateway.FailureGatewayUnavailable)
		}
		if k.kind == gateway.CallbackCollection {
			got, err := h.clients[GatewayA].CancelCollection(context.Background(), ref)
			require.NoError(t, err)
			if time.Since(start) < notFoundFor {
				require.Equal(t, gateway.StatusNotFound, got.Status, "a reference not found cannot be cancelled")
			}
		}
		h.receiver.requireCallbacks(t, ref) // nothing while not found

		require.EventuallyWithT(t, func(c *assert.CollectT) {
			got, err = k.read(h, GatewayA, ref)
			require.NoError(c, err)
			assert.NotEqual(c, gateway.StatusNotFound, got.Status)
		}, patience, 10*time.Millisecond)
		require.Equal(t, gateway.StatusPending, got.Status, "found PENDING, a tick before its outcome")
		require.GreaterOrEqual(t, time.Since(start), notFoundFor)
		require.NotEmpty(t, got.GatewayReference)
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			got, err := k.read(h, GatewayA, ref)
			require.NoError(c, err)
			assert.Equal(c, gateway.StatusSuccess, got.Status)
		}, patience, tick)
		h.receiver.requireCallbacks(t, ref, gateway.StatusSuccess)

		again, err := k.start(h, GatewayA, ref, phone("010"))
		require.NoError(t, err)
		require.Equal(t, gateway.StatusSuccess, again.Status)
		require.Equal(t, got.GatewayReference, again.GatewayReference)
		h.requireOneOperation(t, ref, 3, 1)
	})
}

// 011: the operation stays PENDING past PushTTL (it does not expire) and succeeds after
// LateAfter, with its callback; a cancel meanwhile is refused (PENDING, no error).
func TestPaysAfterTheDeadline(t *testing.T) {
	t.Parallel()
	const lateAfter = 40 * tick
	late := func(cfg *Config, _ *ClientConfig) {
		cfg.PushTTL = 5 * tick
		cfg.LateAfter = lateAfter
	}
	eachKind(t, late, func(t *testing.T, h *harness, k opKind, ref string) {
		start := time.Now()
		started, err := k.start(h, GatewayA, ref, phone("011"))
		require.NoError(t, err)
		require.Equal(t, gateway.StatusPending, started.Status)

		require.Never(t, func() bool { // well past PushTTL, still PENDING, no callback
			got, err := k.read(h, GatewayA, ref)
			return err != nil || got.Status != gateway.StatusPending || len(h.receiver.statuses(ref)) > 0
		}, 15*tick, tick, "expired or decided before LateAfter")
		if k.kind == gateway.CallbackCollection {
			got, err := h.clients[GatewayA].CancelCollection(context.Background(), ref)
			require.NoError(t, err)
			require.Equal(t, gateway.StatusPending, got.Status, "the cancel of a 011 collection is refused")
			require.Empty(t, got.FailureCode)
		}

		require.EventuallyWithT(t, func(c *assert.CollectT) {
			got, err := k.read(h, GatewayA, ref)
			require.NoError(c, err)
			assert.Equal(c, gateway.StatusSuccess, got.Status)
			assert.Equal(c, started.GatewayReference, got.GatewayReference)
		}, patience, tick)
		require.GreaterOrEqual(t, time.Since(start), lateAfter)
		h.receiver.requireCallbacks(t, ref, gateway.StatusSuccess)
		h.requireOneOperation(t, ref, 1, 1)
	})
}

// 011 on a post-push OTP network: the customer approves once the code is confirmed; until then
// the push expires as any other would.
func TestPaysAfterTheDeadlineOnceTheOTPIsConfirmed(t *testing.T) {
	t.Parallel()
	const lateAfter = 40 * tick
	h := newHarness(t, func(cfg *Config, _ *ClientConfig) {
		cfg.PushTTL = 5 * tick
		cfg.LateAfter = lateAfter
	})
	c := h.clients[GatewayA]
	t.Run("confirmed", func(t *testing.T) {
		t.Parallel()
		ref := newRef()
		_, err := h.collect(GatewayA, ref, "MOOV_TG", phone("011"), "")
		require.NoError(t, err)
		confirmed := time.Now()
		got, err := c.ConfirmOTP(context.Background(), ref, ValidOTP)
		require.NoError(t, err)
		require.Equal(t, gateway.StatusPending, got.Status)
		require.Never(t, func() bool {
			got, err := c.CollectionStatus(context.Background(), ref)
			return err != nil || got.Status != gateway.StatusPending
		}, 15*tick, tick, "expired or decided before LateAfter")
		require.EventuallyWithT(t, func(ct *assert.CollectT) {
			got, err := c.CollectionStatus(context.Background(), ref)
			require.NoError(ct, err)
			assert.Equal(ct, gateway.StatusSuccess, got.Status)
		}, patience, tick)
		require.GreaterOrEqual(t, time.Since(confirmed), lateAfter)
		h.receiver.requireCallbacks(t, ref, gateway.StatusSuccess)
	})
	t.Run("never confirmed", func(t *testing.T) {
		t.Parallel()
		ref := newRef()
		_, err := h.collect(GatewayA, ref, "MOOV_TG", phone("011"), "")
		require.NoError(t, err)
		require.EventuallyWithT(t, func(ct *assert.CollectT) {
			got, err := c.CollectionStatus(context.Background(), ref)
			require.NoError(ct, err)
			assert.Equal(ct, gateway.StatusFailed, got.Status)
			assert.Equal(ct, gateway.FailureExpired, got.FailureCode)
		}, patience, tick)
		h.receiver.requireCallbacks(t, ref, gateway.StatusFailed)
	})
}
