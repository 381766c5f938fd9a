package api

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
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

// appendExportRecord appends a row of the export as a CSV line, in exportColumns order. Amounts
// have two decimals, timestamps are RFC 3339 in UTC, absent values are empty cells. Text that
// customers, merchants or operators wrote goes through appendText (csvText's neutralisation).
// The line is what encoding/csv's Writer made of the row's fields (appendCSV).
func appendExportRecord(b []byte, r *store.ExportRow) []byte {
	metadata := r.Metadata
	if len(metadata) == 0 {
		metadata = emptyMetadata
	}
	b = appendUUID(b, r.ID)
	b = appendText(append(b, ','), r.Reference)
	b = appendTime(append(b, ','), r.CreatedAt)
	b = appendTime(append(b, ','), r.CompletedAt)
	for _, f := range [...][]byte{r.Status, r.Type, r.FlowDirection, r.Currency, r.RequestedAmount, r.ClientFee,
		r.DebitedAmount, r.GatewayFee, r.PlatformFee, r.NetAmount, r.OriginalAmount, r.OriginalCurrency,
		r.ExchangeRate, r.Country, r.Network} {
		b = appendCSV(append(b, ','), f)
	}
	b = appendText(append(b, ','), r.CustomerName)
	b = appendText(append(b, ','), r.CustomerEmail)
	b = appendPhone(append(b, ','), r.CustomerPhone)
	b = appendPhone(append(b, ','), r.Recipient)
	b = appendText(append(b, ','), r.Description)
	b = appendCSV(append(b, ','), r.FeeChargeMode)
	b = appendText(append(b, ','), r.GatewayReference)
	b = appendNullUUID(append(b, ','), r.CheckoutSession)
	b = appendNullUUID(append(b, ','), r.PaymentLink)
	b = appendText(append(b, ','), r.FailureCode)
	b = appendText(append(b, ','), r.FailureMessage)
	b = appendText(append(b, ','), metadata)
	b = appendUUID(append(b, ','), r.Merchant)
	b = appendCSV(append(b, ','), r.Environment)
	b = appendTime(append(b, ','), r.UpdatedAt)
	return append(b, '\n')
}

var emptyMetadata = []byte("{}")

// appendTime appends t in RFC 3339 in UTC, or nothing for the zero time (absent).
func appendTime(b []byte, t time.Time) []byte {
	if t.IsZero() {
		return b
	}
	return t.UTC().AppendFormat(b, time.RFC3339Nano)
}

// appendUUID appends id in its canonical form (uuid.UUID.String's) without allocating.
func appendUUID(b []byte, id uuid.UUID) []byte {
	var s [36]byte
	hex.Encode(s[0:8], id[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], id[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], id[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], id[8:10])
	s[23] = '-'
	hex.Encode(s[24:], id[10:])
	return append(b, s[:]...)
}

func appendNullUUID(b []byte, id uuid.NullUUID) []byte {
	if !id.Valid {
		return b
	}
	return appendUUID(b, id.UUID)
}

func csvTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// csvOptional formats a value that may be absent: an empty cell when it is.
func csvOptional[T any](v *T, format func(T) string) string {
	if v == nil {
		return ""
	}
	return format(*v)
}

// looksLikeFormula says whether a spreadsheet would read a cell as a formula: it starts with
// =, +, -, @, a tab or a carriage return.
func looksLikeFormula[S ~string | ~[]byte](s S) bool {
	return len(s) > 0 && strings.IndexByte("=+-@\t\r", s[0]) >= 0
}

// csvText neutralises CSV formula injection in free text: a cell that a spreadsheet would read
// as a formula (looksLikeFormula) is prefixed with a single quote, which spreadsheets show as
// text. Only free text goes through it: amounts, ids, enums and timestamps are written by the
// service and cannot start so.
func csvText(s string) string {
	if looksLikeFormula(s) {
		return "'" + s
	}
	return s
}

