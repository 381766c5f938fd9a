package api

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika"
)

func TestTransactionListFilters(t *testing.T) {
	ts := newTestServer(t)
	f := newHistoryFixture(t, ts)
	all := func(historyRow) bool { return true }
	containsFold := func(s, sub string) bool { return strings.Contains(strings.ToLower(s), strings.ToLower(sub)) }
	searchable := func(r historyRow) string {
		return strings.Join([]string{r.Reference, r.GatewayReference, r.Name, r.Email, r.Phone, r.LinkSlug, r.SessionSlug}, "\x1f")
	}
	mid := f.rows[10]
	cases := []struct {
		query string
		keep  func(historyRow) bool
	}{
		{"", all},
		{"status=SUCCESS", func(r historyRow) bool { return r.Status == sika.StatusSuccess }},
		{"status=failed", func(r historyRow) bool { return r.Status == sika.StatusFailed }},
		{"status=PENDING", func(r historyRow) bool { return r.Status == sika.StatusPending }},
		{"status=CANCELLED", func(historyRow) bool { return false }},
		{"transaction_type=PAIEMENT", func(r historyRow) bool { return r.Type == sika.TypePayment }},
		{"transaction_type=RECHARGE", func(r historyRow) bool { return r.Type == sika.TypeTopUp }},
		{"transaction_type=RETRAIT", func(r historyRow) bool { return r.Type == sika.TypePayout }},
		{"transaction_type=TRANSFERT", func(r historyRow) bool { return r.Type == sika.TypeTransfer }},
		{"flow_direction=INBOUND", func(r historyRow) bool { return r.Type.FlowDirection() == sika.DirectionInbound }},
		{"flow_direction=OUTBOUND", func(r historyRow) bool { return r.Type.FlowDirection() == sika.DirectionOutbound }},
		{"currency=XOF", func(r historyRow) bool { return r.Currency == "XOF" }},
		{"currency=xaf", func(r historyRow) bool { return r.Currency == "XAF" }},
		{"currency=GNF", func(historyRow) bool { return false }},
		{"country=BJ", func(r historyRow) bool { return r.Country == "BJ" }},
		{"country=cd", func(r historyRow) bool { return r.Country == "CD" }},
		{"country=SN", func(historyRow) bool { return false }},
		{"network=MTN_BJ", func(r historyRow) bool { return r.Network == "MTN_BJ" }},
		{"network=orange_ci", func(r historyRow) bool { return r.Network == "ORANGE_CI" }},
		{"network=WAVE_SN", func(historyRow) bool { return false }},
		{"merchant=" + f.acct.Merchant.ID.String(), all},
		{"merchant=" + f.other.Merchant.ID.String(), func(historyRow) bool { return false }},
		{"created_at__gte=" + url.QueryEscape(mid.CreatedAt.Format(time.RFC3339)), func(r historyRow) bool { return !r.CreatedAt.Before(mid.CreatedAt) }},
		{"created_at__lte=" + url.QueryEscape(mid.CreatedAt.Format(time.RFC3339)), func(r historyRow) bool { return !r.CreatedAt.After(mid.CreatedAt) }},
		{"created_at__gte=" + url.QueryEscape(f.base.Add(-10*time.Minute).In(time.FixedZone("WAT", 3600)).Format(time.RFC3339)) +
			"&created_at__lte=" + url.QueryEscape(f.base.Add(-5*time.Minute).Format(time.RFC3339Nano)),
			func(r historyRow) bool {
				return !r.CreatedAt.Before(f.base.Add(-10*time.Minute)) && !r.CreatedAt.After(f.base.Add(-5*time.Minute))
			}},
		// An unencoded + arrives as a space; the offset is still read.
		{"created_at__lte=" + f.base.Add(-20*time.Minute).In(time.FixedZone("WAT", 3600)).Format("2006-01-02T15:04:05") + "+01:00",
			func(r historyRow) bool { return !r.CreatedAt.After(f.base.Add(-20 * time.Minute)) }},
		{"created_at__gte=2026-01-10&created_at__lte=2026-01-10", all},
		{"created_at__lte=2026-01-09", func(historyRow) bool { return false }},
		{"created_at__gte=2026-01-11", func(historyRow) bool { return false }},
		{"search=mensah", func(r historyRow) bool { return containsFold(r.Name, "mensah") }},
		{"search=KOUAMÉ", func(r historyRow) bool { return strings.HasPrefix(r.Name, "Kouamé") }},
		{"search=" + url.QueryEscape(f.rows[3].Reference[len(f.rows[3].Reference)-10:]), func(r historyRow) bool { return r.ID == f.rows[3].ID }},
		{"search=" + f.rows[4].Reference, func(r historyRow) bool { return r.ID == f.rows[4].ID }},
		{"search=" + strings.ToLower(f.rows[4].Reference), func(r historyRow) bool { return r.ID == f.rows[4].ID }},
		{"search=gwref01", func(r historyRow) bool { return strings.HasPrefix(r.GatewayReference, "GWREF01") }},
		{"search=aminata.diallo%40example", func(r historyRow) bool { return r.Email == "aminata.diallo@example.com" }},
		{"search=97000012", func(r historyRow) bool { return r.Phone == "+22997000012" }},
		{"search=" + url.QueryEscape("+229 97 00 00 12"), func(r historyRow) bool { return r.Phone == "+22997000012" }},
		{"search=0022997000012", func(r historyRow) bool { return r.Phone == "+22997000012" }},
		{"search=promo-noel", func(r historyRow) bool { return r.LinkSlug == "promo-noel" }},
		{"search=cs_fixture10", func(r historyRow) bool { return r.SessionSlug == "cs_fixture10" }},
		// LIKE wildcards are literals: "_" and "%" match only themselves.
		{"search=cs_fixture1_", func(historyRow) bool { return false }},
		{"search=" + url.QueryEscape("mensah%"), func(historyRow) bool { return false }},
		{"search=zzzz", func(historyRow) bool { return false }},
		{"search=" + url.QueryEscape("  mensah "), func(r historyRow) bool { return containsFold(r.Name, "mensah") }},
		// Combinations.
		{"status=SUCCESS&network=MTN_BJ", func(r historyRow) bool { return r.Status == sika.StatusSuccess && r.Network == "MTN_BJ" }},
		{"flow_direction=INBOUND&country=BJ&search=mensah", func(r historyRow) bool {
			return r.Type.FlowDirection() == sika.DirectionInbound && r.Country == "BJ" && containsFold(r.Name, "mensah")
		}},
		{"transaction_type=PAIEMENT&currency=XOF&status=FAILED&created_at__lte=" + url.QueryEscape(mid.CreatedAt.Format(time.RFC3339)),
			func(r historyRow) bool {
				return r.Type == sika.TypePayment && r.Currency == "XOF" && r.Status == sika.StatusFailed && !r.CreatedAt.After(mid.CreatedAt)
			}},
		{"search=example.com&status=PENDING&merchant=" + f.acct.Merchant.ID.String(), func(r historyRow) bool {
			return containsFold(searchable(r), "example.com") && r.Status == sika.StatusPending
		}},
		{"status=SUCCESS&merchant=" + f.other.Merchant.ID.String(), func(historyRow) bool { return false }},
	}
	for _, c := range cases {
		t.Run(c.query, func(t *testing.T) {
			want := f.ids(c.keep)
			got := listIDs(t, ts, "/api/v1/transactions/?page_size=7&"+c.query, f.key()...)
			assert.Equal(t, want, got)
		})
	}

	// The dashboard sees the same rows with X-Environment: TEST, and the LIVE ones with LIVE.
	assert.Equal(t, f.ids(all), listIDs(t, ts, "/api/v1/transactions/?page_size=200", f.acct.dashboard(sika.EnvironmentTest)...))
	var live []uuid.UUID
	for _, r := range f.hidden {
		if r.Merchant == f.acct.Merchant.ID {
			live = append(live, r.ID)
		}
	}
	assert.ElementsMatch(t, live, listIDs(t, ts, "/api/v1/transactions/", f.acct.key(sika.EnvironmentLive, sika.ScopePayout)...))
}

