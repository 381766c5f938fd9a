package api

import (
	"bytes"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"codeberg.org/go-pdf/fpdf"
	"github.com/google/uuid"
	"github.com/ledongthuc/pdf"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika"
)

// pdfText extracts the text of a PDF with a pure-Go reader, no-break spaces as spaces.
func pdfText(t *testing.T, body []byte) string {
	t.Helper()
	r, err := pdf.NewReader(bytes.NewReader(body), int64(len(body)))
	require.NoError(t, err, "not a PDF: %.200q", body)
	var b strings.Builder
	for i := 1; i <= r.NumPage(); i++ {
		text, err := r.Page(i).GetPlainText(nil)
		require.NoError(t, err)
		b.WriteString(text)
	}
	return strings.ReplaceAll(b.String(), "\u00a0", " ")
}

// invoiceRow is a successful collection whose fee split (432.00 + 567.00) appears nowhere else
// in its invoice: ids, references and names are chosen without those digits.
func invoiceRow(t *testing.T, acct *account) historyRow {
	t.Helper()
	free := func(s string) bool { return !strings.Contains(s, "432") && !strings.Contains(s, "567") }
	r := historyRow{Merchant: acct.Merchant.ID, Name: "Adjoa Kpodar", Email: "adjoa.kpodar@example.com", Phone: "+22997001234",
		Desc: "Commande spéciale : été", GatewayReference: "OPREF-ABC", CreatedAt: time.Date(2026, 1, 31, 9, 30, 0, 0, time.UTC),
		Requested: "98765.00", ClientFee: "999.00", GatewayFee: "432.00", PlatformFee: "567.00", Debited: "99764.00", Net: "98765.00"}
	for r.ID = uuid.New(); !free(r.ID.String()); r.ID = uuid.New() {
	}
	for {
		ref, err := sika.NewReference("PAY", r.CreatedAt)
		require.NoError(t, err)
		if r.Reference = ref; free(ref) {
			break
		}
	}
	_, err := testStore.Pool().Exec(t.Context(), `UPDATE merchants SET name = 'Boutique Élégance' WHERE id = $1`, acct.Merchant.ID)
	require.NoError(t, err)
	testStore.FlushReadCache() // as the notification of the change does, without waiting for it
	insertHistoryRow(t, &r)
	return r
}

