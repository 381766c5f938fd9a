package main

import (
	"context"
	"fmt"
	"math/big"
	"math/rand/v2"

	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/sikahq/sika"
)

// The round-trip transfer loop of issue 21: with conversions rounded half-up, 8 GNF (0.52 XOF)
// arrived as 1 XOF and 1 XOF (15.32 GNF) as 15 GNF, so ten transfers of 8 GNF and one back
// turned 80 GNF into 153 GNF. checkTransferValue holds the invariant.

// roundTripOp moves a few XOF from BJ to GN, tries the ten transfers of 8 GNF back (each must be
// refused: it is worth less than 1 XOF), then moves 16 to 80 GNF back (credited rounded down).
func (l *load) roundTripOp(ctx context.Context, r *rand.Rand) {
	send := func(amount, from, to string) {
		l.keyedCreate(ctx, opRoundTrip, transferPath, map[string]string{"amount": amount, "from_country": from, "to_country": to}, txField)
	}
	send(fmt.Sprint(1+r.IntN(5)), "BJ", "GN")
	for range 10 {
		send("8", "GN", "BJ")
	}
	send(fmt.Sprint(16+r.IntN(65)), "GN", "BJ")
}

// checkTransferValue: every wallet transfer of the merchant was credited its debit at the
// catalogue's rate rounded down (sika.ConvertAmount), none was worth more in EUR at the
// catalogue's rates than its debit, and so the merchant's total value never grew by moving
// money between its wallets: its wallets are worth no more than what the other ledger entries
// (collections, payouts and their reversals) brought in.
func (h *harness) checkTransferValue(ctx context.Context) (*checkResult, error) {
	c := &checkResult{name: "wallet transfers never create value (credit rounded down; value at the catalogue's rates never grows)"}
	db := h.st.Pool()
	eur := func(currency string) (*big.Rat, error) {
		rate, err := h.st.ExchangeRate(ctx, "EUR", currency)
		if err != nil {
			return nil, fmt.Errorf("rate EUR → %s: %w", currency, err)
		}
		return rate.Rat(), nil
	}
	rates := map[string]*big.Rat{}
	valueOf := func(amount decimal.Decimal, currency string) (*big.Rat, error) {
		if rates[currency] == nil {
			r, err := eur(currency)
			if err != nil {
				return nil, err
			}
			rates[currency] = r
		}
		return new(big.Rat).Quo(amount.Rat(), rates[currency]), nil
	}
	// values is what two amounts are worth in EUR.
	values := func(a decimal.Decimal, ca string, b decimal.Decimal, cb string) (*big.Rat, *big.Rat, error) {
		va, err := valueOf(a, ca)
		if err != nil {
			return nil, nil, err
		}
		vb, err := valueOf(b, cb)
		return va, vb, err
	}

	lost, small := new(big.Rat), 0
	err := scanRows(ctx, db, `SELECT from_currency, to_currency, amount, credited_amount, exchange_rate FROM wallet_transfers
		WHERE merchant_id = $1`, []any{h.setup.merchantID}, func(r pgx.Rows) error {
		var from, to string
		var amount, credited, rate decimal.Decimal
		if err := r.Scan(&from, &to, &amount, &credited, &rate); err != nil {
			return err
		}
		c.checked++
		if want := sika.ConvertAmount(amount, rate, to); !credited.Equal(want) {
			c.addf("%s %s credited %s %s at %s, want %s (rounded down)", amount, from, credited, to, rate, want)
		}
		if from == "GNF" && amount.LessThan(decimal.NewFromInt(16)) {
			small++
		}
		out, in, err := values(amount, from, credited, to)
		if err != nil {
			return err
		}
		if in.Cmp(out) > 0 {
			c.addf("%s %s (%s EUR) credited %s %s (%s EUR): value created", amount, from, out.FloatString(6), credited, to, in.FloatString(6))
		}
		lost.Add(lost, out.Sub(out, in))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read wallet transfers: %w", err)
	}
	if small > 0 {
		c.addf("%d transfers of less than 16 GNF went through (worth less than 1 XOF)", small)
	}

	// The whole merchant: its wallets against what came in and went out other than by transfers.
	held, brought := new(big.Rat), new(big.Rat)
	err = scanRows(ctx, db, `SELECT currency, coalesce(sum(available_delta + pending_delta), 0),
			coalesce(sum(available_delta + pending_delta) FILTER (WHERE type NOT IN ('TRANSFER_IN', 'TRANSFER_OUT')), 0)
		FROM ledger_entries WHERE merchant_id = $1 GROUP BY currency`, []any{h.setup.merchantID}, func(r pgx.Rows) error {
		var currency string
		var all, other decimal.Decimal
		if err := r.Scan(&currency, &all, &other); err != nil {
			return err
		}
		a, o, err := values(all, currency, other, currency)
		if err != nil {
			return err
		}
		held.Add(held, a)
		brought.Add(brought, o)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read ledger sums: %w", err)
	}
	if held.Cmp(brought) > 0 {
		c.addf("the wallets are worth %s EUR, more than the %s EUR collections and payouts left", held.FloatString(6), brought.FloatString(6))
	}
	c.figures = fmt.Sprintf("%d transfers, %s EUR lost to rounding down; wallets worth %s EUR of %s EUR", c.checked,
		lost.FloatString(6), held.FloatString(2), brought.FloatString(2))
	return c, nil
}