func TestTransactionListItems(t *testing.T) {
	ts := newTestServer(t)
	f := newHistoryFixture(t, ts)
	var page cursorPageOf[json.RawMessage]
	ts.call(t, "GET", "/api/v1/transactions/?page_size=1&search="+f.rows[0].Reference, nil, f.key()...).data(t, &page)
	require.Len(t, page.Results, 1)
	var item map[string]any
	require.NoError(t, json.Unmarshal(page.Results[0], &item))
	// A list item is the transaction record (contract §8): the fees are there, not the detail's arrays.
	assert.Equal(t, "10.00", item["gateway_fee"])
	assert.Equal(t, "5.00", item["platform_fee"])
	assert.Equal(t, "15.00", item["client_fee"])
	assert.NotContains(t, item, "attempts")
	assert.NotContains(t, item, "search_text")
	var detail map[string]any
	ts.call(t, "GET", "/api/v1/transactions/"+f.rows[0].ID.String()+"/", nil, f.key()...).data(t, &detail)
	delete(detail, "attempts")
	delete(detail, "status_logs")
	assert.Equal(t, detail, item, "a list item is the detail without attempts and status_logs")
}

func TestTransactionListValidation(t *testing.T) {
	ts := newTestServer(t)
	acct := ts.newAccount(t, true)
	key := acct.key(sika.EnvironmentTest, sika.ScopeBoth)
	cases := []struct {
		query  string
		fields []string
	}{
		{"status=DONE", []string{"status"}},
		{"transaction_type=PAYMENT", []string{"transaction_type"}},
		{"flow_direction=IN", []string{"flow_direction"}},
		{"currency=EURO", []string{"currency"}},
		{"currency=USD", []string{"currency"}},
		{"country=XX", []string{"country"}},
		{"network=MTN", []string{"network"}},
		{"merchant=not-a-uuid", []string{"merchant"}},
		{"created_at__gte=yesterday", []string{"created_at__gte"}},
		{"created_at__lte=2026-13-01", []string{"created_at__lte"}},
		{"created_at__gte=2026-01-31T25:00:00Z", []string{"created_at__gte"}},
		{"created_at__gte=2026-02-01&created_at__lte=2026-01-31", []string{"created_at__lte"}},
		{"search=ab", []string{"search"}},
		{"search=" + strings.Repeat("a", 101), []string{"search"}},
		{"page_size=0", []string{"page_size"}},
		{"page_size=abc", []string{"page_size"}},
		{"cursor=not-a-cursor", []string{"cursor"}},
		{"status=DONE&country=XX&network=NOPE&merchant=1&page_size=-1", []string{"status", "country", "network", "merchant", "page_size"}},
		{"status=DONE&cursor=AAAA", []string{"status", "cursor"}},
	}
	for _, c := range cases {
		t.Run(c.query, func(t *testing.T) {
			r := ts.call(t, "GET", "/api/v1/transactions/?"+c.query, nil, key...)
			require.Equal(t, 400, r.Status, "%s", r.Body)
			var got []string
			for field, msgs := range r.fields() {
				got = append(got, field)
				assert.NotEmpty(t, msgs)
			}
			assert.ElementsMatch(t, c.fields, got)
		})
	}
	// Empty values do not filter.
	r := ts.call(t, "GET", "/api/v1/transactions/?status=&search=&country=&created_at__gte=", nil, key...)
	assert.Equal(t, 200, r.Status, "%s", r.Body)
}

