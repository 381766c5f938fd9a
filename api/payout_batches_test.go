package api

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
	"github.com/sikahq/sika/workflows"
)

// batchItem is one item of a batch body: amount XOF to a Beninese MTN number ending in suffix.
func batchItem(ref, amount, phone string) map[string]any {
	return map[string]any{"amount": amount, "currency": "XOF", "country": "BJ", "network": "MTN_BJ",
		"phone": phone, "reference": ref, "description": "Salary " + ref}
}

// batchOf is a batch body of n items of amount each, to numbers ending in suffix.
func batchOf(n int, amount, suffix string) map[string]any {
	items := make([]map[string]any, n)
	for i := range items {
		items[i] = batchItem(fmt.Sprintf("row-%03d", i), amount, fmt.Sprintf("97%03d", i%1000)+suffix)
	}
	return map[string]any{"description": "November salaries", "items": items}
}

func (ps *paymentStack) createBatch(t *testing.T, acct *account, body map[string]any, headers ...string) *response {
	t.Helper()
	return ps.call(t, "POST", "/api/v1/payout-batches/", body, append(acct.key(sika.EnvironmentTest, sika.ScopePayout), headers...)...)
}

// acceptedBatch gives a new merchant funds in its Benin TEST wallet, whitelists the loopback
// address for its keys and has body accepted as a batch by its PAYOUT key.
func (ps *paymentStack) acceptedBatch(t *testing.T, funds string, body map[string]any) (*account, sika.PayoutBatch) {
	t.Helper()
	acct := ps.newAccount(t, true)
	whitelistLoopback(t, acct, sika.EnvironmentTest)
	fund(t, acct, "BJ", "MTN_BJ", funds)
	r := ps.createBatch(t, acct, body)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	var b sika.PayoutBatch
	r.data(t, &b)
	return acct, b
}

func (ps *paymentStack) batch(t *testing.T, acct *account, id uuid.UUID) sika.PayoutBatch {
	t.Helper()
	r := ps.call(t, "GET", "/api/v1/payout-batches/"+id.String()+"/", nil, acct.key(sika.EnvironmentTest, sika.ScopeBoth)...)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var b sika.PayoutBatch
	r.data(t, &b)
	return b
}

// batchItems reads every item of a batch through the cursor list.
func (ps *paymentStack) batchItems(t *testing.T, acct *account, id uuid.UUID) []sika.PayoutBatchItem {
	t.Helper()
	var all []sika.PayoutBatchItem
	url := "/api/v1/payout-batches/" + id.String() + "/items/?page_size=100"
	for url != "" {
		r := ps.call(t, "GET", url, nil, acct.key(sika.EnvironmentTest, sika.ScopeBoth)...)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		var page struct {
			Next    *string                `json:"next"`
			Results []sika.PayoutBatchItem `json:"results"`
		}
		r.data(t, &page)
		all = append(all, page.Results...)
		url = ""
		if page.Next != nil {
			url = *page.Next
		}
	}
	return all
}

// endedBatch waits for a batch to end.
func (ps *paymentStack) endedBatch(t *testing.T, acct *account, id uuid.UUID, within time.Duration) sika.PayoutBatch {
	t.Helper()
	var b sika.PayoutBatch
	require.Eventually(t, func() bool {
		b = ps.batch(t, acct, id)
		return b.Status.Final()
	}, within, 200*time.Millisecond, "batch %s still %s: %+v", id, b.Status, b.Progress)
	return b
}

// progressOf is the count and debited sum of a status in a batch's progress.
func progressOf(b sika.PayoutBatch, status sika.PayoutBatchItemStatus) (int, string) {
	for _, p := range b.Progress {
		if p.Status == status {
			return p.Count, sika.FormatAmount(p.DebitedAmount.Decimal)
		}
	}
	return 0, "0.00"
}

// batchLedger is the sum of the ledger entries that name a batch, by type.
func batchLedger(t *testing.T, id uuid.UUID) map[sika.LedgerType]string {
	t.Helper()
	rows, err := testStore.Pool().Query(context.Background(), `SELECT type, sum(amount) FROM ledger_entries
		WHERE payout_batch_id = $1 GROUP BY type`, id)
	require.NoError(t, err)
	defer rows.Close()
	out := map[sika.LedgerType]string{}
	for rows.Next() {
		var typ sika.LedgerType
		var sum decimal.Decimal
		require.NoError(t, rows.Scan(&typ, &sum))
		out[typ] = sika.FormatAmount(sum)
	}
	require.NoError(t, rows.Err())
	return out
}

