package api

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/gateway"
)

// refund asks POST /refunds/ with a PAYOUT key and a fresh Idempotency-Key.
func (ps *paymentStack) refund(t *testing.T, acct *account, body map[string]any, headers ...string) *response {
	t.Helper()
	h := append(acct.key(sika.EnvironmentTest, sika.ScopePayout), "Idempotency-Key", uuid.NewString())
	return ps.call(t, "POST", "/api/v1/refunds/", body, append(h, headers...)...)
}

// paidCollection collects 1000 XOF from phone (BJ, MTN_BJ) and waits for its success.
func (ps *paymentStack) paidCollection(t *testing.T, acct *account, phone string) sika.TransactionDetail {
	t.Helper()
	p := ps.pay(t, acct, benin(phone))
	d := ps.final(t, acct, p.ID, 20*time.Second)
	require.Equal(t, sika.StatusSuccess, d.Status)
	return d
}

func TestRefundThroughTheSandbox(t *testing.T) {
	ps := payments(t)
	acct := ps.newAccount(t, true)
	whitelistLoopback(t, acct, sika.EnvironmentTest)
	p := ps.paidCollection(t, acct, "97100123")
	fund(t, acct, "BJ", "MTN_BJ", "5000") // the refunds' fees on top of what the collection brought
	require.NotNil(t, p.RefundStatus)
	assert.Equal(t, sika.RefundNone, *p.RefundStatus)
	before := ps.wallet(t, acct)

	r := ps.refund(t, acct, map[string]any{"transaction": p.ID, "amount": "400", "reason": "Damaged parcel"})
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	var rf sika.Transaction
	r.data(t, &rf)
	assert.Equal(t, sika.TypeRefund, rf.Type)
	assert.Equal(t, sika.DirectionOutbound, rf.FlowDirection)
	require.NotNil(t, rf.RefundedTransaction)
	assert.Equal(t, p.ID, *rf.RefundedTransaction)
	assert.Equal(t, "400.00", sika.FormatAmount(rf.Amount.Decimal))
	assert.Equal(t, "4.00", sika.FormatAmount(rf.ClientFee.Decimal), "the payout price: 1 %")
	assert.Equal(t, "404.00", sika.FormatAmount(rf.DebitedAmount.Decimal), "the fee on top of the amount")
	assert.Equal(t, "400.00", sika.FormatAmount(rf.NetAmount.Decimal), "what the customer gets back")
	assert.Equal(t, sika.FeeAddOn, rf.FeeChargeMode)
	assert.Equal(t, p.CustomerPhone, rf.Recipient)
	assert.Equal(t, "Damaged parcel", rf.Description)
	assert.Nil(t, rf.RefundStatus, "a refund has no refund status of its own")
	held := ps.wallet(t, acct)
	assert.Equal(t, before.AvailableAmount.Sub(dec("404")).String(), held.AvailableAmount.String(), "held at once")

	d := ps.final(t, acct, rf.ID, 20*time.Second)
	require.Equal(t, sika.StatusSuccess, d.Status, "%s %s", d.FailureCode, d.FailureMessage)
	ops := ps.operations(d)
	require.Len(t, ops, 1)
	assert.Equal(t, gateway.CallbackRefund, ops[0].Kind, "the sandbox's own refund of the collection")
	assert.Equal(t, "400.00", ops[0].Amount)
	assert.Equal(t, 1, ops[0].Pushes)
	var got sika.TransactionDetail
	ps.call(t, "GET", "/api/v1/refunds/"+rf.ID.String()+"/", nil, acct.key(sika.EnvironmentTest, sika.ScopePayin)...).data(t, &got)
	assert.Equal(t, sika.StatusSuccess, got.Status)
	assert.Len(t, got.Attempts, 1)
	assert.Len(t, got.StatusLogs, 2)

	col := ps.detail(t, acct, p.ID)
	assert.Equal(t, "400.00", sika.FormatAmount(col.AmountRefunded.Decimal))
	assert.Equal(t, sika.RefundPartial, *col.RefundStatus)

	// The rest, without an amount: what the customer paid less what was refunded.
	r = ps.refund(t, acct, map[string]any{"transaction": p.ID})
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	var rest sika.Transaction
	r.data(t, &rest)
	assert.Equal(t, sika.FormatAmount(p.DebitedAmount.Sub(dec("400"))), sika.FormatAmount(rest.Amount.Decimal))
	assert.Equal(t, sika.StatusSuccess, ps.final(t, acct, rest.ID, 20*time.Second).Status)
	col = ps.detail(t, acct, p.ID)
	assert.Equal(t, sika.FormatAmount(p.DebitedAmount.Decimal), sika.FormatAmount(col.AmountRefunded.Decimal))
	assert.Equal(t, sika.RefundFull, *col.RefundStatus)
	after := ps.wallet(t, acct)
	assert.Equal(t, before.AvailableAmount.Sub(p.DebitedAmount.Decimal).Sub(rf.ClientFee.Decimal).Sub(rest.ClientFee.Decimal).String(),
		after.AvailableAmount.String(), "the wallet gave back what was refunded and the fees")
	assert.True(t, after.PendingAmount.IsZero())

	r = ps.refund(t, acct, map[string]any{"transaction": p.ID, "amount": "1"})
	assert.Equal(t, 422, r.Status, "%s", r.Body)
	assert.Equal(t, string(sika.CodeRefundExceedsPayment), r.code())

	// The lists: the refunds of the collection, newest first.
	var page struct{ Results []sika.Transaction }
	ps.call(t, "GET", "/api/v1/refunds/?refunded_transaction="+p.ID.String(), nil, acct.key(sika.EnvironmentTest, sika.ScopePayin)...).data(t, &page)
	require.Len(t, page.Results, 2)
	assert.Equal(t, rest.ID, page.Results[0].ID)
	assert.Equal(t, rf.ID, page.Results[1].ID)
	ps.call(t, "GET", "/api/v1/transactions/?transaction_type=REMBOURSEMENT&refunded_transaction="+p.ID.String(), nil,
		acct.key(sika.EnvironmentTest, sika.ScopePayin)...).data(t, &page)
	assert.Len(t, page.Results, 2)
	r = ps.call(t, "GET", "/api/v1/refunds/"+p.ID.String()+"/", nil, acct.key(sika.EnvironmentTest, sika.ScopePayin)...)
	assert.Equal(t, 404, r.Status, "a collection is no refund")

	var events struct{ Results []sika.Event }
	ps.call(t, "GET", "/api/v1/events/", nil, acct.key(sika.EnvironmentTest, sika.ScopePayin)...).data(t, &events)
	types := map[sika.EventType]int{}
	for _, e := range events.Results {
		types[e.Type]++
	}
	assert.Equal(t, 2, types[sika.EventRefundPending])
	assert.Equal(t, 2, types[sika.EventRefundSucceeded])
}

