package store_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika/store"
)

// TestWebhookOutboxClaims: worker replicas claiming webhook deliveries together never get the
// same row; a claimed row is nobody's until its lease runs out, then it is claimable again (its
// claimant died); workflow starts of other kinds are never claimed as deliveries.
func TestWebhookOutboxClaims(t *testing.T) {
	ctx := t.Context()
	_, err := st.Pool().Exec(ctx, `DELETE FROM workflow_outbox`)
	require.NoError(t, err)
	const rows = 200
	_, err = st.Pool().Exec(ctx, `INSERT INTO workflow_outbox (workflow_id, workflow_type, input)
		SELECT 'webhook:evt_' || i || ':ep', $1, '{}' FROM generate_series(1, $2) i`, store.WebhookDeliveryWorkflowType, rows)
	require.NoError(t, err)
	_, err = st.Pool().Exec(ctx, `INSERT INTO workflow_outbox (workflow_id, workflow_type, input) VALUES ('payment:x', 'Payment', '{}')`)
	require.NoError(t, err)

	var (
		mu      sync.Mutex
		claimed = map[int64]int{}
		wg      sync.WaitGroup
	)
	for range 4 {
		wg.Go(func() {
			for {
				got, err := st.ClaimWebhookOutbox(ctx, 7, time.Minute)
				if !assert.NoError(t, err) || len(got) == 0 {
					return
				}
				mu.Lock()
				for _, e := range got {
					claimed[e.ID]++
					assert.Equal(t, store.WebhookDeliveryWorkflowType, e.Type)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	assert.Len(t, claimed, rows, "every delivery claimed")
	for id, n := range claimed {
		assert.Equal(t, 1, n, "outbox row %d claimed once", id)
	}

	got, err := st.ClaimWebhookOutbox(ctx, rows, time.Minute)
	require.NoError(t, err)
	assert.Empty(t, got, "leased rows are nobody's until the lease runs out")
	_, err = st.Pool().Exec(ctx, `UPDATE workflow_outbox SET next_attempt_at = now() - interval '1 second'
		WHERE id IN (SELECT id FROM workflow_outbox WHERE workflow_type = $1 ORDER BY id LIMIT 3)`, store.WebhookDeliveryWorkflowType)
	require.NoError(t, err)
	got, err = st.ClaimWebhookOutbox(ctx, rows, time.Minute)
	require.NoError(t, err)
	require.Len(t, got, 3, "a lease run out: claimable again")
	assert.Less(t, got[0].ID, got[1].ID, "oldest first")

	due, err := st.DueOutbox(ctx, 0, rows)
	require.NoError(t, err)
	require.Len(t, due, 1, "the sweeper's workflow starts leave deliveries to the sender")
	assert.Equal(t, "payment:x", due[0].WorkflowID)
	_, err = st.Pool().Exec(ctx, `DELETE FROM workflow_outbox`)
	require.NoError(t, err)
}
