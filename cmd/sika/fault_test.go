package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/activities"
	"github.com/sikahq/sika/gateway/sandbox"
	"github.com/sikahq/sika/internal/testenv"
	"github.com/sikahq/sika/store"
	"github.com/sikahq/sika/webhook"
	"github.com/sikahq/sika/workflows"
)

// TestWorkerKilledMidPayment runs the API in-process and the worker as a real `sika worker`
// process, kills the worker with SIGKILL while payments are in flight, starts a new one, and
// checks that every payment reaches exactly one final state, that no gateway push was made
// twice, and that every wallet equals its ledger. A payment committed without its workflow
// (the API died before starting it) is started by the new worker's outbox sweeper.
func TestWorkerKilledMidPayment(t *testing.T) {
	ctx := t.Context()
	bin := filepath.Join(t.TempDir(), "sika")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Stderr = os.Stderr
	require.NoError(t, build.Run())

	env := testenv.Current()
	addr, err := env.TemporalAddress()
	require.NoError(t, err)
	secret := "fault test sandbox secret"
	sb := sandbox.NewServer(sandbox.Config{Gateways: sandbox.DefaultGateways(secret), Tick: 400 * time.Millisecond,
		Logger: slog.New(slog.DiscardHandler)})
	defer sb.Close()
	sbSrv := httptest.NewServer(sb)
	defer sbSrv.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	vars := map[string]string{
		"DATABASE_URL": env.DatabaseURL, "TEMPORAL_ADDRESS": addr, "SIKA_SANDBOX_URL": sbSrv.URL,
		"SIKA_SANDBOX_SECRET": secret, "SIKA_TASK_QUEUE": workflows.TaskQueue, "SIKA_JWT_SECRET": "fault test jwt secret of 32 bytes or more", "SIKA_PAYLOAD_KEYS": testPayloadKeys(t),
		"SIKA_PUBLIC_URL": "http://" + ln.Addr().String(), "SIKA_OUTBOX_SWEEP_INTERVAL": "300ms", "SIKA_LOG_LEVEL": "warn",
		"SIKA_WEBHOOK_ALLOW_PRIVATE": "true", "SIKA_METRICS_ADDR": "127.0.0.1:0",
	}
	cfg, err := loadConfig(func(k string) string { return vars[k] })
	require.NoError(t, err)
	logger := slog.New(slog.DiscardHandler)
	st, err := openStore(ctx, cfg, logger)
	require.NoError(t, err)
	defer st.Close()
	tc, err := dialTemporal(ctx, cfg, logger, nil)
	require.NoError(t, err)
	defer tc.Close()
	apiCtx, stopAPI := context.WithCancel(context.Background())
	apiDone := make(chan error, 1)
	go func() { apiDone <- serveAPI(apiCtx, cfg, st, tc, nil, ln, logger) }()
	defer func() { stopAPI(); <-apiDone }()

	startWorker := func() *exec.Cmd {
		cmd := exec.Command(bin, "worker")
		cmd.Env = os.Environ()
		for k, v := range vars {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		cmd.Stderr = os.Stderr
		require.NoError(t, cmd.Start())
		return cmd
	}
	first := startWorker()

	_, merchant, err := st.RegisterMember(ctx, uuid.NewString()+"@example.com", "x", "Fault", "", &store.NewMerchant{Name: "Fault shop", Country: "BJ"})
	require.NoError(t, err)
	key, err := st.CreateAPIKey(ctx, merchant.ID, sika.EnvironmentTest, sika.ScopeBoth, "fault", nil)
	require.NoError(t, err)
	hooks := newHookReceiver(t)
	_, err = st.CreateWebhookEndpoint(ctx, sika.WebhookEndpoint{Merchant: merchant.ID, Environment: sika.EnvironmentTest,
		URL: hooks.srv.URL, IsActive: true}, hooks.secret)
	require.NoError(t, err)
	pay := func(phone string) uuid.UUID {
		body, _ := json.Marshal(map[string]string{"amount": "1000", "currency": "XOF", "country": "BJ", "network": "MTN_BJ",
			"customer_phone": phone, "customer_name": "Fault test"})
		req, _ := http.NewRequest("POST", vars["SIKA_PUBLIC_URL"]+"/api/v1/payments/softpay/", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key.Secret)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var out struct {
			Data sika.Transaction `json:"data"`
		}
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
		require.Equal(t, 201, resp.StatusCode)
		return out.Data.ID
	}

	// Every suffix whose outcome does not depend on a human: success, declines, fallback,
	// ambiguous, no callback, duplicated callbacks, slow.
	want := map[string]sika.TransactionStatus{"123": sika.StatusSuccess, "001": sika.StatusFailed, "002": sika.StatusFailed,
		"005": sika.StatusSuccess, "006": sika.StatusSuccess, "007": sika.StatusSuccess, "008": sika.StatusSuccess, "009": sika.StatusSuccess}
	expected := map[uuid.UUID]sika.TransactionStatus{}
	for round := range 3 {
		for suffix, status := range want {
			expected[pay("9700"+fmt.Sprint(round)+suffix)] = status
		}
	}
	// Payouts in flight too, from a funded wallet, by an API key from a whitelisted address.
	fundWallet(t, st, merchant.ID, "100000")
	_, err = st.AddIPWhitelistEntry(ctx, merchant.ID, sika.EnvironmentTest, netip.MustParsePrefix("127.0.0.1/32"), "fault test")
	require.NoError(t, err)
	payouts := map[string]sika.TransactionStatus{"123": sika.StatusSuccess, "001": sika.StatusFailed, "005": sika.StatusSuccess,
		"006": sika.StatusSuccess, "007": sika.StatusSuccess, "009": sika.StatusSuccess}
	// create posts body to path with the key and decodes the 201's data into out.
	create := func(path string, body, out any) {
		raw, _ := json.Marshal(body)
		req, _ := http.NewRequest("POST", vars["SIKA_PUBLIC_URL"]+"/api/v1"+path, bytes.NewReader(raw))
		req.Header.Set("Authorization", "Bearer "+key.Secret)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, 201, resp.StatusCode)
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&struct {
			Data any `json:"data"`
		}{out}))
	}
	for suffix, status := range payouts {
		var p sika.Transaction
		create("/payouts/initialize/", map[string]string{"amount": "2000", "currency": "XOF", "country": "BJ", "method": "MTN_BJ",
			"recipient": "97009" + suffix, "recipient_name": "Fault payee"}, &p)
		expected[p.ID] = status
	}
	// A batch of payouts, sending when the worker dies: 30 items of 8 s at most 20 at once.
	items := make([]map[string]string, 30)
	for i := range items {
		items[i] = map[string]string{"amount": "500", "currency": "XOF", "country": "BJ", "network": "MTN_BJ",
			"phone": fmt.Sprintf("97%03d009", i), "reference": fmt.Sprintf("item-%d", i)}
	}
	var batch sika.PayoutBatch
	create("/payout-batches/", map[string]any{"items": items}, &batch)
	// A payment committed whose workflow never started: only the outbox knows about it.
	orphan := orphanPayment(t, st, merchant.ID)
	expected[orphan] = sika.StatusSuccess

	// Support sees the orphan among the stuck transactions, with its workflow.
	stuck := exec.Command(bin, "admin", "payments", "stuck", "--older-than", "0s")
	stuck.Env = append(os.Environ(), "DATABASE_URL="+env.DatabaseURL)
	out, err := stuck.Output()
	require.NoError(t, err, string(out))
	assert.Contains(t, string(out), "payment:"+orphan.String())

	// Kill once every API-started payment and payout has reached its gateway, before most outcomes.
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		var started int
		assert.NoError(c, st.Pool().QueryRow(ctx, `SELECT count(DISTINCT transaction_id) FROM transaction_attempts a WHERE merchant_id = $1
			AND NOT EXISTS (SELECT 1 FROM payout_batch_items i WHERE i.transaction_id = a.transaction_id)`, merchant.ID).Scan(&started))
		assert.GreaterOrEqual(c, started, len(expected)-1, "the orphan has no workflow yet")
	}, 30*time.Second, 10*time.Millisecond)
	require.NoError(t, first.Process.Signal(syscall.SIGKILL))
	_ = first.Wait()
	// A payment accepted while no worker runs: its transaction.pending event is committed with
	// nobody to send it; the next worker's webhook sender finds it in the outbox.
	expected[pay("97008123")] = sika.StatusSuccess
	// Let callbacks arrive while no worker runs: they wait in Temporal for the next worker.
	callbacks := func() int {
		n := 0
		for _, op := range sb.Operations() {
			n += op.CallbacksSent
		}
		return n
	}
	atKill := callbacks()
	require.Eventually(t, func() bool { return callbacks() > atKill }, 10*time.Second, 20*time.Millisecond)
	second := startWorker()
	defer func() { _ = second.Process.Signal(syscall.SIGTERM); _ = second.Wait() }()

	require.EventuallyWithT(t, func(c *assert.CollectT) {
		var pending int
		assert.NoError(c, st.Pool().QueryRow(ctx, `SELECT count(*) FROM transactions WHERE merchant_id = $1 AND status = 'PENDING'`, merchant.ID).Scan(&pending))
		assert.Zero(c, pending)
	}, 90*time.Second, 250*time.Millisecond)

	// The batch ends once its items have: each paid once, none skipped, none twice.
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		b, err := st.PayoutBatchByID(ctx, merchant.ID, sika.EnvironmentTest, batch.ID)
		assert.NoError(c, err)
		assert.Equal(c, sika.BatchCompleted, b.Status)
	}, 90*time.Second, 250*time.Millisecond)
	batchItems, err := st.PayoutBatchItems(ctx, merchant.ID, sika.EnvironmentTest, batch.ID)
	require.NoError(t, err)
	require.Len(t, batchItems, 30)
	for _, it := range batchItems {
		assert.Equal(t, sika.ItemSucceeded, it.Status, "item %d", it.Index)
	}
	var batchPayouts int
	require.NoError(t, st.Pool().QueryRow(ctx, `SELECT count(*) FROM transactions WHERE merchant_id = $1
		AND metadata->>'payout_batch' = $2`, merchant.ID, batch.ID.String()).Scan(&batchPayouts))
	assert.Equal(t, 30, batchPayouts, "one payout per item, whatever was killed when")

	successes := 0
	for id, status := range expected {
		d, err := st.TransactionDetail(ctx, merchant.ID, sika.EnvironmentTest, id)
		require.NoError(t, err)
		assert.Equal(t, status, d.Status, "transaction %s (%s)", id, d.CustomerPhone)
		finals := 0
		for _, l := range d.StatusLogs {
			if l.ToStatus != sika.StatusPending {
				finals++
			}
		}
		assert.Equal(t, 1, finals, "exactly one final status log for %s", d.CustomerPhone)
		if d.Status == sika.StatusSuccess {
			successes++
		}
	}
	for _, op := range sb.Operations() {
		assert.Equal(t, 1, op.Pushes, "operation %s pushed once", op.Reference)
	}
	var entries, holds, open int
	require.NoError(t, st.Pool().QueryRow(ctx, `SELECT count(*) FILTER (WHERE type = 'COLLECTION'),
			count(*) FILTER (WHERE type = 'PAYOUT_HOLD'),
			count(*) FILTER (WHERE type = 'PAYOUT_HOLD') - count(*) FILTER (WHERE type IN ('PAYOUT', 'PAYOUT_REVERSAL'))
		FROM ledger_entries WHERE merchant_id = $1 AND payout_batch_id IS NULL`, merchant.ID).Scan(&entries, &holds, &open))
	assert.Equal(t, successes-payoutSuccesses(payouts)+1, entries, "one credit per successful payment (and the funding)")
	assert.Equal(t, len(payouts)+30, holds, "the payouts' and the batch items' own holds")
	assert.Zero(t, open, "every hold settled or released")
	var batchHeld, batchMoved decimal.Decimal
	require.NoError(t, st.Pool().QueryRow(ctx, `SELECT coalesce(sum(amount) FILTER (WHERE type = 'PAYOUT_HOLD'), 0),
			coalesce(sum(amount) FILTER (WHERE type = 'PAYOUT_REVERSAL'), 0)
		FROM ledger_entries WHERE payout_batch_id = $1`, batch.ID).Scan(&batchHeld, &batchMoved))
	assert.Equal(t, "15000.00", batchHeld.StringFixed(2))
	assert.Equal(t, batchHeld.StringFixed(2), batchMoved.StringFixed(2), "the batch's hold moved to its 30 payouts, once each")
	disc, err := st.CheckLedger(ctx)
	require.NoError(t, err)
	assert.Nil(t, disc)
	// Every event reached the merchant's endpoint, signed, whatever was killed when.
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		rows, err := st.Pool().Query(ctx, `SELECT event_id || ' (' || type || ')' FROM events WHERE merchant_id = $1`, merchant.ID)
		if !assert.NoError(c, err) {
			return
		}
		events, err := pgx.CollectRows(rows, pgx.RowTo[string])
		assert.NoError(c, err)
		assert.NotEmpty(c, events)
		for _, ev := range events {
			assert.True(c, hooks.received(strings.Fields(ev)[0]), "event %s delivered", ev)
		}
		// A delivery in flight when the worker was killed is claimed again once its lease (an
		// endpoint's time to answer and a margin: 30 s) has run out.
	}, 60*time.Second, 250*time.Millisecond)
	assert.Zero(t, hooks.badSignatures())
	// The sender removes a row in the transaction that records the answer, a moment after the
	// endpoint has it: the last delivery's row may still be there when it arrives.
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		var outbox int
		assert.NoError(c, st.Pool().QueryRow(ctx, `SELECT count(*) FROM workflow_outbox`).Scan(&outbox))
		assert.Zero(c, outbox, "the sweeper started the orphan, the sender sent every event: the outbox is empty")
	}, 10*time.Second, 100*time.Millisecond)

	// The operator's command agrees, and catches a wallet changed behind the ledger's back.
	check := func() (string, error) {
		cmd := exec.Command(bin, "admin", "check-ledger")
		cmd.Env = append(os.Environ(), "DATABASE_URL="+env.DatabaseURL)
		out, err := cmd.Output()
		return string(out), err
	}
	out2, err := check()
	require.NoError(t, err, out2)
	assert.Contains(t, out2, "every wallet equals its ledger")
	_, err = st.Pool().Exec(ctx, `UPDATE wallets SET available_amount = available_amount + 5 WHERE merchant_id = $1`, merchant.ID)
	require.NoError(t, err)
	out2, err = check()
	assert.Error(t, err)
	assert.Contains(t, out2, "ledger sums to")
	_, err = st.Pool().Exec(ctx, `UPDATE wallets SET available_amount = available_amount - 5 WHERE merchant_id = $1`, merchant.ID)
	require.NoError(t, err)
}