// TestTransactionCursorWalk walks forward through every page, then back through previous from
// the last one, then forward again from a page reached backwards: the same pages, in order,
// every row once, ties on created_at broken by id.
func TestTransactionCursorWalk(t *testing.T) {
	ts := newTestServer(t)
	f := newHistoryFixture(t, ts)
	for _, q := range []string{"", "&status=SUCCESS", "&search=example.com", "&flow_direction=INBOUND&created_at__gte=2026-01-10"} {
		t.Run(q, func(t *testing.T) {
			want := f.ids(func(r historyRow) bool {
				switch q {
				case "&status=SUCCESS":
					return r.Status == sika.StatusSuccess
				case "&flow_direction=INBOUND&created_at__gte=2026-01-10":
					return r.Type.FlowDirection() == sika.DirectionInbound
				}
				return true
			})
			checkCursorWalk(t, ts, "/api/v1/transactions/?page_size=4"+q, want, f.key())
		})
	}
}

// checkCursorWalk checks the forward and backward walks of a cursor list whose rows, in order,
// are want.
func checkCursorWalk(t *testing.T, ts *testServer, first string, want []uuid.UUID, headers []string) {
	t.Helper()
	type idOnly struct {
		ID uuid.UUID `json:"id"`
	}
	ids := func(p cursorPageOf[idOnly]) []uuid.UUID {
		var out []uuid.UUID
		for _, r := range p.Results {
			out = append(out, r.ID)
		}
		return out
	}
	get := func(link string) cursorPageOf[idOnly] {
		t.Helper()
		var p cursorPageOf[idOnly]
		r := ts.call(t, "GET", link, nil, headers...)
		require.Equal(t, 200, r.Status, "%s", r.Body)
		r.data(t, &p)
		return p
	}
	forward := walkPages[idOnly](t, ts, first, headers...)
	var got []uuid.UUID
	for i, p := range forward {
		got = append(got, ids(p)...)
		assert.Equal(t, i == 0, p.Previous == nil, "page %d: previous is null exactly on the first page", i)
		assert.Equal(t, i == len(forward)-1, p.Next == nil, "page %d: next is null exactly on the last page", i)
		for _, link := range []*string{p.Next, p.Previous} {
			if link != nil {
				u, err := url.Parse(*link)
				require.NoError(t, err)
				assert.True(t, u.IsAbs(), "%s is absolute", *link)
				assert.NotEmpty(t, u.Query().Get("cursor"))
				assert.Equal(t, "4", u.Query().Get("page_size"), "links keep the query")
			}
		}
	}
	assert.Equal(t, want, got, "forward walk: every row once, in order")
	if len(forward) < 2 {
		return
	}
	// Backwards from the last page: the same pages in reverse order.
	page := forward[len(forward)-1]
	for i := len(forward) - 2; i >= 0; i-- {
		require.NotNil(t, page.Previous, "page %d has a previous", i+1)
		page = get(*page.Previous)
		assert.Equal(t, ids(forward[i]), ids(page), "page %d reached backwards", i)
		if i > 0 {
			// Forward again from a page reached backwards gives the page after it.
			require.NotNil(t, page.Next)
			assert.Equal(t, ids(forward[i+1]), ids(get(*page.Next)), "next of page %d reached backwards", i)
		}
	}
	assert.Nil(t, page.Previous, "back on the first page, previous is null")
	require.NotNil(t, page.Next)
	assert.Equal(t, ids(forward[1]), ids(get(*page.Next)))
}

