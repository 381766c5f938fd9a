package api

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/gateway"
	"github.com/sikahq/sika/gateway/sandbox"
	"github.com/sikahq/sika/workflows"
)

// payResponse is the softpay answer.
type payResponse struct {
	sika.Transaction
	NextAction gateway.NextAction `json:"next_action"`
}

func (ps *paymentStack) softpay(t *testing.T, acct *account, body map[string]any, headers ...string) *response {
	t.Helper()
	return ps.call(t, "POST", "/api/v1/payments/softpay/", body, append(acct.key(sika.EnvironmentTest, sika.ScopePayin), headers...)...)
}

// pay starts a payment and returns it.
func (ps *paymentStack) pay(t *testing.T, acct *account, body map[string]any) payResponse {
	t.Helper()
	r := ps.softpay(t, acct, body)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	var p payResponse
	r.data(t, &p)
	return p
}

func benin(phone string) map[string]any {
	return map[string]any{"amount": "1000", "currency": "XOF", "country": "BJ", "network": "MTN_BJ",
		"customer_phone": phone, "customer_name": "Koffi Mensah", "customer_email": "koffi@example.com", "description": "Order 42"}
}

// detail reads a transaction with its attempts and status logs.
func (ps *paymentStack) detail(t *testing.T, acct *account, id uuid.UUID) sika.TransactionDetail {
	t.Helper()
	var d sika.TransactionDetail
	ps.call(t, "GET", "/api/v1/transactions/"+id.String()+"/", nil, acct.key(sika.EnvironmentTest, sika.ScopePayin)...).data(t, &d)
	return d
}

// settle is how long a test waits for what a sound run does in a few seconds: tests run beside
// other packages' on a machine that may be loaded, and the shared Temporal dev server can then
// take many seconds to deliver a task. A longer wait costs nothing when all is well.
const settle = time.Minute

// final waits until the transaction leaves PENDING (within is what a sound run needs; the wait
// is at least settle); when it does not, the failure says where its workflow stands, so that a
// payment stuck in a shared run can be diagnosed from the log.
func (ps *paymentStack) final(t *testing.T, acct *account, id uuid.UUID, within time.Duration) sika.TransactionDetail {
	t.Helper()
	within = max(within, settle)
	var d sika.TransactionDetail
	if !assert.EventuallyWithT(t, func(c *assert.CollectT) {
		d = ps.detail(t, acct, id)
		assert.True(c, d.Status.Final(), "status %s", d.Status)
	}, within, 50*time.Millisecond, "transaction %s still PENDING", id) {
		ps.explainPending(t, id)
		t.FailNow()
	}
	return d
}

// explainPending logs a pending payment's workflow (status, history with each failed task's
// reason, pending activities) and its outbox rows.
func (ps *paymentStack) explainPending(t *testing.T, id uuid.UUID) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// The transaction's workflow, whatever its type.
	var wid string
	for _, w := range []string{workflows.PaymentWorkflowID(id), workflows.PayoutWorkflowID(id), workflows.RefundWorkflowID(id)} {
		if _, err := ps.temporal.DescribeWorkflowExecution(ctx, w, ""); err == nil || wid == "" {
			wid = w
			if err == nil {
				break
			}
		}
	}
	if desc, err := ps.temporal.DescribeWorkflowExecution(ctx, wid, ""); err != nil {
		t.Logf("%s: describe: %v", wid, err)
	} else {
		info := desc.WorkflowExecutionInfo
		t.Logf("%s: %v on %s, %d events, %d pending activities", wid, info.Status, info.TaskQueue, info.HistoryLength, len(desc.PendingActivities))
		if wt := desc.PendingWorkflowTask; wt != nil {
			t.Logf("%s: workflow task %v, attempt %d, scheduled %s, started %s", wid, wt.State, wt.Attempt,
				wt.ScheduledTime.AsTime().Format("15:04:05.000"), wt.StartedTime.AsTime().Format("15:04:05.000"))
		}
		it := ps.temporal.GetWorkflowHistory(ctx, wid, "", false, 0)
		for it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				t.Logf("%s: history: %v", wid, err)
				break
			}
			t.Logf("  %s %v %s", ev.EventTime.AsTime().Format("15:04:05.000"), ev.EventType,
				ev.GetWorkflowTaskFailedEventAttributes().GetFailure().GetMessage())
		}
	}
	rows, err := testStore.Pool().Query(ctx, `SELECT workflow_type || ' attempts=' || attempts || ' next=' || next_attempt_at::text || ' error=' || last_error
		FROM workflow_outbox WHERE workflow_id = $1`, wid)
	if err == nil {
		var outbox []string
		for rows.Next() {
			var s string
			if rows.Scan(&s) == nil {
				outbox = append(outbox, s)
			}
		}
		rows.Close()
		t.Logf("%s: outbox rows %q", wid, outbox)
	}
	// What the worker's goroutines are doing (a worker that stopped taking tasks shows here).
	dump := filepath.Join(artifactsDir(t), "goroutines-"+strings.ReplaceAll(t.Name(), "/", "_")+".txt")
	if f, err := os.Create(dump); err == nil {
		_ = pprof.Lookup("goroutine").WriteTo(f, 1)
		_ = f.Close()
		t.Logf("goroutines of the test process: %s", dump)
	}
}

