package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/sikahq/sika"
)

// ActionStaffRoleChanged is the staff action of a role given, changed or taken away.
const ActionStaffRoleChanged = "staff_role_changed"

// StaffMembers lists the members who have a staff role, the most trusted role first, then by
// email.
func (s *Store) StaffMembers(ctx context.Context) ([]sika.Member, error) {
	return collect(ctx, s.pool, "staff", func(r pgx.Row) (sika.Member, error) {
		m, _, err := scanMember(r)
		return m, err
	}, `SELECT `+memberColumns+`, '' FROM members WHERE staff_role IS NOT NULL
		ORDER BY array_position(ARRAY['ADMIN', 'MONEY_APPROVER', 'SUPPORT_AGENT', 'SUPPORT_READONLY'], staff_role), lower(email)`)
}

// SetStaffRole gives the member of this email a staff role, changes it, or ("") takes it away,
// as the admin by decided, with the staff action, in one Postgres transaction. The last ADMIN
// keeps the role (somebody must be able to manage the staff): demoting it is a validation
// error. Admins are counted under a lock on the admins' rows, so two admins demoting each other
// at once leave one.
func (s *Store) SetStaffRole(ctx context.Context, email string, role sika.StaffRole, by sika.Member) (sika.Member, error) {
	if role != "" && !role.Valid() {
		return sika.Member{}, sika.FieldError("role", "Not a staff role.")
	}
	var m sika.Member
	err := s.InTx(ctx, func(tx pgx.Tx) error {
		// Lock the admins first, always in the same order, then the member.
		rows, err := tx.Query(ctx, `SELECT id FROM members WHERE staff_role = 'ADMIN' ORDER BY id FOR UPDATE`)
		if err != nil {
			return fmt.Errorf("lock admins: %w", err)
		}
		admins := 0
		for rows.Next() {
			admins++
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("lock admins: %w", err)
		}
		m, _, err = scanMember(tx.QueryRow(ctx, `SELECT `+memberColumns+`, '' FROM members WHERE lower(email) = lower($1) FOR UPDATE`,
			strings.TrimSpace(email)))
		if isNoRows(err) {
			return sika.FieldError("email", "No member has this email: the person registers first, then gets a role.")
		}
		if err != nil {
			return fmt.Errorf("select member: %w", err)
		}
		if m.StaffRole == role {
			return nil
		}
		if role != "" && m.StaffRole == "" {
			if err := refuseStaffRoleInTeam(ctx, tx, m.ID); err != nil {
				return err
			}
		}
		if m.StaffRole == sika.StaffAdmin && admins <= 1 {
			return sika.FieldError("role", "This is the last admin: give another member the ADMIN role first.")
		}
		before := m.StaffRole
		if _, err := tx.Exec(ctx, `UPDATE members SET staff_role = $2, updated_at = now() WHERE id = $1`, m.ID, nullRole(role)); err != nil {
			return fmt.Errorf("set staff role: %w", err)
		}
		m.StaffRole, m.IsStaff = role, role != ""
		return recordStaffAction(ctx, tx, StaffAction{Staff: by.ID, Action: ActionStaffRoleChanged,
			Reason: fmt.Sprintf("%s: %s → %s", m.Email, orNone(before), orNone(role)),
			Detail: map[string]any{"member": m.ID, "email": m.Email, "from": before, "to": role}})
	})
	return m, err
}

// keepStaffApart locks the member's row and refuses a staff member: staff accounts belong to no
// merchant, so nobody decides as staff (KYC, suspension, money decisions) on a merchant they
// belong to. SetStaffRole checks the other way round under the same row lock: a staff role goes
// only to a member of no merchant.
func keepStaffApart(ctx context.Context, tx pgx.Tx, memberID uuid.UUID) error {
	staff, err := lockMember(ctx, tx, memberID)
	if err != nil {
		return err
	}
	if staff {
		return sika.Errorf(sika.CodeRoleForbidden, "Sika staff accounts belong to no merchant: use a separate account for a merchant's team.")
	}
	return nil
}

// lockMember locks a member's row (the lock the staff and team rules are judged under) and
// tells whether the member has a staff role.
func lockMember(ctx context.Context, tx pgx.Tx, memberID uuid.UUID) (staff bool, err error) {
	err = tx.QueryRow(ctx, `SELECT staff_role IS NOT NULL FROM members WHERE id = $1 FOR UPDATE`, memberID).Scan(&staff)
	return staff, rowErr(err, "Member", "lock member")
}

// refuseStaffRoleInTeam refuses a staff role to a member of a merchant's team (the member's row
// locked by the caller): see keepStaffApart.
func refuseStaffRoleInTeam(ctx context.Context, tx pgx.Tx, memberID uuid.UUID) error {
	var inTeam bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM memberships WHERE member_id = $1)`, memberID).Scan(&inTeam); err != nil {
		return fmt.Errorf("look up the member's merchants: %w", err)
	}
	if inTeam {
		return sika.FieldError("email", "This person belongs to a merchant's team. Staff decide on merchants (KYC, suspension, money), so a staff role goes to a separate account that belongs to no merchant.")
	}
	return nil
}

func orNone(r sika.StaffRole) string {
	if r == "" {
		return "none"
	}
	return string(r)
}
