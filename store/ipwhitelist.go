package store

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/sikahq/sika"
)

const ipWhitelistColumns = `id, merchant_id, environment, ip_address, description, created_at`

func scanIPWhitelistEntry(row pgx.Row) (sika.IPWhitelistEntry, error) {
	var e sika.IPWhitelistEntry
	var prefix netip.Prefix
	err := row.Scan(&e.ID, &e.Merchant, &e.Environment, &prefix, &e.Description, &e.CreatedAt)
	if prefix.IsSingleIP() {
		e.IPAddress = prefix.Addr().String()
	} else {
		e.IPAddress = prefix.String()
	}
	return e, err
}

var ipWhitelistTable = table[sika.IPWhitelistEntry]{kind: "IP whitelist entry", what: "ip whitelist", columns: ipWhitelistColumns,
	from: "ip_whitelist", scan: scanIPWhitelistEntry}

// ErrIPAlreadyListed is returned when the same address or range is already on the list.
var ErrIPAlreadyListed = sika.FieldError("ip_address", "This address is already whitelisted.")

// AddIPWhitelistEntry lists an address or CIDR range for a merchant and environment.
func (s *Store) AddIPWhitelistEntry(ctx context.Context, merchantID uuid.UUID, env sika.Environment, prefix netip.Prefix, description string) (sika.IPWhitelistEntry, error) {
	e, err := scanIPWhitelistEntry(s.pool.QueryRow(ctx, `INSERT INTO ip_whitelist (merchant_id, environment, ip_address, description)
		VALUES ($1, $2, $3, $4) RETURNING `+ipWhitelistColumns, merchantID, env, prefix.Masked(), description))
	if isUniqueViolation(err, "") {
		return e, ErrIPAlreadyListed
	}
	if err != nil {
		return e, fmt.Errorf("insert ip whitelist entry: %w", err)
	}
	return e, nil
}

// ListIPWhitelist returns a merchant's whitelist in one environment, newest first.
func (s *Store) ListIPWhitelist(ctx context.Context, merchantID uuid.UUID, env sika.Environment, page PageRequest) ([]sika.IPWhitelistEntry, int, error) {
	return ipWhitelistTable.page(ctx, s, merchantID, env, page)
}

// DeleteIPWhitelistEntry removes an entry of the merchant and environment, or not_found.
func (s *Store) DeleteIPWhitelistEntry(ctx context.Context, merchantID uuid.UUID, env sika.Environment, id uuid.UUID) error {
	tag, err := s.pool.Exec(ctx, `DELETE FROM ip_whitelist WHERE id = $1 AND merchant_id = $2 AND environment = $3`, id, merchantID, env)
	if err != nil {
		return fmt.Errorf("delete ip whitelist entry: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return sika.NotFound("IP whitelist entry")
	}
	return nil
}

// IPWhitelisted reports whether addr is inside one of the merchant's listed ranges.
func (s *Store) IPWhitelisted(ctx context.Context, merchantID uuid.UUID, env sika.Environment, addr netip.Addr) (bool, error) {
	var ok bool
	err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM ip_whitelist
		WHERE merchant_id = $1 AND environment = $2 AND ip_address >>= $3::inet)`, merchantID, env, addr.Unmap()).Scan(&ok)
	if err != nil {
		return false, fmt.Errorf("check ip whitelist: %w", err)
	}
	return ok, nil
}