func (ps *paymentStack) balances(t *testing.T, acct *account) []sika.Wallet {
	t.Helper()
	var pg struct{ Results []sika.Wallet }
	ps.call(t, "GET", "/api/v1/merchant-balances/", nil, acct.key(sika.EnvironmentTest, sika.ScopePayin)...).data(t, &pg)
	return pg.Results
}

func (ps *paymentStack) ledger(t *testing.T, acct *account) []sika.LedgerEntry {
	t.Helper()
	var pg struct{ Results []sika.LedgerEntry }
	ps.call(t, "GET", "/api/v1/merchant-ledger-entries/", nil, acct.key(sika.EnvironmentTest, sika.ScopePayin)...).data(t, &pg)
	return pg.Results
}

// pushes returns the sandbox operations of a transaction's attempts.
func (ps *paymentStack) operations(d sika.TransactionDetail) []sandbox.OperationView {
	refs := map[string]bool{}
	for _, a := range d.Attempts {
		refs[a.ID.String()] = true
	}
	var out []sandbox.OperationView
	for _, op := range ps.sandbox.Operations() {
		if refs[op.Reference] {
			out = append(out, op)
		}
	}
	return out
}

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func triggers(d sika.TransactionDetail) []string {
	var out []string
	for _, l := range d.StatusLogs {
		from := "null"
		if l.FromStatus != nil {
			from = string(*l.FromStatus)
		}
		out = append(out, from+">"+string(l.ToStatus)+"/"+string(l.TriggeredBy))
	}
	return out
}

func TestSoftpaySandboxSuffixes(t *testing.T) {
	ps := payments(t)
	type want struct {
		status   sika.TransactionStatus
		failure  string
		attempts []string // gateway:status
		logs     []string
		credited bool
	}
	success := want{sika.StatusSuccess, "", []string{"sandbox-a:SUCCESS"}, []string{"null>PENDING/CLIENT", "PENDING>SUCCESS/WEBHOOK_CALLBACK"}, true}
	cases := []struct {
		suffix string
		want   want
		within time.Duration
	}{
		{"123", success, 10 * time.Second},
		{"001", want{sika.StatusFailed, "payer_declined", []string{"sandbox-a:FAILED"}, []string{"null>PENDING/CLIENT", "PENDING>FAILED/WEBHOOK_CALLBACK"}, false}, 10 * time.Second},
		{"002", want{sika.StatusFailed, "insufficient_funds", []string{"sandbox-a:FAILED"}, []string{"null>PENDING/CLIENT", "PENDING>FAILED/WEBHOOK_CALLBACK"}, false}, 10 * time.Second},
		{"003", want{sika.StatusFailed, "invalid_number", []string{"sandbox-a:FAILED"}, []string{"null>PENDING/CLIENT", "PENDING>FAILED/SYSTEM"}, false}, 10 * time.Second},
		{"004", want{sika.StatusFailed, "expired", []string{"sandbox-a:FAILED"}, []string{"null>PENDING/CLIENT", "PENDING>FAILED/SYSTEM"}, false}, 20 * time.Second},
		{"005", want{sika.StatusSuccess, "", []string{"sandbox-a:FAILED", "sandbox-b:SUCCESS"}, []string{"null>PENDING/CLIENT", "PENDING>SUCCESS/WEBHOOK_CALLBACK"}, true}, 10 * time.Second},
		{"006", success, 15 * time.Second},
		{"007", want{sika.StatusSuccess, "", []string{"sandbox-a:SUCCESS"}, []string{"null>PENDING/CLIENT", "PENDING>SUCCESS/SYSTEM"}, true}, 15 * time.Second},
		{"008", success, 10 * time.Second},
		{"009", success, 15 * time.Second},
	}
	for _, c := range cases {
		t.Run(c.suffix, func(t *testing.T) {
			t.Parallel()
			acct := ps.newAccount(t, true)
			p := ps.pay(t, acct, benin("97000"+c.suffix))
			assert.Equal(t, sika.StatusPending, p.Status)
			assert.Equal(t, gateway.NextUSSDPush, p.NextAction.Type)
			assert.Equal(t, "+22997000"+c.suffix, p.CustomerPhone)
			d := ps.final(t, acct, p.ID, c.within)
			assert.Equal(t, c.want.status, d.Status)
			assert.Equal(t, c.want.failure, d.FailureCode)
			var attempts []string
			for _, a := range d.Attempts {
				attempts = append(attempts, a.Gateway+":"+string(a.Status))
			}
			assert.Equal(t, c.want.attempts, attempts)
			assert.Equal(t, c.want.logs, triggers(d))
			if c.suffix == "005" {
				assert.Equal(t, gateway.FailureGatewayUnavailable, d.Attempts[0].FailureCode)
			}
			for _, op := range ps.operations(d) {
				assert.Equal(t, 1, op.Pushes, "one push per attempt (%s)", op.Gateway)
			}

			// 008 sends late and duplicate callbacks: wait for them, nothing changes.
			if c.suffix == "008" {
				require.EventuallyWithT(t, func(c *assert.CollectT) {
					ops := ps.operations(d)
					assert.Len(c, ops, 1)
					assert.GreaterOrEqual(c, ops[0].CallbacksSent, 3, "two SUCCESS callbacks and a late PENDING one")
				}, settle, 20*time.Millisecond)
				again := ps.detail(t, acct, p.ID)
				assert.Equal(t, triggers(d), triggers(again))
			}
			wallets := ps.balances(t, acct)
			entries := ps.ledger(t, acct)
			if !c.want.credited {
				assert.Empty(t, entries)
				for _, w := range wallets {
					assert.True(t, w.AvailableAmount.IsZero())
				}
				return
			}
			require.Len(t, wallets, 1)
			assert.Equal(t, "BJ", wallets[0].Country)
			assert.Equal(t, "XOF", wallets[0].Currency)
			assert.Equal(t, "985.00", sika.FormatAmount(wallets[0].AvailableAmount.Decimal), "1000 less 1.5 %% (DEDUCTED by default)")
			assert.True(t, wallets[0].PendingAmount.IsZero())
			require.Len(t, entries, 1)
			e := entries[0]
			assert.Equal(t, sika.LedgerCollection, e.Type)
			assert.Equal(t, sika.Credit, e.Direction)
			assert.Equal(t, "985.00", sika.FormatAmount(e.Amount.Decimal))
			assert.Equal(t, "0.00", sika.FormatAmount(e.BalanceBefore.Decimal))
			assert.Equal(t, "985.00", sika.FormatAmount(e.BalanceAfter.Decimal))
			assert.Equal(t, p.ID, *e.Transaction)
		})
	}
}

