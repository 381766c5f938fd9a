package store

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/sikahq/sika"
)

const countryColumns = `id, iso_code, name, default_currency, calling_code, national_number_lengths, created_at, updated_at`

func scanCountry(row pgx.Row) (sika.Country, error) {
	var c sika.Country
	err := row.Scan(&c.ID, &c.ISOCode, &c.Name, &c.DefaultCurrency, &c.CallingCode, &c.NationalNumberLengths, &c.CreatedAt, &c.UpdatedAt)
	return c, err
}

// ListCountries returns every country, by ISO code.
func (s *Store) ListCountries(ctx context.Context) ([]sika.Country, error) {
	return collect(ctx, s.pool, "countries", scanCountry, `SELECT `+countryColumns+` FROM countries ORDER BY iso_code`)
}

// CountryByID returns a country, or not_found.
func (s *Store) CountryByID(ctx context.Context, id uuid.UUID) (sika.Country, error) {
	return countryTable.cached(ctx, s, cloneCountry, `id = $1`, id)
}

// CountryByISO returns a country by its ISO 3166 alpha-2 code, or not_found.
func (s *Store) CountryByISO(ctx context.Context, iso string) (sika.Country, error) {
	return countryTable.cached(ctx, s, cloneCountry, `iso_code = $1`, strings.ToUpper(iso))
}

var countryTable = table[sika.Country]{kind: "Country", what: "countries", columns: countryColumns, from: "countries", scan: scanCountry}

func cloneCountry(c sika.Country) sika.Country {
	c.NationalNumberLengths = slices.Clone(c.NationalNumberLengths)
	return c
}

const networkColumns = `id, country_id, code, name, is_active, otp_kind, otp_instructions, redirect, min_amount, max_amount, created_at, updated_at`

func scanNetwork(row pgx.Row) (sika.Network, error) {
	var n sika.Network
	err := row.Scan(&n.ID, &n.Country, &n.Code, &n.Name, &n.IsActive, &n.OTPKind, &n.OTPInstructions, &n.Redirect, &n.MinAmount, &n.MaxAmount, &n.CreatedAt, &n.UpdatedAt)
	return n, err
}

// ListNetworks returns a page of networks ordered by code.
func (s *Store) ListNetworks(ctx context.Context, page PageRequest) ([]sika.Network, int, error) {
	return listPage(ctx, s, "list networks", networkColumns, `FROM networks`, `code, id`, nil, page, scanNetwork)
}

// CountryNetworks returns the networks of a country (ISO code), by code; none for an unknown
// country.
func (s *Store) CountryNetworks(ctx context.Context, iso string) ([]sika.Network, error) {
	iso = strings.ToUpper(iso)
	return cachedRead(s, "country networks "+iso, func() ([]sika.Network, error) {
		return collect(ctx, s.pool, "country networks", scanNetwork, `SELECT `+networkColumns+` FROM networks
			WHERE country_id = (SELECT id FROM countries WHERE iso_code = $1) ORDER BY code`, iso)
	}, slices.Clone)
}

// NetworkByID returns a network, or not_found.
func (s *Store) NetworkByID(ctx context.Context, id uuid.UUID) (sika.Network, error) {
	return networkTable.cached(ctx, s, same, `id = $1`, id)
}

// NetworkByCode returns a network by its code (MTN_BJ), or not_found.
func (s *Store) NetworkByCode(ctx context.Context, code string) (sika.Network, error) {
	return networkTable.cached(ctx, s, same, `code = $1`, strings.ToUpper(code))
}

var networkTable = table[sika.Network]{kind: "Network", what: "networks", columns: networkColumns, from: "networks", scan: scanNetwork}

const exchangeRateColumns = `id, from_currency, to_currency, rate, auto_update, created_at, updated_at`

func scanExchangeRate(row pgx.Row) (sika.ExchangeRate, error) {
	var r sika.ExchangeRate
	err := row.Scan(&r.ID, &r.FromCurrency, &r.ToCurrency, &r.Rate, &r.AutoUpdate, &r.CreatedAt, &r.UpdatedAt)
	return r, err
}

// ListExchangeRates returns a page of rates ordered by currency pair.
func (s *Store) ListExchangeRates(ctx context.Context, page PageRequest) ([]sika.ExchangeRate, int, error) {
	return listPage(ctx, s, "list exchange rates", exchangeRateColumns, `FROM exchange_rates`, `from_currency, to_currency`, nil, page, scanExchangeRate)
}

// ExchangeRate returns the current rate from one currency to another (1 for the same
// currency), or not_found when the pair is not priced.
func (s *Store) ExchangeRate(ctx context.Context, from, to string) (decimal.Decimal, error) {
	return exchangeRate(ctx, s.pool, from, to)
}

