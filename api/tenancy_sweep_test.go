package api

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
)

// TestTenancySweep walks every operation of the OpenAPI document under /api/v1 and calls it
// with credentials that must not reach merchant A's objects: none, a revoked key, a key of the
// wrong scope, A's TEST key on A's LIVE ids, and merchant B's key and dashboard on A's ids
// (contract §3, §4). Every answer must be the contract's error, and never show A's object.

// sweepAccess is who may call an operation (the routeOpts.access of api/routes.go).
type sweepAccess int

const (
	sweepPublic    sweepAccess = iota // security: []
	sweepMember                       // a dashboard session, no merchant
	sweepMerchant                     // an API key or a dashboard session
	sweepDashboard                    // a dashboard session only: an API key gets 403 dashboard_only
	sweepStaff                        // a staff session only: others get 403 admin_only
)

// sweepScopes are the operations that need an API-key scope (routeOpts.scope of routes.go,
// checkout.go and paymentlinks.go). A route missing here is checked as scope-free.
var sweepScopes = map[string]sika.Scope{
	"POST /payments/softpay/":              sika.ScopePayin,
	"POST /payments/softpay/initialize/":   sika.ScopePayin,
	"POST /payments/{id}/confirm-otp/":     sika.ScopePayin,
	"POST /payments/{id}/retry/":           sika.ScopePayin,
	"GET /payments/{id}/verify/":           sika.ScopePayin,
	"POST /payouts/initialize/":            sika.ScopePayout,
	"GET /payouts/{id}/verify/":            sika.ScopePayout,
	"POST /settlements/":                   sika.ScopePayout,
	"POST /wallet-transfers/":              sika.ScopePayout,
	"POST /refunds/":                       sika.ScopePayout,
	"POST /payout-batches/":                sika.ScopePayout,
	"POST /payout-batches/{id}/cancel/":    sika.ScopePayout,
	"POST /checkout-sessions/":             sika.ScopePayin,
	"GET /checkout-sessions/":              sika.ScopePayin,
	"GET /checkout-sessions/{id}/":         sika.ScopePayin,
	"POST /checkout-sessions/{id}/cancel/": sika.ScopePayin,
	"POST /payment-links/":                 sika.ScopePayin,
	"PATCH /payment-links/{id}/":           sika.ScopePayin,
	"PUT /payment-links/{id}/":             sika.ScopePayin,
	"DELETE /payment-links/{id}/":          sika.ScopePayin,
}

// sweepKinds maps a document path (its leading segments) to the kind of object its {id} names.
// Longest prefix first.
var sweepKinds = []struct{ prefix, kind string }{
	{"/admin/merchant-payout-methods/", "payout_method"},
	{"/admin/merchant-kyc/", "kyc_dossier"},
	{"/admin/merchants/", "merchant"},
	{"/admin/transactions/", "payment"},
	{"/admin/money-decisions/", "money_decision"},
	{"/admin/money-flags/", "money_flag"},
	{"/api-keys/", "api_key"},
	{"/ip-whitelist/", "ip_whitelist"},
	{"/countries/", "country"},
	{"/networks/", "network"},
	{"/payments/", "payment"},
	{"/payouts/", "payout"},
	{"/refunds/", "refund"},
	{"/payout-batches/", "payout_batch"},
	{"/checkout-sessions/", "checkout_session"},
	{"/payment-links/", "payment_link"},
	{"/merchant-payout-methods/", "payout_method"},
	{"/merchant-webhooks/", "webhook_endpoint"},
	{"/events/", "event"},
	{"/transactions/", "payment"},
	{"/transaction-attempts/", "attempt"},
	{"/transaction-status-logs/", "status_log"},
	{"/merchant-balances/", "wallet"},
	{"/merchant-ledger-entries/", "ledger_entry"},
	{"/merchant-kyc/files/", "kyc_file"},
	{"/merchant-kyc/", "kyc_dossier"},
}

// Objects without an environment (a dossier is the merchant's identity in TEST and LIVE) and
// objects nobody owns (the catalogue).
var (
	sweepEnvless = map[string]bool{"kyc_dossier": true, "kyc_file": true, "merchant": true}
	sweepGlobal  = map[string]bool{"country": true, "network": true}
)

