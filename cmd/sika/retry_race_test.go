package main

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
	"github.com/sikahq/sika/workflows"
)

// TestRetryWhileOldRunOpen: a payment's run 1 has recorded FAILED but its workflow has not
// closed yet (here: no worker is running) when the merchant retries it. The retry's start must
// not be taken for a duplicate of the open execution (found by make chaos): its outbox row stays
// until run 1 has closed, and run 2 then happens.
func TestRetryWhileOldRunOpen(t *testing.T) {
	ctx := t.Context()
	pe := newProcessEnv(t, "retry race", 100*time.Millisecond, nil)
	cfg, st, logger := pe.cfg, pe.st, slog.New(slog.DiscardHandler)
	tc, err := dialTemporal(ctx, cfg, logger, nil)
	require.NoError(t, err)
	defer tc.Close()
	apiCtx, stopAPI := context.WithCancel(context.Background())
	apiDone := make(chan error, 1)
	go func() { apiDone <- serveAPI(apiCtx, cfg, st, tc, nil, pe.ln, logger) }()
	defer func() { stopAPI(); <-apiDone }()

	_, key := pe.merchantKey(t, "Race")
	post := func(path string, body any) (int, map[string]any) {
		return pe.post(t, key, uuid.NewString(), path, body)
	}
	// Run 1, while no worker runs: its workflow is started and stays open.
	code, out := post("/api/v1/payments/softpay/", map[string]string{"amount": "1000", "currency": "XOF", "country": "BJ",
		"network": "MTN_BJ", "customer_phone": "0197000001", "customer_name": "Race"})
	require.Equal(t, 201, code, out)
	id := uuid.MustParse(out["data"].(map[string]any)["id"].(string))
	require.Eventually(t, func() bool { // the API started run 1 (after its answer)
		var n int
		_ = st.Pool().QueryRow(ctx, `SELECT count(*) FROM workflow_outbox WHERE workflow_id = $1`, workflows.PaymentWorkflowID(id)).Scan(&n)
		return n == 0
	}, 10*time.Second, 50*time.Millisecond)
	// Run 1 records FAILED (as CompletePayment does) before its workflow closes.
	_, changed, err := st.CompletePayment(ctx, store.Completion{TransactionID: id, Run: 1, Status: sika.StatusFailed, Reason: "declined", TriggeredBy: sika.TriggerSystem})
	require.NoError(t, err)
	require.True(t, changed)
	// The merchant retries at once.
	code, out = post("/api/v1/payments/"+id.String()+"/retry/", map[string]string{"customer_phone": "0197000123"})
	require.Equal(t, 200, code, out)
	var outbox int
	require.NoError(t, st.Pool().QueryRow(ctx, `SELECT count(*) FROM workflow_outbox WHERE workflow_id = $1`, workflows.PaymentWorkflowID(id)).Scan(&outbox))
	require.Equal(t, 1, outbox, "run 2's start waits in the outbox while run 1 is open")
	// Now a worker comes: run 1's workflow ends at once (not its run); run 2 must still happen.
	wctx, stopWorker := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runWorker(wctx, cfg, st, tc, nil, logger) }()
	defer func() { stopWorker(); <-done }()
	require.Eventually(t, func() bool {
		tx, err := st.Transaction(ctx, id)
		return err == nil && tx.Status == sika.StatusSuccess
	}, 30*time.Second, 100*time.Millisecond, "run 2 of the retried payment never ran")
}
