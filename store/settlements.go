package store

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/sikahq/sika"
)

const payoutMethodColumns = `id, merchant_id, environment, type, label, is_active, is_verified, verified_by_admin, verified_at,
	network_id, phone_number, bank_name, account_holder_name, account_number, iban, swift_bic, bank_code, branch_code,
	created_at, updated_at`

func scanPayoutMethod(row pgx.Row) (sika.PayoutMethod, error) {
	var m sika.PayoutMethod
	err := row.Scan(&m.ID, &m.Merchant, &m.Environment, &m.Type, &m.Label, &m.IsActive, &m.IsVerified, &m.VerifiedByAdmin,
		&m.VerifiedAt, &m.Network, &m.PhoneNumber, &m.BankName, &m.AccountHolderName, &m.AccountNumber, &m.IBAN,
		&m.SwiftBIC, &m.BankCode, &m.BranchCode, &m.CreatedAt, &m.UpdatedAt)
	return m, err
}

var payoutMethodTable = table[sika.PayoutMethod]{kind: "Payout method", what: "payout methods", columns: payoutMethodColumns,
	from: "merchant_payout_methods", scan: scanPayoutMethod}

// CreatePayoutMethod records an unverified payout method of the merchant.
func (s *Store) CreatePayoutMethod(ctx context.Context, m sika.PayoutMethod) (sika.PayoutMethod, error) {
	out, err := scanPayoutMethod(s.pool.QueryRow(ctx, `INSERT INTO merchant_payout_methods (merchant_id, environment, type, label,
			network_id, phone_number, bank_name, account_holder_name, account_number, iban, swift_bic, bank_code, branch_code)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) RETURNING `+payoutMethodColumns,
		m.Merchant, m.Environment, m.Type, m.Label, m.Network, m.PhoneNumber, m.BankName, m.AccountHolderName,
		m.AccountNumber, m.IBAN, m.SwiftBIC, m.BankCode, m.BranchCode))
	if err != nil {
		return out, fmt.Errorf("insert payout method: %w", err)
	}
	return out, nil
}

// ListPayoutMethods returns a page of the merchant's payout methods, newest first.
func (s *Store) ListPayoutMethods(ctx context.Context, merchantID uuid.UUID, env sika.Environment, page PageRequest) ([]sika.PayoutMethod, int, error) {
	return payoutMethodTable.page(ctx, s, merchantID, env, page)
}

// PayoutMethodByID returns a payout method of the merchant and environment, or not_found.
func (s *Store) PayoutMethodByID(ctx context.Context, merchantID uuid.UUID, env sika.Environment, id uuid.UUID) (sika.PayoutMethod, error) {
	return payoutMethodTable.byID(ctx, s.pool, merchantID, env, id, false)
}

// ReviewPayoutMethod lets a staff member verify (or un-verify) and (de)activate any merchant's
// payout method; nil leaves a field as it is. The staff action (payout_method_reviewed, with
// what was asked) is audited with it.
func (s *Store) ReviewPayoutMethod(ctx context.Context, id, admin uuid.UUID, verified, active *bool) (sika.PayoutMethod, error) {
	var m sika.PayoutMethod
	err := s.InTx(ctx, func(tx pgx.Tx) error {
		var err error
		m, err = one(tx.QueryRow(ctx, `UPDATE merchant_payout_methods SET
				is_verified = coalesce($3, is_verified),
				verified_by_admin = CASE WHEN $3 IS NULL THEN verified_by_admin WHEN $3 THEN $2::uuid ELSE NULL END,
				verified_at = CASE WHEN $3 IS NULL THEN verified_at WHEN $3 THEN now() ELSE NULL END,
				is_active = coalesce($4, is_active), updated_at = now()
			WHERE id = $1 RETURNING `+payoutMethodColumns, id, admin, verified, active), scanPayoutMethod, "Payout method", "review payout method")
		if err != nil {
			return err
		}
		return recordStaffAction(ctx, tx, StaffAction{Staff: admin, Action: StaffActionPayoutMethodReview,
			Detail: map[string]any{"merchant": m.Merchant, "payout_method": m.ID, "is_verified": verified, "is_active": active}})
	})
	return m, err
}

