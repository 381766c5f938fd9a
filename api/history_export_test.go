package api

import (
	"bytes"
	"encoding/csv"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
)

// exportCSV downloads an export, checks it against the OpenAPI document and parses it.
func exportCSV(t *testing.T, ts *testServer, query string, headers ...string) ([][]string, *response) {
	t.Helper()
	path := "/api/v1/transactions/export/" + query
	r := ts.call(t, "GET", path, nil, headers...)
	require.Equal(t, 200, r.Status, "%s", r.Body)
	ts.validator.check(t, httptest.NewRequest("GET", path, nil), r.Status, r.Header, r.Body)
	rd := csv.NewReader(bytes.NewReader(r.Body))
	records, err := rd.ReadAll()
	require.NoError(t, err, "%s", r.Body)
	require.NotEmpty(t, records, "the header row is always there")
	assert.Equal(t, exportColumns, records[0], "header row, in the documented order")
	return records, r
}

// exportRecords maps the data rows of an export by id, each as column → value.
func exportRecords(t *testing.T, records [][]string) (map[uuid.UUID]map[string]string, []uuid.UUID) {
	t.Helper()
	byID := map[uuid.UUID]map[string]string{}
	var order []uuid.UUID
	for _, rec := range records[1:] {
		require.Len(t, rec, len(exportColumns))
		row := map[string]string{}
		for i, c := range exportColumns {
			row[c] = rec[i]
		}
		id := uuid.MustParse(row["id"])
		byID[id] = row
		order = append(order, id)
	}
	return byID, order
}

func TestTransactionExport(t *testing.T) {
	ts := newTestServer(t)
	f := newHistoryFixture(t, ts)
	records, r := exportCSV(t, ts, "", f.key()...)
	assert.Regexp(t, `^attachment; filename="sika-transactions-test-\d{8}T\d{6}Z\.csv"$`, r.Header.Get("Content-Disposition"))
	assert.Equal(t, "text/csv; charset=utf-8", r.Header.Get("Content-Type"))
	assert.Empty(t, r.Header.Get("Content-Length"), "streamed, not buffered")
	rows, order := exportRecords(t, records)
	assert.Equal(t, f.ids(func(historyRow) bool { return true }), order, "every row, newest first, the merchant's TEST rows only")

	// Values of one row: amounts with two decimals, fees included, RFC 3339 UTC timestamps.
	want := f.rows[0]
	got := rows[want.ID]
	assert.Equal(t, want.Reference, got["reference"])
	assert.Equal(t, "1000.00", got["requested_amount"])
	assert.Equal(t, "15.00", got["client_fee"])
	assert.Equal(t, "1015.00", got["debited_amount"])
	assert.Equal(t, "10.00", got["gateway_fee"])
	assert.Equal(t, "5.00", got["platform_fee"])
	assert.Equal(t, "1000.00", got["net_amount"])
	assert.Equal(t, want.CreatedAt.Format(time.RFC3339Nano), got["created_at"])
	assert.Equal(t, string(want.Status), got["status"])
	assert.Equal(t, string(want.Type), got["transaction_type"])
	assert.Equal(t, string(want.Type.FlowDirection()), got["flow_direction"])
	assert.Equal(t, want.Currency, got["currency"])
	assert.Equal(t, want.Country, got["country"])
	assert.Equal(t, want.Network, got["network"])
	assert.Equal(t, want.Name, got["customer_name"])
	assert.Equal(t, want.Email, got["customer_email"])
	assert.Equal(t, want.GatewayReference, got["gateway_reference"])
	assert.Equal(t, "{}", got["metadata"])
	assert.Equal(t, f.acct.Merchant.ID.String(), got["merchant"])
	assert.Equal(t, "TEST", got["environment"])
	assert.Empty(t, got["original_amount"])
	for _, row := range rows {
		for _, c := range []string{"created_at", "updated_at"} {
			_, err := time.Parse(time.RFC3339Nano, row[c])
			assert.NoError(t, err, "%s %q", c, row[c])
			assert.True(t, strings.HasSuffix(row[c], "Z"), "%s in UTC", c)
		}
		for _, c := range []string{"requested_amount", "client_fee", "debited_amount", "gateway_fee", "platform_fee", "net_amount"} {
			assert.Regexp(t, `^\d+\.\d{2}$`, row[c], c)
		}
		assert.Equal(t, row["status"] == "PENDING", row["completed_at"] == "")
	}

	// The filters of the list apply.
	records, _ = exportCSV(t, ts, "?status=FAILED&search=mensah", f.key()...)
	_, order = exportRecords(t, records)
	assert.Equal(t, f.ids(func(r historyRow) bool {
		return r.Status == sika.StatusFailed && strings.Contains(strings.ToLower(r.Name), "mensah")
	}), order)
	records, _ = exportCSV(t, ts, "?merchant="+f.other.Merchant.ID.String(), f.key()...)
	assert.Len(t, records, 1, "another merchant: the header row alone")

	// The LIVE key exports the LIVE rows; the other merchant its own.
	records, r = exportCSV(t, ts, "", f.acct.key(sika.EnvironmentLive, sika.ScopePayin)...)
	assert.Contains(t, r.Header.Get("Content-Disposition"), "sika-transactions-live-")
	_, order = exportRecords(t, records)
	assert.Len(t, order, 6)
	records, _ = exportCSV(t, ts, "", f.other.key(sika.EnvironmentTest, sika.ScopePayin)...)
	_, order = exportRecords(t, records)
	for _, id := range order {
		assert.NotContains(t, f.ids(func(historyRow) bool { return true }), id)
	}

	// Errors are JSON in the envelope (validated against the document by the harness).
	bad := ts.call(t, "GET", "/api/v1/transactions/export/?status=NOPE&created_at__gte=x", nil, f.key()...)
	assert.Equal(t, 400, bad.Status)
	assert.Len(t, bad.fields(), 2)
	assert.Equal(t, "application/json", bad.Header.Get("Content-Type"))
	assert.Equal(t, 401, ts.call(t, "GET", "/api/v1/transactions/export/", nil).Status)
}

