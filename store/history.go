package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/sikahq/sika"
)

// TransactionFilter narrows a transaction list or export. Zero fields do not filter; the
// tenancy (merchant and environment) is always applied on top.
type TransactionFilter struct {
	Status        sika.TransactionStatus
	Type          sika.TransactionType
	FlowDirection sika.Direction
	Currency      string
	Country       string
	Network       string
	// Merchant, when set, must also equal the row's merchant: another merchant's id than the
	// caller's therefore matches nothing.
	Merchant *uuid.UUID
	// CreatedFrom and CreatedTo bound created_at, both inclusive.
	CreatedFrom *time.Time
	CreatedTo   *time.Time
	// Refunded, when set, keeps the refunds of that collection.
	Refunded *uuid.UUID
	// Search is a case-insensitive substring of the reference, gateway reference, customer
	// name, email or phone, payment-link slug or checkout-session slug (search_text).
	Search string
}

// sqlWhere accumulates a WHERE clause with its positional arguments.
type sqlWhere struct {
	clauses []string
	args    []any
}

// add appends a condition whose `?` is replaced by the next placeholder bound to arg.
func (w *sqlWhere) add(cond string, arg any) {
	w.args = append(w.args, arg)
	w.clauses = append(w.clauses, strings.Replace(cond, "?", "$"+strconv.Itoa(len(w.args)), 1))
}

// addIf adds the condition when set.
func (w *sqlWhere) addIf(set bool, cond string, arg any) {
	if set {
		w.add(cond, arg)
	}
}

// from renders `FROM <table> WHERE …`.
func (w *sqlWhere) from(table string) string {
	return "FROM " + table + " WHERE " + strings.Join(w.clauses, " AND ")
}

// tenantWhere starts a WHERE clause on the tenancy of alias.
func tenantWhere(alias string, merchantID uuid.UUID, env sika.Environment) *sqlWhere {
	w := &sqlWhere{}
	w.add(alias+"merchant_id = ?", merchantID)
	w.add(alias+"environment = ?", env)
	return w
}

// transactionWhere is the tenancy and the filter of a transaction query on alias t.
func transactionWhere(merchantID uuid.UUID, env sika.Environment, f TransactionFilter) *sqlWhere {
	w := tenantWhere("t.", merchantID, env)
	w.addIf(f.Merchant != nil, "t.merchant_id = ?", f.Merchant)
	w.addIf(f.Status != "", "t.status = ?", f.Status)
	w.addIf(f.Type != "", "t.transaction_type = ?", f.Type)
	w.addIf(f.FlowDirection != "", "t.flow_direction = ?", f.FlowDirection)
	w.addIf(f.Currency != "", "t.currency = ?", f.Currency)
	w.addIf(f.Country != "", "t.country = ?", f.Country)
	w.addIf(f.Network != "", "t.network = ?", f.Network)
	w.addIf(f.CreatedFrom != nil, "t.created_at >= ?", f.CreatedFrom)
	w.addIf(f.CreatedTo != nil, "t.created_at <= ?", f.CreatedTo)
	w.addIf(f.Refunded != nil, "t.refunded_transaction_id = ?", f.Refunded)
	if f.Search != "" {
		w.clauses = append(w.clauses, searchCondition(w, f.Search))
	}
	return w
}

// searchCondition is the search condition, its arguments added to w: the query as a substring
// of search_text (migration 0005), both sides lower-cased by Postgres with the ICU root
// collation. The pattern is then given back the column's collation: a LIKE under another
// collation than the index's cannot use the index (the search would scan the whole history).
//
// A query that reads as a phone number is also searched as its digits, since numbers are
// stored in E.164 (+22997000123): "+229 97 00 01 23", "(229) 97000123" and "0022997000123" are
// searched as their digits alone (a stored field never holds spaces or parentheses between
// digits, and the digits match wherever the query with + or 00 would); "97-00-01-23" is
// searched both as written (a reference holds dashes) and as digits.
func searchCondition(w *sqlWhere, q string) string {
	patterns := []string{likeContaining(q)}
	if digits, ok := phoneDigits(q); ok && digits != q {
		if strings.ContainsAny(q, "-.") {
			patterns = append(patterns, likeContaining(digits))
		} else {
			patterns = []string{likeContaining(digits)}
		}
	}
	var or []string
	for _, p := range patterns {
		w.args = append(w.args, p)
		or = append(or, "t.search_text LIKE (lower($"+strconv.Itoa(len(w.args))+` COLLATE "und-x-icu") COLLATE "default")`)
	}
	return "(" + strings.Join(or, " OR ") + ")"
}