func TestSoftpayPricingAndConversion(t *testing.T) {
	ps := payments(t)
	acct := ps.newAccount(t, true)
	p := ps.pay(t, acct, benin("97000123"))
	assert.Equal(t, "1000.00", sika.FormatAmount(p.RequestedAmount.Decimal))
	assert.Equal(t, "15.00", sika.FormatAmount(p.ClientFee.Decimal))
	assert.Equal(t, "1000.00", sika.FormatAmount(p.DebitedAmount.Decimal), "DEDUCTED: the customer pays the amount")
	assert.Equal(t, "985.00", sika.FormatAmount(p.NetAmount.Decimal))
	assert.Equal(t, "10.00", sika.FormatAmount(p.GatewayFee.Decimal))
	assert.Equal(t, "5.00", sika.FormatAmount(p.PlatformFee.Decimal))
	assert.Equal(t, sika.FeeDeducted, p.FeeChargeMode)
	assert.Equal(t, sika.TypePayment, p.Type)
	assert.Equal(t, sika.DirectionInbound, p.FlowDirection)
	assert.Regexp(t, `^PAY-\d{8}-[0-9A-Z]{10}$`, p.Reference)

	t.Run("the request's fee mode counts only with the override allowed", func(t *testing.T) {
		body := benin("97000123")
		body["fee_charge_mode"] = "ADD_ON"
		p := ps.pay(t, acct, body)
		assert.Equal(t, sika.FeeDeducted, p.FeeChargeMode, "silently ignored")
		_, err := testStore.Pool().Exec(t.Context(), `UPDATE merchant_settings SET allow_client_override = true WHERE merchant_id = $1`, acct.Merchant.ID)
		require.NoError(t, err)
		testStore.FlushReadCache() // as the notification of the change does, without waiting for it
		p = ps.pay(t, acct, body)
		assert.Equal(t, sika.FeeAddOn, p.FeeChargeMode)
		assert.Equal(t, "1015.00", sika.FormatAmount(p.DebitedAmount.Decimal), "ADD_ON: the customer pays the fee")
		assert.Equal(t, "1000.00", sika.FormatAmount(p.NetAmount.Decimal))
	})
	t.Run("another currency is converted at the current rate", func(t *testing.T) {
		body := benin("97000123")
		body["amount"], body["currency"] = "10", "EUR"
		p := ps.pay(t, acct, body)
		assert.Equal(t, "XOF", p.Currency)
		assert.Equal(t, "6559.00", sika.FormatAmount(p.RequestedAmount.Decimal), "10 EUR at 655.957 is 6559.57 XOF, rounded down to a whole XOF")
		require.NotNil(t, p.OriginalAmount)
		assert.Equal(t, "10.00", sika.FormatAmount(p.OriginalAmount.Decimal))
		assert.Equal(t, "EUR", *p.OriginalCurrency)
		assert.Equal(t, "655.957", p.ExchangeRate.String())
	})
}