func TestTransactionPageSize(t *testing.T) {
	ts := newTestServer(t)
	acct := ts.newAccount(t, true)
	base := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < 205; i++ {
		r := historyRow{Merchant: acct.Merchant.ID, Status: sika.StatusPending, CreatedAt: base.Add(time.Duration(i) * time.Second)}
		insertHistoryRow(t, &r)
	}
	key := acct.key(sika.EnvironmentTest, sika.ScopePayout)
	for query, n := range map[string]int{"": 50, "?page_size=1": 1, "?page_size=200": 200, "?page_size=201": 200, "?page_size=100000": 200} {
		var p cursorPageOf[sika.Transaction]
		ts.call(t, "GET", "/api/v1/transactions/"+query, nil, key...).data(t, &p)
		assert.Len(t, p.Results, n, query)
		assert.NotNil(t, p.Next, query)
	}
	var p cursorPageOf[sika.Transaction]
	ts.call(t, "GET", "/api/v1/transactions/?page_size=200", nil, key...).data(t, &p)
	ts.call(t, "GET", *p.Next, nil, key...).data(t, &p)
	assert.Len(t, p.Results, 5)
	assert.Nil(t, p.Next)
}

func TestTransactionTamperedCursor(t *testing.T) {
	ts := newTestServer(t)
	f := newHistoryFixture(t, ts)
	var p cursorPageOf[sika.Transaction]
	ts.call(t, "GET", "/api/v1/transactions/?page_size=3", nil, f.key()...).data(t, &p)
	require.NotNil(t, p.Next)
	u, err := url.Parse(*p.Next)
	require.NoError(t, err)
	raw := u.Query().Get("cursor")
	other := newTestServer(t, func(cfg *Config) { cfg.JWTSecret = []byte("another secret of thirty-two bytes or more") })
	bad := []string{raw[:len(raw)-2], raw + "x", strings.ToUpper(raw), "%00", other.encodeCursor(Cursor{CreatedAt: time.Now(), ID: uuid.New()})}
	for i := range raw {
		b := []byte(raw)
		b[i] = map[bool]byte{true: 'A', false: 'B'}[b[i] != 'A']
		bad = append(bad, string(b))
	}
	for _, c := range bad {
		for _, path := range []string{"/api/v1/transactions/", "/api/v1/transaction-attempts/", "/api/v1/transaction-status-logs/"} {
			r := ts.call(t, "GET", path+"?cursor="+url.QueryEscape(c), nil, f.key()...)
			require.Equal(t, 400, r.Status, "%s cursor %q: %s", path, c, r.Body)
			assert.Equal(t, []string{"Invalid cursor."}, r.fields()["cursor"])
		}
	}
}

