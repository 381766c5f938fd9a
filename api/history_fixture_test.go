package api

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika"
)

// historyRow is a transaction the history tests write straight into Postgres, with its attempt
// and status logs, so that every attribute a filter looks at (and created_at) is chosen.
type historyRow struct {
	ID                                  uuid.UUID
	Reference, GatewayReference         string
	Merchant                            uuid.UUID
	Env                                 sika.Environment
	Type                                sika.TransactionType
	Status                              sika.TransactionStatus
	Network, Country, Currency          string
	Name, Email, Phone, Recipient, Desc string
	LinkSlug, SessionSlug               string
	Requested, ClientFee, Debited       string
	GatewayFee, PlatformFee, Net        string
	CreatedAt                           time.Time
	Gateway                             string
	Trigger                             sika.Trigger

	AttemptID         uuid.UUID // zero for a PENDING row
	CreationLog       uuid.UUID
	OutcomeLog        uuid.UUID // zero for a PENDING row
	OutcomeLogCreated time.Time
}

// historyNetworks are the networks the fixtures use, with their country and currency.
var historyNetworks = map[string][2]string{
	"MTN_BJ": {"BJ", "XOF"}, "MOOV_BJ": {"BJ", "XOF"}, "ORANGE_CI": {"CI", "XOF"}, "MTN_CM": {"CM", "XAF"}, "VODACOM_CD": {"CD", "CDF"},
}

// insertHistoryRow completes r with defaults and writes it, its attempt (unless PENDING) and its
// status logs (creation, then the outcome unless PENDING).
func insertHistoryRow(t *testing.T, r *historyRow) {
	t.Helper()
	ctx := t.Context()
	if r.ID == uuid.Nil {
		r.ID = uuid.New()
	}
	if r.Env == "" {
		r.Env = sika.EnvironmentTest
	}
	if r.Type == "" {
		r.Type = sika.TypePayment
	}
	if r.Status == "" {
		r.Status = sika.StatusSuccess
	}
	if r.Network == "" {
		r.Network = "MTN_BJ"
	}
	r.Country, r.Currency = historyNetworks[r.Network][0], historyNetworks[r.Network][1]
	if r.Reference == "" {
		prefix := map[sika.TransactionType]string{sika.TypePayment: "PAY", sika.TypeTopUp: "TOP", sika.TypePayout: "PO", sika.TypeTransfer: "TRF"}[r.Type]
		ref, err := sika.NewReference(prefix, r.CreatedAt)
		require.NoError(t, err)
		r.Reference = ref
	}
	if r.Requested == "" {
		r.Requested, r.ClientFee, r.GatewayFee, r.PlatformFee, r.Debited, r.Net = "1000.00", "15.00", "10.00", "5.00", "1015.00", "1000.00"
	}
	if r.Gateway == "" {
		r.Gateway = "sandbox-a"
	}
	if r.Trigger == "" {
		r.Trigger = sika.TriggerSystem
	}
	var completed *time.Time
	if r.Status != sika.StatusPending {
		at := r.CreatedAt.Add(3 * time.Second)
		completed = &at
	}
	optional := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	failureCode, failureMessage := "", ""
	if r.Status == sika.StatusFailed {
		failureCode, failureMessage = "payer_declined", "The customer declined the payment."
	}
	pool := testStore.Pool()
	_, err := pool.Exec(ctx, `INSERT INTO transactions (id, reference, merchant_id, environment, transaction_type, status,
			requested_amount, client_fee, debited_amount, gateway_fee, platform_fee, net_amount, currency, country,
			network_id, network, customer_name, customer_email, customer_phone, recipient, description, fee_charge_mode,
			gateway, gateway_reference, failure_code, failure_message, payment_link_slug, checkout_session_slug,
			created_at, updated_at, completed_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, (SELECT id FROM networks WHERE code = $15), $15,
			$16, $17, $18, $19, $20, 'ADD_ON', $21, $22, $23, $24, $25, $26, $27, coalesce($28::timestamptz, $27::timestamptz), $28)`,
		r.ID, r.Reference, r.Merchant, r.Env, r.Type, r.Status, r.Requested, r.ClientFee, r.Debited, r.GatewayFee,
		r.PlatformFee, r.Net, r.Currency, r.Country, r.Network, r.Name, r.Email, r.Phone, r.Recipient, r.Desc,
		r.Gateway, r.GatewayReference, failureCode, failureMessage, optional(r.LinkSlug), optional(r.SessionSlug),
		r.CreatedAt, completed)
	require.NoError(t, err)

	r.CreationLog = uuid.New()
	_, err = pool.Exec(ctx, `INSERT INTO transaction_status_logs (id, transaction_id, merchant_id, environment, from_status,
		to_status, reason, triggered_by, created_at) VALUES ($1, $2, $3, $4, NULL, 'PENDING', 'Payment requested', 'CLIENT', $5)`,
		r.CreationLog, r.ID, r.Merchant, r.Env, r.CreatedAt)
	require.NoError(t, err)
	if completed == nil {
		return
	}
	r.AttemptID, r.OutcomeLog, r.OutcomeLogCreated = uuid.New(), uuid.New(), *completed
	_, err = pool.Exec(ctx, `INSERT INTO transaction_attempts (id, transaction_id, merchant_id, environment, run, sequence,
			gateway, priority, status, gateway_reference, failure_code, failure_message, created_at, updated_at, completed_at)
		VALUES ($1, $2, $3, $4, 1, 1, $5, 1, $6, $7, $8, $9, $10, $11, $11)`,
		r.AttemptID, r.ID, r.Merchant, r.Env, r.Gateway, r.Status, r.GatewayReference, failureCode, failureMessage,
		r.CreatedAt, *completed)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `INSERT INTO transaction_status_logs (id, transaction_id, merchant_id, environment, from_status,
		to_status, reason, triggered_by, created_at) VALUES ($1, $2, $3, $4, 'PENDING', $5, 'Gateway outcome', $6, $7)`,
		r.OutcomeLog, r.ID, r.Merchant, r.Env, r.Status, r.Trigger, *completed)
	require.NoError(t, err)
}