func walletFigures(w sika.Wallet) (available, pending string) {
	return sika.FormatAmount(w.AvailableAmount.Decimal), sika.FormatAmount(w.PendingAmount.Decimal)
}

func TestPayoutBatchOverBalanceIsRefusedWhole(t *testing.T) {
	ps := payments(t)
	acct := ps.newAccount(t, true)
	whitelistLoopback(t, acct, sika.EnvironmentTest)
	fund(t, acct, "BJ", "MTN_BJ", "5000")

	// 3 × 1,700 = 5,100 (DEDUCTED: each item takes its amount, fee inside) > 5,000.
	r := ps.createBatch(t, acct, batchOf(3, "1700", "123"))
	require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s", r.Body)
	assert.Equal(t, "insufficient_balance", r.code())

	available, pending := walletFigures(ps.wallet(t, acct))
	assert.Equal(t, "5000.00", available, "nothing held")
	assert.Equal(t, "0.00", pending)
	list := ps.call(t, "GET", "/api/v1/payout-batches/", nil, acct.key(sika.EnvironmentTest, sika.ScopeBoth)...)
	require.Equal(t, http.StatusOK, list.Status, "%s", list.Body)
	assert.Contains(t, string(list.Env.Data), `"results":[]`, "no batch written")

	// The same batch that fits (3 × 1,600 = 4,800) is accepted.
	r = ps.createBatch(t, acct, batchOf(3, "1600", "009"))
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
}

func TestPayoutBatchRowErrorsNameTheItems(t *testing.T) {
	ps := payments(t)
	acct := ps.newAccount(t, true)
	whitelistLoopback(t, acct, sika.EnvironmentTest)
	fund(t, acct, "BJ", "MTN_BJ", "100000")

	body := batchOf(8, "1000", "123")
	items := body["items"].([]map[string]any)
	items[1]["amount"] = "12.345"
	items[2]["reference"] = "row-000" // used by item 0
	delete(items[3], "network")       // 97003123: outside Benin's plan since 2024, the network cannot be told (LOW)
	items[4]["amount"] = "5000000"    // over MTN_BJ's limit: refused as the item's whole
	items[5]["colour"] = "blue"       // unknown field of an item
	delete(items[6], "network")       // 0197006123: MTN's prefix, possibly ported (MEDIUM): taken as MTN_BJ
	items[6]["phone"] = "0197006123"
	delete(items[7], "network") // no number to tell it from
	delete(items[7], "phone")
	r := ps.createBatch(t, acct, body)
	require.Equal(t, http.StatusBadRequest, r.Status, "%s", r.Body)
	f := r.fields()
	assert.Contains(t, f, "items[1].amount")
	assert.Contains(t, f, "items[2].reference")
	assert.Contains(t, f, "items[3].network")
	assert.Contains(t, f, "items[4]")
	assert.Contains(t, f, "items[5].colour")
	assert.Contains(t, f, "items[7].network", "no number to tell it from")
	assert.NotContains(t, f, "items[0].reference", "the first use of a reference is fine")
	assert.NotContains(t, f, "items[6].network", "a network told from the number")
	assert.Len(t, f, 6, "only the invalid items: %v", f)

	available, pending := walletFigures(ps.wallet(t, acct))
	assert.Equal(t, "100000.00", available, "nothing moved")
	assert.Equal(t, "0.00", pending)

	for _, bad := range []map[string]any{{}, {"items": []any{}}, batchOf(sika.MaxPayoutBatchItems+1, "100", "123")} {
		r := ps.createBatch(t, acct, bad)
		require.Equal(t, http.StatusBadRequest, r.Status, "%s", r.Body)
		assert.Contains(t, r.fields(), "items")
	}

	// A description too long is named with the items' errors, in the same 400.
	body = batchOf(3, "1000", "123")
	body["description"] = strings.Repeat("d", 501)
	body["items"].([]map[string]any)[2]["amount"] = "12.345"
	r = ps.createBatch(t, acct, body)
	require.Equal(t, http.StatusBadRequest, r.Status, "%s", r.Body)
	assert.Equal(t, []string{"description", "items[2].amount"}, slices.Sorted(maps.Keys(r.fields())), "%s", r.Body)
	delete(body, "items")
	r = ps.createBatch(t, acct, body)
	require.Equal(t, http.StatusBadRequest, r.Status, "%s", r.Body)
	assert.Equal(t, []string{"description", "items"}, slices.Sorted(maps.Keys(r.fields())), "%s", r.Body)
}