func TestTransactionHistoryTenancy(t *testing.T) {
	ts := newTestServer(t)
	f := newHistoryFixture(t, ts)
	visible := map[uuid.UUID]bool{}
	for _, r := range f.rows {
		visible[r.ID] = true
	}
	for _, r := range f.hidden {
		who := "another merchant's"
		if r.Merchant == f.acct.Merchant.ID {
			who = "a LIVE"
		}
		for _, path := range []string{
			"/api/v1/transactions/" + r.ID.String() + "/",
			"/api/v1/transactions/" + r.ID.String() + "/invoice/",
			"/api/v1/transaction-attempts/" + r.AttemptID.String() + "/",
			"/api/v1/transaction-status-logs/" + r.CreationLog.String() + "/",
		} {
			resp := ts.call(t, "GET", path, nil, f.key()...)
			assert.Equal(t, 404, resp.Status, "%s %s", who, path)
			assert.Equal(t, "not_found", resp.code())
		}
	}
	for _, id := range listIDs(t, ts, "/api/v1/transactions/?page_size=200&search=mensah", f.key()...) {
		assert.True(t, visible[id], "search finds only the merchant's TEST rows")
	}
	type withTransaction struct {
		Transaction uuid.UUID `json:"transaction"`
	}
	for _, path := range []string{"/api/v1/transaction-attempts/?page_size=200", "/api/v1/transaction-status-logs/?page_size=200"} {
		for _, p := range walkPages[withTransaction](t, ts, path, f.key()...) {
			for _, x := range p.Results {
				assert.True(t, visible[x.Transaction], "%s lists %s", path, x.Transaction)
			}
		}
	}
	// Another merchant's transaction id as a filter finds nothing.
	for _, path := range []string{"/api/v1/transaction-attempts/?transaction=", "/api/v1/transaction-status-logs/?transaction="} {
		var p cursorPageOf[withTransaction]
		ts.call(t, "GET", path+f.hidden[1].ID.String(), nil, f.key()...).data(t, &p)
		assert.Empty(t, p.Results, path)
	}
}

// TestHistoryRoutesOrder: /transactions/export/ is not taken for a transaction id, with or
// without its trailing slash.
func TestHistoryRoutesOrder(t *testing.T) {
	ts := newTestServer(t)
	acct := ts.newAccount(t, true)
	for _, path := range []string{"/api/v1/transactions/export/", "/api/v1/transactions/export"} {
		r := ts.call(t, "GET", path, nil, acct.key(sika.EnvironmentTest, sika.ScopeBoth)...)
		assert.Equal(t, 200, r.Status, "%s: %s", path, r.Body)
		assert.Equal(t, "text/csv; charset=utf-8", r.Header.Get("Content-Type"), path)
	}
	r := ts.call(t, "GET", "/api/v1/transactions/not-a-uuid/", nil, acct.key(sika.EnvironmentTest, sika.ScopeBoth)...)
	assert.Equal(t, 404, r.Status)
}

