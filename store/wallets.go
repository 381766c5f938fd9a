package store

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/sikahq/sika"
)

// ledgerPosting is one wallet movement to record.
type ledgerPosting struct {
	Merchant       uuid.UUID
	Environment    sika.Environment
	Country        string
	Currency       string
	Type           sika.LedgerType
	Direction      sika.LedgerDirection
	Amount         decimal.Decimal
	AvailableDelta decimal.Decimal
	PendingDelta   decimal.Decimal
	Transaction    *uuid.UUID
	// Attempt, for a collection's credit, is the attempt the operator reported paid: each paid
	// attempt is credited once (a second success of one transaction is a second credit).
	Attempt        *uuid.UUID
	Settlement     *uuid.UUID
	WalletTransfer *uuid.UUID
	// PayoutBatch names the batch of a batch's hold and of its releases (Transaction nil).
	PayoutBatch *uuid.UUID
	Description string
	// Again is a second movement of its type for the transaction, one per Attempt (a payout
	// re-held when the operator paid an attempt after the hold had been released).
	Again bool
}

// postLedgerEntry applies a movement to the wallet of (merchant, environment, country), created
// on first use, and appends its ledger entry, in the caller's Postgres transaction. The wallet
// row is locked (FOR UPDATE) so that concurrent movements serialise; the CHECK constraints
// refuse a negative available or pending amount. A second posting of the same type for the same
// transaction changes nothing and returns false.
func postLedgerEntry(ctx context.Context, tx pgx.Tx, p ledgerPosting) (bool, error) {
	var walletID uuid.UUID
	var available, pending decimal.Decimal
	var seq int64
	lock := func() error {
		return tx.QueryRow(ctx, `SELECT id, available_amount, pending_amount, entry_count FROM wallets
			WHERE merchant_id = $1 AND environment = $2 AND country = $3 FOR UPDATE`, p.Merchant, p.Environment, p.Country).
			Scan(&walletID, &available, &pending, &seq)
	}
	// The wallet exists but for a merchant's first movement in a country: it is locked first
	// (one round trip), and created only when there is none.
	err := lock()
	if isNoRows(err) {
		if _, err = tx.Exec(ctx, `INSERT INTO wallets (merchant_id, environment, country, currency) VALUES ($1, $2, $3, $4)
			ON CONFLICT (merchant_id, environment, country) DO NOTHING`, p.Merchant, p.Environment, p.Country, p.Currency); err != nil {
			return false, fmt.Errorf("create wallet: %w", err)
		}
		err = lock()
	}
	if err != nil {
		return false, fmt.Errorf("lock wallet: %w", err)
	}
	id, err := uuid.NewV7()
	if err != nil {
		return false, err
	}
	afterAvailable, afterPending := available.Add(p.AvailableDelta), pending.Add(p.PendingDelta)
	// The entry and the wallet's new balances in one statement (one round trip under the lock),
	// unless the transaction already has its entry of that type (for that attempt, or again):
	// then nothing is written and the wallet is not touched.
	tag, err := tx.Exec(ctx, `WITH entry AS (INSERT INTO ledger_entries (id, wallet_id, merchant_id, environment, sequence, country,
			currency, type, direction, amount, available_delta, pending_delta, balance_before, balance_after, pending_before,
			pending_after, transaction_id, settlement_id, wallet_transfer_id, description, attempt_id, payout_batch_id)
		SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22
		WHERE $17::uuid IS NULL OR NOT EXISTS (SELECT 1 FROM ledger_entries WHERE transaction_id = $17 AND type = $8
			AND ($21::uuid IS NULL OR (attempt_id IS NULL AND NOT $23) OR attempt_id = $21))
		RETURNING 1)
		UPDATE wallets SET available_amount = $14, pending_amount = $16, entry_count = $5, updated_at = now()
		WHERE id = $2 AND EXISTS (SELECT 1 FROM entry)`,
		id, walletID, p.Merchant, p.Environment, seq+1, p.Country, p.Currency, p.Type, p.Direction, p.Amount,
		p.AvailableDelta, p.PendingDelta, available, afterAvailable, pending, afterPending,
		p.Transaction, p.Settlement, p.WalletTransfer, p.Description, p.Attempt, p.PayoutBatch, p.Again)
	if err != nil {
		return false, fmt.Errorf("post ledger entry: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

const walletColumns = `id, merchant_id, environment, country, currency, available_amount, pending_amount, is_frozen, created_at, updated_at`

func scanWallet(row pgx.Row) (sika.Wallet, error) {
	var w sika.Wallet
	err := row.Scan(&w.ID, &w.Merchant, &w.Environment, &w.Country, &w.Currency, &w.AvailableAmount, &w.PendingAmount,
		&w.IsFrozen, &w.CreatedAt, &w.UpdatedAt)
	return w, err
}

// ListWallets returns a merchant's wallets in one environment, by country.
func (s *Store) ListWallets(ctx context.Context, merchantID uuid.UUID, env sika.Environment, page PageRequest) ([]sika.Wallet, int, error) {
	return listPage(ctx, s, "list wallets", walletColumns, `FROM wallets WHERE merchant_id = $1 AND environment = $2`,
		`country, id`, []any{merchantID, env}, page, scanWallet)
}

// WalletByID returns a wallet of the merchant and environment, or not_found.
func (s *Store) WalletByID(ctx context.Context, merchantID uuid.UUID, env sika.Environment, id uuid.UUID) (sika.Wallet, error) {
	return one(s.pool.QueryRow(ctx, `SELECT `+walletColumns+` FROM wallets
		WHERE id = $1 AND merchant_id = $2 AND environment = $3`, id, merchantID, env), scanWallet, "Merchant balance", "select wallet")
}

const ledgerColumns = `e.id, e.merchant_id, e.environment, e.wallet_id, e.country, e.currency, e.type, e.amount, e.direction,
	e.balance_before, e.balance_after, e.pending_before, e.pending_after, e.transaction_id, e.settlement_id,
	e.wallet_transfer_id, e.description, e.created_at`

func scanLedgerEntry(row pgx.Row) (sika.LedgerEntry, error) {
	var e sika.LedgerEntry
	err := row.Scan(&e.ID, &e.Merchant, &e.Environment, &e.Wallet, &e.Country, &e.Currency, &e.Type, &e.Amount, &e.Direction,
		&e.BalanceBefore, &e.BalanceAfter, &e.PendingBefore, &e.PendingAfter, &e.Transaction, &e.Settlement,
		&e.WalletTransfer, &e.Description, &e.CreatedAt)
	return e, err
}

// ListLedgerEntries returns a cursor page of a merchant's ledger entries, newest first.
func (s *Store) ListLedgerEntries(ctx context.Context, merchantID uuid.UUID, env sika.Environment, req KeysetRequest) ([]sika.LedgerEntry, bool, error) {
	items, more, err := queryKeyset(ctx, s, ledgerColumns, `FROM ledger_entries e WHERE e.merchant_id = $1 AND e.environment = $2`,
		"e.", []any{merchantID, env}, req, scanLedgerEntry)
	if err != nil {
		return nil, false, fmt.Errorf("list ledger entries: %w", err)
	}
	return items, more, nil
}

// ListWalletLedger returns a cursor page of one wallet's ledger entries, newest first; each
// entry carries the wallet's balances before and after it. A wallet of another merchant or
// environment has no entry.
func (s *Store) ListWalletLedger(ctx context.Context, merchantID uuid.UUID, env sika.Environment, walletID uuid.UUID, req KeysetRequest) ([]sika.LedgerEntry, bool, error) {
	items, more, err := queryKeyset(ctx, s, ledgerColumns, `FROM ledger_entries e WHERE e.wallet_id = $3 AND e.merchant_id = $1
		AND e.environment = $2`, "e.", []any{merchantID, env, walletID}, req, scanLedgerEntry)
	if err != nil {
		return nil, false, fmt.Errorf("list wallet ledger: %w", err)
	}
	return items, more, nil
}

// LedgerEntryByID returns a ledger entry of the merchant and environment, or not_found.
func (s *Store) LedgerEntryByID(ctx context.Context, merchantID uuid.UUID, env sika.Environment, id uuid.UUID) (sika.LedgerEntry, error) {
	return one(s.pool.QueryRow(ctx, `SELECT `+ledgerColumns+` FROM ledger_entries e
		WHERE e.id = $1 AND e.merchant_id = $2 AND e.environment = $3`, id, merchantID, env), scanLedgerEntry, "Ledger entry", "select ledger entry")
}

// LedgerDiscrepancy describes the first place a wallet disagrees with its ledger.
type LedgerDiscrepancy struct {
	Wallet  uuid.UUID
	Problem string
}

// CheckLedger verifies, for every wallet, that its available and pending amounts equal the sums
// of its ledger entries and that each entry's balances continue the previous entry's. It returns
// the first discrepancy found, or nil.
func (s *Store) CheckLedger(ctx context.Context) (*LedgerDiscrepancy, error) {
	var d LedgerDiscrepancy
	err := s.pool.QueryRow(ctx, `
		WITH sums AS (
			SELECT w.id, w.available_amount, w.pending_amount,
			       coalesce(sum(e.available_delta), 0) AS available_sum, coalesce(sum(e.pending_delta), 0) AS pending_sum
			FROM wallets w LEFT JOIN ledger_entries e ON e.wallet_id = w.id GROUP BY w.id
		), chain AS (
			SELECT wallet_id, sequence, balance_before, pending_before,
			       lag(balance_after) OVER (PARTITION BY wallet_id ORDER BY sequence) AS prev_balance,
			       lag(pending_after) OVER (PARTITION BY wallet_id ORDER BY sequence) AS prev_pending,
			       lag(sequence) OVER (PARTITION BY wallet_id ORDER BY sequence) AS prev_sequence
			FROM ledger_entries
		)
		SELECT id, format('available %s but ledger sums to %s; pending %s but ledger sums to %s',
			available_amount, available_sum, pending_amount, pending_sum)
		FROM sums WHERE available_amount <> available_sum OR pending_amount <> pending_sum
		UNION ALL
		SELECT wallet_id, format('entry %s starts at %s/%s but the previous ended at %s/%s', sequence, balance_before,
			pending_before, coalesce(prev_balance, 0), coalesce(prev_pending, 0))
		FROM chain WHERE balance_before <> coalesce(prev_balance, 0) OR pending_before <> coalesce(prev_pending, 0)
			OR sequence <> coalesce(prev_sequence, 0) + 1
		LIMIT 1`).Scan(&d.Wallet, &d.Problem)
	if isNoRows(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("check ledger: %w", err)
	}
	return &d, nil
}