func TestSoftpayValidation(t *testing.T) {
	ps := payments(t)
	acct := ps.newAccount(t, true)
	with := func(k string, v any) map[string]any {
		b := benin("97000123")
		if v == nil {
			delete(b, k)
		} else {
			b[k] = v
		}
		return b
	}
	cases := []struct {
		name   string
		body   map[string]any
		status int
		code   string
		field  string
	}{
		{"missing amount", with("amount", nil), 400, "", "amount"},
		{"float amount", with("amount", 1000), 400, "", "amount"},
		{"decimal XOF", with("amount", "1000.50"), 400, "", "amount"},
		{"zero", with("amount", "0"), 400, "", "amount"},
		{"bad phone", with("customer_phone", "12ab"), 400, "", "customer_phone"},
		{"foreign phone", with("customer_phone", "+2250707000001"), 400, "", "customer_phone"},
		{"unknown network", with("network", "NOPE_BJ"), 400, "", "network"},
		{"unknown country", with("country", "FR"), 400, "", "country"},
		{"no name", with("customer_name", nil), 400, "", "customer_name"},
		{"metadata not an object", with("metadata", []int{1}), 400, "", "metadata"},
		{"network of another country", with("network", "MTN_CI"), 422, "network_country_mismatch", ""},
		{"below the network minimum", with("amount", "50"), 422, "amount_out_of_range", ""},
		{"above the network maximum", with("amount", "5000000"), 422, "amount_out_of_range", ""},
		{"pre-payment OTP missing", map[string]any{"amount": "1000", "currency": "XOF", "country": "SN", "network": "ORANGE_SN",
			"customer_phone": "770000123", "customer_name": "Awa"}, 422, "otp_required", ""},
		{"no exchange rate", with("currency", "JPY"), 400, "", "currency"},
	}
	for _, c := range cases {
		r := ps.softpay(t, acct, c.body)
		assert.Equal(t, c.status, r.Status, "%s: %s", c.name, r.Body)
		if c.code != "" {
			assert.Equal(t, c.code, r.code(), c.name)
		}
		if c.field != "" {
			assert.Contains(t, r.fields(), c.field, c.name)
		}
	}
	_, err := testStore.Pool().Exec(t.Context(), `UPDATE networks SET is_active = false WHERE code = 'CELTIIS_BJ'`)
	require.NoError(t, err)
	testStore.FlushReadCache() // as the notification of the change does, without waiting for it
	t.Cleanup(func() {
		_, err := testStore.Pool().Exec(context.Background(), `UPDATE networks SET is_active = true WHERE code = 'CELTIIS_BJ'`)
		assert.NoError(t, err)
		testStore.FlushReadCache()
	})
	r := ps.softpay(t, acct, with("network", "CELTIIS_BJ"))
	assert.Equal(t, 422, r.Status)
	assert.Equal(t, "network_unavailable", r.code())
	r = ps.call(t, "POST", "/api/v1/payments/softpay/", benin("97000123"), acct.key(sika.EnvironmentTest, sika.ScopePayout)...)
	assert.Equal(t, 403, r.Status)
	assert.Equal(t, "api_key_scope_forbidden", r.code())
	r = ps.call(t, "POST", "/api/v1/payments/softpay/", benin("97000123"), acct.key(sika.EnvironmentLive, sika.ScopeBoth)...)
	assert.Equal(t, 422, r.Status, "no LIVE gateway is configured for the network yet")
	assert.Equal(t, "network_unavailable", r.code())
	var count int
	require.NoError(t, testStore.Pool().QueryRow(t.Context(), `SELECT count(*) FROM transactions WHERE merchant_id = $1`, acct.Merchant.ID).Scan(&count))
	assert.Zero(t, count, "nothing half-written")
}

func TestPrePaymentOTP(t *testing.T) {
	ps := payments(t)
	acct := ps.newAccount(t, true)
	body := map[string]any{"amount": "1000", "currency": "XOF", "country": "SN", "network": "ORANGE_SN",
		"customer_phone": "770000123", "customer_name": "Awa Diop", "otp": "000000"}
	p := ps.pay(t, acct, body)
	d := ps.final(t, acct, p.ID, 10*time.Second)
	assert.Equal(t, sika.StatusFailed, d.Status)
	assert.Equal(t, "invalid_otp", d.FailureCode)
	require.Len(t, d.Attempts, 1, "a refused OTP is not retried on another gateway")

	body["otp"] = sandbox.ValidOTP
	p = ps.pay(t, acct, body)
	d = ps.final(t, acct, p.ID, 10*time.Second)
	assert.Equal(t, sika.StatusSuccess, d.Status)
	var otp *string
	require.NoError(t, testStore.Pool().QueryRow(t.Context(), `SELECT otp FROM transactions WHERE id = $1`, p.ID).Scan(&otp))
	assert.Nil(t, otp, "the OTP is forgotten once used")
}