// newestFirst sorts rows as the lists do: created_at descending, ties broken by id descending
// (Postgres compares uuids byte by byte).
func newestFirst[T any](rows []T, at func(T) time.Time, id func(T) uuid.UUID) {
	slices.SortStableFunc(rows, func(a, b T) int {
		if c := at(b).Compare(at(a)); c != 0 {
			return c
		}
		ia, ib := id(a), id(b)
		return bytes.Compare(ib[:], ia[:])
	})
}

// historyFixture is a merchant with 30 TEST transactions of every kind, three of them created at
// the same instant, plus rows that must stay invisible to its TEST key: its own LIVE rows and
// another merchant's TEST rows with the same names, phones and slugs.
type historyFixture struct {
	acct, other *account
	rows        []historyRow // the merchant's TEST rows, newest first
	hidden      []historyRow // LIVE rows and the other merchant's
	base        time.Time
}

var fixtureNames = []string{"Akosua Mensah", "Koffi Agbodjan", "Aminata Diallo", "Kouamé N'Guessan", "Moussa Traoré", "Ama Mensah"}

func newHistoryFixture(t *testing.T, ts *testServer) *historyFixture {
	t.Helper()
	f := &historyFixture{acct: ts.newAccount(t, true), other: ts.newAccount(t, true),
		base: time.Date(2026, 1, 10, 12, 0, 0, 0, time.UTC)}
	types := []sika.TransactionType{sika.TypePayment, sika.TypePayment, sika.TypeTopUp, sika.TypePayout, sika.TypePayment, sika.TypeTransfer}
	statuses := []sika.TransactionStatus{sika.StatusSuccess, sika.StatusFailed, sika.StatusPending, sika.StatusSuccess}
	networks := []string{"MTN_BJ", "ORANGE_CI", "MTN_BJ", "MTN_CM", "VODACOM_CD", "MOOV_BJ"}
	row := func(i int, merchant uuid.UUID, env sika.Environment) historyRow {
		name := fixtureNames[i%len(fixtureNames)]
		first, last, _ := strings.Cut(name, " ")
		r := historyRow{Merchant: merchant, Env: env, Type: types[i%len(types)], Status: statuses[i%len(statuses)],
			Network: networks[i%len(networks)], Name: name, Email: strings.ToLower(first+"."+last) + "@example.com",
			Phone: fmt.Sprintf("+2299700%04d", i), Desc: fmt.Sprintf("Order %d", i),
			GatewayReference: fmt.Sprintf("GWREF%03d", i), CreatedAt: f.base.Add(-time.Duration(i) * time.Minute)}
		if i%3 == 0 {
			r.Gateway = "sandbox-b"
		}
		if i%4 == 1 {
			r.Trigger = sika.TriggerWebhookCallback
		}
		if i >= 5 && i <= 7 {
			r.CreatedAt = f.base.Add(-5 * time.Minute) // a tie: the id decides
		}
		if i%7 == 0 {
			r.LinkSlug = "promo-noel"
		}
		if i%5 == 0 {
			r.SessionSlug = fmt.Sprintf("cs_fixture%02d", i)
		}
		if r.Type.FlowDirection() == sika.DirectionOutbound {
			r.Recipient, r.Phone = r.Phone, ""
		}
		return r
	}
	for i := 0; i < 30; i++ {
		r := row(i, f.acct.Merchant.ID, sika.EnvironmentTest)
		insertHistoryRow(t, &r)
		f.rows = append(f.rows, r)
	}
	for i := 0; i < 6; i++ {
		live := row(i, f.acct.Merchant.ID, sika.EnvironmentLive)
		insertHistoryRow(t, &live)
		other := row(i, f.other.Merchant.ID, sika.EnvironmentTest)
		insertHistoryRow(t, &other)
		f.hidden = append(f.hidden, live, other)
	}
	newestFirst(f.rows, func(r historyRow) time.Time { return r.CreatedAt }, func(r historyRow) uuid.UUID { return r.ID })
	return f
}