// appendText appends free text as csvText writes it, as encoding/csv would quote that.
func appendText(b, s []byte) []byte {
	if looksLikeFormula(s) {
		// Behind the quote the field begins with neither a space nor `\.`.
		return appendField(b, "'", s, hasCSVSpecial(s))
	}
	return appendCSV(b, s)
}

// isE164 says whether s is a normalized phone number: "+" and 4 to 15 digits, which no
// spreadsheet runs as a formula.
func isE164[S ~string | ~[]byte](s S) bool {
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

// appendPhone appends a phone number as csvPhone writes it.
func appendPhone(b, s []byte) []byte {
	if isE164(s) {
		return appendCSV(b, s)
	}
	return appendText(b, s)
}

// hasCSVSpecial says whether s holds a byte that makes encoding/csv's Writer quote a field
// wherever it is: a comma, a quote, a carriage return or a line feed. (A loop: bytes.IndexAny
// builds its set at every call, a quarter of the export's CPU.)
func hasCSVSpecial(s []byte) bool {
	for _, c := range s {
		if c == ',' || c == '"' || c == '\r' || c == '\n' {
			return true
		}
	}
	return false
}

// appendCSV appends a field as encoding/csv's Writer (comma, LF line ends) writes it, the
// format of the export since its first version: in double quotes, its quotes doubled, when it
// holds a comma, a quote, a carriage return or a line feed, begins with a Unicode space or is
// `\.`; as it is otherwise.
func appendCSV(b, field []byte) []byte {
	quoted := len(field) > 0 && (hasCSVSpecial(field) || string(field) == `\.`)
	if !quoted && len(field) > 0 {
		r, _ := utf8.DecodeRune(field)
		quoted = unicode.IsSpace(r)
	}
	return appendField(b, "", field, quoted)
}

// appendField appends prefix and field, in double quotes with the field's quotes doubled when
// quoted.
func appendField(b []byte, prefix string, field []byte, quoted bool) []byte {
	if !quoted {
		return append(append(b, prefix...), field...)
	}
	b = append(append(b, '"'), prefix...)
	for {
		i := bytes.IndexByte(field, '"')
		if i < 0 {
			break
		}
		b = append(append(b, field[:i+1]...), '"')
		field = field[i+1:]
	}
	return append(append(b, field...), '"')
}

// appendHeader appends the header row.
func appendHeader(b []byte) []byte {
	for i, c := range exportColumns {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendCSV(b, []byte(c))
	}
	return append(b, '\n')
}

// exportFlushBytes is how much of the file is written to the client at a time (a few hundred
// rows): one write and one flush per chunk instead of per row.
const exportFlushBytes = 64 << 10

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
	rc := http.NewResponseController(w)
	// The deadline is the connection's: a keep-alive connection must not carry it to the next request.
	defer func() { _ = rc.SetWriteDeadline(time.Time{}) }()
	started, rows := false, 0
	buf := make([]byte, 0, exportFlushBytes+4<<10)
	flush := func() error {
		if _, err := w.Write(buf); err != nil {
			return err
		}
		buf = buf[:0]
		_ = rc.Flush()
		_ = rc.SetWriteDeadline(time.Now().Add(exportStallTimeout))
		return nil
	}
	start := func() {
		started = true
		_ = rc.SetWriteDeadline(time.Now().Add(exportStallTimeout))
		h := w.Header()
		h.Set("Content-Type", "text/csv; charset=utf-8")
		h.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s"`, exportFileName(env, s.cfg.Now())))
		h.Set("Cache-Control", "no-store")
		h.Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(http.StatusOK)
		buf = appendHeader(buf)
	}
	err = s.store.ExportTransactions(r.Context(), merchant, env, f, func(row *store.ExportRow) error {
		if !started {
			start()
		}
		buf = appendExportRecord(buf, row)
		if rows++; len(buf) >= exportFlushBytes {
			return flush()
		}
		return nil
	})
	if err != nil && !started {
		return err
	}
	if err == nil && !started {
		start()
	}
	if err == nil {
		err = flush()
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