// likeContaining is the LIKE pattern of a substring, its wildcards escaped.
func likeContaining(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return "%" + r.Replace(s) + "%"
}

// phoneDigits returns the digits of a query that looks like a phone number (digits with
// separators, an optional leading + or 00), without the + or 00, and whether it looks so.
func phoneDigits(q string) (string, bool) {
	var b strings.Builder
	for i, r := range q {
		switch {
		case r >= '0' && r <= '9':
			b.WriteRune(r)
		case r == '+' && i == 0:
		case r == ' ' || r == '-' || r == '.' || r == '(' || r == ')':
		default:
			return "", false
		}
	}
	digits := b.String()
	if strings.HasPrefix(q, "00") {
		digits = strings.TrimPrefix(digits, "00")
	}
	return digits, len(digits) >= 3
}

// ListTransactions returns a cursor page of the merchant's transactions, newest first, ties
// broken by id.
func (s *Store) ListTransactions(ctx context.Context, merchantID uuid.UUID, env sika.Environment, f TransactionFilter, req KeysetRequest) ([]sika.Transaction, bool, error) {
	if f.Search != "" {
		return s.searchTransactions(ctx, merchantID, env, f, req)
	}
	return transactionTable.keysetWhere(ctx, s, transactionWhere(merchantID, env, f), req)
}

var transactionTable = table[sika.Transaction]{kind: "Transaction", what: "transactions", columns: transactionColumns,
	from: "transactions t", alias: "t.", scan: scanTransaction}

// exportBatch is how many rows each FETCH of an export reads from its cursor. Postgres makes
// the whole batch before it sends the first row (a FETCH fills a tuplestore, kept in work_mem up
// to 4 MB by default, spilled to a file beyond); pgx reads the rows one at a time as they
// arrive. 5,000 rows of about 550 bytes stay in memory and make 200 round trips per million
// rows instead of 1,000.
var exportBatch = 5000

// ExportRow is a transaction as the CSV export reads it: the export's columns only, read from
// the row as Postgres sent it, without building a sika.Transaction. Amounts are Postgres's text
// of numeric(20, 2) (two decimals), the exchange rate its text without trailing zeros, metadata
// the text of the jsonb. The byte slices are views of the connection's buffer: they hold only
// until emit returns, and nil is NULL.
type ExportRow struct {
	ID, Merchant                 uuid.UUID
	CheckoutSession, PaymentLink uuid.NullUUID
	CreatedAt, UpdatedAt         time.Time
	CompletedAt                  time.Time // zero when NULL

	Reference, GatewayReference, Environment, Type, FlowDirection, Status         []byte
	RequestedAmount, ClientFee, DebitedAmount, GatewayFee, PlatformFee, NetAmount []byte
	Currency, OriginalAmount, OriginalCurrency, ExchangeRate, Country, Network    []byte
	CustomerName, CustomerEmail, CustomerPhone, Recipient, Description, Metadata  []byte
	FeeChargeMode, FailureCode, FailureMessage                                    []byte
}

