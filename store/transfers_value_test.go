package store_test

import (
	"context"
	"errors"
	"math/big"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
)

// catalogueRates is what the value checks need of the catalogue: every country's currency and a
// network to fund its wallet through, and every currency's rate from EUR, the one value per
// currency from which the catalogue's rates are derived (migrations 0002 and 0020).
type catalogueRates struct {
	countries []string
	currency  map[string]string    // country → currency
	network   map[string]uuid.UUID // country → a network of it
	fromEUR   map[string]*big.Rat  // currency → units per EUR
}

func loadCatalogueRates(t *testing.T) catalogueRates {
	t.Helper()
	ctx := t.Context()
	c := catalogueRates{currency: map[string]string{}, network: map[string]uuid.UUID{}, fromEUR: map[string]*big.Rat{}}
	countries, err := st.ListCountries(ctx)
	require.NoError(t, err)
	for _, country := range countries {
		var network uuid.UUID
		require.NoError(t, st.Pool().QueryRow(ctx, `SELECT id FROM networks WHERE country_id = $1 ORDER BY code LIMIT 1`, country.ID).Scan(&network))
		rate, err := st.ExchangeRate(ctx, "EUR", country.DefaultCurrency)
		require.NoError(t, err, "the catalogue prices %s from EUR", country.DefaultCurrency)
		c.countries = append(c.countries, country.ISOCode)
		c.currency[country.ISOCode], c.network[country.ISOCode], c.fromEUR[country.DefaultCurrency] = country.DefaultCurrency, network, rate.Rat()
	}
	require.GreaterOrEqual(t, len(c.fromEUR), 3, "transfers between at least three currencies")
	return c
}

// value is what balances (by country) are worth in EUR at the catalogue's rates, exactly.
func (c catalogueRates) value(balances map[string]decimal.Decimal) *big.Rat {
	total := new(big.Rat)
	for country, amount := range balances {
		total.Add(total, new(big.Rat).Quo(amount.Rat(), c.fromEUR[c.currency[country]]))
	}
	return total
}

// TestCatalogueRatesAreAtMostTheirRatio: no stored rate is above the ratio of the two
// currencies' rates from EUR, so that a credit rounded down is never worth more than its debit
// at the catalogue's rates, and no chain of conversions comes back with more than it left with
// (issue 21: 0002 rounded half-up, and EUR → GNF → EUR multiplied by 1.000000125).
func TestCatalogueRatesAreAtMostTheirRatio(t *testing.T) {
	rows, err := st.Pool().Query(t.Context(), `SELECT x.from_currency, x.to_currency, x.rate, a.rate, b.rate
		FROM exchange_rates x
		LEFT JOIN exchange_rates a ON a.from_currency = 'EUR' AND a.to_currency = x.from_currency
		LEFT JOIN exchange_rates b ON b.from_currency = 'EUR' AND b.to_currency = x.to_currency`)
	require.NoError(t, err)
	defer rows.Close()
	one := decimal.NewFromInt(1)
	n := 0
	for rows.Next() {
		var from, to string
		var rate decimal.Decimal
		var eurFrom, eurTo *decimal.Decimal
		require.NoError(t, rows.Scan(&from, &to, &rate, &eurFrom, &eurTo))
		if eurFrom == nil {
			eurFrom = &one
		}
		if eurTo == nil {
			eurTo = &one
		}
		// rate ≤ eurTo / eurFrom
		assert.True(t, rate.Mul(*eurFrom).LessThanOrEqual(*eurTo), "%s → %s at %s is above %s / %s", from, to, rate, eurTo, eurFrom)
		n++
	}
	require.NoError(t, rows.Err())
	assert.GreaterOrEqual(t, n, 30)

	var worst decimal.Decimal
	require.NoError(t, st.Pool().QueryRow(t.Context(), `SELECT max(x.rate * y.rate) FROM exchange_rates x
		JOIN exchange_rates y ON y.from_currency = x.to_currency AND y.to_currency = x.from_currency`).Scan(&worst))
	assert.True(t, worst.LessThanOrEqual(one), "a round trip at the catalogue's rates multiplies by %s", worst)
}

