package store

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/sikahq/sika"
)

// MerchantSettings returns a merchant's settings in one environment.
func (s *Store) MerchantSettings(ctx context.Context, merchantID uuid.UUID, env sika.Environment) (sika.MerchantSettings, error) {
	return cachedRead(s, fmt.Sprint("settings ", merchantID, env), func() (sika.MerchantSettings, error) {
		return s.merchantSettings(ctx, merchantID, env)
	}, same)
}

func (s *Store) merchantSettings(ctx context.Context, merchantID uuid.UUID, env sika.Environment) (sika.MerchantSettings, error) {
	st := sika.MerchantSettings{Merchant: merchantID, Environment: env}
	err := s.pool.QueryRow(ctx, `SELECT `+settingsColumns+`
		FROM merchant_settings WHERE merchant_id = $1 AND environment = $2`, merchantID, env).
		Scan(settingsFields(&st)...)
	return st, rowErr(err, "Merchant settings", "select merchant settings")
}

const settingsColumns = `fee_charge_mode, allow_client_override, payout_approval_threshold, approval_window_hours, updated_at`

func settingsFields(st *sika.MerchantSettings) []any {
	return []any{&st.FeeChargeMode, &st.AllowClientOverride, &st.PayoutApprovalThreshold, &st.ApprovalWindowHours, &st.UpdatedAt}
}

// SettingsPatch holds the fields a PATCH may change; nil leaves a field as it is.
type SettingsPatch struct {
	FeeChargeMode       *sika.FeeChargeMode
	AllowClientOverride *bool
	// PayoutApprovalThreshold sets the threshold; ClearApprovalThreshold removes it.
	PayoutApprovalThreshold *decimal.Decimal
	ClearApprovalThreshold  bool
	ApprovalWindowHours     *int
}

// UpdateMerchantSettings applies a patch and returns the new settings.
func (s *Store) UpdateMerchantSettings(ctx context.Context, merchantID uuid.UUID, env sika.Environment, p SettingsPatch) (sika.MerchantSettings, error) {
	defer s.FlushReadCache() // the merchant or its settings are cached (readcache.go)
	st := sika.MerchantSettings{Merchant: merchantID, Environment: env}
	err := s.pool.QueryRow(ctx, `UPDATE merchant_settings SET
			fee_charge_mode = coalesce($3, fee_charge_mode),
			allow_client_override = coalesce($4, allow_client_override),
			payout_approval_threshold = CASE WHEN $6 THEN NULL ELSE coalesce($5, payout_approval_threshold) END,
			approval_window_hours = coalesce($7, approval_window_hours),
			updated_at = now()
		WHERE merchant_id = $1 AND environment = $2
		RETURNING `+settingsColumns, merchantID, env, p.FeeChargeMode, p.AllowClientOverride, p.PayoutApprovalThreshold,
		p.ClearApprovalThreshold, p.ApprovalWindowHours).
		Scan(settingsFields(&st)...)
	return st, rowErr(err, "Merchant settings", "update merchant settings")
}