// exportColumns are the columns ExportRow reads, in exportScanner.targets order.
const exportColumns = `t.id, t.merchant_id, t.checkout_session_id, t.payment_link_id, t.created_at, t.updated_at,
	t.completed_at, t.reference, t.gateway_reference, t.environment, t.transaction_type, t.flow_direction, t.status,
	t.requested_amount::text, t.client_fee::text, t.debited_amount::text, t.gateway_fee::text, t.platform_fee::text,
	t.net_amount::text, t.currency, t.original_amount::text, t.original_currency, trim_scale(t.exchange_rate)::text,
	t.country, t.network, t.customer_name, t.customer_email, t.customer_phone, t.recipient, t.description,
	t.metadata::text, t.fee_charge_mode, t.failure_code, t.failure_message`

// exportScanner scans rows into one ExportRow, reused from row to row: no allocation per row.
type exportScanner struct {
	row                                        ExportRow
	id, merchant, checkoutSession, paymentLink pgtype.UUID // binary copies (uuid.UUID would be parsed from text)
	completedAt                                pgtype.Timestamptz
	targets                                    []any
}

func newExportScanner() *exportScanner {
	s := &exportScanner{}
	r := &s.row
	s.targets = []any{&s.id, &s.merchant, &s.checkoutSession, &s.paymentLink, &r.CreatedAt, &r.UpdatedAt, &s.completedAt}
	for _, b := range []*[]byte{&r.Reference, &r.GatewayReference, &r.Environment, &r.Type, &r.FlowDirection, &r.Status,
		&r.RequestedAmount, &r.ClientFee, &r.DebitedAmount, &r.GatewayFee, &r.PlatformFee, &r.NetAmount,
		&r.Currency, &r.OriginalAmount, &r.OriginalCurrency, &r.ExchangeRate, &r.Country, &r.Network,
		&r.CustomerName, &r.CustomerEmail, &r.CustomerPhone, &r.Recipient, &r.Description, &r.Metadata,
		&r.FeeChargeMode, &r.FailureCode, &r.FailureMessage} {
		s.targets = append(s.targets, (*pgtype.DriverBytes)(b))
	}
	return s
}

func (s *exportScanner) scan(rows pgx.Rows) (*ExportRow, error) {
	if err := rows.Scan(s.targets...); err != nil {
		return nil, err
	}
	r := &s.row
	r.ID, r.Merchant = s.id.Bytes, s.merchant.Bytes
	r.CheckoutSession = uuid.NullUUID{UUID: s.checkoutSession.Bytes, Valid: s.checkoutSession.Valid}
	r.PaymentLink = uuid.NullUUID{UUID: s.paymentLink.Bytes, Valid: s.paymentLink.Valid}
	r.CompletedAt = time.Time{}
	if s.completedAt.Valid {
		r.CompletedAt = s.completedAt.Time
	}
	return r, nil
}

// ExportTransactions streams every transaction of the filter, newest first, to emit, through a
// Postgres cursor read exportBatch rows at a time: memory stays constant whatever the number of
// rows, and the cursor's fast-start plan (cursor_tuple_fraction) walks the index in order
// instead of sorting the whole result before the first row. emit gets the same *ExportRow
// every time, refilled. An error from emit stops the export and is returned as is.
func (s *Store) ExportTransactions(ctx context.Context, merchantID uuid.UUID, env sika.Environment, f TransactionFilter, emit func(*ExportRow) error) error {
	w := transactionWhere(merchantID, env, f)
	return s.InTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "DECLARE transactions_export NO SCROLL CURSOR FOR SELECT "+exportColumns+" "+
			w.from("transactions t")+" ORDER BY t.created_at DESC, t.id DESC", w.args...); err != nil {
			return fmt.Errorf("export transactions: declare cursor: %w", err)
		}
		sc := newExportScanner()
		for {
			n, err := fetchExportBatch(ctx, tx, sc, emit)
			if err != nil || n < exportBatch {
				return err
			}
		}
	})
}

