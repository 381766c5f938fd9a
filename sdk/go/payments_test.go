package sika

// Collections, a payout, idempotent replay, retries that keep the Idempotency-Key, and cursor
// iteration, against the service (sandbox).

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSoftpayReachesSuccess(t *testing.T) {
	dev := service(t)
	ctx := context.Background()
	c := client(t, dev, Options{})
	resp, err := c.SoftpayWithResponse(ctx, nil, softpayBody("123"))
	require.NoError(t, err)
	p := resp.JSON201.Data
	assert.Equal(t, TransactionStatusPENDING, p.Status)
	require.NotNil(t, p.NextAction)
	assert.Equal(t, NextActionTypeUssdPush, p.NextAction.Type)
	tx := final(t, ctx, c, p.Id)
	assert.Equal(t, TransactionStatusSUCCESS, tx.Status)
	assert.Len(t, tx.Attempts, 1)
}

func TestDeclinedPaymentRetriedSucceeds(t *testing.T) {
	dev := service(t)
	ctx := context.Background()
	c := client(t, dev, Options{})
	resp, err := c.SoftpayWithResponse(ctx, nil, softpayBody("001"))
	require.NoError(t, err)
	id := resp.JSON201.Data.Id
	failed := final(t, ctx, c, id)
	assert.Equal(t, TransactionStatusFAILED, failed.Status)
	assert.Equal(t, "payer_declined", failed.FailureCode)

	again, err := c.RetryPaymentWithResponse(ctx, id, nil, RetryPaymentJSONRequestBody{CustomerPhone: ptr("97000123")})
	require.NoError(t, err)
	assert.Equal(t, id, again.JSON200.Data.Id, "the same transaction")
	assert.Equal(t, TransactionStatusPENDING, again.JSON200.Data.Status)
	tx := final(t, ctx, c, id)
	assert.Equal(t, TransactionStatusSUCCESS, tx.Status)
	assert.Len(t, tx.Attempts, 2, "a new attempt")
}

func TestPayoutFromAFundedWallet(t *testing.T) {
	dev := service(t)
	ctx := context.Background()
	c := client(t, dev, Options{})
	body := softpayBody("123")
	body.Amount = "10000"
	funding, err := c.SoftpayWithResponse(ctx, nil, body)
	require.NoError(t, err)
	require.Equal(t, TransactionStatusSUCCESS, final(t, ctx, c, funding.JSON201.Data.Id).Status)

	balances, err := c.ListMerchantBalancesWithResponse(ctx, nil)
	require.NoError(t, err)
	i := slices.IndexFunc(balances.JSON200.Data.Results, func(b MerchantBalance) bool { return b.Country == "BJ" })
	require.GreaterOrEqual(t, i, 0, "a BJ wallet")
	available := decimal.RequireFromString(balances.JSON200.Data.Results[i].AvailableAmount)
	require.True(t, available.GreaterThanOrEqual(decimal.NewFromInt(2000)), "BJ wallet funded: %s", available)

	payout, err := c.InitializePayoutWithResponse(ctx, nil, InitializePayoutJSONRequestBody{
		Amount: "2000", Currency: "XOF", Country: "BJ", Method: "MTN_BJ", Recipient: "97000123", RecipientName: ptr("Ama"),
	})
	require.NoError(t, err)
	tx := final(t, ctx, c, payout.JSON201.Data.Id)
	assert.Equal(t, TransactionStatusSUCCESS, tx.Status)
	assert.Equal(t, FlowDirectionOUTBOUND, tx.FlowDirection)
}

func TestIdempotentReplay(t *testing.T) {
	dev := service(t)
	ctx := context.Background()
	c := client(t, dev, Options{})
	key := uuid.NewString()
	body := softpayBody("123")
	first, err := c.SoftpayWithResponse(ctx, &SoftpayParams{IdempotencyKey: &key}, body)
	require.NoError(t, err)
	again, err := c.SoftpayWithResponse(ctx, &SoftpayParams{IdempotencyKey: &key}, body)
	require.NoError(t, err)
	assert.Equal(t, http.StatusCreated, first.StatusCode())
	assert.Equal(t, http.StatusCreated, again.StatusCode())
	assert.Empty(t, first.HTTPResponse.Header.Get("Idempotent-Replayed"))
	assert.Equal(t, "true", again.HTTPResponse.Header.Get("Idempotent-Replayed"))
	assert.Equal(t, first.JSON201.Data.Id, again.JSON201.Data.Id, "the same payment")

	var found []UUID
	for tx, err := range All[Transaction](ctx, c, "/transactions/", url.Values{"search": {body.CustomerPhone}}) {
		require.NoError(t, err)
		found = append(found, tx.Id)
	}
	assert.Equal(t, []UUID{first.JSON201.Data.Id}, found, "one transaction")
}