func TestPostPushOTP(t *testing.T) {
	ps := payments(t)
	acct := ps.newAccount(t, true)
	body := map[string]any{"amount": "1000", "currency": "XOF", "country": "TG", "network": "MOOV_TG",
		"customer_phone": "90000123", "customer_name": "Afi"}
	p := ps.pay(t, acct, body)
	assert.Equal(t, gateway.NextOTPConfirmation, p.NextAction.Type)
	key := acct.key(sika.EnvironmentTest, sika.ScopePayin)
	path := "/api/v1/payments/" + p.ID.String() + "/confirm-otp/"
	r := ps.call(t, "POST", path, map[string]string{"otp": "999999"}, key...)
	assert.Equal(t, 400, r.Status, "%s", r.Body)
	assert.Contains(t, r.fields(), "otp")
	assert.Equal(t, sika.StatusPending, ps.detail(t, acct, p.ID).Status, "a wrong code leaves the push waiting")
	r = ps.call(t, "POST", path, map[string]string{"otp": sandbox.ValidOTP}, key...)
	require.Equal(t, 200, r.Status, "%s", r.Body)
	d := ps.final(t, acct, p.ID, 10*time.Second)
	assert.Equal(t, sika.StatusSuccess, d.Status)
	r = ps.call(t, "POST", path, map[string]string{"otp": sandbox.ValidOTP}, key...)
	assert.Equal(t, 409, r.Status)
	assert.Equal(t, "not_pending", r.code())

	// A network without post-push OTP refuses a confirmation.
	p = ps.pay(t, acct, benin("97000004"))
	r = ps.call(t, "POST", "/api/v1/payments/"+p.ID.String()+"/confirm-otp/", map[string]string{"otp": "123456"}, key...)
	assert.Equal(t, 400, r.Status, "%s", r.Body)
	assert.Contains(t, r.fields(), "otp")
}

// The API answers a push payment before its workflow runs (the start follows the answer). Anything
// that then talks to the workflow starts it first if it is not there yet, and makes no second push.
func TestUpdateBeforeWorkflowStarts(t *testing.T) {
	ps := payments(t)
	acct := ps.newAccount(t, true)
	// Hold every slot of the after-the-answer starts, so the workflow does not exist yet (the
	// sweeper leaves rows younger than a second alone).
	for range cap(ps.Server.starts) {
		ps.Server.starts <- struct{}{}
	}
	var once sync.Once
	release := func() {
		once.Do(func() {
			for range cap(ps.Server.starts) {
				<-ps.Server.starts
			}
		})
	}
	defer release()
	p := ps.pay(t, acct, benin("97000010"))
	_, err := ps.temporal.DescribeWorkflowExecution(t.Context(), workflows.PaymentWorkflowID(p.ID), "")
	require.Error(t, err, "the workflow must not be running yet for this test to mean anything")

	// A confirmation on a network without post-push OTP is refused without a workflow.
	key := acct.key(sika.EnvironmentTest, sika.ScopePayin)
	r := ps.call(t, "POST", "/api/v1/payments/"+p.ID.String()+"/confirm-otp/", map[string]string{"otp": "123456"}, key...)
	assert.Equal(t, 400, r.Status, "%s", r.Body)
	assert.Contains(t, r.fields(), "otp")

	tx, err := testStore.Transaction(t.Context(), p.ID)
	require.NoError(t, err)
	var next gateway.NextAction
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	defer cancel()
	require.NoError(t, workflows.UpdateOperation(ctx, ps.temporal, tx, workflows.UpdateAwaitInitiation, nil, &next))
	assert.Equal(t, gateway.NextUSSDPush, next.Type)
	release()
	d := ps.final(t, acct, p.ID, 10*time.Second)
	assert.Equal(t, sika.StatusSuccess, d.Status)
	assert.Len(t, d.Attempts, 1, "the API's late start and the sweeper's start make no second push")
}

func TestRedirectNetwork(t *testing.T) {
	ps := payments(t)
	acct := ps.newAccount(t, true)
	p := ps.pay(t, acct, map[string]any{"amount": "1000", "currency": "XOF", "country": "CI", "network": "WAVE_CI",
		"customer_phone": "0707000123", "customer_name": "Yao"})
	assert.Equal(t, gateway.NextRedirect, p.NextAction.Type)
	assert.Contains(t, p.NextAction.URL, "/checkout/")
	resp, err := http.Get(p.NextAction.URL)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 200, resp.StatusCode)
	assert.Equal(t, sika.StatusSuccess, ps.final(t, acct, p.ID, 10*time.Second).Status)
}