func TestRefundRefusals(t *testing.T) {
	ps := payments(t)
	acct := ps.newAccount(t, true)
	whitelistLoopback(t, acct, sika.EnvironmentTest)
	fund(t, acct, "BJ", "MTN_BJ", "5000")
	p := ps.paidCollection(t, acct, "97101123")

	for name, c := range map[string]struct {
		body  map[string]any
		field string
	}{
		"no transaction":  {map[string]any{"amount": "10"}, "transaction"},
		"not a uuid":      {map[string]any{"transaction": "nope"}, "transaction"},
		"unknown":         {map[string]any{"transaction": uuid.NewString()}, "transaction"},
		"decimals in XOF": {map[string]any{"transaction": p.ID, "amount": "10.50"}, "amount"},
		"zero":            {map[string]any{"transaction": p.ID, "amount": "0"}, "amount"},
		"blank amount":    {map[string]any{"transaction": p.ID, "amount": ""}, "amount"},
	} {
		t.Run(name, func(t *testing.T) {
			r := ps.refund(t, acct, c.body)
			require.Equal(t, 400, r.Status, "%s", r.Body)
			assert.Contains(t, r.fields(), c.field)
		})
	}
	r := ps.refund(t, acct, map[string]any{"transaction": p.ID, "amount": "1001"})
	assert.Equal(t, 422, r.Status, "%s", r.Body)
	assert.Equal(t, string(sika.CodeRefundExceedsPayment), r.code())

	declined := ps.pay(t, acct, benin("97101001"))
	require.Equal(t, sika.StatusFailed, ps.final(t, acct, declined.ID, 20*time.Second).Status)
	r = ps.refund(t, acct, map[string]any{"transaction": declined.ID})
	assert.Equal(t, 409, r.Status, "%s", r.Body)
	assert.Equal(t, string(sika.CodeNotRefundable), r.code())

	other := ps.newAccount(t, true)
	whitelistLoopback(t, other, sika.EnvironmentTest)
	r = ps.refund(t, other, map[string]any{"transaction": p.ID})
	assert.Equal(t, 400, r.Status, "another merchant's collection is unknown: %s", r.Body)
	r = ps.call(t, "POST", "/api/v1/refunds/", map[string]any{"transaction": p.ID}, acct.key(sika.EnvironmentTest, sika.ScopePayin)...)
	assert.Equal(t, 403, r.Status, "a PAYIN key does not send money out: %s", r.Body)
	assert.Empty(t, refundsOf(t, p.ID), "nothing written")
}