// TestTriesOfOneKeyAtOnceMakeOnePayment sends the same softpay with the same Idempotency-Key ten
// times at once, as a merchant's retries after a timeout may while the first try still runs:
// the service answers all but one 409 idempotency_key_in_use meanwhile (TestErrorCodesFromTheService
// sees it without retries), which the client retries until it gets the stored answer. Every
// call answers the one payment. A few rounds make the overlap certain enough.
func TestTriesOfOneKeyAtOnceMakeOnePayment(t *testing.T) {
	dev := service(t)
	ctx := context.Background()
	// Enough retries for the first try to finish on a loaded machine (0.1 s doubling to 3.2 s).
	c := client(t, dev, Options{MaxRetries: 6})
	for round := range 5 {
		key, body := uuid.NewString(), softpayBody("123")
		var wg sync.WaitGroup
		ids := make([]UUID, 10)
		errs := make([]error, 10)
		for i := range ids {
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp, err := c.SoftpayWithResponse(ctx, &SoftpayParams{IdempotencyKey: &key}, body)
				if errs[i] = err; err == nil {
					ids[i] = resp.JSON201.Data.Id
				}
			}()
		}
		wg.Wait()
		for i, err := range errs {
			require.NoError(t, err, "round %d, call %d", round, i)
			assert.Equal(t, ids[0], ids[i], "round %d: the one payment", round)
		}
		var found int
		for tx, err := range All[Transaction](ctx, c, "/transactions/", url.Values{"search": {body.CustomerPhone}}) {
			require.NoError(t, err)
			assert.Equal(t, ids[0], tx.Id)
			found++
		}
		assert.Equal(t, 1, found, "round %d: one payment", round)
	}
}

// TestRetriesKeepTheIdempotencyKey puts a loopback proxy between the client and the service.
// The first time, it passes the softpay to the service and then cuts the connection instead of
// answering (the payment is made, its answer lost); or it answers 503 with Retry-After itself.
// The client retries with the same Idempotency-Key, and there is exactly one payment.
func TestRetriesKeepTheIdempotencyKey(t *testing.T) {
	dev := service(t)
	ctx := context.Background()
	target, err := url.Parse(dev.BaseURL)
	require.NoError(t, err)
	forward := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: target.Scheme, Host: target.Host})

	for _, fault := range []string{"connection cut after the service answered", "503 with Retry-After"} {
		t.Run(fault, func(t *testing.T) {
			var mu sync.Mutex
			var keys []string
			var tries atomic.Int32
			proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				keys = append(keys, r.Header.Get("Idempotency-Key"))
				mu.Unlock()
				if tries.Add(1) > 1 {
					forward.ServeHTTP(w, r)
					return
				}
				if fault == "503 with Retry-After" {
					w.Header().Set("Retry-After", "1")
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(http.StatusServiceUnavailable)
					_, _ = w.Write([]byte(`{"success":false,"error":{"code":"service_unavailable","message":"Try again."}}`))
					return
				}
				rec := httptest.NewRecorder()
				forward.ServeHTTP(rec, r)
				assert.Equal(t, http.StatusCreated, rec.Code, "the service made the payment: %s", rec.Body)
				conn, _, err := http.NewResponseController(w).Hijack()
				if assert.NoError(t, err) {
					conn.Close()
				}
			}))
			defer proxy.Close()

			c := client(t, dev, Options{BaseURL: proxy.URL + target.Path})
			body := softpayBody("123")
			started := time.Now()
			resp, err := c.SoftpayWithResponse(ctx, nil, body)
			require.NoError(t, err)
			assert.Equal(t, int32(2), tries.Load(), "one retry")
			require.Len(t, keys, 2)
			assert.NotEmpty(t, keys[0], "the client made a key")
			assert.Equal(t, keys[0], keys[1], "the retry kept it")
			if fault == "503 with Retry-After" {
				assert.GreaterOrEqual(t, time.Since(started), time.Second, "Retry-After honoured")
				assert.Empty(t, resp.HTTPResponse.Header.Get("Idempotent-Replayed"), "the first try reached nothing")
			} else {
				assert.Equal(t, "true", resp.HTTPResponse.Header.Get("Idempotent-Replayed"), "the answer of the payment made by the first try")
			}
			var found int
			for tx, err := range All[Transaction](ctx, client(t, dev, Options{}), "/transactions/", url.Values{"search": {body.CustomerPhone}}) {
				require.NoError(t, err)
				assert.Equal(t, resp.JSON201.Data.Id, tx.Id)
				found++
			}
			assert.Equal(t, 1, found, "one payment")
		})
	}
}