func TestInvoice(t *testing.T) {
	ts := newTestServer(t)
	acct := ts.newAccount(t, true)
	row := invoiceRow(t, acct)
	key := acct.key(sika.EnvironmentTest, sika.ScopePayout)
	path := "/api/v1/transactions/" + row.ID.String() + "/invoice/"

	fetch := func(query string, headers ...string) (string, *response) {
		t.Helper()
		r := ts.call(t, "GET", path+query, nil, append(key, headers...)...)
		require.Equal(t, 200, r.Status, "%s", r.Body)
		assert.Equal(t, "application/pdf", r.Header.Get("Content-Type"))
		req := httptest.NewRequest("GET", path+query, nil)
		ts.validator.check(t, req, r.Status, r.Header, r.Body)
		return pdfText(t, r.Body), r
	}
	common := []string{row.Reference, "Boutique Élégance", "Adjoa Kpodar", "adjoa.kpodar@example.com", "+22997001234",
		"Commande spéciale : été", "MTN Mobile Money (MTN_BJ)", "OPREF-ABC", row.ID.String()}
	never := []string{"432", "567", "gateway", "platform", "plateforme", "Frais opérateur", "Frais de la plateforme"}

	fr, r := fetch("")
	frBody := r.Body
	assert.Equal(t, `attachment; filename="facture-`+row.Reference+`.pdf"`, r.Header.Get("Content-Disposition"))
	assert.Equal(t, "fr", r.Header.Get("Content-Language"))
	for _, s := range append(common, "Facture", "Marchand", "Client", "Montant demandé", "Frais", "Total payé",
		"98 765 FCFA", "999 FCFA", "99 764 FCFA", "31 janvier 2026", "Payé le") {
		assert.Contains(t, fr, s)
	}
	checkAmountsRightAligned(t, frBody, "Total payé", "Montant", "98\u00a0765\u00a0FCFA", "999\u00a0FCFA", "99\u00a0764\u00a0FCFA")
	en, r := fetch("?lang=EN")
	assert.Equal(t, `attachment; filename="invoice-`+row.Reference+`.pdf"`, r.Header.Get("Content-Disposition"))
	for _, s := range append(common, "Invoice", "Merchant", "Customer", "Requested amount", "Fees", "Total paid",
		"XOF 98,765", "XOF 999", "XOF 99,764", "31 January 2026", "Paid on") {
		assert.Contains(t, en, s)
	}
	for _, text := range []string{fr, en} {
		for _, s := range never {
			assert.NotContains(t, strings.ToLower(text), strings.ToLower(s), "the invoice never shows the fee split")
		}
	}
	checkAmountsRightAligned(t, r.Body, "Total paid", "Amount", "XOF\u00a098,765", "XOF\u00a0999", "XOF\u00a099,764")

	for header, want := range map[string]string{
		"en-US,en;q=0.9,fr;q=0.5": "Invoice", "fr-CA, en;q=0.8": "Facture", "de-DE": "Facture",
		"en;q=0.4, fr;q=0.6": "Facture", "*": "Facture", "EN": "Invoice",
	} {
		text, _ := fetch("", "Accept-Language", header)
		assert.Contains(t, text, want, "Accept-Language: %s", header)
	}
	text, _ := fetch("?lang=fr", "Accept-Language", "en")
	assert.Contains(t, text, "Facture", "lang wins over Accept-Language")

	bad := ts.call(t, "GET", path+"?lang=de", nil, key...)
	assert.Equal(t, 400, bad.Status)
	assert.Contains(t, bad.fields(), "lang")
}

// checkAmountsRightAligned checks that the amount column's header and amounts all end at the
// same x, the right edge of the page's text, with the bold total label ending before them. A
// text run's end is its start (from the PDF) plus its width in Helvetica (from fpdf's metrics).
func checkAmountsRightAligned(t *testing.T, body []byte, totalLabel, header string, amounts ...string) {
	t.Helper()
	r, err := pdf.NewReader(bytes.NewReader(body), int64(len(body)))
	require.NoError(t, err)
	type run struct {
		x float64
		s string
	}
	var runs []run
	for _, g := range r.Page(1).Content().Text {
		if n := len(runs); n > 0 && runs[n-1].x == g.X {
			runs[n-1].s += g.S
			continue
		}
		runs = append(runs, run{g.X, g.S})
	}
	metrics := fpdf.New("P", "mm", "A4", "")
	tr := metrics.UnicodeTranslatorFromDescriptor("")
	end := func(s string, bold bool) float64 {
		for _, r := range runs {
			if r.s == s {
				style := ""
				if bold {
					style = "B"
				}
				metrics.SetFont("Helvetica", style, 10)
				return r.x + metrics.GetStringWidth(tr(s))*72/25.4
			}
		}
		t.Fatalf("no text run %q in %v", s, runs)
		return 0
	}
	right := end(header, true)
	const pageRight = (210 - invoiceMargin) * 72 / 25.4
	assert.InDelta(t, pageRight, right, 5, "the amount column ends at the right margin")
	for i, a := range amounts {
		assert.InDelta(t, right, end(a, i == len(amounts)-1), 0.5, "%q is right-aligned", a)
	}
	assert.Less(t, end(totalLabel, true), right-invoiceAmountW*72/25.4+1, "the total's label ends before the amount column")
}