func TestAttemptsAndStatusLogs(t *testing.T) {
	ts := newTestServer(t)
	f := newHistoryFixture(t, ts)

	type attemptRow struct {
		id, tx  uuid.UUID
		gateway string
		status  sika.TransactionStatus
		at      time.Time
	}
	type logRow struct {
		id, tx uuid.UUID
		to     sika.TransactionStatus
		by     sika.Trigger
		at     time.Time
	}
	var attempts []attemptRow
	var logs []logRow
	for _, r := range f.rows {
		logs = append(logs, logRow{r.CreationLog, r.ID, sika.StatusPending, sika.TriggerClient, r.CreatedAt})
		if r.AttemptID != uuid.Nil {
			attempts = append(attempts, attemptRow{r.AttemptID, r.ID, r.Gateway, r.Status, r.CreatedAt})
			logs = append(logs, logRow{r.OutcomeLog, r.ID, r.Status, r.Trigger, r.OutcomeLogCreated})
		}
	}
	newestFirst(attempts, func(a attemptRow) time.Time { return a.at }, func(a attemptRow) uuid.UUID { return a.id })
	newestFirst(logs, func(l logRow) time.Time { return l.at }, func(l logRow) uuid.UUID { return l.id })
	attemptIDs := func(keep func(attemptRow) bool) []uuid.UUID {
		return idsOf(attempts, keep, func(a attemptRow) uuid.UUID { return a.id })
	}
	logIDs := func(keep func(logRow) bool) []uuid.UUID {
		return idsOf(logs, keep, func(l logRow) uuid.UUID { return l.id })
	}
	type idOnly struct {
		ID uuid.UUID `json:"id"`
	}
	list := func(path string) []uuid.UUID {
		var out []uuid.UUID
		for _, p := range walkPages[idOnly](t, ts, path, f.key()...) {
			for _, x := range p.Results {
				out = append(out, x.ID)
			}
		}
		return out
	}
	target := f.rows[4].ID
	attemptCases := map[string]func(attemptRow) bool{
		"":                               func(attemptRow) bool { return true },
		"status=SUCCESS":                 func(a attemptRow) bool { return a.status == sika.StatusSuccess },
		"status=failed":                  func(a attemptRow) bool { return a.status == sika.StatusFailed },
		"status=PENDING":                 func(attemptRow) bool { return false },
		"gateway=sandbox-b":              func(a attemptRow) bool { return a.gateway == "sandbox-b" },
		"gateway=nowhere":                func(attemptRow) bool { return false },
		"transaction=" + target.String(): func(a attemptRow) bool { return a.tx == target },
		"status=SUCCESS&gateway=sandbox-a": func(a attemptRow) bool {
			return a.status == sika.StatusSuccess && a.gateway == "sandbox-a"
		},
	}
	for q, keep := range attemptCases {
		assert.Equal(t, attemptIDs(keep), list("/api/v1/transaction-attempts/?page_size=5&"+q), "attempts ?%s", q)
	}
	logCases := map[string]func(logRow) bool{
		"":                               func(logRow) bool { return true },
		"to_status=PENDING":              func(l logRow) bool { return l.to == sika.StatusPending },
		"to_status=FAILED":               func(l logRow) bool { return l.to == sika.StatusFailed },
		"to_status=CANCELLED":            func(logRow) bool { return false },
		"triggered_by=CLIENT":            func(l logRow) bool { return l.by == sika.TriggerClient },
		"triggered_by=webhook_callback":  func(l logRow) bool { return l.by == sika.TriggerWebhookCallback },
		"triggered_by=ADMIN":             func(logRow) bool { return false },
		"transaction=" + target.String(): func(l logRow) bool { return l.tx == target },
		"to_status=SUCCESS&triggered_by=SYSTEM": func(l logRow) bool {
			return l.to == sika.StatusSuccess && l.by == sika.TriggerSystem
		},
	}
	for q, keep := range logCases {
		assert.Equal(t, logIDs(keep), list("/api/v1/transaction-status-logs/?page_size=5&"+q), "status logs ?%s", q)
	}

	// Cursor walks both ways.
	checkCursorWalk(t, ts, "/api/v1/transaction-attempts/?page_size=4", attemptIDs(func(attemptRow) bool { return true }), f.key())
	checkCursorWalk(t, ts, "/api/v1/transaction-status-logs/?page_size=4", logIDs(func(logRow) bool { return true }), f.key())

	// Items and details are the objects of the transaction detail.
	var detail sika.TransactionDetail
	ts.call(t, "GET", "/api/v1/transactions/"+target.String()+"/", nil, f.key()...).data(t, &detail)
	require.Len(t, detail.Attempts, 1)
	require.Len(t, detail.StatusLogs, 2)
	var attemptsPage cursorPageOf[sika.TransactionAttempt]
	ts.call(t, "GET", "/api/v1/transaction-attempts/?transaction="+target.String(), nil, f.key()...).data(t, &attemptsPage)
	assert.Equal(t, detail.Attempts, attemptsPage.Results)
	var a sika.TransactionAttempt
	ts.call(t, "GET", "/api/v1/transaction-attempts/"+detail.Attempts[0].ID.String()+"/", nil, f.key()...).data(t, &a)
	assert.Equal(t, detail.Attempts[0], a)
	var logsPage cursorPageOf[sika.TransactionStatusLog]
	ts.call(t, "GET", "/api/v1/transaction-status-logs/?transaction="+target.String(), nil, f.key()...).data(t, &logsPage)
	assert.Equal(t, []sika.TransactionStatusLog{detail.StatusLogs[1], detail.StatusLogs[0]}, logsPage.Results, "newest first")
	for _, l := range detail.StatusLogs {
		var got sika.TransactionStatusLog
		ts.call(t, "GET", "/api/v1/transaction-status-logs/"+l.ID.String()+"/", nil, f.key()...).data(t, &got)
		assert.Equal(t, l, got)
	}
	for _, path := range []string{"/api/v1/transaction-attempts/" + uuid.NewString() + "/", "/api/v1/transaction-status-logs/nope/"} {
		assert.Equal(t, 404, ts.call(t, "GET", path, nil, f.key()...).Status, path)
	}

	// Validation.
	for path, fields := range map[string][]string{
		"/api/v1/transaction-attempts/?status=CANCELLED":                  {"status"},
		"/api/v1/transaction-attempts/?transaction=42&page_size=0":        {"transaction", "page_size"},
		"/api/v1/transaction-status-logs/?to_status=DONE&triggered_by=ME": {"to_status", "triggered_by"},
		"/api/v1/transaction-status-logs/?transaction=x&cursor=x":         {"transaction", "cursor"},
	} {
		r := ts.call(t, "GET", path, nil, f.key()...)
		require.Equal(t, 400, r.Status, path)
		var got []string
		for field := range r.fields() {
			got = append(got, field)
		}
		assert.ElementsMatch(t, fields, got, path)
	}
}

