package store_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
)

// seedHistory writes n TEST transactions of a new merchant, one a minute back from a fixed
// instant (rows 4 and 5 share one), every third named "Rare Kponton" and the rest "Common
// Name", and returns the merchant and the ids newest first.
func seedHistory(t *testing.T, n int) (sika.Merchant, []uuid.UUID, []string) {
	t.Helper()
	m := newMerchant(t)
	base := time.Date(2026, 1, 10, 12, 0, 0, 0, time.UTC)
	type row struct {
		id  uuid.UUID
		at  time.Time
		ref string
	}
	var rows []row
	for i := 0; i < n; i++ {
		at := base.Add(-time.Duration(i) * time.Minute)
		if i == 5 {
			at = rows[4].at
		}
		name := "Common Name"
		if i%3 == 2 {
			name = "Rare Kponton"
		}
		ref, err := sika.NewReference("PAY", at)
		require.NoError(t, err)
		r := row{uuid.New(), at, ref}
		_, err = st.Pool().Exec(t.Context(), `INSERT INTO transactions (id, reference, merchant_id, environment, transaction_type,
				status, requested_amount, client_fee, debited_amount, gateway_fee, platform_fee, net_amount, currency, country,
				network_id, network, customer_name, customer_phone, fee_charge_mode, created_at, updated_at)
			VALUES ($1, $2, $3, 'TEST', 'PAIEMENT', 'SUCCESS', 1000, 15, 1015, 10, 5, 1000, 'XOF', 'CI',
				(SELECT id FROM networks WHERE code = 'MTN_CI'), 'MTN_CI', $4, $5, 'ADD_ON', $6, $6)`,
			r.id, r.ref, m.ID, name, fmt.Sprintf("+225070700%04d", i), at)
		require.NoError(t, err)
		rows = append(rows, r)
	}
	slices.SortFunc(rows, func(a, b row) int {
		if c := b.at.Compare(a.at); c != 0 {
			return c
		}
		return strings.Compare(b.id.String(), a.id.String()) // uuid text order is byte order
	})
	var ids []uuid.UUID
	var refs []string
	for _, r := range rows {
		ids, refs = append(ids, r.id), append(refs, r.ref)
	}
	return m, ids, refs
}

// searchAll pages through a search with the given page size, forward, then back from the last
// page, and returns the ids of the forward walk; the backward walk must give the same pages.
func searchAll(t *testing.T, m sika.Merchant, f store.TransactionFilter, limit int) []uuid.UUID {
	t.Helper()
	ctx := t.Context()
	var pages [][]sika.Transaction
	req := store.KeysetRequest{Limit: limit}
	for {
		items, more, err := st.ListTransactions(ctx, m.ID, sika.EnvironmentTest, f, req)
		require.NoError(t, err)
		pages = append(pages, items)
		if !more {
			break
		}
		last := items[len(items)-1]
		req = store.KeysetRequest{Limit: limit, After: &store.KeysetPosition{CreatedAt: last.CreatedAt, ID: last.ID}}
	}
	for i := len(pages) - 1; i > 0; i-- {
		first := pages[i][0]
		items, more, err := st.ListTransactions(ctx, m.ID, sika.EnvironmentTest, f, store.KeysetRequest{Limit: limit, Backward: true,
			After: &store.KeysetPosition{CreatedAt: first.CreatedAt, ID: first.ID}})
		require.NoError(t, err)
		assert.Equal(t, ids(pages[i-1]), ids(items), "page %d reached backwards", i-1)
		assert.Equal(t, i > 1, more, "more pages before page %d", i-1)
	}
	var out []uuid.UUID
	for _, p := range pages {
		out = append(out, ids(p)...)
	}
	return out
}

func ids(ts []sika.Transaction) []uuid.UUID {
	out := []uuid.UUID{}
	for _, t := range ts {
		out = append(out, t.ID)
	}
	return out
}