// key is the fixture merchant's TEST key.
func (f *historyFixture) key() []string { return f.acct.key(sika.EnvironmentTest, sika.ScopePayin) }

// ids returns the ids of the rows that match keep, in list order.
func (f *historyFixture) ids(keep func(historyRow) bool) []uuid.UUID {
	return idsOf(f.rows, keep, func(r historyRow) uuid.UUID { return r.ID })
}

// idsOf returns the ids of the rows that match keep, in order.
func idsOf[T any](rows []T, keep func(T) bool, id func(T) uuid.UUID) []uuid.UUID {
	var out []uuid.UUID
	for _, r := range rows {
		if keep(r) {
			out = append(out, id(r))
		}
	}
	return out
}

// cursorPageOf is a decoded cursor page whose results are read as T.
type cursorPageOf[T any] struct {
	Next     *string `json:"next"`
	Previous *string `json:"previous"`
	Results  []T     `json:"results"`
}

// walkPages follows next from path to the last page and returns every page.
func walkPages[T any](t *testing.T, ts *testServer, path string, headers ...string) []cursorPageOf[T] {
	t.Helper()
	var pages []cursorPageOf[T]
	for url := path; url != ""; {
		require.Less(t, len(pages), 100, "too many pages")
		var p cursorPageOf[T]
		r := ts.call(t, "GET", url, nil, headers...)
		require.Equal(t, 200, r.Status, "%s: %s", url, r.Body)
		r.data(t, &p)
		pages = append(pages, p)
		url = ""
		if p.Next != nil {
			url = *p.Next
		}
	}
	return pages
}

// listIDs lists every transaction of path (following next) and returns the ids in order.
func listIDs(t *testing.T, ts *testServer, path string, headers ...string) []uuid.UUID {
	t.Helper()
	var out []uuid.UUID
	for _, p := range walkPages[sika.Transaction](t, ts, path, headers...) {
		for _, tx := range p.Results {
			out = append(out, tx.ID)
		}
	}
	return out
}