func TestPayoutBatchHoldsItsTotalAndCompletes(t *testing.T) {
	ps := payments(t)
	acct := ps.newAccount(t, true)
	whitelistLoopback(t, acct, sika.EnvironmentTest)
	fund(t, acct, "BJ", "MTN_BJ", "10000")

	body := map[string]any{"description": "Cash-back", "items": []map[string]any{
		batchItem("a", "1000", "97100009"), // SUCCESS after 20 ticks
		batchItem("b", "2000", "97200004"), // PENDING for seconds, then FAILED expired: released
		batchItem("c", "3000", "97300123"), // SUCCESS after one tick
	}}
	key := uuid.NewString()
	r := ps.createBatch(t, acct, body, "Idempotency-Key", key)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	var b sika.PayoutBatch
	r.data(t, &b)
	assert.Equal(t, sika.BatchProcessing, b.Status)
	assert.Equal(t, 3, b.ItemCount)
	require.Len(t, b.Totals, 1)
	assert.Equal(t, "6000.00", sika.FormatAmount(b.Totals[0].DebitedAmount.Decimal), "DEDUCTED: the amounts, fees inside")
	assert.Equal(t, "5940.00", sika.FormatAmount(b.Totals[0].NetAmount.Decimal), "1 % payout fee")

	// The hold is the batch's total, whether its items are sent yet or not (a success only
	// settles pending; only the failure, seconds later, gives back to available).
	available, _ := walletFigures(ps.wallet(t, acct))
	assert.Equal(t, "4000.00", available)
	assert.Equal(t, "6000.00", batchLedger(t, b.ID)[sika.LedgerPayoutHold])

	// The same key and body answer the same batch; nothing more is held.
	again := ps.createBatch(t, acct, body, "Idempotency-Key", key)
	require.Equal(t, http.StatusCreated, again.Status, "%s", again.Body)
	assert.Equal(t, "true", again.Header.Get("Idempotent-Replayed"))
	var b2 sika.PayoutBatch
	again.data(t, &b2)
	assert.Equal(t, b.ID, b2.ID)

	ended := ps.endedBatch(t, acct, b.ID, 90*time.Second)
	assert.Equal(t, sika.BatchCompleted, ended.Status)
	n, sum := progressOf(ended, sika.ItemSucceeded)
	assert.Equal(t, 2, n)
	assert.Equal(t, "4000.00", sum)
	n, sum = progressOf(ended, sika.ItemFailed)
	assert.Equal(t, 1, n)
	assert.Equal(t, "2000.00", sum)

	available, pending := walletFigures(ps.wallet(t, acct))
	assert.Equal(t, "6000.00", available, "the failed item's 2,000 came back")
	assert.Equal(t, "0.00", pending)
	assert.Equal(t, "6000.00", batchLedger(t, b.ID)[sika.LedgerPayoutReversal], "each item's share moved to its payout")

	items := ps.batchItems(t, acct, b.ID)
	require.Len(t, items, 3)
	for i, it := range items {
		assert.Equal(t, i, it.Index, "in the batch's order")
		require.NotNil(t, it.Transaction)
		d := ps.detail(t, acct, *it.Transaction)
		assert.Equal(t, sika.TypePayout, d.Type)
		assert.Equal(t, string(it.Status), string(d.Status))
		assert.Equal(t, it.Phone, d.Recipient)
		assert.Equal(t, sika.FormatAmount(it.DebitedAmount.Decimal), sika.FormatAmount(d.DebitedAmount.Decimal))
		assert.Contains(t, string(d.Metadata), b.ID.String())
	}
	assert.Equal(t, "expired", items[1].FailureCode)

	csvResp := ps.call(t, "GET", "/api/v1/payout-batches/"+b.ID.String()+"/results/", nil, acct.key(sika.EnvironmentTest, sika.ScopePayin)...)
	require.Equal(t, http.StatusOK, csvResp.Status, "%s", csvResp.Body)
	rows, err := csv.NewReader(strings.NewReader(string(csvResp.Body))).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 4)
	assert.Equal(t, payoutBatchResultsHeader, rows[0])
	assert.Equal(t, []string{"1", "b", "FAILED", "2000.00"}, rows[2][:4])

	events, _, err := testStore.ListEvents(context.Background(), acct.Merchant.ID, sika.EnvironmentTest, sika.ScopeBoth, store.KeysetRequest{Limit: 100})
	require.NoError(t, err)
	var completed []sika.Event
	for _, e := range events {
		if e.Type == sika.EventPayoutBatchCompleted {
			completed = append(completed, e.Event)
		}
	}
	require.Len(t, completed, 1, "payout_batch.completed once")
	var data sika.PayoutBatch
	require.NoError(t, json.Unmarshal(completed[0].Data, &data))
	assert.Equal(t, b.ID, data.ID)
	assert.Equal(t, sika.BatchCompleted, data.Status)
}