// CurrencyKnown reports whether Sika can take payments in a currency: a supported country's
// own, or one with an exchange rate into one.
func (s *Store) CurrencyKnown(ctx context.Context, code string) (bool, error) {
	var ok bool
	err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM countries WHERE default_currency = $1)
		OR EXISTS (SELECT 1 FROM exchange_rates WHERE from_currency = $1)`, strings.ToUpper(code)).Scan(&ok)
	if err != nil {
		return false, fmt.Errorf("look up currency %s: %w", code, err)
	}
	return ok, nil
}

// rowQueryer reads one row: the pool, or a transaction.
type rowQueryer interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

func exchangeRate(ctx context.Context, q rowQueryer, from, to string) (decimal.Decimal, error) {
	if strings.EqualFold(from, to) {
		return decimal.NewFromInt(1), nil
	}
	var rate decimal.Decimal
	err := q.QueryRow(ctx, `SELECT rate FROM exchange_rates WHERE from_currency = $1 AND to_currency = $2`,
		strings.ToUpper(from), strings.ToUpper(to)).Scan(&rate)
	return rate, rowErr(err, "Exchange rate", "select exchange rate")
}

// NetworkRate is one line of a merchant's price list: a network with its effective pricing in
// both directions.
type NetworkRate struct {
	Network  sika.Network
	Country  sika.Country
	Inbound  *sika.Pricing
	Outbound *sika.Pricing
}

// EffectiveRates returns, for every network, the merchant's own price in this environment
// where it has one and the default price otherwise.
func (s *Store) EffectiveRates(ctx context.Context, merchantID uuid.UUID, env sika.Environment) ([]NetworkRate, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT n.id, n.country_id, n.code, n.name, n.is_active, n.otp_kind, n.otp_instructions, n.redirect, n.min_amount, n.max_amount, n.created_at, n.updated_at,
		       c.id, c.iso_code, c.name, c.default_currency, c.calling_code, c.national_number_lengths, c.created_at, c.updated_at,
		       p.direction, p.fee_percent, p.fee_fixed, p.min_fee, p.max_fee, p.gateway_fee_percent, p.gateway_fee_fixed,
		       p.merchant_id IS NOT NULL
		FROM networks n
		JOIN countries c ON c.id = n.country_id
		LEFT JOIN LATERAL (
			SELECT DISTINCT ON (direction) * FROM pricing
			WHERE network_id = n.id AND (merchant_id IS NULL OR (merchant_id = $1 AND environment = $2))
			ORDER BY direction, merchant_id NULLS LAST
		) p ON true
		ORDER BY c.iso_code, n.code, p.direction`, merchantID, env)
	if err != nil {
		return nil, fmt.Errorf("list effective rates: %w", err)
	}
	defer rows.Close()
	var out []NetworkRate
	for rows.Next() {
		var n sika.Network
		var c sika.Country
		var dir *sika.Direction
		var p sika.Pricing
		var fp, ff, gp, gf *decimal.Decimal
		var custom *bool
		if err := rows.Scan(&n.ID, &n.Country, &n.Code, &n.Name, &n.IsActive, &n.OTPKind, &n.OTPInstructions, &n.Redirect, &n.MinAmount, &n.MaxAmount, &n.CreatedAt, &n.UpdatedAt,
			&c.ID, &c.ISOCode, &c.Name, &c.DefaultCurrency, &c.CallingCode, &c.NationalNumberLengths, &c.CreatedAt, &c.UpdatedAt,
			&dir, &fp, &ff, &p.Fee.MinFee, &p.Fee.MaxFee, &gp, &gf, &custom); err != nil {
			return nil, fmt.Errorf("scan effective rate: %w", err)
		}
		if len(out) == 0 || out[len(out)-1].Network.ID != n.ID {
			out = append(out, NetworkRate{Network: n, Country: c})
		}
		if dir == nil {
			continue
		}
		p.Network, p.Direction, p.Custom = n.ID, *dir, *custom
		p.Fee.Percentage, p.Fee.Fixed = *fp, *ff
		p.GatewayCost.Percentage, p.GatewayCost.Fixed = *gp, *gf
		line := &out[len(out)-1]
		if p.Direction == sika.DirectionInbound {
			line.Inbound = &p
		} else {
			line.Outbound = &p
		}
	}
	return out, rows.Err()
}

// EffectivePricing returns the price of one network and direction for a merchant: its own row in
// the environment when it has one, the default otherwise.
func (s *Store) EffectivePricing(ctx context.Context, merchantID uuid.UUID, env sika.Environment, networkID uuid.UUID, dir sika.Direction) (sika.Pricing, error) {
	return cachedRead(s, fmt.Sprint("pricing ", merchantID, env, networkID, dir), func() (sika.Pricing, error) {
		return s.effectivePricing(ctx, merchantID, env, networkID, dir)
	}, same)
}

func (s *Store) effectivePricing(ctx context.Context, merchantID uuid.UUID, env sika.Environment, networkID uuid.UUID, dir sika.Direction) (sika.Pricing, error) {
	p := sika.Pricing{Network: networkID, Direction: dir}
	err := s.pool.QueryRow(ctx, `SELECT fee_percent, fee_fixed, min_fee, max_fee, gateway_fee_percent, gateway_fee_fixed, merchant_id IS NOT NULL
		FROM pricing WHERE network_id = $1 AND direction = $2 AND (merchant_id IS NULL OR (merchant_id = $3 AND environment = $4))
		ORDER BY merchant_id NULLS LAST LIMIT 1`, networkID, dir, merchantID, env).
		Scan(&p.Fee.Percentage, &p.Fee.Fixed, &p.Fee.MinFee, &p.Fee.MaxFee, &p.GatewayCost.Percentage, &p.GatewayCost.Fixed, &p.Custom)
	if isNoRows(err) {
		return p, sika.Errorf(sika.CodeNetworkUnavailable, "This network has no price for this direction yet.")
	}
	if err != nil {
		return p, fmt.Errorf("select pricing: %w", err)
	}
	return p, nil
}