// orphanPayment writes a payment and its outbox row as the API does, without starting its
// workflow, as if the API had died right after the commit.
func orphanPayment(t *testing.T, st *store.Store, merchantID uuid.UUID) uuid.UUID {
	t.Helper()
	ctx := t.Context()
	n, err := st.NetworkByCode(ctx, "MTN_BJ")
	require.NoError(t, err)
	id, err := uuid.NewV7()
	require.NoError(t, err)
	ref, err := sika.NewReference("PAY", time.Now())
	require.NoError(t, err)
	amount := sika.NewAmount(decimal.NewFromInt(1000))
	tx := sika.Transaction{ID: id, Reference: ref, Merchant: merchantID, Environment: sika.EnvironmentTest, Type: sika.TypePayment,
		RequestedAmount: amount, DebitedAmount: amount, NetAmount: amount, Currency: "XOF", Country: "BJ",
		NetworkID: n.ID, Network: n.Code, CustomerPhone: "+22997009123", CustomerName: "Orphan", FeeChargeMode: sika.FeeDeducted}
	_, _, _, err = st.CreateTransaction(ctx, store.NewTransaction{Transaction: tx},
		workflows.PaymentStart(activities.PaymentInput{TransactionID: id, Run: 1}))
	require.NoError(t, err)
	return id
}

