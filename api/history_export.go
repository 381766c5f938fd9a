package api

import (
	"encoding/csv"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/sikahq/sika"
)

// exportColumns is the header row of the CSV export, in its fixed order (also listed in the
// OpenAPI description of GET /transactions/export/; TestExportColumnsDocumented keeps the two
// equal). Names are those of the JSON transaction.
var exportColumns = []string{
	"id", "reference", "created_at", "completed_at", "status", "transaction_type", "flow_direction",
	"currency", "requested_amount", "client_fee", "debited_amount", "gateway_fee", "platform_fee", "net_amount",
	"original_amount", "original_currency", "exchange_rate", "country", "network",
	"customer_name", "customer_email", "customer_phone", "recipient", "description", "fee_charge_mode",
	"gateway_reference", "checkout_session", "payment_link", "failure_code", "failure_message",
	"metadata", "merchant", "environment", "updated_at",
}

// exportRecord is a transaction as a CSV row, in exportColumns order. Amounts have two
// decimals, timestamps are RFC 3339 in UTC, absent values are empty cells. Text that customers,
// merchants or operators wrote goes through csvText.
func exportRecord(t sika.Transaction) []string {
	amount := func(a sika.Amount) string { return sika.FormatAmount(a.Decimal) }
	metadata := string(t.Metadata)
	if metadata == "" {
		metadata = "{}"
	}
	return []string{
		t.ID.String(), csvText(t.Reference), csvTime(t.CreatedAt), csvOptional(t.CompletedAt, csvTime), string(t.Status),
		string(t.Type), string(t.FlowDirection),
		t.Currency, amount(t.RequestedAmount), amount(t.ClientFee), amount(t.DebitedAmount), amount(t.GatewayFee),
		amount(t.PlatformFee), amount(t.NetAmount),
		csvOptional(t.OriginalAmount, amount), csvOptional(t.OriginalCurrency, csvAsIs), csvOptional(t.ExchangeRate, decimal.Decimal.String),
		t.Country, t.Network,
		csvText(t.CustomerName), csvText(t.CustomerEmail), csvPhone(t.CustomerPhone), csvPhone(t.Recipient),
		csvText(t.Description), string(t.FeeChargeMode),
		csvText(t.GatewayReference), csvOptional(t.CheckoutSession, uuid.UUID.String),
		csvOptional(t.PaymentLink, uuid.UUID.String), csvText(t.FailureCode), csvText(t.FailureMessage),
		csvText(metadata), t.Merchant.String(), string(t.Environment), csvTime(t.UpdatedAt),
	}
}

func csvTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// csvOptional formats a value that may be absent: an empty cell when it is.
func csvOptional[T any](v *T, format func(T) string) string {
	if v == nil {
		return ""
	}
	return format(*v)
}

func csvAsIs(s string) string { return s }

// csvText neutralises CSV formula injection in free text: a cell that a spreadsheet would read
// as a formula (starting with =, +, -, @, a tab or a carriage return) is prefixed with a single
// quote, which spreadsheets show as text. Only free text goes through it: amounts, ids, enums
// and timestamps are written by the service and cannot start so.
func csvText(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// isE164 says whether s is a normalized phone number: "+" and 4 to 15 digits, which no
// spreadsheet runs as a formula.
func isE164(s string) bool {
	if len(s) < 5 || len(s) > 16 || s[0] != '+' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// csvPhone keeps an E.164 number as it is (its leading + is not a formula) and treats anything
// else as free text.
func csvPhone(s string) string {
	if isE164(s) {
		return s
	}
	return csvText(s)
}

// exportFlushRows is how many rows are written between two flushes to the client.
const exportFlushRows = 500

// exportStallTimeout bounds how long a client may stop reading an export: the export holds a
// Postgres connection and transaction, which a stalled client must not keep forever. The write
// deadline moves forward at every flush.
const exportStallTimeout = time.Minute

// exportTransactions streams the filtered transactions as CSV, newest first, straight from the
// Postgres result: rows are written and flushed as they arrive, so memory stays constant. A
// failure before the first row is an ordinary JSON error; once the file has started, a failure
// aborts the connection, so that a truncated file never looks complete.
func (s *Server) exportTransactions(w http.ResponseWriter, r *http.Request) error {
	merchant, env := tenant(r.Context())
	return s.streamTransactionsCSV(w, r, merchant, env)
}

// streamTransactionsCSV writes the export of the request's filters (read as GET /transactions/
// reads them) for a merchant and environment: the API's export, and the dashboard's, which
// acts for the merchant of its session.
func (s *Server) streamTransactionsCSV(w http.ResponseWriter, r *http.Request, merchant uuid.UUID, env sika.Environment) error {
	f, err := s.transactionFilter(r)
	if err != nil {
		return err
	}
	out := csv.NewWriter(w)
	rc := http.NewResponseController(w)
	// The deadline is the connection's: a keep-alive connection must not carry it to the next request.
	defer func() { _ = rc.SetWriteDeadline(time.Time{}) }()
	started, rows := false, 0
	start := func() error {
		started = true
		_ = rc.SetWriteDeadline(time.Now().Add(exportStallTimeout))
		h := w.Header()
		h.Set("Content-Type", "text/csv; charset=utf-8")
		h.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s"`, exportFileName(env, s.cfg.Now())))
		h.Set("Cache-Control", "no-store")
		h.Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(http.StatusOK)
		return out.Write(exportColumns)
	}
	err = s.store.ExportTransactions(r.Context(), merchant, env, f, func(t sika.Transaction) error {
		if !started {
			if err := start(); err != nil {
				return err
			}
		}
		if err := out.Write(exportRecord(t)); err != nil {
			return err
		}
		if rows++; rows%exportFlushRows == 0 {
			out.Flush()
			if err := out.Error(); err != nil {
				return err
			}
			_ = rc.Flush()
			_ = rc.SetWriteDeadline(time.Now().Add(exportStallTimeout))
		}
		return nil
	})
	if err == nil && !started {
		err = start()
	}
	if err != nil && !started {
		return err
	}
	if err == nil {
		out.Flush()
		err = out.Error()
	}
	if err != nil {
		logFrom(r.Context()).Warn("export aborted", "rows", rows, "err", err)
		panic(http.ErrAbortHandler)
	}
	return nil
}

// exportFileName names the export after the environment and the time it was made.
func exportFileName(env sika.Environment, now time.Time) string {
	return "sika-transactions-" + strings.ToLower(string(env)) + "-" + now.UTC().Format("20060102T150405Z") + ".csv"
}