// sweepBodies are well-formed bodies, so that a cross-tenant call reaches the object lookup
// instead of stopping at validation.
var sweepBodies = map[string]any{
	"POST /payments/{id}/confirm-otp/":            map[string]string{"otp": "123456"},
	"POST /payments/{id}/retry/":                  map[string]string{},
	"POST /checkout-sessions/{id}/cancel/":        map[string]string{},
	"PATCH /payment-links/{id}/":                  map[string]any{"name": "renamed"},
	"PUT /payment-links/{id}/":                    map[string]any{"name": "renamed", "amount": "5000", "currency": "XOF"},
	"PATCH /merchant-webhooks/{id}/":              map[string]any{"description": "renamed"},
	"POST /merchant-webhooks/{id}/rotate-secret/": map[string]string{},
	"POST /events/{id}/redeliver/":                map[string]string{},
	"POST /api-keys/{id}/revoke/":                 map[string]string{},
	"PATCH /admin/merchant-payout-methods/{id}/":  map[string]bool{"is_verified": true},
	"POST /admin/transactions/{id}/reverify/":     map[string]string{},
	"POST /admin/money-decisions/{id}/reject/":    map[string]string{"note": "no"},
	"POST /admin/money-flags/{id}/refund/":        map[string]string{"reason": "refund"},
	"POST /admin/money-flags/{id}/settle/":        map[string]string{"status": "FAILED", "reason": "release"},
	"POST /admin/merchant-kyc/{id}/approve/":      map[string]string{"review_note": "ok"},
	"POST /admin/merchant-kyc/{id}/reject/":       map[string]string{"review_note": "no"},
	"POST /admin/merchants/{id}/suspend/":         map[string]string{},
	"POST /admin/merchants/{id}/unsuspend/":       map[string]string{},
	"POST /merchant-kyc/{id}/documents/":          nil, // filled with A's uploaded file below
	"POST /payouts/{id}/approve/":                 map[string]string{"note": "ok"},
	"POST /payouts/{id}/reject/":                  map[string]string{"note": "no"},
	"POST /payout-batches/{id}/approve/":          map[string]string{"note": "ok"},
	"POST /payout-batches/{id}/reject/":           map[string]string{"note": "no"},
}

// sweepQueries are the required query parameters of an operation, so that a call reaches its
// answer instead of stopping at validation.
var sweepQueries = map[string]string{
	"GET /networks/predict/": "?phone=%2B2250707123456",
}

// sweepFixture is what merchant A owns, by environment and kind.
type sweepFixture struct {
	ids  map[sika.Environment]map[string]string // env → kind → id
	file [2]string                              // sha256, ext of A's KYC file
}