// TestCursorIteration makes 250 payments, 25 at a time. The service paces collections (50/s
// here): a burst is answered 503 with Retry-After, which the client retries with the same key,
// so there are exactly 250 transactions afterwards, none twice. Pages and All then walk them.
// The numbers end in 003 (refused by the operator at initiation): the 250 workflows end at
// once instead of each waiting for a callback, which keeps the worker's queue short.
func TestCursorIteration(t *testing.T) {
	dev := service(t)
	ctx := context.Background()
	// 25 callers share the service's collection pace: a call may meet its 503 many times over
	// (each Retry-After a second) before its turn; the retries bound that wait, generously.
	c := client(t, dev, Options{MaxRetries: 30})
	run := "Cursor " + uuid.NewString()[:8]
	var mu sync.Mutex
	var created []UUID
	var next atomic.Int32
	var wg sync.WaitGroup
	started := time.Now()
	for range 25 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= 250 {
				body := softpayBody("003")
				body.CustomerName = run
				resp, err := c.SoftpayWithResponse(ctx, nil, body)
				if !assert.NoError(t, err) {
					return
				}
				mu.Lock()
				created = append(created, resp.JSON201.Data.Id)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	require.Len(t, created, 250)
	t.Logf("created 250 payments in %s", time.Since(started).Round(time.Millisecond))

	var seen []UUID
	pages := 0
	for page, err := range Pages[Transaction](ctx, c, "/transactions/", url.Values{"search": {run}, "page_size": {"40"}}) {
		require.NoError(t, err)
		pages++
		assert.LessOrEqual(t, len(page.Results), 40)
		assert.Nil(t, page.Count, "a cursor list has no count")
		for _, tx := range page.Results {
			seen = append(seen, tx.Id)
		}
	}
	assert.Equal(t, 7, pages, "250 / 40 → 7 pages")
	assert.ElementsMatch(t, created, seen, "each transaction once")

	count := 0
	for tx, err := range All[Transaction](ctx, c, "/transactions/", url.Values{"search": {run}, "page_size": {"200"}}) {
		require.NoError(t, err)
		assert.Equal(t, run, tx.CustomerName)
		count++
		if count == 210 {
			break // stopping early ends the iteration
		}
	}
	assert.Equal(t, 210, count)

	// The 250 payments end before the next test, so that it does not wait behind them in the
	// worker's queue on a busy machine.
	require.Eventually(t, func() bool {
		for page, err := range Pages[Transaction](ctx, c, "/transactions/", url.Values{"search": {run}, "status": {"PENDING"}, "page_size": {"1"}}) {
			return err == nil && len(page.Results) == 0
		}
		return false
	}, 3*time.Minute, 500*time.Millisecond, "the 250 payments end")
}

// TestPageNumberIteration walks a page-numbered list (the network catalogue) with Pages and
// All: every page but the last is full, each carries the total count, and the items add up to
// it, each once.
func TestPageNumberIteration(t *testing.T) {
	dev := service(t)
	ctx := context.Background()
	c := client(t, dev, Options{})
	var codes []string
	total, pages := -1, 0
	for page, err := range Pages[Network](ctx, c, "/networks/", url.Values{"page_size": {"10"}}) {
		require.NoError(t, err)
		pages++
		require.NotNil(t, page.Count, "a page-numbered list has a count")
		total = *page.Count
		if page.Next != nil {
			assert.Len(t, page.Results, 10)
		}
		for _, n := range page.Results {
			codes = append(codes, n.Code)
		}
	}
	require.Positive(t, total)
	assert.Equal(t, (total+9)/10, pages)
	assert.Len(t, codes, total)
	slices.Sort(codes)
	assert.Len(t, slices.Compact(codes), total, "each network once")

	count := 0
	for _, err := range All[Network](ctx, c, "/networks/", nil) {
		require.NoError(t, err)
		count++
	}
	assert.Equal(t, total, count)
}