func TestTransactionExportNeutralisesFormulas(t *testing.T) {
	ts := newTestServer(t)
	acct := ts.newAccount(t, true)
	at := time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)
	evil := historyRow{Merchant: acct.Merchant.ID, CreatedAt: at, Name: `=HYPERLINK("http://evil.example","x")`,
		Email: "@SUM(1+1)", Desc: "+cmd|' /C calc'!A0", GatewayReference: "-2+3", Phone: "+22997000055"}
	insertHistoryRow(t, &evil)
	tab := historyRow{Merchant: acct.Merchant.ID, CreatedAt: at.Add(-time.Minute), Name: "\tTabbed", Desc: "\r=1+1",
		Recipient: "+2290197000000", Type: sika.TypePayout, Phone: ""}
	insertHistoryRow(t, &tab)
	plain := historyRow{Merchant: acct.Merchant.ID, CreatedAt: at.Add(-2 * time.Minute), Name: "Ama Mensah-Kouassi",
		Desc: "Commande 12, \"rouge\"\nlivrée", Phone: "+22997000056"}
	insertHistoryRow(t, &plain)

	records, _ := exportCSV(t, ts, "", acct.key(sika.EnvironmentTest, sika.ScopePayin)...)
	rows, _ := exportRecords(t, records)
	e := rows[evil.ID]
	assert.Equal(t, `'=HYPERLINK("http://evil.example","x")`, e["customer_name"])
	assert.Equal(t, "'@SUM(1+1)", e["customer_email"])
	assert.Equal(t, "'+cmd|' /C calc'!A0", e["description"])
	assert.Equal(t, "'-2+3", e["gateway_reference"])
	assert.Equal(t, "+22997000055", e["customer_phone"], "an E.164 number is not a formula: kept as it is")
	tb := rows[tab.ID]
	assert.Equal(t, "'\tTabbed", tb["customer_name"])
	assert.Equal(t, "'\r=1+1", tb["description"])
	assert.Equal(t, "+2290197000000", tb["recipient"])
	p := rows[plain.ID]
	assert.Equal(t, "Ama Mensah-Kouassi", p["customer_name"], "a dash inside text is harmless")
	assert.Equal(t, "Commande 12, \"rouge\"\nlivrée", p["description"], "commas, quotes and newlines survive the CSV quoting")
	// No cell of any row starts like a formula, but amounts and E.164 numbers.
	e164 := regexp.MustCompile(`^\+[0-9]+$`)
	for _, row := range rows {
		for c, v := range row {
			if v != "" && strings.ContainsRune("=+-@\t\r", rune(v[0])) {
				assert.Regexp(t, e164, v, "column %s", c)
			}
		}
	}
}