// A refund the operator refuses ends FAILED and releases its hold; what it held can be refunded
// again.
func TestRefundDeclinedReleasesItsHold(t *testing.T) {
	ps := payments(t)
	acct := ps.newAccount(t, true)
	whitelistLoopback(t, acct, sika.EnvironmentTest)
	fund(t, acct, "BJ", "MTN_BJ", "5000")
	// 009: the sandbox decides after 20 ticks; the test declines it by hand first.
	p := ps.paidCollection(t, acct, "97102009")
	before := ps.wallet(t, acct)
	r := ps.refund(t, acct, map[string]any{"transaction": p.ID, "amount": "1000"})
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	var rf sika.Transaction
	r.data(t, &rf)
	var attempt sika.TransactionAttempt
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		d := ps.detail(t, acct, rf.ID)
		require.Len(c, d.Attempts, 1)
		attempt = d.Attempts[0]
	}, settle, 20*time.Millisecond)
	resp, err := http.Post(ps.sandboxURL()+"/sandbox/pushes/"+attempt.ID.String()+"/decline", "application/json", nil)
	require.NoError(t, err)
	resp.Body.Close()
	d := ps.final(t, acct, rf.ID, 20*time.Second)
	assert.Equal(t, sika.StatusFailed, d.Status)
	assert.Equal(t, before.AvailableAmount.String(), ps.wallet(t, acct).AvailableAmount.String(), "the hold is released")
	assert.True(t, ps.wallet(t, acct).PendingAmount.IsZero())
	col := ps.detail(t, acct, p.ID)
	assert.True(t, col.AmountRefunded.IsZero())
	assert.Equal(t, sika.RefundNone, *col.RefundStatus)

	again := ps.refund(t, acct, map[string]any{"transaction": p.ID, "amount": "1000"})
	assert.Equal(t, http.StatusCreated, again.Status, "what the failed refund held is free: %s", again.Body)
}

// 50 partial refunds of one collection asked at once through the API: those accepted never add
// up to more than what the customer paid, and once every one has ended the collection's
// amount_refunded is what the succeeded ones gave back, at most its amount.
func TestConcurrentRefundsThroughTheAPI(t *testing.T) {
	ps := payments(t)
	acct := ps.newAccount(t, true)
	whitelistLoopback(t, acct, sika.EnvironmentTest)
	fund(t, acct, "BJ", "MTN_BJ", "5000")
	p := ps.paidCollection(t, acct, "97103123")

	const n = 50
	var wg sync.WaitGroup
	statuses := make([]int, n)
	ids := make([]uuid.UUID, n)
	start := time.Now()
	for i := range n {
		wg.Go(func() {
			r := ps.refund(t, acct, map[string]any{"transaction": p.ID, "amount": "30", "reason": fmt.Sprintf("part %d", i)})
			statuses[i] = r.Status
			if r.Status == http.StatusCreated {
				var rf sika.Transaction
				r.data(t, &rf)
				ids[i] = rf.ID
			} else {
				assert.Equal(t, string(sika.CodeRefundExceedsPayment), r.code(), "%s", r.Body)
			}
		})
	}
	wg.Wait()
	accepted := 0
	for i := range n {
		if statuses[i] == http.StatusCreated {
			accepted++
		}
	}
	t.Logf("50 refunds of 30 asked at once on a %s collection: %d accepted, %d refused, answered in %s",
		sika.FormatAmount(p.DebitedAmount.Decimal), accepted, n-accepted, time.Since(start).Round(time.Millisecond))
	assert.Equal(t, int(p.DebitedAmount.IntPart()/30), accepted)
	for i := range n {
		if ids[i] != uuid.Nil {
			assert.Equal(t, sika.StatusSuccess, ps.final(t, acct, ids[i], settleWithin).Status)
		}
	}
	t.Logf("all %d ended in %s", accepted, time.Since(start).Round(time.Millisecond))
	col := ps.detail(t, acct, p.ID)
	assert.Equal(t, sika.FormatAmount(dec("30").Mul(dec(fmt.Sprint(accepted)))), sika.FormatAmount(col.AmountRefunded.Decimal))
	assert.True(t, col.AmountRefunded.LessThanOrEqual(p.DebitedAmount.Decimal))
	refunded := dec("0")
	for _, op := range ps.sandbox.Operations() {
		if op.Kind == gateway.CallbackRefund && op.Network == "MTN_BJ" && op.Status == gateway.StatusSuccess {
			for _, id := range ids {
				if id != uuid.Nil && refundAttemptOf(t, id) == op.Reference {
					refunded = refunded.Add(dec(op.Amount))
				}
			}
		}
	}
	assert.Equal(t, col.AmountRefunded.String(), refunded.String(), "what the operator refunded is what Sika recorded")
	assert.True(t, ps.wallet(t, acct).PendingAmount.IsZero())
	disc, err := testStore.CheckLedger(t.Context())
	require.NoError(t, err)
	assert.Nil(t, disc)
}

// refundsOf lists the refunds of a collection, any merchant.
func refundsOf(t *testing.T, id uuid.UUID) []uuid.UUID {
	t.Helper()
	rows, err := testStore.Pool().Query(t.Context(), `SELECT id FROM transactions WHERE refunded_transaction_id = $1`, id)
	require.NoError(t, err)
	var out []uuid.UUID
	for rows.Next() {
		var x uuid.UUID
		require.NoError(t, rows.Scan(&x))
		out = append(out, x)
	}
	return out
}

// refundAttemptOf is the reference of a refund's (only) attempt.
func refundAttemptOf(t *testing.T, id uuid.UUID) string {
	t.Helper()
	a, err := testStore.LatestAttempt(t.Context(), id)
	require.NoError(t, err)
	return a.ID.String()
}