// TestPayoutBatchCancelReleasesTheUnsentItems: 30 items of 1,000 that stay PENDING for seconds
// (then fail, expired); 20 are sent at once (the batch's concurrency), the others wait. Two
// cancels at once cancel the items not sent and release their share once; the items sent end
// (their holds released by their own failure) and the batch ends CANCELLED.
func TestPayoutBatchCancelReleasesTheUnsentItems(t *testing.T) {
	ps := payments(t)
	acct, b := ps.acceptedBatch(t, "50000", batchOf(30, "1000", "004"))
	sentOf := func(b sika.PayoutBatch) int {
		n := 0
		for _, st := range []sika.PayoutBatchItemStatus{sika.ItemPending, sika.ItemSucceeded, sika.ItemFailed} {
			c, _ := progressOf(b, st)
			n += c
		}
		return n
	}
	require.Eventually(t, func() bool { return sentOf(ps.batch(t, acct, b.ID)) >= 20 }, 60*time.Second, 50*time.Millisecond, "20 items sent")

	var wg sync.WaitGroup
	answers := make([]*response, 2)
	for i := range answers {
		wg.Go(func() {
			answers[i] = ps.call(t, "POST", "/api/v1/payout-batches/"+b.ID.String()+"/cancel/", nil, acct.key(sika.EnvironmentTest, sika.ScopePayout)...)
		})
	}
	wg.Wait()
	for _, a := range answers {
		require.Equal(t, http.StatusOK, a.Status, "%s", a.Body)
	}
	cancelled := ps.batch(t, acct, b.ID)
	require.NotNil(t, cancelled.CancelRequestedAt)
	nCancelled, sum := progressOf(cancelled, sika.ItemCancelled)
	assert.Positive(t, nCancelled, "the items beyond the concurrency were still queued")
	assert.Equal(t, sika.FormatAmount(decimal.NewFromInt(int64(1000*nCancelled))), sum)
	assert.Equal(t, 30, nCancelled+sentOf(cancelled), "every item sent or cancelled")

	ended := ps.endedBatch(t, acct, b.ID, 120*time.Second)
	assert.Equal(t, sika.BatchCancelled, ended.Status)
	n, _ := progressOf(ended, sika.ItemFailed)
	assert.Equal(t, 30-nCancelled, n, "the items sent ended (expired)")
	n, _ = progressOf(ended, sika.ItemCancelled)
	assert.Equal(t, nCancelled, n)
	assert.Equal(t, "30000.00", batchLedger(t, b.ID)[sika.LedgerPayoutReversal],
		"each item's share left the batch's hold once: moved to its payout or released by the cancel")
	available, pending := walletFigures(ps.wallet(t, acct))
	assert.Equal(t, "50000.00", available, "the cancelled items released, the failed payouts released")
	assert.Equal(t, "0.00", pending)

	again := ps.call(t, "POST", "/api/v1/payout-batches/"+b.ID.String()+"/cancel/", nil, acct.key(sika.EnvironmentTest, sika.ScopePayout)...)
	assert.Equal(t, http.StatusConflict, again.Status, "%s", again.Body)
	assert.Equal(t, "not_pending", again.code())
}

