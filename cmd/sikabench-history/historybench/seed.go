// Package historybench seeds a transaction history of any size with COPY and measures the CSV
// export of it over HTTP: the data set and the export measurement of cmd/sikabench-history,
// shared with cmd/sikabench, whose combined report has an export figure.
package historybench

import (
	"context"
	"fmt"
	"math/big"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
)

// Dataset is the data set: a big merchant with most of the rows in LIVE and exactly ExportRows
// in TEST (the export measurement), and small merchants sharing the rest, so that every query
// has other tenants' rows to skip. Rows are generated from their index with a fixed seed: a
// rerun seeds the same data, and the attempts and status logs are regenerated from the same
// transaction. With Others 0 and ExportRows equal to Rows it is one merchant's TEST history.
type Dataset struct {
	Rows       int // transactions in all
	ExportRows int // the big merchant's TEST transactions
	Others     int // small merchants
	Start, End time.Time
	// TransactionsOnly seeds no gateway attempts or status logs (the export reads none).
	TransactionsOnly bool
	// BulkLoad seeds empty tables in one Postgres transaction that drops their indexes (but
	// those of constraints), COPYs the rows and builds the indexes again: building an index over
	// a million rows takes a fraction of inserting into it a million times (the trigram index
	// above all). Nothing else may use the tables meanwhile.
	BulkLoad bool

	// Main is the big merchant, known once seeded.
	Main      MerchantKeys
	merchants []uuid.UUID // index 0 is the big merchant
	networks  map[string]networkInfo
}

// MerchantKeys is a merchant and its API keys.
type MerchantKeys struct {
	ID         uuid.UUID
	Live, Test string // API keys of scope BOTH
}

type networkInfo struct {
	ID      uuid.UUID
	Country string
	Code    string
}

// partition is a run of consecutive row indexes that belong to one tenant.
type partition struct {
	from, to int // [from, to)
	merchant int
	env      sika.Environment
}

// MainLiveRows is the size of the big merchant's LIVE history.
func (d *Dataset) MainLiveRows() int {
	return d.Rows - d.ExportRows - d.Others*d.otherRows()
}

// otherRows is the size of a small merchant's history (both environments).
func (d *Dataset) otherRows() int { return d.Rows / 10 / max(d.Others, 1) }

// partitionOf returns the tenant of row i.
func (d *Dataset) partitionOf(i int) partition {
	live := d.MainLiveRows()
	switch {
	case i < live:
		return partition{0, live, 0, sika.EnvironmentLive}
	case i < live+d.ExportRows:
		return partition{live, live + d.ExportRows, 0, sika.EnvironmentTest}
	}
	k := (i - live - d.ExportRows) / d.otherRows()
	from := live + d.ExportRows + k*d.otherRows()
	split := from + d.otherRows()*4/5
	if i < split {
		return partition{from, split, k + 1, sika.EnvironmentLive}
	}
	return partition{split, from + d.otherRows(), k + 1, sika.EnvironmentTest}
}

// weighted is a value and its share of the rows, in parts per thousand.
type weighted[T any] struct {
	value    T
	perMille int
}

// pickWeighted draws a value with the weights of choices (which add up to 1000).
func pickWeighted[T any](r *rand.Rand, choices []weighted[T]) T {
	pick := r.IntN(1000)
	for _, c := range choices {
		if pick < c.perMille {
			return c.value
		}
		pick -= c.perMille
	}
	return choices[len(choices)-1].value
}

// The mix of the data set.
var (
	typeMix = []weighted[sika.TransactionType]{
		{sika.TypePayment, 850}, {sika.TypeTopUp, 30}, {sika.TypePayout, 100}, {sika.TypeTransfer, 20},
	}
	statusMix = []weighted[sika.TransactionStatus]{
		{sika.StatusSuccess, 780}, {sika.StatusFailed, 150}, {sika.StatusPending, 70},
	}
	networkMix = []weighted[string]{
		{"MTN_BJ", 350}, {"MOOV_BJ", 200}, {"CELTIIS_BJ", 50},
		{"ORANGE_CI", 80}, {"MTN_CI", 60}, {"WAVE_CI", 50}, {"MOOV_CI", 10},
		{"ORANGE_SN", 50}, {"WAVE_SN", 40}, {"FREE_SN", 10},
		{"TMONEY_TG", 30}, {"MOOV_TG", 20},
		{"MTN_CM", 20}, {"ORANGE_CM", 20},
		{"VODACOM_CD", 10},
	}
)

