package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/sikahq/sika"
)

// ErrEmailTaken is returned when a member with the same email (any case) exists.
var ErrEmailTaken = sika.FieldError("email", "A member with this email already exists.")

const memberColumns = `id, email, full_name, is_staff, created_at, updated_at`

func scanMember(row pgx.Row) (sika.Member, string, error) {
	var m sika.Member
	var hash string
	err := row.Scan(&m.ID, &m.Email, &m.FullName, &m.IsStaff, &m.CreatedAt, &m.UpdatedAt, &hash)
	return m, hash, err
}

// NewMerchant is what registration and `POST /auth/merchants/` create.
type NewMerchant struct {
	Name      string
	Country   string
	KYCStatus sika.KYCStatus
	IsActive  bool
}

// RegisterMember creates a member, its first merchant, the OWNER membership and the
// merchant's settings in both environments, in one transaction.
func (s *Store) RegisterMember(ctx context.Context, email, passwordHash, fullName string, isStaff bool, merchant *NewMerchant) (sika.Member, *sika.Merchant, error) {
	var member sika.Member
	var created *sika.Merchant
	err := s.InTx(ctx, func(tx pgx.Tx) error {
		var err error
		member, _, err = scanMember(tx.QueryRow(ctx, `
			INSERT INTO members (email, password_hash, full_name, is_staff) VALUES ($1, $2, $3, $4)
			RETURNING `+memberColumns+`, password_hash`, strings.TrimSpace(email), passwordHash, fullName, isStaff))
		if isUniqueViolation(err, "members_email_key") {
			return ErrEmailTaken
		}
		if err != nil {
			return fmt.Errorf("insert member: %w", err)
		}
		if merchant != nil {
			m, err := createMerchant(ctx, tx, member.ID, *merchant)
			if err != nil {
				return err
			}
			created = &m
		}
		return nil
	})
	return member, created, err
}

// MemberByEmail returns a member and its password hash, or not_found.
func (s *Store) MemberByEmail(ctx context.Context, email string) (sika.Member, string, error) {
	m, hash, err := scanMember(s.pool.QueryRow(ctx, `SELECT `+memberColumns+`, password_hash
		FROM members WHERE lower(email) = lower($1)`, strings.TrimSpace(email)))
	if isNoRows(err) {
		return m, "", sika.NotFound("Member")
	}
	if err != nil {
		return m, "", fmt.Errorf("select member by email: %w", err)
	}
	return m, hash, nil
}

// MemberByID returns a member, or not_found.
func (s *Store) MemberByID(ctx context.Context, id uuid.UUID) (sika.Member, error) {
	m, _, err := scanMember(s.pool.QueryRow(ctx, `SELECT `+memberColumns+`, password_hash
		FROM members WHERE id = $1`, id))
	if isNoRows(err) {
		return m, sika.NotFound("Member")
	}
	if err != nil {
		return m, fmt.Errorf("select member: %w", err)
	}
	return m, nil
}

// SetMemberPassword replaces a member's password hash and staff flag (used by bootstrap).
func (s *Store) SetMemberPassword(ctx context.Context, id uuid.UUID, passwordHash string, isStaff bool) error {
	tag, err := s.pool.Exec(ctx, `UPDATE members SET password_hash = $2, is_staff = is_staff OR $3, updated_at = now()
		WHERE id = $1`, id, passwordHash, isStaff)
	if err != nil {
		return fmt.Errorf("update member password: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return sika.NotFound("Member")
	}
	return nil
}