func TestConcurrentSoftpayWithOneIdempotencyKey(t *testing.T) {
	ps := payments(t)
	acct := ps.newAccount(t, true)
	key := uuid.NewString()
	var wg sync.WaitGroup
	results := make([]*response, 20)
	for i := range results {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			results[i] = ps.softpay(t, acct, benin("97000123"), "Idempotency-Key", key)
		}(i)
	}
	wg.Wait()
	ids := map[string]bool{}
	for _, r := range results {
		switch r.Status {
		case 201:
			var p payResponse
			require.NoError(t, json.Unmarshal(r.Env.Data, &p))
			ids[p.ID.String()] = true
		case 409:
			assert.Equal(t, "idempotency_key_in_use", r.code())
		default:
			t.Errorf("unexpected %d: %s", r.Status, r.Body)
		}
	}
	assert.Len(t, ids, 1, "every success shows the same transaction")
	var count int
	require.NoError(t, testStore.Pool().QueryRow(t.Context(), `SELECT count(*) FROM transactions WHERE merchant_id = $1`, acct.Merchant.ID).Scan(&count))
	assert.Equal(t, 1, count)
	for id := range ids {
		d := ps.final(t, acct, uuid.MustParse(id), 10*time.Second)
		ops := ps.operations(d)
		require.Len(t, ops, 1)
		assert.Equal(t, 1, ops[0].Pushes)
	}
	replay := ps.softpay(t, acct, benin("97000123"), "Idempotency-Key", key)
	assert.Equal(t, "true", replay.Header.Get("Idempotent-Replayed"))
}

func TestRetryAndVerify(t *testing.T) {
	ps := payments(t)
	acct := ps.newAccount(t, true)
	key := acct.key(sika.EnvironmentTest, sika.ScopePayin)
	p := ps.pay(t, acct, benin("97000001"))
	require.Equal(t, sika.StatusFailed, ps.final(t, acct, p.ID, 10*time.Second).Status)

	r := ps.call(t, "POST", "/api/v1/payments/"+p.ID.String()+"/retry/", map[string]string{"customer_phone": "97000123"}, key...)
	require.Equal(t, 200, r.Status, "%s", r.Body)
	var retried payResponse
	r.data(t, &retried)
	assert.Equal(t, p.ID, retried.ID, "the same transaction")
	assert.Equal(t, sika.StatusPending, retried.Status)
	d := ps.final(t, acct, p.ID, 10*time.Second)
	assert.Equal(t, sika.StatusSuccess, d.Status)
	assert.Equal(t, "+22997000123", d.CustomerPhone)
	assert.Equal(t, []string{"null>PENDING/CLIENT", "PENDING>FAILED/WEBHOOK_CALLBACK", "FAILED>PENDING/CLIENT", "PENDING>SUCCESS/WEBHOOK_CALLBACK"}, triggers(d))
	require.Len(t, d.Attempts, 2, "a new attempt for the retry")
	assert.NotEqual(t, d.Attempts[0].ID, d.Attempts[1].ID)

	r = ps.call(t, "POST", "/api/v1/payments/"+p.ID.String()+"/retry/", nil, key...)
	assert.Equal(t, 409, r.Status)
	assert.Equal(t, "not_failed", r.code())

	t.Run("verify asks the gateway and records what it says", func(t *testing.T) {
		p := ps.pay(t, acct, benin("97000004")) // never approved by itself
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			assert.NotEmpty(c, ps.detail(t, acct, p.ID).Attempts)
		}, settle, 20*time.Millisecond)
		d := ps.detail(t, acct, p.ID)
		// The customer approves on the sandbox without any callback being processed yet.
		resp, err := http.Post(ps.sandboxURL()+"/sandbox/pushes/"+d.Attempts[0].ID.String()+"/approve", "application/json", nil)
		require.NoError(t, err)
		testStore.FlushReadCache() // as the notification of the change does, without waiting for it
		resp.Body.Close()
		r := ps.call(t, "GET", "/api/v1/payments/"+p.ID.String()+"/verify/", nil, key...)
		require.Equal(t, 200, r.Status, "%s", r.Body)
		assert.Equal(t, sika.StatusSuccess, ps.final(t, acct, p.ID, 5*time.Second).Status)
	})
}

