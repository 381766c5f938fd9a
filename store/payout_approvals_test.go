package store_test

import (
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
)

// TestPayoutApprovalIsDecidedOnce: two members deciding at once (one approves, one rejects) and
// the approval's expiry racing them, round after round: one decision wins, the payout leaves
// AWAITING_APPROVAL once (one status log out of it), and its hold is either still held for the
// send (approved) or released once (rejected, expired), which the ledger check confirms.
func TestPayoutApprovalIsDecidedOnce(t *testing.T) {
	ctx := t.Context()
	member := func() uuid.UUID {
		mb, _, err := st.RegisterMember(ctx, "approver-"+uuid.NewString()[:8]+"@example.com", "x", "Approver", "", nil)
		require.NoError(t, err)
		return mb.ID
	}
	approver, rejecter := member(), member()
	outcomes := map[sika.TransactionStatus]int{}
	for round := range 12 {
		m := fundedMerchant(t, "5000")
		p := outbound(t, m, sika.TypePayout, "1000")
		expires := time.Now().Add(time.Duration(round%4) * 15 * time.Millisecond)
		created, _, ok, err := st.CreatePayout(ctx, store.NewTransaction{Transaction: p, Reason: "Payout requested",
			Approval: &store.NewPayoutApproval{Threshold: decimal.NewFromInt(500), ExpiresAt: expires}}, payoutStart(p))
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, sika.StatusAwaitingApproval, created.Status)

		var wg sync.WaitGroup
		var mu sync.Mutex
		decided := 0
		decide := func(by uuid.UUID, approve bool) {
			defer wg.Done()
			_, err := st.DecidePayout(ctx, m.ID, sika.EnvironmentTest, p.ID, by, approve, "")
			if err == nil {
				mu.Lock()
				decided++
				mu.Unlock()
				return
			}
			assert.Equal(t, sika.CodeNotAwaitingApproval, sika.ErrorCode(err), "a decision that lost is refused: %v", err)
		}
		wg.Add(3)
		go decide(approver, true)
		go decide(rejecter, false)
		go func() {
			defer wg.Done()
			time.Sleep(time.Until(expires))
			_, err := st.ExpirePayoutApproval(ctx, p.ID)
			assert.NoError(t, err)
		}()
		wg.Wait()

		final, err := st.TransactionDetail(ctx, m.ID, sika.EnvironmentTest, p.ID)
		require.NoError(t, err)
		require.NotEqual(t, sika.StatusAwaitingApproval, final.Status, "round %d: decided or expired", round)
		outcomes[final.Status]++
		out := 0
		for _, l := range final.StatusLogs {
			if l.FromStatus != nil && *l.FromStatus == sika.StatusAwaitingApproval {
				out++
			}
		}
		assert.Equal(t, 1, out, "round %d: one way out of AWAITING_APPROVAL", round)
		approval, err := st.PayoutApprovalOf(ctx, p.ID)
		require.NoError(t, err)
		assert.NotEmpty(t, approval.Decision)
		assert.LessOrEqual(t, decided, 1, "round %d: at most one member's decision is taken", round)
		if approval.Decision == store.ApprovalExpired {
			assert.Zero(t, decided)
		}
		var available, pending decimal.Decimal
		require.NoError(t, st.Pool().QueryRow(ctx, `SELECT available_amount, pending_amount FROM wallets WHERE merchant_id = $1`, m.ID).
			Scan(&available, &pending))
		held := decimal.Zero
		if final.Status == sika.StatusPending { // approved: still held until the operator's answer
			held = p.DebitedAmount.Decimal
		}
		assert.Equal(t, held.StringFixed(2), pending.StringFixed(2), "round %d (%s, %s)", round, final.Status, approval.Decision)
		assert.Equal(t, decimal.NewFromInt(5000).Sub(held).StringFixed(2), available.StringFixed(2), "round %d: released once or still held", round)
	}
	t.Logf("outcomes over the rounds: %v", outcomes)
	disc, err := st.CheckLedger(ctx)
	require.NoError(t, err)
	assert.Nil(t, disc)
}
