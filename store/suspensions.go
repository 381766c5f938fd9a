package store

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/sikahq/sika"
)

// SetMerchantSuspended suspends (or reinstates) a merchant on a staff member's decision and
// returns it. Suspending a suspended merchant keeps who suspended it first, and when;
// reinstating clears both. The staff action (merchant_suspended or merchant_reinstated) is
// audited with it.
func (s *Store) SetMerchantSuspended(ctx context.Context, id, admin uuid.UUID, suspended bool, reason string) (sika.Merchant, error) {
	defer s.FlushReadCache() // the merchant or its settings are cached (readcache.go)
	var m sika.Merchant
	err := s.InTx(ctx, func(tx pgx.Tx) error {
		var err error
		m, err = one(tx.QueryRow(ctx, `UPDATE merchants AS m SET is_suspended = $2,
				suspended_at = CASE WHEN NOT $2 THEN NULL WHEN m.is_suspended THEN m.suspended_at ELSE now() END,
				suspended_by_member = CASE WHEN NOT $2 THEN NULL WHEN m.is_suspended THEN m.suspended_by_member ELSE $3::uuid END,
				updated_at = CASE WHEN m.is_suspended = $2 THEN m.updated_at ELSE now() END
			WHERE m.id = $1 RETURNING `+merchantColumns, id, suspended, admin), func(r pgx.Row) (sika.Merchant, error) { return scanMerchant(r) }, "Merchant", "set merchant suspended")
		if err != nil {
			return err
		}
		action := StaffActionMerchantReinstated
		if suspended {
			action = StaffActionMerchantSuspended
		}
		return recordStaffAction(ctx, tx, StaffAction{Staff: admin, Action: action, Reason: reason,
			Detail: map[string]any{"merchant": m.ID, "merchant_name": m.Name}})
	})
	return m, err
}