// CreateSettlement records a settlement: its RETRAIT transaction with the hold on the wallet
// (see CreatePayout) and the settlement row, in one Postgres transaction. An idempotency key
// already used answers as CreateTransaction does: the existing settlement for the same request,
// idempotency_key_reused for another one, never not_found.
func (s *Store) CreateSettlement(ctx context.Context, nt NewTransaction, settlementID, methodID uuid.UUID, start WorkflowStart) (sika.Settlement, bool, error) {
	t, _, created, err := s.createTransaction(ctx, nt, start, func(tx pgx.Tx, t sika.Transaction) error {
		if _, err := tx.Exec(ctx, `INSERT INTO settlements (id, merchant_id, environment, payout_method_id, transaction_id, amount, currency, country)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, settlementID, t.Merchant, t.Environment, methodID, t.ID,
			t.RequestedAmount.Decimal, t.Currency, t.Country); err != nil {
			return fmt.Errorf("insert settlement: %w", err)
		}
		return hold(ctx, tx, t, &settlementID)
	})
	if err != nil {
		return sika.Settlement{}, false, err
	}
	return settlementTable.ofTransaction(ctx, s, t, created)
}

const settlementColumns = `s.id, s.merchant_id, s.payout_method_id, s.transaction_id, s.amount, s.currency, s.country, t.status, s.created_at`

func scanSettlement(row pgx.Row) (sika.Settlement, error) {
	var st sika.Settlement
	err := row.Scan(&st.ID, &st.Merchant, &st.PayoutMethod, &st.Transaction, &st.Amount, &st.Currency, &st.Country, &st.Status, &st.CreatedAt)
	return st, err
}

var settlementTable = table[sika.Settlement]{kind: "Settlement", what: "settlements", columns: settlementColumns,
	from: `settlements s JOIN transactions t ON t.id = s.transaction_id`, alias: "s.", scan: scanSettlement}

// ListSettlements returns a page of the merchant's settlements, newest first.
func (s *Store) ListSettlements(ctx context.Context, merchantID uuid.UUID, env sika.Environment, page PageRequest) ([]sika.Settlement, int, error) {
	return settlementTable.page(ctx, s, merchantID, env, page)
}

// NewWalletTransfer is a transfer to make: the TRANSFERT transaction (debit side, in the
// source wallet's currency) and the destination. The credit is priced by CreateWalletTransfer.
type NewWalletTransfer struct {
	Transaction NewTransaction
	ID          uuid.UUID
	ToCountry   string
	ToCurrency  string
}

// CreateWalletTransfer moves money between two wallets of one merchant in one Postgres
// transaction: the TRANSFERT transaction (PENDING then SUCCESS, with both status logs), a
// TRANSFER_OUT entry on the source wallet and a TRANSFER_IN entry on the destination. Both
// wallets are locked in a fixed order (by country), so opposite transfers cannot deadlock; a
// source that cannot cover the amount answers insufficient_balance, a frozen wallet on either
// side wallet_frozen. An idempotency key already used answers as CreateSettlement does.
//
// The credit is the debited amount at the catalogue's rate, rounded down to the destination's
// minor unit (sika.ConvertAmount), read in the same Postgres transaction; a debit that would
// credit nothing is refused (a validation error on amount naming the smallest amount that
// converts), and a pair without a rate is a validation error on to_country.
func (s *Store) CreateWalletTransfer(ctx context.Context, w NewWalletTransfer) (sika.WalletTransfer, bool, error) {
	t, _, created, err := s.createTransaction(ctx, w.Transaction, WorkflowStart{}, func(tx pgx.Tx, t sika.Transaction) error {
		rate, credited, err := priceWalletTransfer(ctx, tx, t.DebitedAmount.Decimal, t.Currency, w.ToCurrency)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO wallets (merchant_id, environment, country, currency) VALUES ($1, $2, $3, $4)
			ON CONFLICT (merchant_id, environment, country) DO NOTHING`, t.Merchant, t.Environment, w.ToCountry, w.ToCurrency); err != nil {
			return fmt.Errorf("create wallet: %w", err)
		}
		var frozen bool
		if err := tx.QueryRow(ctx, `SELECT bool_or(is_frozen) FROM (SELECT is_frozen FROM wallets
			WHERE merchant_id = $1 AND environment = $2 AND country IN ($3, $4) ORDER BY country FOR UPDATE) w`,
			t.Merchant, t.Environment, t.Country, w.ToCountry).Scan(&frozen); err != nil {
			return fmt.Errorf("lock wallets: %w", err)
		}
		if err := reserve(ctx, tx, t, t.DebitedAmount.Decimal); err != nil {
			return err
		}
		if frozen {
			return sika.Errorf(sika.CodeWalletFrozen, "A wallet of this transfer is frozen; contact Sika support.")
		}
		if _, err := tx.Exec(ctx, `INSERT INTO wallet_transfers (id, merchant_id, environment, transaction_id, from_country, to_country,
				from_currency, to_currency, amount, credited_amount, exchange_rate)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`, w.ID, t.Merchant, t.Environment, t.ID, t.Country, w.ToCountry,
			t.Currency, w.ToCurrency, t.DebitedAmount.Decimal, credited, rate); err != nil {
			return fmt.Errorf("insert wallet transfer: %w", err)
		}
		out := ledgerPosting{Merchant: t.Merchant, Environment: t.Environment, Country: t.Country, Currency: t.Currency,
			Type: sika.LedgerTransferOut, Direction: sika.Debit, Amount: t.DebitedAmount.Decimal, AvailableDelta: t.DebitedAmount.Neg(),
			Transaction: &t.ID, WalletTransfer: &w.ID, Description: "Transfer " + t.Reference + " to " + w.ToCountry}
		in := out
		in.Country, in.Currency, in.Type, in.Direction = w.ToCountry, w.ToCurrency, sika.LedgerTransferIn, sika.Credit
		in.Amount, in.AvailableDelta, in.Description = credited, credited, "Transfer "+t.Reference+" from "+t.Country
		for _, p := range []ledgerPosting{out, in} {
			if _, err := postLedgerEntry(ctx, tx, p); err != nil {
				return err
			}
		}
		done, err := scanTransaction(tx.QueryRow(ctx, `UPDATE transactions t SET status = 'SUCCESS', completed_at = now(), updated_at = now()
			WHERE t.id = $1 RETURNING `+transactionColumns, t.ID))
		if err != nil {
			return fmt.Errorf("complete transfer: %w", err)
		}
		from := sika.StatusPending
		if err := insertStatusLog(ctx, tx, t, &from, sika.StatusSuccess, "Transferred between wallets", sika.TriggerSystem); err != nil {
			return err
		}
		return transactionEvents(ctx, tx, done)
	})
	if err != nil {
		return sika.WalletTransfer{}, false, err
	}
	return walletTransferTable.ofTransaction(ctx, s, t, created)
}