var (
	firstNames = strings.Fields(`Koffi Kossi Komlan Kodjo Yao Kwame Ama Akosua Afi Adjoa Aminata Awa Fatou Mariama
		Ousmane Moussa Ibrahim Abdoulaye Mamadou Seydou Cheikh Aïssatou Fatoumata Oumar Boubacar Adama Salif Issa
		Yawa Akouvi Sénamé Edem Eyram Délali Mawuli Sitsofe Kafui Elom Nadège Rosine`)
	lastNames = strings.Fields(`Mensah Agbodjan Adjovi Houngbo Dossou Ahouansou Gbaguidi Hounkpatin Kpadonou Sossou
		Diallo Traoré Koné Ouattara Coulibaly Touré Diop Ndiaye Fall Sow Ba Sy Gueye Camara Cissé Konaté Kouassi
		Kouamé Yao N'Guessan Bamba Fofana Sanogo Diabaté Amégah Akakpo Lawson Johnson Ekué Afanou Tété Agbeko
		Atayi Adzoh Fiagbe Dzodzi Tchalla Kpodar Ayéva`)
	emailDomains = []string{"gmail.com", "gmail.com", "gmail.com", "gmail.com", "yahoo.fr", "yahoo.fr", "outlook.com", "orange.sn", "hotmail.fr", ""}
	callingCodes = map[string]struct {
		code   string
		length int
	}{"BJ": {"229", 8}, "CI": {"225", 10}, "SN": {"221", 9}, "TG": {"228", 8}, "CM": {"237", 9}, "CD": {"243", 9}}
	currencies        = map[string]string{"BJ": "XOF", "CI": "XOF", "SN": "XOF", "TG": "XOF", "CM": "XAF", "CD": "CDF"}
	linkSlugs         = 100
	referencePrefixes = map[sika.TransactionType]string{sika.TypePayment: "PAY", sika.TypeTopUp: "TOP", sika.TypePayout: "PO", sika.TypeTransfer: "TRF"}
)

const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// txRow is one generated transaction with what its attempts and logs need.
type txRow struct {
	id                                  uuid.UUID
	reference, gatewayReference         string
	merchant                            uuid.UUID
	env                                 sika.Environment
	typ                                 sika.TransactionType
	status                              sika.TransactionStatus
	requested, clientFee, debited       int64 // in cents
	gatewayFee, platformFee, net        int64
	currency, country, network          string
	networkID                           uuid.UUID
	name, email, phone, recipient, desc string
	mode                                sika.FeeChargeMode
	gateway                             string
	fallback                            bool
	failureCode, failureMessage         string
	createdAt, completedAt              time.Time
	linkSlug, sessionSlug               *string
	linkID, sessionID                   *uuid.UUID
	original                            *conversion
	metadata                            string
}

// conversion is what a merchant asked in another currency than the network's (EUR or USD),
// converted at the day's rate.
type conversion struct {
	amount   int64 // in cents
	currency string
	rate     pgtype.Numeric
}