// TestSearchWindowAndIndex: with a window of 5 rows, a common term is answered from the window,
// a rare one through the trigram index, and a search across both gives every match once, in
// order, forward and backward, whatever the page size.
func TestSearchWindowAndIndex(t *testing.T) {
	defer store.SetHistoryLimits(5, 1000)()
	m, all, refs := seedHistory(t, 40)
	names := map[uuid.UUID]string{}
	for _, r := range allRows(t, m) {
		names[r.ID] = r.CustomerName
	}
	matching := func(sub string) []uuid.UUID {
		var out []uuid.UUID
		for _, id := range all {
			if strings.Contains(strings.ToLower(names[id]), sub) {
				out = append(out, id)
			}
		}
		return out
	}
	for _, limit := range []int{1, 2, 3, 4, 7, 50} {
		for _, q := range []string{"common", "KPONTON", "name", "nowhere"} {
			got := searchAll(t, m, store.TransactionFilter{Search: q}, limit)
			assert.Equal(t, matching(strings.ToLower(q)), got, "search %q, page size %d", q, limit)
		}
	}
	// A whole reference, in any case, and a part of one.
	for _, q := range []string{refs[30], strings.ToLower(refs[30]), refs[30][len(refs[30])-10:]} {
		assert.Equal(t, []uuid.UUID{all[30]}, searchAll(t, m, store.TransactionFilter{Search: q}, 3), q)
	}
	// A phone number, written as people do.
	rows := allRows(t, m)
	phone := rows[17].CustomerPhone
	for _, q := range []string{phone, phone[1:], phone[4:], "00" + phone[1:], "+225 07 07 00 " + phone[len(phone)-4:len(phone)-2] + " " + phone[len(phone)-2:]} {
		assert.Equal(t, []uuid.UUID{rows[17].ID}, searchAll(t, m, store.TransactionFilter{Search: q}, 3), q)
	}
	// With another filter, and another merchant's id.
	other := newMerchant(t)
	assert.Empty(t, searchAll(t, m, store.TransactionFilter{Search: "kponton", Merchant: &other.ID}, 3))
	assert.Equal(t, matching("kponton"), searchAll(t, m, store.TransactionFilter{Search: "kponton", Merchant: &m.ID, Status: sika.StatusSuccess}, 2))
	assert.Empty(t, searchAll(t, m, store.TransactionFilter{Search: "kponton", Status: sika.StatusFailed}, 2))
}

func allRows(t *testing.T, m sika.Merchant) []sika.Transaction {
	t.Helper()
	items, _, err := st.ListTransactions(t.Context(), m.ID, sika.EnvironmentTest, store.TransactionFilter{}, store.KeysetRequest{Limit: 200})
	require.NoError(t, err)
	return items
}

// TestExportTransactions reads the cursor in batches (7 rows here): every row once, newest
// first, whatever the row count against the batch size; an error from emit stops the export
// and comes back as it is.
func TestExportTransactions(t *testing.T) {
	defer store.SetHistoryLimits(5, 7)()
	for _, n := range []int{0, 6, 7, 14, 20} {
		m, all := newMerchant(t), []uuid.UUID{}
		if n > 0 {
			m, all, _ = seedHistory(t, n)
		}
		var got []uuid.UUID
		err := st.ExportTransactions(t.Context(), m.ID, sika.EnvironmentTest, store.TransactionFilter{}, func(r *store.ExportRow) error {
			got = append(got, r.ID)
			return nil
		})
		require.NoError(t, err)
		assert.Equal(t, all, append([]uuid.UUID{}, got...), "%d rows", n)
	}
	m, all, _ := seedHistory(t, 20)
	stop := errors.New("client went away")
	seen := 0
	err := st.ExportTransactions(t.Context(), m.ID, sika.EnvironmentTest, store.TransactionFilter{Search: "kponton"}, func(*store.ExportRow) error {
		if seen++; seen == 3 {
			return stop
		}
		return nil
	})
	assert.ErrorIs(t, err, stop)
	assert.Equal(t, 3, seen)
	require.Len(t, all, 20)
}

// TestSearchUsesTheTrigramIndex: the rare-term step of a search reaches the trigram index, with
// the pattern and the column under one collation (under two, the index is unusable and a search
// scans the whole table: 1.8 s on a million rows).
func TestSearchUsesTheTrigramIndex(t *testing.T) {
	for _, q := range []string{"Kouamé", "GWQKKH5Z5", "+229 97 00 01 23", "97-00-01-23"} {
		plan, err := store.ExplainSearchCondition(t.Context(), st, q)
		require.NoError(t, err)
		assert.Contains(t, plan, "transactions_search_trgm_idx", "search %q:\n%s", q, plan)
		assert.NotContains(t, plan, "Seq Scan", "search %q:\n%s", q, plan)
	}
}