// priceWalletTransfer returns the catalogue's rate from one currency to the other and what
// amount is worth in the destination, rounded down; it refuses a pair without a rate and an
// amount worth less than the destination's minor unit.
func priceWalletTransfer(ctx context.Context, q rowQueryer, amount decimal.Decimal, from, to string) (rate, credited decimal.Decimal, err error) {
	rate, err = exchangeRate(ctx, q, from, to)
	if sika.ErrorCode(err) == sika.CodeNotFound {
		return rate, credited, sika.FieldError("to_country", "No exchange rate from "+from+" to "+to+".")
	}
	if err != nil {
		return rate, credited, err
	}
	credited = sika.ConvertAmount(amount, rate, to)
	if !credited.IsPositive() {
		unit := decimal.New(1, -sika.MinorUnits(to))
		least := sika.SmallestConvertible(rate, from, to)
		return rate, credited, sika.FieldError("amount", fmt.Sprintf(
			"%s %s is worth less than %s %s at the current rate (%s %s per %s), and a transfer is credited rounded down: transfer at least %s %s.",
			amount.StringFixed(sika.MinorUnits(from)), from, unit.StringFixed(sika.MinorUnits(to)), to, rate, to, from,
			least.StringFixed(sika.MinorUnits(from)), from))
	}
	return rate, credited, nil
}

const walletTransferColumns = `w.id, w.merchant_id, w.transaction_id, w.from_country, w.to_country, w.from_currency, w.to_currency,
	w.amount, w.credited_amount, w.exchange_rate, t.status, w.created_at`

func scanWalletTransfer(row pgx.Row) (sika.WalletTransfer, error) {
	var w sika.WalletTransfer
	err := row.Scan(&w.ID, &w.Merchant, &w.Transaction, &w.FromCountry, &w.ToCountry, &w.FromCurrency, &w.ToCurrency,
		&w.Amount, &w.CreditedAmount, &w.ExchangeRate, &w.Status, &w.CreatedAt)
	return w, err
}

var walletTransferTable = table[sika.WalletTransfer]{kind: "Wallet transfer", what: "wallet transfers", columns: walletTransferColumns,
	from: `wallet_transfers w JOIN transactions t ON t.id = w.transaction_id`, alias: "w.", scan: scanWalletTransfer}

// ListWalletTransfers returns a page of the merchant's wallet transfers, newest first.
func (s *Store) ListWalletTransfers(ctx context.Context, merchantID uuid.UUID, env sika.Environment, page PageRequest) ([]sika.WalletTransfer, int, error) {
	return walletTransferTable.page(ctx, s, merchantID, env, page)
}