// forbidden are the ids of A's that an answer to c must not contain: A's LIVE objects for A's
// own TEST key, every object of A's for another merchant.
func (f *sweepFixture) forbidden(c sweepCase) []string {
	var ids []string
	for _, env := range []sika.Environment{sika.EnvironmentLive, sika.EnvironmentTest} {
		for kind, id := range f.ids[env] {
			sameMerchant := strings.HasPrefix(c.name, "d ")
			if sweepGlobal[kind] || (sameMerchant && (env != sika.EnvironmentLive || sweepEnvless[kind])) {
				continue
			}
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

func (f *sweepFixture) add(env sika.Environment, kind, id string) {
	if f.ids[env] == nil {
		f.ids[env] = map[string]string{}
	}
	f.ids[env][kind] = id
}

// sweepFund credits a wallet of acct in env through a completed payment (as fund does in TEST),
// which writes a wallet, a ledger entry and an event.
func sweepFund(t *testing.T, acct *account, env sika.Environment) {
	t.Helper()
	recordCollection(t, acct, env, "20000", "Funding", "", sika.StatusSuccess, "sweep funding")
}

// recordCollection records a collection of acct in env on MTN_BJ as the API and its workflow
// would, without a workflow: its creation (the status log's reason created), then its outcome
// (status, reason outcome). It returns its id.
func recordCollection(t *testing.T, acct *account, env sika.Environment, amount, customer, created string, status sika.TransactionStatus, outcome string) uuid.UUID {
	t.Helper()
	ctx := context.Background()
	n, err := testStore.NetworkByCode(ctx, "MTN_BJ")
	require.NoError(t, err)
	id, err := uuid.NewV7()
	require.NoError(t, err)
	ref, err := sika.NewReference("PAY", time.Now())
	require.NoError(t, err)
	a := sika.NewAmount(dec(amount))
	tx, outbox, _, err := testStore.CreateTransaction(ctx, store.NewTransaction{Transaction: sika.Transaction{
		ID: id, Reference: ref, Merchant: acct.Merchant.ID, Environment: env, Type: sika.TypePayment,
		RequestedAmount: a, DebitedAmount: a, NetAmount: a, Currency: "XOF", Country: "BJ",
		NetworkID: n.ID, Network: n.Code, CustomerName: customer, FeeChargeMode: sika.FeeDeducted,
	}, Reason: created}, store.WorkflowStart{ID: "funding-" + id.String(), Type: "none", Input: nil})
	require.NoError(t, err)
	require.NoError(t, testStore.DeleteOutbox(ctx, outbox))
	_, changed, err := testStore.CompletePayment(ctx, store.Completion{TransactionID: tx.ID, Run: 1, Status: status,
		Reason: outcome, TriggeredBy: sika.TriggerSystem})
	require.NoError(t, err)
	require.True(t, changed)
	return id
}

// sweepRefund records a refund of A's collection in env (its workflow is not started).
func sweepRefund(t *testing.T, payment uuid.UUID, acct *account, env sika.Environment) string {
	t.Helper()
	ctx := context.Background()
	p, err := testStore.TransactionByID(ctx, acct.Merchant.ID, env, payment)
	require.NoError(t, err)
	id, err := uuid.NewV7()
	require.NoError(t, err)
	ref, err := sika.NewReference("RFD", time.Now())
	require.NoError(t, err)
	a := sika.NewAmount(dec("100"))
	r, outbox, _, err := testStore.CreateRefund(ctx, store.NewTransaction{Transaction: sika.Transaction{
		ID: id, Reference: ref, Merchant: acct.Merchant.ID, Environment: env, Type: sika.TypeRefund, RefundedTransaction: &p.ID,
		RequestedAmount: a, DebitedAmount: a, NetAmount: a, Currency: p.Currency, Country: p.Country, NetworkID: p.NetworkID,
		Network: p.Network, Recipient: p.CustomerPhone, FeeChargeMode: sika.FeeAddOn,
	}, RefundVia: store.RefundViaPayout}, store.WorkflowStart{ID: "sweep-refund-" + id.String(), Type: "none", Input: nil})
	require.NoError(t, err)
	require.NoError(t, testStore.DeleteOutbox(ctx, outbox))
	return r.ID.String()
}

// sweepPayoutBatch records a batch of one payout of A's in env, its total held (its workflow is
// not started).
func sweepPayoutBatch(t *testing.T, acct *account, env sika.Environment) string {
	t.Helper()
	ctx := context.Background()
	n, err := testStore.NetworkByCode(ctx, "MTN_BJ")
	require.NoError(t, err)
	id, err := uuid.NewV7()
	require.NoError(t, err)
	ref, err := sika.NewReference("BAT", time.Now())
	require.NoError(t, err)
	a := sika.NewAmount(dec("100"))
	b, outbox, _, err := testStore.CreatePayoutBatch(ctx, store.NewPayoutBatch{
		Batch: sika.PayoutBatch{ID: id, Reference: ref, Merchant: acct.Merchant.ID, Environment: env, Status: sika.BatchProcessing,
			CreatedByMember: &acct.Member.ID},
		Items: []sika.PayoutBatchItem{{Reference: "one", RequestedAmount: a, DebitedAmount: a, NetAmount: a,
			FeeChargeMode: sika.FeeDeducted, Currency: "XOF", Country: "BJ", NetworkID: n.ID, Network: n.Code, Phone: "+22997000123"}},
	}, store.WorkflowStart{ID: "sweep-batch-" + id.String(), Type: "none", Input: nil})
	require.NoError(t, err)
	require.NoError(t, testStore.DeleteOutbox(ctx, outbox))
	return b.ID.String()
}

// newSweepFixture creates merchant A's objects in LIVE and TEST, through the API where a route
// creates them and through the store otherwise.
func newSweepFixture(t *testing.T, ts *testServer, a *account) *sweepFixture {
	t.Helper()
	ctx := context.Background()
	f := &sweepFixture{ids: map[sika.Environment]map[string]string{}}
	created := func(r *response) string {
		t.Helper()
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		var v struct {
			ID string `json:"id"`
		}
		r.data(t, &v)
		require.NotEmpty(t, v.ID)
		return v.ID
	}
	for _, env := range []sika.Environment{sika.EnvironmentLive, sika.EnvironmentTest} {
		payment := historyRow{Merchant: a.Merchant.ID, Env: env, Type: sika.TypePayment, Status: sika.StatusSuccess, CreatedAt: time.Now().UTC().Add(-time.Hour)}
		insertHistoryRow(t, &payment)
		f.add(env, "payment", payment.ID.String())
		f.add(env, "attempt", payment.AttemptID.String())
		f.add(env, "status_log", payment.CreationLog.String())
		payout := historyRow{Merchant: a.Merchant.ID, Env: env, Type: sika.TypePayout, Status: sika.StatusSuccess, CreatedAt: time.Now().UTC().Add(-time.Hour)}
		insertHistoryRow(t, &payout)
		f.add(env, "payout", payout.ID.String())

		sweepFund(t, a, env)
		f.add(env, "refund", sweepRefund(t, payment.ID, a, env))
		f.add(env, "payout_batch", sweepPayoutBatch(t, a, env))
		wallets, _, err := testStore.ListWallets(ctx, a.Merchant.ID, env, store.PageRequest{Page: 1, PageSize: 10})
		require.NoError(t, err)
		require.NotEmpty(t, wallets)
		f.add(env, "wallet", wallets[0].ID.String())
		entries, _, err := testStore.ListLedgerEntries(ctx, a.Merchant.ID, env, store.KeysetRequest{Limit: 10})
		require.NoError(t, err)
		require.NotEmpty(t, entries)
		f.add(env, "ledger_entry", entries[0].ID.String())
		// A's event on the event routes is a payout's: a PAYIN key of A's must not see it either.
		f.add(env, "event", insertEventOf(t, a.Merchant.ID, env, sika.EventPayoutSucceeded, sika.TypePayout))

		f.add(env, "checkout_session", created(ts.call(t, "POST", "/api/v1/checkout-sessions/",
			map[string]any{"amount": "1000", "currency": "XOF", "customer_email": "ama@example.com", "customer_name": "Ama"},
			a.key(env, sika.ScopePayin)...)))
		f.add(env, "payment_link", created(ts.call(t, "POST", "/api/v1/payment-links/",
			map[string]any{"name": "T-shirt", "amount": "5000", "currency": "XOF"}, a.key(env, sika.ScopePayin)...)))
		f.add(env, "webhook_endpoint", created(ts.call(t, "POST", "/api/v1/merchant-webhooks/",
			map[string]string{"url": "https://93.184.216.34/hooks"}, a.dashboard(env)...)))
		f.add(env, "payout_method", created(ts.call(t, "POST", "/api/v1/merchant-payout-methods/",
			map[string]string{"type": "MOBILE_MONEY", "label": "Owner", "network": "MTN_BJ", "phone_number": "97000123"}, a.dashboard(env)...)))
		entry, err := testStore.AddIPWhitelistEntry(ctx, a.Merchant.ID, env, netip.MustParsePrefix("10.9.8.0/24"), "sweep")
		require.NoError(t, err)
		f.add(env, "ip_whitelist", entry.ID.String())
		key, err := testStore.CreateAPIKey(ctx, a.Merchant.ID, env, sika.ScopeBoth, "sweep target", &a.Member.ID)
		require.NoError(t, err)
		f.add(env, "api_key", key.ID.String())
	}
	// Objects without an environment: the dossier, its file and the merchant itself.
	dash := a.dashboard(sika.EnvironmentLive)
	dossier := ts.submitKYC(t, dash, map[string]any{"kyc_type": "BUSINESS", "company_name": "Shop SARL"})
	url := ts.uploadedKYC(t, dash, kycPDF())
	r := ts.attachKYC(t, dash, dossier.ID, map[string]string{"document_type": "OTHER", "file_url": url})
	require.Equal(t, 201, r.Status, "%s", r.Body)
	name := url[strings.LastIndex(url, "/")+1:]
	sum, ext, ok := strings.Cut(name, ".")
	require.True(t, ok, url)
	f.file = [2]string{sum, ext}
	for _, env := range []sika.Environment{sika.EnvironmentLive, sika.EnvironmentTest} {
		f.add(env, "kyc_dossier", dossier.ID.String())
		f.add(env, "kyc_file", sum)
		f.add(env, "merchant", a.Merchant.ID.String())
	}
	// The catalogue belongs to nobody.
	country, err := testStore.CountryByISO(ctx, "BJ")
	require.NoError(t, err)
	network, err := testStore.NetworkByCode(ctx, "MTN_BJ")
	require.NoError(t, err)
	for _, env := range []sika.Environment{sika.EnvironmentLive, sika.EnvironmentTest} {
		f.ids[env]["country"] = country.ID.String()
		f.ids[env]["network"] = network.ID.String()
		// A money decision is staff's, no merchant's: merchants are refused before any lookup.
		f.ids[env]["money_decision"] = uuid.NewString()
		f.ids[env]["money_flag"] = uuid.NewString()
	}
	return f
}

// sweepCase is one call the sweep makes and what the contract says it must answer.
type sweepCase struct {
	name    string
	headers []string
	status  int
	code    string // "" with status 200: a success that must not show A's objects
	ids     sika.Environment
	// only, when set, are the ids the answer must not contain (instead of every object of A's):
	// A's own key of the wrong scope sees A's other objects.
	only []string
}

// sweepEventRoutes are the event log's routes: a key sees there only the events its scope
// allows (a PAYIN key no payout event), as on the live stream.
var sweepEventRoutes = map[string]bool{
	"GET /events/": true, "GET /events/{id}/": true, "GET /events/{id}/deliveries/": true, "POST /events/{id}/redeliver/": true,
}

func TestTenancySweep(t *testing.T) {
	ts, _ := kycServer(t)
	a := ts.newAccount(t, true)
	b := ts.newAccount(t, true)
	f := newSweepFixture(t, ts, a)

	revoked, err := testStore.CreateAPIKey(context.Background(), a.Merchant.ID, sika.EnvironmentLive, sika.ScopeBoth, "revoked", &a.Member.ID)
	require.NoError(t, err)
	_, err = testStore.RevokeAPIKey(context.Background(), a.Merchant.ID, sika.EnvironmentLive, revoked.ID)
	require.NoError(t, err)

	v := newOpenAPIValidator(t)
	checked, notApplicable := map[string]int{}, map[string]int{}
	var operations int
	for _, docPath := range slices.Sorted(maps.Keys(v.doc.Paths.Map())) {
		item := v.doc.Paths.Value(docPath)
		if item.Servers != nil {
			continue // not under /api/v1 (health, hosted pages)
		}
		for _, method := range slices.Sorted(maps.Keys(item.Operations())) {
			op := item.Operations()[method]
			where := method + " " + docPath
			operations++
			access := sweepAccessOf(t, where, op.Security)
			if access == sweepPublic {
				notApplicable["public (security: [])"]++
				continue
			}
			kind := ""
			if strings.Contains(docPath, "{") {
				kind = sweepKindOf(docPath)
				require.NotEmpty(t, kind, "%s: no object kind for this path; add it to sweepKinds", where)
			}
			target := func(env sika.Environment) string {
				p := docPath
				if kind == "kyc_file" {
					p = strings.NewReplacer("{sha256}", f.file[0], "{ext}", f.file[1]).Replace(p)
				}
				if kind != "" {
					p = strings.Replace(p, "{id}", f.ids[env][kind], 1)
				}
				require.NotContains(t, p, "{", "%s: unfilled path parameter", where)
				return basePath + p + sweepQueries[where]
			}
			body := sweepBodies[where]
			if where == "POST /merchant-kyc/{id}/documents/" {
				body = map[string]string{"document_type": "OTHER", "file_url": ts.url + basePath + "/merchant-kyc/files/" + f.file[0] + "." + f.file[1]}
			}
			if body == nil && method != http.MethodGet && method != http.MethodDelete {
				body = map[string]string{}
			}
			if where == "POST /merchant-kyc/upload/" {
				body = nil // multipart; the credentials are refused before the body is read
			}
			cases := sweepCases(a, b, revoked.Secret, where, access, kind)
			if sweepEventRoutes[where] {
				c := sweepCase{name: "c PAYIN key on a payout event", headers: a.key(sika.EnvironmentLive, sika.ScopePayin), status: 404,
					code: "not_found", ids: sika.EnvironmentLive, only: []string{f.ids[sika.EnvironmentLive]["event"]}}
				if kind == "" {
					c.name, c.status, c.code = "c PAYIN key (list without payout events)", 200, ""
				}
				cases = append(cases, c)
			}
			for _, c := range cases {
				if c.status == 0 {
					notApplicable[c.name]++
					continue
				}
				t.Run(where+"/"+c.name, func(t *testing.T) {
					checked[c.name]++
					headers := append(slices.Clone(c.headers), "Idempotency-Key", uuid.NewString())
					r := ts.call(t, method, target(c.ids), body, headers...)
					sweepCheck(t, method+" "+target(c.ids), c, r, f, kind)
				})
			}
		}
	}
	total := 0
	for _, n := range checked {
		total += n
	}
	t.Logf("tenancy sweep: %d operations under %s, %d (operation, case) pairs checked", operations, basePath, total)
	for _, name := range slices.Sorted(maps.Keys(checked)) {
		t.Logf("  checked  %-34s %d", name, checked[name])
	}
	for _, name := range slices.Sorted(maps.Keys(notApplicable)) {
		t.Logf("  not applicable: %-27s %d", name, notApplicable[name])
	}
	require.Greater(t, total, 200, "the sweep checked too little")
	t.Run("live streams", func(t *testing.T) { sweepStreams(t, ts, a, b, f) })
}

// sweepStreams reads the live streams the way the sweep cannot through ts.call (a stream never
// ends): another merchant's credentials, resuming from the first position there is, get none
// of A's events or requests to the end of what is committed, and A's Last-Event-IDs are refused
// them (400); A's PAYIN key replays no payout event and only its own requests.
func sweepStreams(t *testing.T, ts *testServer, a, b *account, f *sweepFixture) {
	live, test := sika.EnvironmentLive, sika.EnvironmentTest
	var aLog int64
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.NoError(c, testStore.Pool().QueryRow(t.Context(), `SELECT id FROM api_request_logs WHERE merchant_id = $1 AND environment = 'LIVE'
			ORDER BY id LIMIT 1`, a.Merchant.ID).Scan(&aLog))
	}, settle, 100*time.Millisecond, "A's requests are logged")
	// An events stream must not carry A's objects; a request-log stream carries the caller's own
	// requests (B's probes name A's ids in their paths), so there A's requests are what must
	// not come: their request ids and A's keys.
	var aRequests []string
	rows, err := testStore.Pool().Query(t.Context(), `SELECT request_id FROM api_request_logs WHERE merchant_id = $1`, a.Merchant.ID)
	require.NoError(t, err)
	aRequests, err = pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.NotEmpty(t, aRequests)
	for _, id := range a.KeyIDs {
		aRequests = append(aRequests, id.String())
	}
	forbidden := map[string][]string{"/api/v1/events/stream/": f.forbidden(sweepCase{name: "e"}), "/api/v1/request-logs/stream/": aRequests}
	others := map[string][]string{
		"other merchant's LIVE key": b.key(live, sika.ScopeBoth), "other merchant's TEST key": b.key(test, sika.ScopeBoth),
		"other merchant's dashboard": b.dashboard(live),
	}
	for _, path := range []string{"/api/v1/events/stream/", "/api/v1/request-logs/stream/"} {
		aID := f.ids[live]["event"]
		if strings.Contains(path, "request-logs") {
			aID = strconv.FormatInt(aLog, 10)
		}
		for name, h := range others {
			t.Run(path+"/"+name, func(t *testing.T) {
				r := ts.call(t, "GET", path, nil, append(slices.Clone(h), "Last-Event-ID", aID)...)
				assert.Equal(t, http.StatusBadRequest, r.Status, "A's Last-Event-ID: %s", r.Body)
				assert.Contains(t, r.fields(), "Last-Event-ID")
				lines := replayStream(t, ts, path, h...)
				t.Logf("%s with %s from the first position: %d lines read", path, name, len(lines))
				for _, line := range lines {
					for _, id := range forbidden[path] {
						assert.NotContains(t, line, id, "A's object in another merchant's stream")
					}
				}
			})
		}
	}
	t.Run("A's PAYIN key", func(t *testing.T) {
		payin := a.key(live, sika.ScopePayin)
		for _, line := range replayStream(t, ts, "/api/v1/events/stream/", payin...) {
			assert.NotContains(t, line, f.ids[live]["event"], "a payout event on a PAYIN key's stream")
		}
		own := a.KeyIDs[string(live)+"/"+string(sika.ScopePayin)].String()
		for _, line := range replayStream(t, ts, "/api/v1/request-logs/stream/", payin...) {
			if data, ok := strings.CutPrefix(line, "data: "); ok {
				var v struct {
					APIKeyID *string `json:"api_key_id"`
				}
				require.NoError(t, json.Unmarshal([]byte(data), &v))
				if assert.NotNil(t, v.APIKeyID, "a request without a key on a PAYIN key's log: %s", data) {
					assert.Equal(t, own, *v.APIKeyID, "another key's request on a PAYIN key's log")
				}
			}
		}
	})
}

// replayStream reads a live stream from the first position there is (Last-Event-ID "@1") until
// no message has come for two seconds (bounded by a minute), and answers its lines.
func replayStream(t *testing.T, ts *testServer, path string, headers ...string) []string {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ts.url+path, nil)
	require.NoError(t, err)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	req.Header.Set("Last-Event-ID", "@1")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	lines := make(chan string, 100)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64*1024), 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	var out []string
	quiet, deadline := time.NewTimer(2*time.Second), time.After(time.Minute)
	defer quiet.Stop()
	for {
		select {
		case line, open := <-lines:
			if !open {
				return out
			}
			out = append(out, line)
			if strings.HasPrefix(line, "data: ") {
				quiet.Reset(2 * time.Second)
			}
		case <-quiet.C:
			return out
		case <-deadline:
			return out
		}
	}
}