// TestPayoutBatchCancelRacesDispatch cancels a batch (twice at once) while its workflow is
// sending its first items: every item ends either sent or cancelled, never both, and the
// wallet gives exactly the items sent.
func TestPayoutBatchCancelRacesDispatch(t *testing.T) {
	ps := payments(t)
	acct, b := ps.acceptedBatch(t, "100000", batchOf(40, "1000", "123"))
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			a := ps.call(t, "POST", "/api/v1/payout-batches/"+b.ID.String()+"/cancel/", nil, acct.key(sika.EnvironmentTest, sika.ScopePayout)...)
			assert.Contains(t, []int{http.StatusOK, http.StatusConflict}, a.Status, "%s", a.Body)
		})
	}
	wg.Wait()
	ended := ps.endedBatch(t, acct, b.ID, 120*time.Second)
	items := ps.batchItems(t, acct, b.ID)
	require.Len(t, items, 40)
	sent := 0
	for _, it := range items {
		switch it.Status {
		case sika.ItemCancelled:
			assert.Nil(t, it.Transaction, "a cancelled item was never sent")
		case sika.ItemSucceeded:
			require.NotNil(t, it.Transaction)
			sent++
		default:
			t.Errorf("item %d ended %s", it.Index, it.Status)
		}
	}
	if sent < 40 {
		assert.Equal(t, sika.BatchCancelled, ended.Status)
	}
	available, pending := walletFigures(ps.wallet(t, acct))
	assert.Equal(t, sika.FormatAmount(decimal.NewFromInt(int64(100000-1000*sent))), available, "%d items sent", sent)
	assert.Equal(t, "0.00", pending)
}

// TestPayoutBatchContinuesAsNewOnTheDevServer runs a batch of more items than one workflow run
// sends (workflows.BatchItemsPerRun) on the real dev server and worker: its workflow continues
// as new, and every item is paid exactly once.
func TestPayoutBatchContinuesAsNewOnTheDevServer(t *testing.T) {
	ps := payments(t)
	n := workflows.BatchItemsPerRun + 5
	acct, b := ps.acceptedBatch(t, "100000", batchOf(n, "200", "123"))
	ended := ps.endedBatch(t, acct, b.ID, 5*time.Minute)
	assert.Equal(t, sika.BatchCompleted, ended.Status)
	done, _ := progressOf(ended, sika.ItemSucceeded)
	assert.Equal(t, n, done)

	items := ps.batchItems(t, acct, b.ID)
	require.Len(t, items, n)
	seen := map[uuid.UUID]bool{}
	for i, it := range items {
		assert.Equal(t, i, it.Index)
		require.NotNil(t, it.Transaction, "item %d", i)
		assert.False(t, seen[*it.Transaction], "item %d shares a payout", i)
		seen[*it.Transaction] = true
	}
	var payouts int
	require.NoError(t, testStore.Pool().QueryRow(t.Context(), `SELECT count(*) FROM transactions
		WHERE merchant_id = $1 AND transaction_type = 'RETRAIT'`, acct.Merchant.ID).Scan(&payouts))
	assert.Equal(t, n, payouts, "one payout per item, none twice")
	available, pending := walletFigures(ps.wallet(t, acct))
	assert.Equal(t, sika.FormatAmount(decimal.NewFromInt(int64(100000-200*n))), available)
	assert.Equal(t, "0.00", pending)

	// The run that ended the batch was continued from an earlier one.
	it := ps.temporal.GetWorkflowHistory(t.Context(), workflows.PayoutBatchWorkflowID(b.ID), "", false, 0)
	first, err := it.Next()
	require.NoError(t, err)
	started := first.GetWorkflowExecutionStartedEventAttributes()
	require.NotNil(t, started)
	assert.NotEmpty(t, started.GetContinuedExecutionRunId(), "the batch's workflow continued as new")
}