// A retry whose first request died after its commit, before its response was stored, is taken
// over by the merchant's next request with the same Idempotency-Key once the claim's lease has
// passed; that request answers the run the first one started and starts no other, even when that
// run has failed again meanwhile (found by make chaos: one key, two runs).
func TestRetryTakenOverAfterItsRequestDiedStartsNoSecondRun(t *testing.T) {
	ps := payments(t)
	acct := ps.newAccount(t, true)
	p := ps.pay(t, acct, benin("97000001"))
	require.Equal(t, sika.StatusFailed, ps.final(t, acct, p.ID, 10*time.Second).Status)
	idem := "retry-" + uuid.NewString()
	headers := append(slices.Clone(acct.key(sika.EnvironmentTest, sika.ScopePayin)), "Idempotency-Key", idem)
	path := "/api/v1/payments/" + p.ID.String() + "/retry/"
	body := map[string]string{"customer_phone": "97000001"} // declined again

	r := ps.call(t, "POST", path, body, headers...)
	require.Equal(t, 200, r.Status, "%s", r.Body)
	// The process answering it dies after the commit: its claim is left without a response,
	// and the lease passes.
	tag, err := testStore.Pool().Exec(t.Context(), `UPDATE idempotency_keys SET completed_at = NULL, response_status = NULL,
		response_type = NULL, response_body = NULL, locked_until = now() - interval '1 second'
		WHERE merchant_id = $1 AND key = $2`, acct.Merchant.ID, idem)
	require.NoError(t, err)
	require.EqualValues(t, 1, tag.RowsAffected())
	require.Equal(t, sika.StatusFailed, ps.final(t, acct, p.ID, 10*time.Second).Status, "run 2 is declined too")

	r = ps.call(t, "POST", path, body, headers...)
	require.Equal(t, 200, r.Status, "%s", r.Body)
	var again payResponse
	r.data(t, &again)
	assert.Equal(t, p.ID, again.ID)
	assert.Equal(t, sika.StatusFailed, again.Status, "the payment as it stands, not a new run")
	d := ps.final(t, acct, p.ID, 10*time.Second)
	assert.Len(t, d.Attempts, 2, "one attempt per run: the first and the one retry")
	assert.Equal(t, []string{"null>PENDING/CLIENT", "PENDING>FAILED/WEBHOOK_CALLBACK", "FAILED>PENDING/CLIENT", "PENDING>FAILED/WEBHOOK_CALLBACK"}, triggers(d))

	r = ps.call(t, "POST", path, map[string]string{"customer_phone": "97000123"}, headers...)
	assert.Equal(t, 409, r.Status, "another body with the key: %s", r.Body)
	assert.Equal(t, "idempotency_key_reused", r.code())
}

func TestRetryOnAnotherNetworkIsPricedAgain(t *testing.T) {
	ps := payments(t)
	acct := ps.newAccount(t, true)
	_, err := testStore.Pool().Exec(t.Context(), `INSERT INTO pricing (merchant_id, environment, network_id, direction, fee_percent, fee_fixed, gateway_fee_percent)
		SELECT $1, 'TEST', id, 'INBOUND', 3, 0, 1 FROM networks WHERE code = 'CELTIIS_BJ'`, acct.Merchant.ID)
	require.NoError(t, err)
	testStore.FlushReadCache() // as the notification of the change does, without waiting for it
	p := ps.pay(t, acct, benin("97000002"))
	require.Equal(t, sika.StatusFailed, ps.final(t, acct, p.ID, 10*time.Second).Status)
	r := ps.call(t, "POST", "/api/v1/payments/"+p.ID.String()+"/retry/", map[string]string{"network": "CELTIIS_BJ", "customer_phone": "97000123"},
		acct.key(sika.EnvironmentTest, sika.ScopePayin)...)
	require.Equal(t, 200, r.Status, "%s", r.Body)
	var retried payResponse
	r.data(t, &retried)
	assert.Equal(t, "CELTIIS_BJ", retried.Network)
	assert.Equal(t, "30.00", sika.FormatAmount(retried.ClientFee.Decimal), "3 %% on CELTIIS_BJ for this merchant")
	assert.Equal(t, "970.00", sika.FormatAmount(retried.NetAmount.Decimal))
	d := ps.final(t, acct, p.ID, 10*time.Second)
	assert.Equal(t, sika.StatusSuccess, d.Status)
	assert.Equal(t, "970.00", sika.FormatAmount(ps.balances(t, acct)[0].AvailableAmount.Decimal))
}