func payoutSuccesses(m map[string]sika.TransactionStatus) int {
	n := 0
	for _, s := range m {
		if s == sika.StatusSuccess {
			n++
		}
	}
	return n
}

// fundWallet credits the merchant's TEST wallet of Benin through a completed collection.
func fundWallet(t *testing.T, st *store.Store, merchantID uuid.UUID, amount string) {
	t.Helper()
	ctx := t.Context()
	id := orphanPayment(t, st, merchantID)
	_, err := st.Pool().Exec(ctx, `DELETE FROM workflow_outbox WHERE workflow_id = $1`, workflows.PaymentWorkflowID(id))
	require.NoError(t, err)
	_, err = st.Pool().Exec(ctx, `UPDATE transactions SET requested_amount = $2, debited_amount = $2, net_amount = $2 WHERE id = $1`, id, amount)
	require.NoError(t, err)
	_, changed, err := st.CompletePayment(ctx, store.Completion{TransactionID: id, Run: 1, Status: sika.StatusSuccess, Reason: "funding", TriggeredBy: sika.TriggerSystem})
	require.NoError(t, err)
	require.True(t, changed)
}

// hookReceiver is the merchant's webhook endpoint: it verifies each delivery and notes its id.
type hookReceiver struct {
	secret string
	srv    *httptest.Server

	mu     sync.Mutex
	seen   map[string]bool
	badSig int
}

func newHookReceiver(t *testing.T) *hookReceiver {
	secret, err := webhook.NewSecret()
	require.NoError(t, err)
	h := &hookReceiver{secret: secret, seen: map[string]bool{}}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		defer h.mu.Unlock()
		if webhook.Verify(h.secret, r.Header, body, 5*time.Minute) != nil {
			h.badSig++
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		h.seen[r.Header.Get(webhook.HeaderID)] = true
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hookReceiver) received(id string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.seen[id]
}

func (h *hookReceiver) badSignatures() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.badSig
}
