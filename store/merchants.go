package store

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/sikahq/sika"
)

const merchantColumns = `m.id, m.name, m.country, m.kyc_status, m.is_active, m.is_suspended,
	m.rate_limit_per_minute, m.created_at, m.updated_at`

func scanMerchant(row pgx.Row, extra ...any) (sika.Merchant, error) {
	var m sika.Merchant
	dest := append([]any{&m.ID, &m.Name, &m.Country, &m.KYCStatus, &m.IsActive, &m.IsSuspended,
		&m.RateLimitPerMinute, &m.CreatedAt, &m.UpdatedAt}, extra...)
	err := row.Scan(dest...)
	return m, err
}

// createMerchant inserts a merchant, the member's OWNER membership and default settings for
// both environments.
func createMerchant(ctx context.Context, tx pgx.Tx, memberID uuid.UUID, nm NewMerchant) (sika.Merchant, error) {
	if nm.KYCStatus == "" {
		nm.KYCStatus = sika.KYCPending
	}
	if err := keepStaffApart(ctx, tx, memberID); err != nil {
		return sika.Merchant{}, err
	}
	var exists bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM countries WHERE iso_code = $1)`, nm.Country).Scan(&exists); err != nil {
		return sika.Merchant{}, fmt.Errorf("check merchant country: %w", err)
	}
	if !exists {
		return sika.Merchant{}, sika.FieldError("country", fmt.Sprintf("%q is not a supported country.", nm.Country))
	}
	m, err := scanMerchant(tx.QueryRow(ctx, `INSERT INTO merchants AS m (name, country, kyc_status, is_active)
		VALUES ($1, $2, $3, $4) RETURNING `+merchantColumns, nm.Name, nm.Country, nm.KYCStatus, nm.IsActive))
	if err != nil {
		return m, fmt.Errorf("insert merchant: %w", err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO memberships (member_id, merchant_id, role) VALUES ($1, $2, 'OWNER')`, memberID, m.ID); err != nil {
		return m, fmt.Errorf("insert membership: %w", err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO merchant_settings (merchant_id, environment)
		VALUES ($1, 'TEST'), ($1, 'LIVE')`, m.ID); err != nil {
		return m, fmt.Errorf("insert merchant settings: %w", err)
	}
	return m, nil
}

// CreateMerchant creates another merchant owned by an existing member.
func (s *Store) CreateMerchant(ctx context.Context, memberID uuid.UUID, nm NewMerchant) (sika.Merchant, error) {
	var m sika.Merchant
	err := s.InTx(ctx, func(tx pgx.Tx) error {
		var err error
		m, err = createMerchant(ctx, tx, memberID, nm)
		return err
	})
	return m, err
}

// MerchantByID returns a merchant, or not_found.
func (s *Store) MerchantByID(ctx context.Context, id uuid.UUID) (sika.Merchant, error) {
	return one(s.pool.QueryRow(ctx, `SELECT `+merchantColumns+` FROM merchants m WHERE m.id = $1`, id), func(r pgx.Row) (sika.Merchant, error) { return scanMerchant(r) }, "Merchant", "select merchant")
}

// MemberMerchants lists the merchants a member belongs to, oldest membership first (the first
// is the dashboard's default merchant).
func (s *Store) MemberMerchants(ctx context.Context, memberID uuid.UUID) ([]sika.MerchantMembership, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+merchantColumns+`, ms.role
		FROM memberships ms JOIN merchants m ON m.id = ms.merchant_id
		WHERE ms.member_id = $1 ORDER BY ms.created_at, m.id`, memberID)
	if err != nil {
		return nil, fmt.Errorf("list member merchants: %w", err)
	}
	defer rows.Close()
	out := []sika.MerchantMembership{}
	for rows.Next() {
		var mm sika.MerchantMembership
		mm.Merchant, err = scanMerchant(rows, &mm.Role)
		if err != nil {
			return nil, fmt.Errorf("scan member merchant: %w", err)
		}
		out = append(out, mm)
	}
	return out, rows.Err()
}

// SetMerchantStatus sets KYC status and activity, for the bootstrap of the demo merchant and
// later for KYC review.
func (s *Store) SetMerchantStatus(ctx context.Context, id uuid.UUID, kyc sika.KYCStatus, active bool) error {
	defer s.FlushReadCache() // the merchant or its settings are cached (readcache.go)
	tag, err := s.pool.Exec(ctx, `UPDATE merchants SET kyc_status = $2, is_active = $3, updated_at = now() WHERE id = $1`, id, kyc, active)
	if err != nil {
		return fmt.Errorf("update merchant status: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return sika.NotFound("Merchant")
	}
	return nil
}

// SetMerchantRateLimit sets or clears (nil) a merchant's own request rate per minute.
func (s *Store) SetMerchantRateLimit(ctx context.Context, id uuid.UUID, perMinute *int) error {
	defer s.FlushReadCache() // the merchant or its settings are cached (readcache.go)
	_, err := s.pool.Exec(ctx, `UPDATE merchants SET rate_limit_per_minute = $2, updated_at = now() WHERE id = $1`, id, perMinute)
	if err != nil {
		return fmt.Errorf("update merchant rate limit: %w", err)
	}
	return nil
}