// fetchExportBatch reads the next batch of the export cursor into emit and returns its size.
func fetchExportBatch(ctx context.Context, tx pgx.Tx, sc *exportScanner, emit func(*ExportRow) error) (int, error) {
	rows, err := tx.Query(ctx, "FETCH "+strconv.Itoa(exportBatch)+" FROM transactions_export")
	if err != nil {
		return 0, fmt.Errorf("export transactions: fetch: %w", err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		r, err := sc.scan(rows)
		if err != nil {
			return n, fmt.Errorf("export transactions: scan: %w", err)
		}
		if err := emit(r); err != nil {
			return n, err
		}
		n++
	}
	if err := rows.Err(); err != nil {
		return n, fmt.Errorf("export transactions: fetch: %w", err)
	}
	return n, nil
}

// AttemptFilter narrows the list of gateway attempts; zero fields do not filter.
type AttemptFilter struct {
	Status      sika.AttemptStatus
	Gateway     string
	Transaction *uuid.UUID
}

// ListAttempts returns a cursor page of the merchant's gateway attempts, newest first.
func (s *Store) ListAttempts(ctx context.Context, merchantID uuid.UUID, env sika.Environment, f AttemptFilter, req KeysetRequest) ([]sika.TransactionAttempt, bool, error) {
	return attemptTable.keyset(ctx, s, merchantID, env, req, filter{"status", f.Status, f.Status != ""},
		filter{"gateway", f.Gateway, f.Gateway != ""}, filter{"transaction_id", f.Transaction, f.Transaction != nil})
}

var attemptTable = table[sika.TransactionAttempt]{kind: "Transaction attempt", what: "attempts", columns: attemptColumns,
	from: "transaction_attempts a", alias: "a.", scan: scanAttempt}

// AttemptByID returns a gateway attempt of the merchant and environment, or not_found.
func (s *Store) AttemptByID(ctx context.Context, merchantID uuid.UUID, env sika.Environment, id uuid.UUID) (sika.TransactionAttempt, error) {
	return attemptTable.byID(ctx, s.pool, merchantID, env, id, false)
}

// StatusLogFilter narrows the list of status changes; zero fields do not filter.
type StatusLogFilter struct {
	ToStatus    sika.TransactionStatus
	TriggeredBy sika.Trigger
	Transaction *uuid.UUID
}

// ListStatusLogs returns a cursor page of the merchant's status changes, newest first.
func (s *Store) ListStatusLogs(ctx context.Context, merchantID uuid.UUID, env sika.Environment, f StatusLogFilter, req KeysetRequest) ([]sika.TransactionStatusLog, bool, error) {
	return statusLogTable.keyset(ctx, s, merchantID, env, req, filter{"to_status", f.ToStatus, f.ToStatus != ""},
		filter{"triggered_by", f.TriggeredBy, f.TriggeredBy != ""}, filter{"transaction_id", f.Transaction, f.Transaction != nil})
}

var statusLogTable = table[sika.TransactionStatusLog]{kind: "Transaction status log", what: "status logs", columns: statusLogColumns,
	from: "transaction_status_logs l", alias: "l.", scan: scanStatusLog}

// StatusLogByID returns a status change of the merchant and environment, or not_found.
func (s *Store) StatusLogByID(ctx context.Context, merchantID uuid.UUID, env sika.Environment, id uuid.UUID) (sika.TransactionStatusLog, error) {
	return statusLogTable.byID(ctx, s.pool, merchantID, env, id, false)
}

// CatalogueCodes says which of a country ISO code, a network code and a currency the catalogue
// knows; an empty code counts as known. One round trip, for validating list filters.
func (s *Store) CatalogueCodes(ctx context.Context, country, network, currency string) (countryOK, networkOK, currencyOK bool, err error) {
	err = s.pool.QueryRow(ctx, `SELECT
			$1::text = '' OR EXISTS (SELECT 1 FROM countries WHERE iso_code = $1::text),
			$2::text = '' OR EXISTS (SELECT 1 FROM networks WHERE code = $2::text),
			$3::text = '' OR EXISTS (SELECT 1 FROM countries WHERE default_currency = $3::text)`,
		country, network, currency).Scan(&countryOK, &networkOK, &currencyOK)
	if err != nil {
		return false, false, false, fmt.Errorf("check catalogue codes: %w", err)
	}
	return countryOK, networkOK, currencyOK, nil
}
