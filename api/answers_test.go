package api

import (
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
)

// Issue 21, case 2, end to end on the sandbox, the real Temporal dev server and Postgres:
// sandbox-a answers 503 to a 012 number (attempt 1 closed FAILED gateway_unavailable) but takes
// it all the same, the run goes on at sandbox-b, whose push waits for the customer, and
// sandbox-a then sends its signed SUCCESS for attempt 1. It is answered 200 only once kept, and
// settled when the run ends: the payment succeeds on attempt 1 if attempt 2 does not, and a
// second success is credited and flagged.

// closedAttemptPaid starts a 012 payment or payout, waits for the run to be at sandbox-b and for
// sandbox-a's signed success for attempt 1 to be kept. It answers the transaction and its two
// attempts.
func closedAttemptPaid(t *testing.T, ps *paymentStack, acct *account, payout bool) (uuid.UUID, sika.TransactionAttempt, sika.TransactionAttempt) {
	t.Helper()
	var id uuid.UUID
	if payout {
		r := ps.payout(t, acct, payoutBody("97000012"))
		require.Equal(t, 201, r.Status, "%s", r.Body)
		var p sika.Transaction
		r.data(t, &p)
		id = p.ID
	} else {
		id = ps.pay(t, acct, benin("97000012")).ID
	}
	var d sika.TransactionDetail
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		d = ps.detail(t, acct, id)
		if assert.Len(c, d.Attempts, 2) {
			assert.Equal(c, sika.AttemptPending, d.Attempts[1].Status)
			atB := 0
			for _, op := range ps.operations(d) {
				if op.Gateway == "sandbox-b" {
					atB++
				}
			}
			assert.Equal(c, 1, atB, "sandbox-b has the push")
		}
	}, settle, 20*time.Millisecond, "the run is at sandbox-b")
	// The 503 is this test's doing: the package's router, shared by every test, must not take
	// sandbox-a for down (three in a row trip it) and route the other tests' payments elsewhere.
	ps.acts.Gateways.Observe("sandbox-a", nil)
	first, second := d.Attempts[0], d.Attempts[1]
	require.Equal(t, "sandbox-a", first.Gateway)
	require.Equal(t, sika.AttemptFailed, first.Status)
	require.Equal(t, "gateway_unavailable", first.FailureCode)
	require.Equal(t, "sandbox-b", second.Gateway)

	// In case that report were lost, attempt 1 is re-read for a while all the same.
	var until *time.Time
	require.NoError(t, testStore.Pool().QueryRow(t.Context(), `SELECT recheck_until FROM transaction_attempts WHERE id = $1`, first.ID).Scan(&until))
	assert.NotNil(t, until, "an attempt closed on a 503 is re-read")
	// sandbox-a took attempt 1 despite its 503 and reports it paid, signed, two ticks later.
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		var kept int
		assert.NoError(c, testStore.Pool().QueryRow(t.Context(),
			`SELECT count(*) FROM operator_answers WHERE attempt_id = $1 AND status = 'SUCCESS'`, first.ID).Scan(&kept))
		assert.Positive(c, kept, "kept while the run is at sandbox-b")
	}, settle, 20*time.Millisecond)
	// The row is committed before the handler answers: the sandbox counts the 2xx a moment later.
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		for _, op := range ps.sandbox.Operations() {
			if op.Reference == first.ID.String() {
				assert.Positive(c, op.CallbacksSent, "the callback was answered 2xx, after it was kept")
			}
		}
	}, settle, 20*time.Millisecond)
	assert.Equal(t, sika.StatusPending, ps.detail(t, acct, id).Status, "the run still decides")
	return id, first, second
}

func approveByHand(t *testing.T, ps *paymentStack, a sika.TransactionAttempt, kind string) {
	t.Helper()
	resp, err := http.Post(ps.sandboxURL()+"/sandbox/pushes/"+a.ID.String()+"/approve?gateway="+a.Gateway+"&kind="+kind, "application/json", nil)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
}

func openFlags(t *testing.T, id uuid.UUID) []store.MoneyFlag {
	t.Helper()
	flags, err := testStore.MoneyFlags(t.Context(), true, 100000)
	require.NoError(t, err)
	var mine []store.MoneyFlag
	for _, f := range flags {
		if f.Transaction == id {
			mine = append(mine, f)
		}
	}
	return mine
}

func TestASignedSuccessOfAClosedAttemptIsNeverDropped(t *testing.T) {
	ps := payments(t)

	t.Run("attempt 2 expires: credited once on attempt 1", func(t *testing.T) {
		acct := ps.newAccount(t, true)
		id, first, _ := closedAttemptPaid(t, ps, acct, false)
		d := ps.final(t, acct, id, 30*time.Second)
		require.Equal(t, sika.StatusSuccess, d.Status, "the operator paid attempt 1")
		for _, op := range ps.operations(d) {
			if op.Reference == first.ID.String() {
				assert.Equal(t, op.GatewayReference, d.GatewayReference, "recorded on sandbox-a's operation")
			}
		}
		assert.Equal(t, sika.AttemptSuccess, d.Attempts[0].Status)
		assert.Equal(t, sika.AttemptFailed, d.Attempts[1].Status, "attempt 2 was withdrawn at sandbox-b")
		credits := 0
		for _, e := range ps.ledger(t, acct) {
			if e.Type == sika.LedgerCollection {
				credits++
				require.NotNil(t, e.Transaction)
			}
		}
		assert.Equal(t, 1, credits)
		assert.Empty(t, openFlags(t, id))
		var failed int
		require.NoError(t, testStore.Pool().QueryRow(t.Context(),
			`SELECT count(*) FROM events WHERE transaction_id = $1 AND type = 'transaction.failed'`, id).Scan(&failed))
		assert.Equal(t, 0, failed, "the merchant is never told FAILED")
	})

	t.Run("attempt 2 approved too: credited twice, refund due", func(t *testing.T) {
		acct := ps.newAccount(t, true)
		id, first, second := closedAttemptPaid(t, ps, acct, false)
		approveByHand(t, ps, second, "collection")
		d := ps.final(t, acct, id, 30*time.Second)
		require.Equal(t, sika.StatusSuccess, d.Status)
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			flags := openFlags(t, id)
			if assert.Len(c, flags, 1) {
				assert.Equal(c, store.FlagRefundDue, flags[0].Kind)
				assert.Equal(c, first.ID, *flags[0].Attempt)
			}
		}, settle, 50*time.Millisecond)
		assert.Equal(t, sika.FormatAmount(d.NetAmount.Mul(dec("2"))), sika.FormatAmount(ps.balances(t, acct)[0].AvailableAmount.Decimal),
			"both payments are in the wallet, one due back to the customer")
	})

	t.Run("payout paid at both gateways: PAYOUT_PAID_TWICE", func(t *testing.T) {
		acct := ps.newAccount(t, true)
		fund(t, acct, "BJ", "MTN_BJ", "5000")
		whitelistLoopback(t, acct, sika.EnvironmentTest)
		id, first, second := closedAttemptPaid(t, ps, acct, true)
		approveByHand(t, ps, second, "disbursement")
		d := ps.final(t, acct, id, 30*time.Second)
		require.Equal(t, sika.StatusSuccess, d.Status)
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			flags := openFlags(t, id)
			if assert.Len(c, flags, 1) {
				assert.Equal(c, store.FlagPayoutPaidTwice, flags[0].Kind)
				assert.Equal(c, first.ID, *flags[0].Attempt)
			}
		}, settle, 50*time.Millisecond)
	})
}