// TestHistoryOfRealPayments: payments made through the whole stack (sandbox, Temporal, worker)
// appear in the lists, with the same attempts and status logs as their detail.
func TestHistoryOfRealPayments(t *testing.T) {
	ps := payments(t)
	acct := ps.newAccount(t, true)
	ok := ps.pay(t, acct, benin("97000123"))
	declined := ps.pay(t, acct, benin("97000001"))
	okDetail := ps.final(t, acct, ok.ID, 20*time.Second)
	declinedDetail := ps.final(t, acct, declined.ID, 20*time.Second)
	key := acct.key(sika.EnvironmentTest, sika.ScopePayin)

	assert.Equal(t, []uuid.UUID{declined.ID, ok.ID}, listIDs(t, ps.testServer, "/api/v1/transactions/", key...))
	assert.Equal(t, []uuid.UUID{declined.ID}, listIDs(t, ps.testServer, "/api/v1/transactions/?status=FAILED", key...))
	assert.Equal(t, []uuid.UUID{ok.ID}, listIDs(t, ps.testServer, "/api/v1/transactions/?search="+ok.Reference, key...))
	assert.Equal(t, []uuid.UUID{ok.ID}, listIDs(t, ps.testServer, "/api/v1/transactions/?search=97000123", key...))
	if okDetail.GatewayReference != "" {
		assert.Equal(t, []uuid.UUID{ok.ID}, listIDs(t, ps.testServer, "/api/v1/transactions/?search="+url.QueryEscape(okDetail.GatewayReference), key...))
	}
	for _, d := range []sika.TransactionDetail{okDetail, declinedDetail} {
		var attempts cursorPageOf[sika.TransactionAttempt]
		ps.call(t, "GET", "/api/v1/transaction-attempts/?transaction="+d.ID.String(), nil, key...).data(t, &attempts)
		assert.ElementsMatch(t, d.Attempts, attempts.Results)
		var logs cursorPageOf[sika.TransactionStatusLog]
		ps.call(t, "GET", "/api/v1/transaction-status-logs/?transaction="+d.ID.String(), nil, key...).data(t, &logs)
		assert.ElementsMatch(t, d.StatusLogs, logs.Results)
	}
	r := ps.call(t, "GET", "/api/v1/transactions/"+ok.ID.String()+"/invoice/?lang=en", nil, key...)
	assert.Equal(t, 200, r.Status, "%s", r.Body)
	assert.Equal(t, "application/pdf", r.Header.Get("Content-Type"))
	text := pdfText(t, r.Body)
	assert.Contains(t, text, ok.Reference)
	assert.Contains(t, text, "Koffi Mensah")
	r = ps.call(t, "GET", "/api/v1/transactions/"+declined.ID.String()+"/invoice/", nil, key...)
	assert.Equal(t, 422, r.Status)
	assert.Equal(t, "invoice_unavailable", r.code())
}