func TestInvoiceUnavailable(t *testing.T) {
	ts := newTestServer(t)
	acct := ts.newAccount(t, true)
	key := acct.key(sika.EnvironmentTest, sika.ScopeBoth)
	at := time.Date(2026, 1, 31, 9, 30, 0, 0, time.UTC)
	cases := map[string]historyRow{
		"pending collection":  {Status: sika.StatusPending},
		"failed collection":   {Status: sika.StatusFailed},
		"successful payout":   {Type: sika.TypePayout, Status: sika.StatusSuccess},
		"successful transfer": {Type: sika.TypeTransfer, Status: sika.StatusSuccess},
		"failed payout":       {Type: sika.TypePayout, Status: sika.StatusFailed},
	}
	for name, r := range cases {
		r.Merchant, r.CreatedAt = acct.Merchant.ID, at
		insertHistoryRow(t, &r)
		resp := ts.call(t, "GET", "/api/v1/transactions/"+r.ID.String()+"/invoice/", nil, key...)
		assert.Equal(t, 422, resp.Status, name)
		assert.Equal(t, "invoice_unavailable", resp.code(), name)
	}
	// A successful top-up is inbound: it has one.
	topUp := historyRow{Merchant: acct.Merchant.ID, Type: sika.TypeTopUp, CreatedAt: at}
	insertHistoryRow(t, &topUp)
	resp := ts.call(t, "GET", "/api/v1/transactions/"+topUp.ID.String()+"/invoice/", nil, key...)
	assert.Equal(t, 200, resp.Status, "%s", resp.Body)

	for _, path := range []string{"/api/v1/transactions/" + uuid.NewString() + "/invoice/", "/api/v1/transactions/nope/invoice/"} {
		resp := ts.call(t, "GET", path, nil, key...)
		assert.Equal(t, 404, resp.Status, path)
	}
}

func TestInvoiceMoney(t *testing.T) {
	fr, en := invoiceLanguages["fr"], invoiceLanguages["en"]
	cases := []struct {
		amount, currency, fr, en string
	}{
		{"0", "XOF", "0\u00a0FCFA", "XOF\u00a00"},
		{"999", "XOF", "999\u00a0FCFA", "XOF\u00a0999"},
		{"1000", "XOF", "1\u00a0000\u00a0FCFA", "XOF\u00a01,000"},
		{"1234567.00", "XAF", "1\u00a0234\u00a0567\u00a0FCFA", "XAF\u00a01,234,567"},
		{"12.5", "CDF", "12,50\u00a0CDF", "CDF\u00a012.50"},
		{"123456.78", "CDF", "123\u00a0456,78\u00a0CDF", "CDF\u00a0123,456.78"},
	}
	for _, c := range cases {
		d := decimal.RequireFromString(c.amount)
		assert.Equal(t, c.fr, fr.money(d, c.currency), c.amount)
		assert.Equal(t, c.en, en.money(d, c.currency), c.amount)
	}
	at := time.Date(2026, 8, 5, 7, 4, 0, 0, time.FixedZone("WAT", 3600))
	assert.Equal(t, "5 août 2026, 06:04 UTC", fr.dateTime(at))
	assert.Equal(t, "5 August 2026, 06:04 UTC", en.dateTime(at))
}

// TestInvoiceRendersLongText: names longer than their column are cut with an ellipsis rather
// than overflowing into the next column.
func TestInvoiceRendersLongText(t *testing.T) {
	var buf bytes.Buffer
	inv := invoice{Transaction: sika.Transaction{ID: uuid.New(), Reference: "PAY-20260131-ABCDEFGHJK",
		RequestedAmount: sika.NewAmount(decimal.NewFromInt(1000)), ClientFee: sika.NewAmount(decimal.NewFromInt(15)),
		DebitedAmount: sika.NewAmount(decimal.NewFromInt(1015)), Currency: "XOF", Network: "MTN_BJ",
		CustomerName: strings.Repeat("Très long nom ", 20), CreatedAt: time.Now()}, Merchant: strings.Repeat("Marchand ", 30), NetworkName: "MTN"}
	require.NoError(t, renderInvoice(&buf, inv, invoiceLanguages["fr"], time.Now()))
	text := pdfText(t, buf.Bytes())
	assert.Contains(t, text, "Très long nom")
	assert.Contains(t, text, "…")
	assert.NotContains(t, text, strings.Repeat("Très long nom ", 20))
}