// TestExportColumnsDocumented: the OpenAPI description of the export lists exportColumns in
// order.
func TestExportColumnsDocumented(t *testing.T) {
	v := newOpenAPIValidator(t)
	op := v.doc.Paths.Value("/transactions/export/").Get
	require.NotNil(t, op)
	m := regexp.MustCompile("(?s)Columns, in this order: (.*?)\\.\n").FindStringSubmatch(op.Description)
	require.NotNil(t, m, "the description lists the columns: %s", op.Description)
	var documented []string
	for _, c := range regexp.MustCompile("`([a-z_]+)`").FindAllStringSubmatch(m[1], -1) {
		documented = append(documented, c[1])
	}
	assert.Equal(t, exportColumns, documented)
}

// exportRecordOf is a transaction as a CSV record the way the export wrote it when it read each
// row into a sika.Transaction and wrote it with encoding/csv: the format the export's lines must
// keep, byte for byte (TestExportLinesKeepTheTransactionRecordFormat).
func exportRecordOf(t sika.Transaction) []string {
	amount := func(a sika.Amount) string { return sika.FormatAmount(a.Decimal) }
	metadata := string(t.Metadata)
	if metadata == "" {
		metadata = "{}"
	}
	asIs := func(s string) string { return s }
	return []string{
		t.ID.String(), csvText(t.Reference), csvTime(t.CreatedAt), csvOptional(t.CompletedAt, csvTime), string(t.Status),
		string(t.Type), string(t.FlowDirection),
		t.Currency, amount(t.RequestedAmount), amount(t.ClientFee), amount(t.DebitedAmount), amount(t.GatewayFee),
		amount(t.PlatformFee), amount(t.NetAmount),
		csvOptional(t.OriginalAmount, amount), csvOptional(t.OriginalCurrency, asIs), csvOptional(t.ExchangeRate, decimal.Decimal.String),
		t.Country, t.Network,
		csvText(t.CustomerName), csvText(t.CustomerEmail), csvPhone(t.CustomerPhone), csvPhone(t.Recipient),
		csvText(t.Description), string(t.FeeChargeMode),
		csvText(t.GatewayReference), csvOptional(t.CheckoutSession, uuid.UUID.String),
		csvOptional(t.PaymentLink, uuid.UUID.String), csvText(t.FailureCode), csvText(t.FailureMessage),
		csvText(metadata), t.Merchant.String(), string(t.Environment), csvTime(t.UpdatedAt),
	}
}