// RandomString draws n characters of alphabet.
func RandomString(r *rand.Rand, alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

func randomUUID(r *rand.Rand) uuid.UUID {
	var u uuid.UUID
	for i := 0; i < 16; i += 8 {
		v := r.Uint64()
		for j := 0; j < 8; j++ {
			u[i+j] = byte(v >> (8 * j))
		}
	}
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return u
}

// createdAt spreads a partition's rows evenly over the data set's period, oldest first; one row
// in seven shares the instant of the row before it, so that the id tie-break is exercised.
func (d *Dataset) createdAt(i int, p partition) time.Time {
	if i%7 == 3 && i > p.from {
		i--
	}
	step := d.End.Sub(d.Start) / time.Duration(p.to-p.from)
	return d.Start.Add(time.Duration(i-p.from) * step).Truncate(time.Microsecond)
}

// transaction generates row i.
func (d *Dataset) transaction(i int) txRow {
	r := rand.New(rand.NewPCG(0x51CA, uint64(i)))
	p := d.partitionOf(i)
	t := txRow{id: randomUUID(r), merchant: d.merchants[p.merchant], env: p.env, createdAt: d.createdAt(i, p)}
	t.typ = pickWeighted(r, typeMix)
	t.status = pickWeighted(r, statusMix)
	t.network = pickWeighted(r, networkMix)
	n := d.networks[t.network]
	t.networkID, t.country, t.currency = n.ID, n.Country, currencies[n.Country]
	units := int64(1)
	if sika.MinorUnits(t.currency) == 0 {
		units = 100
	}
	t.requested = (100 + r.Int64N(500000)) * units
	if units == 1 {
		t.requested = 1000 + r.Int64N(5000000)
	}
	t.clientFee = (t.requested*15/1000 + units - 1) / units * units
	t.gatewayFee = t.requested * 10 / 1000 / units * units
	t.platformFee = t.clientFee - t.gatewayFee
	if r.IntN(2) == 0 {
		t.mode, t.debited, t.net = sika.FeeAddOn, t.requested+t.clientFee, t.requested
	} else {
		t.mode, t.debited, t.net = sika.FeeDeducted, t.requested, t.requested-t.clientFee
	}
	first, last := firstNames[r.IntN(len(firstNames))], lastNames[r.IntN(len(lastNames))]
	t.name = first + " " + last
	if domain := emailDomains[r.IntN(len(emailDomains))]; domain != "" {
		t.email = strings.ToLower(first+"."+last) + strconv.Itoa(r.IntN(100)) + "@" + domain
	}
	cc := callingCodes[t.country]
	t.phone = "+" + cc.code + RandomString(r, "0123456789", cc.length)
	if t.typ.FlowDirection() == sika.DirectionOutbound {
		t.recipient, t.phone = t.phone, ""
	}
	t.desc = "Commande " + strconv.Itoa(r.IntN(1_000_000))
	t.reference = referencePrefixes[t.typ] + "-" + t.createdAt.Format("20060102") + "-" + RandomString(r, crockford, 10)
	t.gateway = "sandbox-a"
	if t.fallback = r.IntN(100) < 8; t.fallback {
		t.gateway = "sandbox-b"
	}
	if t.status != sika.StatusPending || r.IntN(10) < 7 {
		t.gatewayReference = "GW" + RandomString(r, crockford, 14)
	}
	if t.status != sika.StatusPending {
		t.completedAt = t.createdAt.Add(time.Duration(5+r.IntN(120)) * time.Second)
	}
	if t.status == sika.StatusFailed {
		t.failureCode, t.failureMessage = "payer_declined", "The customer declined the payment."
	}
	if r.IntN(10) == 0 {
		k := r.IntN(linkSlugs)
		s := fmt.Sprintf("boutique-%03d", k)
		id := uuid.NewSHA1(uuid.NameSpaceOID, []byte(s))
		t.linkSlug, t.linkID = &s, &id
	}
	if r.IntN(5) == 0 {
		s := "cs_" + RandomString(r, crockford, 16)
		id := randomUUID(r)
		t.sessionSlug, t.sessionID = &s, &id
	}
	if t.currency == "XOF" && r.IntN(20) == 0 {
		// 655.957 XOF to the euro (fixed), about 600 to the dollar.
		c := conversion{currency: "EUR", rate: pgtype.Numeric{Int: big.NewInt(655957), Exp: -3, Valid: true}}
		rate := int64(655957)
		if r.IntN(3) == 0 {
			c.currency, c.rate, rate = "USD", pgtype.Numeric{Int: big.NewInt(6012345), Exp: -4, Valid: true}, 601234
		}
		c.amount = t.requested * 1000 / rate
		if c.amount == 0 {
			c.amount = 1
		}
		t.original = &c
	}
	switch r.IntN(100) {
	case 0: // what a spreadsheet would run: the export neutralises it
		t.desc = "=" + t.desc
	case 1:
		t.desc = "-10 % " + t.desc + `, "promo"`
	case 2:
		t.desc += "\nLivraison: Cotonou, Akpakpa"
	}
	t.metadata = "{}"
	if r.IntN(3) == 0 {
		t.metadata = `{"order_id":"` + strconv.Itoa(r.IntN(10_000_000)) + `","channel":"` + []string{"web", "app", "ussd"}[r.IntN(3)] +
			`","items":` + strconv.Itoa(1+r.IntN(5)) + `}`
	}
	return t
}

func numeric(cents int64) pgtype.Numeric {
	return pgtype.Numeric{Int: big.NewInt(cents), Exp: -2, Valid: true}
}

func optionalTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

var transactionCopyColumns = []string{"id", "reference", "merchant_id", "environment", "transaction_type", "status",
	"requested_amount", "client_fee", "debited_amount", "gateway_fee", "platform_fee", "net_amount", "currency",
	"country", "network_id", "network", "customer_name", "customer_email", "customer_phone", "recipient", "description",
	"metadata", "fee_charge_mode", "gateway", "gateway_reference", "failure_code", "failure_message", "created_at",
	"updated_at", "completed_at", "payment_link_slug", "checkout_session_slug", "payment_link_id", "checkout_session_id",
	"original_amount", "original_currency", "exchange_rate"}

func (t txRow) values() []any {
	updated := t.createdAt
	if !t.completedAt.IsZero() {
		updated = t.completedAt
	}
	var origAmount pgtype.Numeric
	var origCurrency *string
	var rate pgtype.Numeric
	if t.original != nil {
		origAmount, origCurrency, rate = numeric(t.original.amount), &t.original.currency, t.original.rate
	}
	return []any{t.id, t.reference, t.merchant, string(t.env), string(t.typ), string(t.status),
		numeric(t.requested), numeric(t.clientFee), numeric(t.debited), numeric(t.gatewayFee), numeric(t.platformFee),
		numeric(t.net), t.currency, t.country, t.networkID, t.network, t.name, t.email, t.phone, t.recipient, t.desc,
		t.metadata, string(t.mode), t.gateway, t.gatewayReference, t.failureCode, t.failureMessage, t.createdAt,
		updated, optionalTime(t.completedAt), t.linkSlug, t.sessionSlug, t.linkID, t.sessionID, origAmount, origCurrency, rate}
}

var attemptCopyColumns = []string{"id", "transaction_id", "merchant_id", "environment", "run", "sequence", "gateway",
	"priority", "status", "gateway_reference", "failure_code", "failure_message", "created_at", "updated_at", "completed_at"}

// attempts are the gateway attempts of a transaction: none for a PENDING one the gateway has
// not answered, one otherwise, and a first one lost to an unavailable gateway for a fallback.
func (t txRow) attempts() [][]any {
	if t.gatewayReference == "" {
		return nil
	}
	var out [][]any
	seq := 1
	status := string(t.status)
	if t.status == sika.StatusCancelled {
		status = string(sika.StatusFailed)
	}
	if t.fallback {
		id := t.id
		id[0] ^= 0xA1
		out = append(out, []any{id, t.id, t.merchant, string(t.env), 1, 1, "sandbox-a", 1, "FAILED", "",
			"gateway_unavailable", "The gateway is unavailable.", t.createdAt, t.createdAt, &t.createdAt})
		seq = 2
	}
	id := t.id
	id[0] ^= 0xA2
	failure := ""
	if t.status == sika.StatusFailed {
		failure = t.failureCode
	}
	out = append(out, []any{id, t.id, t.merchant, string(t.env), 1, seq, t.gateway, seq, status, t.gatewayReference,
		failure, t.failureMessage, t.createdAt, t.createdAt, optionalTime(t.completedAt)})
	return out
}

var statusLogCopyColumns = []string{"id", "transaction_id", "merchant_id", "environment", "from_status", "to_status",
	"reason", "triggered_by", "created_at"}

// statusLogs are the creation entry and, once final, the outcome.
func (t txRow) statusLogs() [][]any {
	first := t.id
	first[0] ^= 0xB1
	out := [][]any{{first, t.id, t.merchant, string(t.env), nil, "PENDING", "Payment requested", "CLIENT", t.createdAt}}
	if t.status != sika.StatusPending {
		second := t.id
		second[0] ^= 0xB2
		by := "SYSTEM"
		if t.id[1]%5 < 2 {
			by = "WEBHOOK_CALLBACK"
		}
		out = append(out, []any{second, t.id, t.merchant, string(t.env), "PENDING", string(t.status), "Gateway outcome", by, t.completedAt})
	}
	return out
}

// rowSource feeds CopyFrom from a generator, one transaction index at a time; a transaction may
// give several rows (attempts, logs).
type rowSource struct {
	d       *Dataset
	i, n    int
	rows    func(txRow) [][]any
	pending [][]any
	cur     []any
	count   int
}

func (s *rowSource) Next() bool {
	for len(s.pending) == 0 {
		if s.i >= s.n {
			return false
		}
		s.pending = s.rows(s.d.transaction(s.i))
		s.i++
	}
	s.cur, s.pending = s.pending[0], s.pending[1:]
	s.count++
	return true
}

func (s *rowSource) Values() ([]any, error) { return s.cur, nil }
func (s *rowSource) Err() error             { return nil }

// Seed creates the merchants and their keys and COPYs the transactions, then (unless
// TransactionsOnly) their attempts and status logs, then analyses the tables.
func (d *Dataset) Seed(ctx context.Context, st *store.Store, pool *pgxpool.Pool, logf func(string, ...any)) error {
	if err := d.createMerchants(ctx, st); err != nil {
		return err
	}
	if err := d.loadNetworks(ctx, pool); err != nil {
		return err
	}
	copies := []struct {
		what, table string
		columns     []string
		rows        func(txRow) [][]any
	}{
		{"transactions", "transactions", transactionCopyColumns, func(t txRow) [][]any { return [][]any{t.values()} }},
		{"attempts", "transaction_attempts", attemptCopyColumns, txRow.attempts},
		{"status logs", "transaction_status_logs", statusLogCopyColumns, txRow.statusLogs},
	}
	if d.TransactionsOnly {
		copies = copies[:1]
	}
	var tables []string
	for _, c := range copies {
		tables = append(tables, c.table)
	}
	err := inTx(ctx, pool, d.BulkLoad, func(db copier) error {
		var indexes []string
		if d.BulkLoad {
			var err error
			if indexes, err = dropIndexes(ctx, db, tables); err != nil {
				return err
			}
		}
		for _, c := range copies {
			begin := time.Now()
			n, err := db.CopyFrom(ctx, pgx.Identifier{c.table}, c.columns, &rowSource{d: d, n: d.Rows, rows: c.rows})
			if err != nil {
				return fmt.Errorf("copy %s: %w", c.what, err)
			}
			logf("copied %d %s in %s", n, c.what, time.Since(begin).Round(time.Millisecond))
		}
		if len(indexes) == 0 {
			return nil
		}
		begin := time.Now()
		if _, err := db.Exec(ctx, `SET LOCAL maintenance_work_mem = '256MB'`); err != nil {
			return err
		}
		for _, def := range indexes {
			if _, err := db.Exec(ctx, def); err != nil {
				return fmt.Errorf("rebuild index: %w", err)
			}
		}
		logf("built %d indexes again in %s", len(indexes), time.Since(begin).Round(time.Millisecond))
		return nil
	})
	if err != nil {
		return err
	}
	begin := time.Now()
	if _, err := pool.Exec(ctx, `VACUUM (ANALYZE) `+strings.Join(tables, ", ")); err != nil {
		return fmt.Errorf("vacuum analyze: %w", err)
	}
	logf("vacuum analyze in %s", time.Since(begin).Round(time.Millisecond))
	return nil
}

// copier is what seeding needs of a pool or a transaction.
type copier interface {
	CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, src pgx.CopyFromSource) (int64, error)
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// inTx runs fn in one transaction when tx is true, on the pool otherwise.
func inTx(ctx context.Context, pool *pgxpool.Pool, tx bool, fn func(copier) error) error {
	if !tx {
		return fn(pool)
	}
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error { return fn(tx) })
}

