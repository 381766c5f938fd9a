package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/sikahq/sika"
)

// ErrEmailTaken is returned when a member with the same email (any case) exists.
var ErrEmailTaken = sika.FieldError("email", "A member with this email already exists.")

const memberColumns = `id, email, full_name, coalesce(staff_role, ''), created_at, updated_at`

func scanMember(row pgx.Row) (sika.Member, string, error) {
	var m sika.Member
	var hash string
	err := row.Scan(&m.ID, &m.Email, &m.FullName, &m.StaffRole, &m.CreatedAt, &m.UpdatedAt, &hash)
	m.IsStaff = m.StaffRole != ""
	return m, hash, err
}

// nullRole is a role for a nullable column: "" (not staff) is NULL.
func nullRole(r sika.StaffRole) *string {
	if r == "" {
		return nil
	}
	s := string(r)
	return &s
}

// NewMerchant is what registration and `POST /auth/merchants/` create.
type NewMerchant struct {
	Name      string
	Country   string
	KYCStatus sika.KYCStatus
	IsActive  bool
}

// RegisterMember creates a member (staff with a role, "" for none), its first merchant, the
// OWNER membership and the merchant's settings in both environments, in one transaction.
func (s *Store) RegisterMember(ctx context.Context, email, passwordHash, fullName string, role sika.StaffRole, merchant *NewMerchant) (sika.Member, *sika.Merchant, error) {
	var member sika.Member
	var created *sika.Merchant
	err := s.InTx(ctx, func(tx pgx.Tx) error {
		var err error
		member, _, err = scanMember(tx.QueryRow(ctx, `
			INSERT INTO members (email, password_hash, full_name, staff_role) VALUES ($1, $2, $3, $4)
			RETURNING `+memberColumns+`, password_hash`, strings.TrimSpace(email), passwordHash, fullName, nullRole(role)))
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
	if err := rowErr(err, "Member", "select member by email"); err != nil {
		return m, "", err
	}
	return m, hash, nil
}

// MemberByID returns a member, or not_found.
func (s *Store) MemberByID(ctx context.Context, id uuid.UUID) (sika.Member, error) {
	m, _, err := scanMember(s.pool.QueryRow(ctx, `SELECT `+memberColumns+`, password_hash
		FROM members WHERE id = $1`, id))
	return m, rowErr(err, "Member", "select member")
}

// SetMemberPassword replaces a member's password hash and, when the member has no staff role
// yet, gives it role ("" gives none; used by bootstrap).
// A member of a merchant's team gets no staff role (see keepStaffApart).
func (s *Store) SetMemberPassword(ctx context.Context, id uuid.UUID, passwordHash string, role sika.StaffRole) error {
	return s.InTx(ctx, func(tx pgx.Tx) error {
		staff, err := lockMember(ctx, tx, id)
		if err != nil {
			return err
		}
		if role != "" && !staff {
			if err := refuseStaffRoleInTeam(ctx, tx, id); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, `UPDATE members SET password_hash = $2, staff_role = coalesce(staff_role, $3), updated_at = now()
			WHERE id = $1`, id, passwordHash, nullRole(role)); err != nil {
			return fmt.Errorf("update member password: %w", err)
		}
		return nil
	})
}

// TeamMember is a member of a merchant's team with its role.
type TeamMember struct {
	sika.Member
	Role     sika.MembershipRole
	JoinedAt time.Time
}

// MerchantTeam lists the members of a merchant, oldest membership first (the dashboard's
// settings page).
func (s *Store) MerchantTeam(ctx context.Context, merchantID uuid.UUID) ([]TeamMember, error) {
	return collect(ctx, s.pool, "merchant team", func(r pgx.Row) (TeamMember, error) {
		var tm TeamMember
		err := r.Scan(&tm.ID, &tm.Email, &tm.FullName, &tm.StaffRole, &tm.CreatedAt, &tm.UpdatedAt, &tm.Role, &tm.JoinedAt)
		tm.IsStaff = tm.StaffRole != ""
		return tm, err
	}, `SELECT m.id, m.email, m.full_name, coalesce(m.staff_role, ''), m.created_at, m.updated_at, ms.role, ms.created_at
		FROM memberships ms JOIN members m ON m.id = ms.member_id
		WHERE ms.merchant_id = $1 ORDER BY ms.created_at, m.id`, merchantID)
}

// AddTeamMember gives an existing member (by email) a role in a merchant's team; a member
// already in it gets the new role. An unknown email is a validation error on email: members
// register themselves first.
func (s *Store) AddTeamMember(ctx context.Context, merchantID uuid.UUID, email string, role sika.MembershipRole) (TeamMember, error) {
	var tm TeamMember
	m, _, err := s.MemberByEmail(ctx, email)
	if sika.ErrorCode(err) == sika.CodeNotFound {
		return tm, sika.FieldError("email", "No member has this email; they must register first.")
	}
	if err != nil {
		return tm, err
	}
	err = s.InTx(ctx, func(tx pgx.Tx) error {
		if err := keepStaffApart(ctx, tx, m.ID); err != nil {
			if sika.ErrorCode(err) == sika.CodeRoleForbidden {
				return sika.FieldError("email", "This is a Sika staff account: staff accounts join no merchant's team.")
			}
			return err
		}
		err := tx.QueryRow(ctx, `INSERT INTO memberships (member_id, merchant_id, role) VALUES ($1, $2, $3)
			ON CONFLICT (member_id, merchant_id) DO UPDATE SET role = EXCLUDED.role WHERE memberships.role <> 'OWNER'
			RETURNING created_at`, m.ID, merchantID, role).Scan(&tm.JoinedAt)
		if isNoRows(err) {
			return sika.FieldError("email", "This member owns the merchant; the owner's role does not change.")
		}
		if err != nil {
			return fmt.Errorf("add team member: %w", err)
		}
		return nil
	})
	if err != nil {
		return tm, err
	}
	tm.Member, tm.Role = m, role
	return tm, nil
}