// sweepAccessOf reads who may call an operation from its document security and its path.
func sweepAccessOf(t *testing.T, where string, sec *openapi3.SecurityRequirements) sweepAccess {
	t.Helper()
	require.NotNil(t, sec, "%s: security must be explicit", where)
	schemes := map[string]bool{}
	for _, req := range *sec {
		for name := range req {
			schemes[name] = true
		}
	}
	switch {
	case len(schemes) == 0:
		return sweepPublic
	case schemes["apiKey"] && schemes["dashboardSession"]:
		return sweepMerchant
	case !schemes["dashboardSession"]:
		t.Fatalf("%s: unknown security %v", where, schemes)
	}
	_, path, _ := strings.Cut(where, " ")
	switch {
	case strings.HasPrefix(path, "/admin/"):
		return sweepStaff
	case path == "/auth/merchants/":
		return sweepMember
	}
	return sweepDashboard
}

func sweepKindOf(path string) string {
	for _, k := range sweepKinds {
		if strings.HasPrefix(path, k.prefix) {
			return k.kind
		}
	}
	return ""
}

// sweepCases lists the calls of one operation. A case with status 0 does not apply (counted,
// and named in the summary).
func sweepCases(a, b *account, revokedSecret, where string, access sweepAccess, kind string) []sweepCase {
	live, test := sika.EnvironmentLive, sika.EnvironmentTest
	method, _, _ := strings.Cut(where, " ")
	cases := []sweepCase{
		{name: "a no credentials", status: 401, code: "authentication_required", ids: live},
		{name: "b revoked key", headers: bearer(revokedSecret), status: 401, code: "invalid_credentials", ids: live},
	}
	if access == sweepDashboard || access == sweepMember || access == sweepStaff {
		// A revoked key on a dashboard route: invalid_credentials still comes first.
		refused := map[sweepAccess]string{sweepDashboard: "dashboard_only", sweepMember: "dashboard_only", sweepStaff: "admin_only"}[access]
		cases = append(cases, sweepCase{name: "c wrong scope: n/a (no scope)"},
			sweepCase{name: "d TEST key on LIVE ids", headers: a.key(test, sika.ScopeBoth), status: 403, code: refused, ids: live})
		switch {
		case access == sweepStaff:
			cases = append(cases, sweepCase{name: "e other merchant's dashboard", headers: b.dashboard(live), status: 403, code: "admin_only", ids: live})
		case kind != "":
			cases = append(cases, sweepCase{name: "e other merchant's dashboard", headers: b.dashboard(live), status: 404, code: "not_found", ids: live})
		default:
			cases = append(cases, sweepCase{name: "e other merchant: n/a (no object in path)"})
		}
		return cases
	}

	// Merchant routes: an API key or a dashboard session.
	if need, ok := sweepScopes[where]; ok {
		wrong := sika.ScopePayout
		if need == sika.ScopePayout {
			wrong = sika.ScopePayin
		}
		cases = append(cases, sweepCase{name: "c wrong scope", headers: a.key(live, wrong), status: 403, code: "api_key_scope_forbidden", ids: live})
	} else {
		cases = append(cases, sweepCase{name: "c wrong scope: n/a (no scope)"})
	}
	crossTenant := func(name string, headers []string, env sika.Environment) sweepCase {
		switch {
		case kind == "" && method == http.MethodGet:
			// A list or an export: it answers the caller's own rows, never A's.
			return sweepCase{name: name + " (list)", headers: headers, status: 200, ids: env}
		case kind == "":
			return sweepCase{name: name + ": n/a (creates; no object in path)"}
		case sweepGlobal[kind]:
			return sweepCase{name: name + " (global catalogue)", headers: headers, status: 200, ids: env}
		case where == "GET /merchant-kyc/{id}/documents/":
			return sweepCase{name: name + " (KYC documents: 200 [])", headers: headers, status: 200, ids: env}
		}
		return sweepCase{name: name, headers: headers, status: 404, code: "not_found", ids: env}
	}
	if sweepEnvless[kind] {
		cases = append(cases, sweepCase{name: "d TEST key on LIVE ids: n/a (object has no environment)"})
	} else {
		cases = append(cases, crossTenant("d TEST key on LIVE ids", a.key(test, sika.ScopeBoth), live))
	}
	cases = append(cases,
		crossTenant("e other merchant's LIVE key", b.key(live, sika.ScopeBoth), live),
		crossTenant("e other merchant's TEST key", b.key(test, sika.ScopeBoth), test),
		crossTenant("e other merchant's dashboard", b.dashboard(live), live))
	return cases
}