// TestWalletTransfersNeverCreateValue (issue 21): random sequences of wallet transfers between
// random wallets of the catalogue's countries, of random amounts (a few minor units, part of a
// balance, all of it, more than it), made by the store against real Postgres. After every
// transfer the merchant's total value at the catalogue's rates has not grown; a credit is the
// debit at the rate rounded down (never more, less by under one minor unit); a transfer that
// would credit nothing is refused with a field error on amount and writes nothing; the wallets
// hold what the model says and each one equals the sum of its ledger entries.
//
// Run long with -rapid.checks=5000.
func TestWalletTransfersNeverCreateValue(t *testing.T) {
	ctx := t.Context()
	cat := loadCatalogueRates(t)
	var cases, transfers, refusedZero, refusedBalance int
	rapid.Check(t, func(rt *rapid.T) {
		cases++
		_, m, err := st.RegisterMember(ctx, uuid.NewString()+"@example.com", "x", "T", "", &store.NewMerchant{Name: "Shop", Country: "CI"})
		require.NoError(rt, err)
		model := map[string]decimal.Decimal{}
		funded := rapid.SliceOfNDistinct(rapid.SampledFrom(cat.countries), 1, 4, rapid.ID[string]).Draw(rt, "funded wallets")
		for _, country := range funded {
			units := rapid.OneOf(rapid.Int64Range(1, 100), rapid.Int64Range(1, 10_000_000)).Draw(rt, "funding of "+country)
			amount := decimal.New(units, -sika.MinorUnits(cat.currency[country]))
			fundWallet(rt, ctx, cat, m.ID, country, amount)
			model[country] = amount
		}

		steps := rapid.IntRange(1, 12).Draw(rt, "transfers")
		for i := range steps {
			holding := []string{}
			for _, c := range cat.countries {
				if model[c].IsPositive() {
					holding = append(holding, c)
				}
			}
			from := rapid.SampledFrom(cat.countries).Draw(rt, "from any wallet")
			if len(holding) > 0 && rapid.IntRange(0, 4).Draw(rt, "from a wallet with money (not 0)") > 0 {
				from = rapid.SampledFrom(holding).Draw(rt, "from")
			}
			to := rapid.SampledFrom(cat.countries).Filter(func(c string) bool { return c != from }).Draw(rt, "to")
			fromCur, toCur := cat.currency[from], cat.currency[to]
			unit := decimal.New(1, -sika.MinorUnits(fromCur))
			balance := model[from]
			var amount decimal.Decimal
			switch rapid.SampledFrom([]string{"tiny", "part", "all", "over"}).Draw(rt, "kind") {
			case "tiny":
				amount = unit.Mul(decimal.NewFromInt(rapid.Int64Range(1, 40).Draw(rt, "minor units")))
			case "part":
				if n := balance.Div(unit).IntPart(); n > 0 {
					amount = unit.Mul(decimal.NewFromInt(rapid.Int64Range(1, n).Draw(rt, "minor units")))
				} else {
					amount = unit
				}
			case "all":
				amount = balance
			case "over":
				amount = balance.Add(unit.Mul(decimal.NewFromInt(rapid.Int64Range(1, 1000).Draw(rt, "minor units over"))))
			}
			if !amount.IsPositive() {
				amount = unit
			}

			valueBefore := cat.value(model)
			countBefore := merchantTransactions(rt, ctx, m.ID)
			wt, err := walletTransfer(ctx, *m, from, to, fromCur, toCur, amount)
			rate, rerr := st.ExchangeRate(ctx, fromCur, toCur)
			require.NoError(rt, rerr)
			exact := amount.Mul(rate)
			toUnit := decimal.New(1, -sika.MinorUnits(toCur))
			switch {
			case exact.LessThan(toUnit):
				var verr *sika.Error
				require.True(rt, errors.As(err, &verr), "%s %s → %s: %v", amount, fromCur, toCur, err)
				require.NotEmpty(rt, verr.Fields["amount"], "a transfer crediting nothing is refused on amount: %v", err)
				refusedZero++
			case amount.GreaterThan(balance):
				require.Equal(rt, sika.CodeInsufficientBalance, sika.ErrorCode(err), "%v", err)
				refusedBalance++
			default:
				require.NoError(rt, err)
				transfers++
				model[from] = balance.Sub(amount)
				model[to] = model[to].Add(wt.CreditedAmount.Decimal)
			}
			if err != nil {
				require.Equal(rt, countBefore, merchantTransactions(rt, ctx, m.ID), "a refused transfer writes nothing")
			}
			valueAfter := cat.value(model)
			require.True(rt, valueAfter.Cmp(valueBefore) <= 0, "transfer %d (%s %s → %s) grew the value from %s to %s EUR",
				i, amount, from, to, valueBefore.FloatString(12), valueAfter.FloatString(12))
			require.Equal(rt, modelStrings(model), merchantWallets(rt, ctx, m.ID), "wallets after transfer %d", i)
			if err == nil {
				credited := wt.CreditedAmount.Decimal
				require.True(rt, wt.ExchangeRate.Equal(rate), "applied %s, catalogue %s", wt.ExchangeRate, rate)
				require.True(rt, credited.LessThanOrEqual(exact), "%s %s credited %s %s, worth %s", amount, fromCur, credited, toCur, exact)
				require.True(rt, credited.Add(toUnit).GreaterThan(exact), "%s %s credited %s %s: rounded down by a unit or more (%s)", amount, fromCur, credited, toCur, exact)
			}
		}
		requireMerchantLedger(rt, ctx, m.ID)
	})
	t.Logf("%d cases: %d transfers made, %d refused as crediting nothing, %d for the balance", cases, transfers, refusedZero, refusedBalance)
	disc, err := st.CheckLedger(ctx)
	require.NoError(t, err)
	assert.Nil(t, disc)
}