// TestExportLinesKeepTheTransactionRecordFormat: the export, which writes its lines straight
// from the columns Postgres sends, writes exactly the file that encoding/csv made of the
// transactions' records (exportRecordOf), on rows that fill every column: formulas, quotes,
// commas, line breaks, leading spaces, `\.`, NULLs, metadata JSON, a currency conversion,
// checkout sessions and payment links, timestamps with and without fractions.
func TestExportLinesKeepTheTransactionRecordFormat(t *testing.T) {
	ts := newTestServer(t)
	acct := ts.newAccount(t, true)
	at := time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)
	rows := []historyRow{
		{Name: `=HYPERLINK("http://evil.example","x")`, Email: "@SUM(1+1)", Desc: "+cmd|' /C calc'!A0", GatewayReference: "-2+3",
			Phone: "+22997000055", Status: sika.StatusFailed, LinkSlug: "promo", SessionSlug: "cs_1"},
		{Name: "\tTabbed", Desc: "\r=1+1, \"x\"", Recipient: "+2290197000000", Type: sika.TypePayout, Phone: "", Status: sika.StatusPending},
		{Name: " Espace devant", Email: "\u00a0insécable@example.com", Desc: `\.`, GatewayReference: `"GW"`, Phone: "97 00 01 23",
			Recipient: "=1", Network: "MTN_CM", Type: sika.TypeTopUp},
		{Name: "Ama Mensah-Kouassi", Desc: "Commande 12, \"rouge\"\nlivrée\r\nà Cotonou", Phone: "+22997000056",
			Network: "VODACOM_CD", Type: sika.TypeTransfer, Status: sika.StatusFailed, Requested: "123456789.05",
			ClientFee: "0.10", GatewayFee: "0.05", PlatformFee: "0.05", Debited: "123456789.15", Net: "123456789.05"},
		{Name: "", Email: "", Phone: "", Desc: "", Status: sika.StatusSuccess},
	}
	for i := range rows {
		rows[i].Merchant, rows[i].CreatedAt = acct.Merchant.ID, at.Add(-time.Duration(i)*time.Minute)
		insertHistoryRow(t, &rows[i])
	}
	pool := testStore.Pool()
	_, err := pool.Exec(t.Context(), `UPDATE transactions SET original_amount = 1.52, original_currency = 'EUR',
			exchange_rate = 655.9570000000, checkout_session_id = gen_random_uuid(), payment_link_id = gen_random_uuid(),
			metadata = '{"order": "=1+1, \"A\"", "lines": [1, 2.50], "note": "ligne\nsuivante", "é": null}',
			failure_message = '-1 declined, "hard"', completed_at = created_at + interval '1.23045 seconds',
			updated_at = created_at + interval '2.000001 seconds'
		WHERE id = $1`, rows[0].ID)
	require.NoError(t, err)
	_, err = pool.Exec(t.Context(), `UPDATE transactions SET original_amount = 7, original_currency = 'USD',
			exchange_rate = 0.0015240000, metadata = '{"a": {"b": "c,d"}}', failure_code = '@code'
		WHERE id = $1`, rows[2].ID)
	require.NoError(t, err)
	_, err = pool.Exec(t.Context(), `UPDATE transactions SET exchange_rate = 1, original_amount = 1000, original_currency = 'XOF',
			status = 'CANCELLED', created_at = created_at + interval '0.5 seconds' WHERE id = $1`, rows[3].ID)
	require.NoError(t, err)

	txs, _, err := testStore.ListTransactions(t.Context(), acct.Merchant.ID, sika.EnvironmentTest, store.TransactionFilter{},
		store.KeysetRequest{Limit: 100})
	require.NoError(t, err)
	require.Len(t, txs, len(rows))
	var want bytes.Buffer
	out := csv.NewWriter(&want)
	require.NoError(t, out.Write(exportColumns))
	for _, tx := range txs {
		require.NoError(t, out.Write(exportRecordOf(tx)))
	}
	out.Flush()
	require.NoError(t, out.Error())

	r := ts.call(t, "GET", "/api/v1/transactions/export/", nil, acct.key(sika.EnvironmentTest, sika.ScopePayin)...)
	require.Equal(t, 200, r.Status, "%s", r.Body)
	assert.Equal(t, want.String(), string(r.Body))
	assert.Contains(t, string(r.Body), "1.52,EUR,655.957,", "the conversion is there")
	assert.Contains(t, string(r.Body), `,"{""a"": {""b"": ""c,d""}}",`, "metadata is JSON text in one quoted cell")
}

// TestAppendCSVIsEncodingCSV: appendCSV and appendText quote as encoding/csv's Writer does.
func TestAppendCSVIsEncodingCSV(t *testing.T) {
	fields := []string{"", "a", `\.`, `\.x`, " a", "\u00a0a", "\u2003a", "a ", "a,b", `a"b`, `"`, "a\rb", "a\nb", "\r\n",
		"=1", "+1", "-1", "@1", "\t1", "\r1", "=a,b", `="x"`, "é", "\xff", "'", "=", "\t"}
	for _, f := range fields {
		var want bytes.Buffer
		w := csv.NewWriter(&want)
		require.NoError(t, w.Write([]string{f, csvText(f), csvPhone(f)}))
		w.Flush()
		got := appendCSV(nil, []byte(f))
		got = appendText(append(got, ','), []byte(f))
		got = append(appendPhone(append(got, ','), []byte(f)), '\n')
		assert.Equal(t, want.String(), string(got), "%q", f)
	}
	var want bytes.Buffer
	w := csv.NewWriter(&want)
	require.NoError(t, w.Write(exportColumns))
	w.Flush()
	assert.Equal(t, want.String(), string(appendHeader(nil)))
}

func TestCSVPhoneKeepsOnlyE164AsIs(t *testing.T) {
	for in, want := range map[string]string{
		"+22997000123":      "+22997000123",
		"+1234":             "+1234",
		"+123":              "'+123", // too short for E.164: free text, and a leading + is a formula
		"+1234567890123456": "'+1234567890123456",
		"+2299700012a":      "'+2299700012a",
		"+229 97 00 01 23":  "'+229 97 00 01 23",
		"97000123":          "97000123",
		"=HYPERLINK(1)":     "'=HYPERLINK(1)",
		"":                  "",
	} {
		assert.Equal(t, want, csvPhone(in), "%q", in)
	}
}