// dropIndexes drops the indexes of tables that back no constraint and returns their definitions.
func dropIndexes(ctx context.Context, db copier, tables []string) ([]string, error) {
	rows, err := db.Query(ctx, `SELECT i.indexrelid::regclass::text, pg_get_indexdef(i.indexrelid)
		FROM pg_index i
		WHERE i.indrelid = ANY ($1::regclass[])
			AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid)`, tables)
	if err != nil {
		return nil, fmt.Errorf("list indexes: %w", err)
	}
	type index struct{ name, def string }
	found, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (index, error) {
		var i index
		return i, r.Scan(&i.name, &i.def)
	})
	if err != nil {
		return nil, fmt.Errorf("list indexes: %w", err)
	}
	var defs []string
	for _, i := range found {
		if _, err := db.Exec(ctx, "DROP INDEX "+i.name); err != nil {
			return nil, fmt.Errorf("drop index %s: %w", i.name, err)
		}
		defs = append(defs, i.def)
	}
	return defs, nil
}

// Prepare seeds the data set, or reuses it when the database already holds it.
func (d *Dataset) Prepare(ctx context.Context, st *store.Store, pool *pgxpool.Pool, logf func(string, ...any)) error {
	var count int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM transactions`).Scan(&count); err != nil {
		return err
	}
	if count == d.Rows {
		logf("reusing the %d transactions already seeded", count)
		return d.reuse(ctx, st, pool)
	}
	if count != 0 {
		return fmt.Errorf("the database holds %d transactions, not %d: drop it first", count, d.Rows)
	}
	logf("seeding %d transactions", d.Rows)
	d.BulkLoad = true
	return d.Seed(ctx, st, pool, logf)
}

// createMerchants registers the big merchant (with LIVE and TEST keys) and the small ones.
func (d *Dataset) createMerchants(ctx context.Context, st *store.Store) error {
	hash, err := sika.HashPassword("history bench password")
	if err != nil {
		return err
	}
	for k := 0; k <= d.Others; k++ {
		member, m, err := st.RegisterMember(ctx, fmt.Sprintf("history-%d@sika.local", k), hash, "History Bench", "",
			&store.NewMerchant{Name: fmt.Sprintf("Boutique %d", k), Country: "BJ", KYCStatus: sika.KYCVerified, IsActive: true})
		if err != nil {
			return fmt.Errorf("register merchant %d: %w", k, err)
		}
		d.merchants = append(d.merchants, m.ID)
		if k > 0 {
			continue
		}
		d.Main.ID = m.ID
		live, err := st.CreateAPIKey(ctx, m.ID, sika.EnvironmentLive, sika.ScopeBoth, "history bench", &member.ID)
		if err != nil {
			return err
		}
		test, err := st.CreateAPIKey(ctx, m.ID, sika.EnvironmentTest, sika.ScopeBoth, "history bench", &member.ID)
		if err != nil {
			return err
		}
		d.Main.Live, d.Main.Test = live.Secret, test.Secret
	}
	return nil
}

func (d *Dataset) loadNetworks(ctx context.Context, pool *pgxpool.Pool) error {
	rows, err := pool.Query(ctx, `SELECT n.id, c.iso_code, n.code FROM networks n JOIN countries c ON c.id = n.country_id`)
	if err != nil {
		return err
	}
	infos, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (networkInfo, error) {
		var n networkInfo
		err := r.Scan(&n.ID, &n.Country, &n.Code)
		return n, err
	})
	if err != nil {
		return err
	}
	d.networks = map[string]networkInfo{}
	for _, n := range infos {
		d.networks[n.Code] = n
	}
	for _, n := range networkMix {
		if _, ok := d.networks[n.value]; !ok {
			return fmt.Errorf("network %s is not in the catalogue", n.value)
		}
	}
	return nil
}

// reuse finds the big merchant of a data set seeded by an earlier run and gives it new keys
// (secrets are shown only at creation).
func (d *Dataset) reuse(ctx context.Context, st *store.Store, pool *pgxpool.Pool) error {
	if err := pool.QueryRow(ctx, `SELECT id FROM merchants WHERE name = 'Boutique 0'`).Scan(&d.Main.ID); err != nil {
		return fmt.Errorf("find the big merchant: %w", err)
	}
	live, err := st.CreateAPIKey(ctx, d.Main.ID, sika.EnvironmentLive, sika.ScopeBoth, "history bench", nil)
	if err != nil {
		return err
	}
	test, err := st.CreateAPIKey(ctx, d.Main.ID, sika.EnvironmentTest, sika.ScopeBoth, "history bench", nil)
	if err != nil {
		return err
	}
	d.Main.Live, d.Main.Test = live.Secret, test.Secret
	return nil
}