func TestCallbacksAreAuthenticated(t *testing.T) {
	ps := payments(t)
	acct := ps.newAccount(t, true)
	p := ps.pay(t, acct, benin("97000004")) // stays pending
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.NotEmpty(c, ps.detail(t, acct, p.ID).Attempts)
	}, settle, 20*time.Millisecond)
	attempt := ps.detail(t, acct, p.ID).Attempts[0]
	require.Equal(t, "sandbox-a", attempt.Gateway)
	body := []byte(`{"type":"collection","reference":"` + attempt.ID.String() + `","gateway_reference":"x","status":"SUCCESS"}`)

	post := func(gw string, header http.Header) int {
		req, _ := http.NewRequest("POST", ps.url+"/gateway-callbacks/"+gw+"/", bytes.NewReader(body))
		for k, v := range header {
			req.Header[k] = v
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	assert.Equal(t, 401, post("sandbox-a", nil), "unsigned")
	assert.Equal(t, 404, post("nope", nil), "unknown gateway")
	// Correctly signed by sandbox-b, about sandbox-a's attempt: refused.
	_, secretB := sandbox.Credentials(ps.secret, "sandbox-b")
	assert.Equal(t, 404, post("sandbox-b", sandboxSignature(secretB, body)))
	assert.Equal(t, sika.StatusPending, ps.detail(t, acct, p.ID).Status)
	var kept bool
	require.NoError(t, testStore.Pool().QueryRow(t.Context(), `SELECT EXISTS (SELECT 1 FROM operator_answers WHERE attempt_id = $1)
		OR EXISTS (SELECT 1 FROM transaction_attempts WHERE id = $1 AND status = 'SUCCESS')`, attempt.ID).Scan(&kept))
	assert.False(t, kept, "another gateway's report is neither kept nor recorded")
	_, secretA := sandbox.Credentials(ps.secret, "sandbox-a")
	assert.Equal(t, 200, post("sandbox-a", sandboxSignature(secretA, body)))
	assert.Equal(t, sika.StatusSuccess, ps.final(t, acct, p.ID, 5*time.Second).Status)
}

// sandboxSignature signs a callback body the way the sandbox operator does.
func sandboxSignature(secret string, body []byte) http.Header {
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts + "."))
	m.Write(body)
	return http.Header{"Sandbox-Signature": {"t=" + ts + ",v1=" + hex.EncodeToString(m.Sum(nil))}}
}

func TestDashboardMoneyRoutesCheckStanding(t *testing.T) {
	ps := payments(t)
	inactive := ps.newAccount(t, false)
	r := ps.call(t, "POST", "/api/v1/payments/softpay/", benin("97000123"), inactive.dashboard(sika.EnvironmentLive)...)
	assert.Equal(t, 403, r.Status)
	assert.Equal(t, "merchant_inactive", r.code())
	r = ps.call(t, "POST", "/api/v1/payments/softpay/", benin("97000123"), inactive.dashboard(sika.EnvironmentTest)...)
	assert.Equal(t, 201, r.Status, "TEST works for inactive merchants: %s", r.Body)
	r = ps.call(t, "GET", "/api/v1/merchant-settings/", nil, inactive.dashboard(sika.EnvironmentLive)...)
	assert.Equal(t, 200, r.Status, "an inactive merchant still manages its account")
}

func TestPaymentBackPressure(t *testing.T) {
	ps := payments(t)
	acct := ps.newAccount(t, true)
	fund(t, acct, "BJ", "MTN_BJ", "50000")
	whitelistLoopback(t, acct, sika.EnvironmentTest)
	before := ps.wallet(t, acct)
	// One a second, in bursts of two: the third request and the payout right after are refused
	// (unless this machine takes a whole second between them).
	ps.cfg.PaymentAcceptPerSecond = 1
	defer func() { ps.cfg.PaymentAcceptPerSecond = 0 }()
	// The collections are declined by the sandbox (…001): the wallet compared below moves only
	// if a refused payout held something, not because an accepted payment was credited meanwhile.
	var accepted, refused int
	var started []uuid.UUID
	for range 3 {
		r := ps.softpay(t, acct, benin("97000001"))
		switch r.Status {
		case 201:
			accepted++
			var p payResponse
			r.data(t, &p)
			started = append(started, p.ID)
		case 503:
			refused++
			assert.Equal(t, "service_unavailable", r.code())
			assert.NotEmpty(t, r.Header.Get("Retry-After"))
		default:
			t.Errorf("unexpected %d: %s", r.Status, r.Body)
		}
	}
	assert.GreaterOrEqual(t, refused, 1, "past the cap the service pushes back")
	assert.GreaterOrEqual(t, accepted, 1)

	// Payouts share the budget (both start workflows): refused before anything is written.
	payouts, refusedPayouts := 0, 0
	for range 3 {
		r := ps.payout(t, acct, payoutBody("97000123"))
		switch r.Status {
		case 201:
			payouts++
		case 503:
			refusedPayouts++
			assert.Equal(t, "service_unavailable", r.code())
			assert.NotEmpty(t, r.Header.Get("Retry-After"))
		default:
			t.Errorf("unexpected %d: %s", r.Status, r.Body)
		}
	}
	assert.GreaterOrEqual(t, refusedPayouts, 1)
	var written int
	require.NoError(t, testStore.Pool().QueryRow(t.Context(), `SELECT count(*) FROM transactions WHERE merchant_id = $1 AND transaction_type = 'RETRAIT'`,
		acct.Merchant.ID).Scan(&written))
	assert.Equal(t, payouts, written, "a refused payout writes nothing")
	for _, id := range started { // what the test started ends before the balances are compared
		assert.Equal(t, sika.StatusFailed, ps.final(t, acct, id, settleWithin).Status)
	}
	if payouts == 0 {
		after := ps.wallet(t, acct)
		assert.Equal(t, before.AvailableAmount, after.AvailableAmount, "nothing held")
	}
}
