package store

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/sikahq/sika"
)

// CreatePayout records a PENDING payout and holds its debited amount on the merchant's wallet
// of the payout's country (available → pending, ledger PAYOUT_HOLD/DEBIT), with its status log
// and the outbox row of its workflow, all in one Postgres transaction. The wallet row is locked
// while the balance is checked, so concurrent payouts can never overdraw it: a wallet that
// cannot cover the amount answers 422 insufficient_balance, a frozen one 422 wallet_frozen, and
// nothing is written. A payout with an Approval is recorded AWAITING_APPROVAL, held the same
// way, with its approval row (payout_approvals) in the same transaction.
func (s *Store) CreatePayout(ctx context.Context, nt NewTransaction, start WorkflowStart) (sika.Transaction, int64, bool, error) {
	return s.createTransaction(ctx, nt, start, func(tx pgx.Tx, t sika.Transaction) error {
		if err := hold(ctx, tx, t, nil); err != nil {
			return err
		}
		return insertPayoutApproval(ctx, tx, t, nt.Approval)
	})
}

// hold moves an outbound transaction's debited amount from available to pending on its wallet
// (ledger PAYOUT_HOLD/DEBIT), after checking that the wallet can cover it.
func hold(ctx context.Context, tx pgx.Tx, t sika.Transaction, settlement *uuid.UUID) error {
	held := t.DebitedAmount.Decimal
	if err := reserve(ctx, tx, t, held); err != nil {
		return err
	}
	_, err := postLedgerEntry(ctx, tx, ledgerPosting{
		Merchant: t.Merchant, Environment: t.Environment, Country: t.Country, Currency: t.Currency,
		Type: sika.LedgerPayoutHold, Direction: sika.Debit, Amount: held,
		AvailableDelta: held.Neg(), PendingDelta: held, Transaction: &t.ID, Settlement: settlement,
		Description: t.Reference + " held",
	})
	return err
}

// reserve locks the wallet of the transaction's merchant, environment and country and checks
// that it is not frozen and that its available amount covers amount.
func reserve(ctx context.Context, tx pgx.Tx, t sika.Transaction, amount decimal.Decimal) error {
	return reserveWallet(ctx, tx, t.Merchant, t.Environment, t.Country, t.Currency, amount)
}

// reserveWallet locks the wallet of (merchant, environment, country) and checks that it is not
// frozen and that its available amount covers amount.
func reserveWallet(ctx context.Context, tx pgx.Tx, merchant uuid.UUID, env sika.Environment, country, currency string, amount decimal.Decimal) error {
	t := struct{ Country, Currency string }{country, currency}
	var available decimal.Decimal
	var frozen bool
	err := tx.QueryRow(ctx, `SELECT available_amount, is_frozen FROM wallets
		WHERE merchant_id = $1 AND environment = $2 AND country = $3 FOR UPDATE`, merchant, env, country).
		Scan(&available, &frozen)
	if isNoRows(err) {
		return sika.Errorf(sika.CodeInsufficientBalance, "The %s balance is 0.00 %s; %s is needed.", t.Country, t.Currency, sika.FormatAmount(amount))
	}
	if err != nil {
		return fmt.Errorf("lock wallet: %w", err)
	}
	if frozen {
		return sika.Errorf(sika.CodeWalletFrozen, "The %s balance is frozen; contact Sika support.", t.Country)
	}
	if available.LessThan(amount) {
		return sika.Errorf(sika.CodeInsufficientBalance, "The %s balance is %s %s; %s is needed.", t.Country,
			sika.FormatAmount(available), t.Currency, sika.FormatAmount(amount))
	}
	return nil
}