// sweepCheck asserts one answer: the expected status and error envelope, and no id of A's.
func sweepCheck(t *testing.T, request string, c sweepCase, r *response, f *sweepFixture, kind string) {
	t.Helper()
	report := func(format string, args ...any) {
		t.Helper()
		t.Errorf("%s [%s]: %s\n  response %d %s", request, c.name, fmt.Sprintf(format, args...), r.Status, bodyExcerpt(r.Body, 600))
	}
	if r.Status != c.status {
		report("status %d, want %d %s", r.Status, c.status, c.code)
		return
	}
	if c.code != "" {
		if r.Env.Success || r.code() != c.code {
			report("want the error envelope with code %s", c.code)
		}
	}
	if c.only != nil {
		for _, id := range c.only {
			if strings.Contains(string(r.Body), id) && !(c.code == "not_found" && id == f.ids[c.ids][kind]) {
				report("the body contains %s, which this key's scope does not allow", id)
			}
		}
		return
	}
	if strings.Contains(c.name, "KYC documents") && strings.TrimSpace(string(r.Env.Data)) != "[]" {
		report("another merchant's dossier documents must be exactly []")
	}
	// A's ids in the answer: the requested id echoed in a not_found message is the caller's own
	// input, everything else is a leak.
	requested := ""
	if kind != "" && !sweepGlobal[kind] {
		requested = f.ids[c.ids][kind]
	}
	for _, id := range f.forbidden(c) {
		if !strings.Contains(string(r.Body), id) {
			continue
		}
		if id == requested && c.code == "not_found" {
			t.Logf("%s [%s]: the not_found message echoes the requested id", request, c.name)
			continue
		}
		report("the body contains A's id %s", id)
	}
}
