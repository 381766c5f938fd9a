package store

import (
	"context"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/sikahq/sika"
)

// Reads of the support console (web/console): across merchants, for staff only. The console
// checks that its session is a staff member's before it calls any of them.

// Staff actions recorded by the store functions that make them (the action column of
// staff_actions), besides the resolution of an unclear payout (workflows).
const (
	StaffActionKYCApproved        = "kyc_approved"
	StaffActionKYCRejected        = "kyc_rejected"
	StaffActionMerchantSuspended  = "merchant_suspended"
	StaffActionMerchantReinstated = "merchant_reinstated"
	StaffActionPayoutMethodReview = "payout_method_reviewed"
	StaffActionReverified         = "reverified"
)

// TransactionsByReference finds, across merchants and environments, the transactions whose id,
// Sika reference (in any case), gateway reference, or one of whose attempts' gateway references,
// is ref: support's search. Each arm uses an index (the primary key, the unique reference, and
// the partial gateway_reference indexes of migration 0015).
func (s *Store) TransactionsByReference(ctx context.Context, ref string, limit int) ([]sika.Transaction, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return nil, nil
	}
	// The transaction's own id (what merchants see in API answers and webhooks) is found too, and
	// a Sika reference whatever its case (they are upper case); an operator's is matched as given.
	var id *uuid.UUID
	if u, err := uuid.Parse(ref); err == nil {
		id = &u
	}
	return collect(ctx, s.pool, "transactions by reference", scanTransaction, `SELECT `+transactionColumns+` FROM transactions t
		WHERE t.id IN (
			SELECT id FROM transactions WHERE reference = upper($1)
			UNION SELECT id FROM transactions WHERE id = $3
			UNION SELECT id FROM transactions WHERE gateway_reference = $1 AND gateway_reference <> ''
			UNION SELECT transaction_id FROM transaction_attempts WHERE gateway_reference = $1 AND gateway_reference <> '')
		ORDER BY t.created_at DESC, t.id DESC LIMIT $2`, ref, limit, id)
}

// KYCDossierForStaff is any merchant's dossier, with its documents.
func (s *Store) KYCDossierForStaff(ctx context.Context, id uuid.UUID) (sika.KYCDossier, error) {
	d, err := one(s.pool.QueryRow(ctx, `SELECT `+kycDossierColumns+` FROM kyc_dossiers d WHERE d.id = $1`, id), scanKYCDossier, "KYC dossier", "select kyc dossier")
	if err != nil {
		return d, err
	}
	one := []sika.KYCDossier{d}
	if err := withDocuments(ctx, s.pool, one); err != nil {
		return d, err
	}
	return one[0], nil
}

// SearchMerchants lists merchants whose name contains q (case-insensitive; every merchant
// when q is blank), by name.
func (s *Store) SearchMerchants(ctx context.Context, q string, limit int) ([]sika.Merchant, error) {
	q = strings.TrimSpace(q)
	return collect(ctx, s.pool, "merchants", func(r pgx.Row) (sika.Merchant, error) { return scanMerchant(r) }, `SELECT `+merchantColumns+` FROM merchants m
		WHERE $1 = '' OR m.name ILIKE '%' || replace(replace(replace($1, '\', '\\'), '%', '\%'), '_', '\_') || '%'
		ORDER BY m.name, m.id LIMIT $2`, q, limit)
}

// PayoutMethodsForStaff lists payout methods across merchants and environments, newest first:
// those of one merchant (merchant non-nil), or those awaiting verification (active and not
// verified) of every merchant.
func (s *Store) PayoutMethodsForStaff(ctx context.Context, merchant *uuid.UUID, limit int) ([]sika.PayoutMethod, error) {
	return collect(ctx, s.pool, "payout methods", scanPayoutMethod, `SELECT `+payoutMethodColumns+` FROM merchant_payout_methods
		WHERE CASE WHEN $1::uuid IS NULL THEN is_active AND NOT is_verified ELSE merchant_id = $1 END
		ORDER BY created_at DESC, id DESC LIMIT $2`, merchant, limit)
}

// RecordStaffAction appends a staff action on its own (an action that changes nothing in
// Postgres, such as a re-verification at the gateway).
func (s *Store) RecordStaffAction(ctx context.Context, a StaffAction) error {
	return s.InTx(ctx, func(tx pgx.Tx) error { return recordStaffAction(ctx, tx, a) })
}

// StaffActionsOfMerchant lists the staff actions on a merchant, its dossiers, payout methods
// and transactions, newest first.
func (s *Store) StaffActionsOfMerchant(ctx context.Context, merchant uuid.UUID, limit int) ([]StaffActionRecord, error) {
	return s.staffActions(ctx, "staff actions of merchant", `a.detail->>'merchant' = $3
		   OR a.transaction_id IN (SELECT id FROM transactions WHERE merchant_id = $1)`, merchant, limit, merchant.String())
}