// walletTransfer makes a transfer as the API does.
func walletTransfer(ctx context.Context, m sika.Merchant, from, to, fromCur, toCur string, amount decimal.Decimal) (sika.WalletTransfer, error) {
	ids := [2]uuid.UUID{uuid.Must(uuid.NewV7()), uuid.Must(uuid.NewV7())}
	ref, err := sika.NewReference("TRF", time.Now())
	if err != nil {
		return sika.WalletTransfer{}, err
	}
	a := sika.NewAmount(amount)
	wt, _, err := st.CreateWalletTransfer(ctx, store.NewWalletTransfer{
		Transaction: store.NewTransaction{Transaction: sika.Transaction{ID: ids[0], Reference: ref, Merchant: m.ID,
			Environment: sika.EnvironmentTest, Type: sika.TypeTransfer, RequestedAmount: a, DebitedAmount: a, NetAmount: a,
			Currency: fromCur, Country: from, Recipient: to, FeeChargeMode: sika.FeeDeducted}},
		ID: ids[1], ToCountry: to, ToCurrency: toCur,
	})
	return wt, err
}

// fundWallet credits a merchant's TEST wallet of a country through a completed collection.
func fundWallet(t require.TestingT, ctx context.Context, cat catalogueRates, merchant uuid.UUID, country string, amount decimal.Decimal) {
	id := uuid.Must(uuid.NewV7())
	ref, err := sika.NewReference("PAY", time.Now())
	require.NoError(t, err)
	a := sika.NewAmount(amount)
	tx, outbox, ok, err := st.CreateTransaction(ctx, store.NewTransaction{Transaction: sika.Transaction{
		ID: id, Reference: ref, Merchant: merchant, Environment: sika.EnvironmentTest, Type: sika.TypePayment,
		RequestedAmount: a, DebitedAmount: a, NetAmount: a, Currency: cat.currency[country], Country: country,
		NetworkID: cat.network[country], CustomerName: "Funding", FeeChargeMode: sika.FeeDeducted,
	}}, store.WorkflowStart{ID: "funding:" + id.String(), Type: "none", Input: nil})
	require.NoError(t, err)
	require.True(t, ok)
	require.NoError(t, st.DeleteOutbox(ctx, outbox))
	_, changed, err := st.CompletePayment(ctx, store.Completion{TransactionID: tx.ID, Run: 1, Status: sika.StatusSuccess,
		Reason: "test funding", TriggeredBy: sika.TriggerSystem})
	require.NoError(t, err)
	require.True(t, changed)
}

func merchantTransactions(t require.TestingT, ctx context.Context, merchant uuid.UUID) int {
	var n int
	require.NoError(t, st.Pool().QueryRow(ctx, `SELECT count(*) FROM transactions WHERE merchant_id = $1`, merchant).Scan(&n))
	return n
}

func modelStrings(model map[string]decimal.Decimal) map[string]string {
	out := map[string]string{}
	for country, amount := range model {
		out[country] = amount.StringFixed(2)
	}
	return out
}

// merchantWallets is what each TEST wallet of the merchant holds, available and pending together.
func merchantWallets(t require.TestingT, ctx context.Context, merchant uuid.UUID) map[string]string {
	rows, err := st.Pool().Query(ctx, `SELECT country, available_amount + pending_amount FROM wallets
		WHERE merchant_id = $1 AND environment = 'TEST'`, merchant)
	require.NoError(t, err)
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var country string
		var amount decimal.Decimal
		require.NoError(t, rows.Scan(&country, &amount))
		out[country] = amount.StringFixed(2)
	}
	require.NoError(t, rows.Err())
	return out
}

// requireMerchantLedger: each wallet of the merchant holds the sum of its ledger entries, every
// transfer's two entries are its debit and its credit, and the entries chain.
func requireMerchantLedger(t require.TestingT, ctx context.Context, merchant uuid.UUID) {
	var problems int
	require.NoError(t, st.Pool().QueryRow(ctx, `
		SELECT (SELECT count(*) FROM wallets w WHERE w.merchant_id = $1 AND (w.available_amount,  w.pending_amount) <>
			(SELECT coalesce(sum(e.available_delta), 0), coalesce(sum(e.pending_delta), 0) FROM ledger_entries e WHERE e.wallet_id = w.id))
		+ (SELECT count(*) FROM wallet_transfers x WHERE x.merchant_id = $1 AND
			(SELECT array_agg(e.type || ' ' || e.amount ORDER BY e.type) FROM ledger_entries e WHERE e.wallet_transfer_id = x.id)
			<> ARRAY['TRANSFER_IN ' || x.credited_amount::numeric(20, 2), 'TRANSFER_OUT ' || x.amount::numeric(20, 2)])
		+ (SELECT count(*) FROM (SELECT balance_before, lag(balance_after, 1, 0::numeric) OVER (PARTITION BY wallet_id ORDER BY sequence) AS prev
			FROM ledger_entries WHERE merchant_id = $1) c WHERE c.balance_before <> c.prev)`, merchant).Scan(&problems))
	require.Zero(t, problems, "ledger discrepancies of the merchant")
}
