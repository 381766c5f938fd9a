package api

import (
	"encoding/json"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika"
)

// forgetIdempotencyKey deletes the API's record of a key, as the release after a 5xx or the
// purge after 24 hours does: only the transaction's own key is left to catch a replay.
func forgetIdempotencyKey(t *testing.T, acct *account, key string) {
	t.Helper()
	tag, err := testStore.Pool().Exec(t.Context(), `DELETE FROM idempotency_keys WHERE merchant_id = $1 AND key = $2`, acct.Merchant.ID, key)
	require.NoError(t, err)
	require.EqualValues(t, 1, tag.RowsAffected(), "the key had an API-level record")
}

func merchantTransactions(t *testing.T, acct *account) int {
	t.Helper()
	var n int
	require.NoError(t, testStore.Pool().QueryRow(t.Context(), `SELECT count(*) FROM transactions WHERE merchant_id = $1`, acct.Merchant.ID).Scan(&n))
	return n
}

// assertKeyReused checks a 409 idempotency_key_reused in the contract's error envelope.
func assertKeyReused(t *testing.T, r *response) {
	t.Helper()
	assert.Equal(t, 409, r.Status, "%s", r.Body)
	var env struct {
		Success *bool `json:"success"`
		Error   struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal(r.Body, &env), "%s", r.Body)
	require.NotNil(t, env.Success)
	assert.False(t, *env.Success)
	assert.Equal(t, "idempotency_key_reused", env.Error.Code)
	assert.NotEmpty(t, env.Error.Message)
	assert.Empty(t, r.Header.Get("Idempotent-Replayed"))
}

// idOf returns the "id" of a success response.
func idOf(t *testing.T, r *response) uuid.UUID {
	t.Helper()
	var v struct {
		ID uuid.UUID `json:"id"`
	}
	r.data(t, &v)
	return v.ID
}

// TestIdempotencyKeyOutlivesItsRecord: once the API's record of a key is gone (released after
// a 5xx, purged after its retention), a replay of the same request gets the original operation
// and another body or route gets 409 idempotency_key_reused, never the old operation, a 404 or a
// second operation (issue 17).
func TestIdempotencyKeyOutlivesItsRecord(t *testing.T) {
	ps := payments(t)

	t.Run("payouts", func(t *testing.T) {
		acct := ps.newAccount(t, true)
		whitelistLoopback(t, acct, sika.EnvironmentTest)
		fund(t, acct, "BJ", "MTN_BJ", "10000")
		key := uuid.NewString()
		first := ps.payout(t, acct, payoutBody("97000123"), "Idempotency-Key", key)
		require.Equal(t, 201, first.Status, "%s", first.Body)
		id := idOf(t, first)

		forgetIdempotencyKey(t, acct, key)
		same := ps.payout(t, acct, payoutBody("97000123"), "Idempotency-Key", key)
		require.Equal(t, 201, same.Status, "%s", same.Body)
		assert.Equal(t, id, idOf(t, same), "the same request gets the original payout")

		forgetIdempotencyKey(t, acct, key)
		other := payoutBody("97000123")
		other["amount"] = "2500"
		assertKeyReused(t, ps.payout(t, acct, other, "Idempotency-Key", key))
		forgetIdempotencyKey(t, acct, key)
		assertKeyReused(t, ps.payout(t, acct, payoutBody("97000456"), "Idempotency-Key", key))

		// Another route with the payout's key: a settlement is not found under it, and must not
		// answer 404.
		forgetIdempotencyKey(t, acct, key)
		m := ps.verifiedMethod(t, acct)
		r := ps.call(t, "POST", "/api/v1/settlements/", map[string]string{"amount": "1000", "currency": "XOF", "country": "BJ",
			"payout_method": m.ID.String()}, append(acct.key(sika.EnvironmentTest, sika.ScopePayout), "Idempotency-Key", key)...)
		assertKeyReused(t, r)

		assert.Equal(t, 2, merchantTransactions(t, acct), "the funding and one payout")
		assert.Equal(t, "9000.00", sika.FormatAmount(ps.wallet(t, acct).AvailableAmount.Decimal), "one payout held or paid")
	})

	t.Run("softpay", func(t *testing.T) {
		acct := ps.newAccount(t, true)
		key := uuid.NewString()
		first := ps.softpay(t, acct, benin("97000123"), "Idempotency-Key", key)
		require.Equal(t, 201, first.Status, "%s", first.Body)
		id := idOf(t, first)

		forgetIdempotencyKey(t, acct, key)
		same := ps.softpay(t, acct, benin("97000123"), "Idempotency-Key", key)
		require.Equal(t, 201, same.Status, "%s", same.Body)
		assert.Equal(t, id, idOf(t, same))

		forgetIdempotencyKey(t, acct, key)
		other := benin("97000123")
		other["amount"] = "1500"
		assertKeyReused(t, ps.softpay(t, acct, other, "Idempotency-Key", key))

		// The alias path is another route for the key (see the OpenAPI document).
		forgetIdempotencyKey(t, acct, key)
		r := ps.call(t, "POST", "/api/v1/payments/softpay/initialize/", benin("97000123"),
			append(acct.key(sika.EnvironmentTest, sika.ScopePayin), "Idempotency-Key", key)...)
		assertKeyReused(t, r)

		assert.Equal(t, 1, merchantTransactions(t, acct))
	})

	t.Run("settlements", func(t *testing.T) {
		acct := ps.newAccount(t, true)
		whitelistLoopback(t, acct, sika.EnvironmentTest)
		fund(t, acct, "BJ", "MTN_BJ", "20000")
		m := ps.verifiedMethod(t, acct)
		headers := append(acct.key(sika.EnvironmentTest, sika.ScopePayout), "Idempotency-Key", uuid.NewString())
		key := headers[len(headers)-1]
		body := map[string]string{"amount": "5000", "currency": "XOF", "country": "BJ", "payout_method": m.ID.String()}
		first := ps.call(t, "POST", "/api/v1/settlements/", body, headers...)
		require.Equal(t, 201, first.Status, "%s", first.Body)
		var st sika.Settlement
		first.data(t, &st)

		forgetIdempotencyKey(t, acct, key)
		same := ps.call(t, "POST", "/api/v1/settlements/", body, headers...)
		require.Equal(t, 201, same.Status, "%s (never a 404)", same.Body)
		var again sika.Settlement
		same.data(t, &again)
		assert.Equal(t, st.ID, again.ID)
		assert.Equal(t, st.Transaction, again.Transaction)

		forgetIdempotencyKey(t, acct, key)
		body["amount"] = "6000"
		assertKeyReused(t, ps.call(t, "POST", "/api/v1/settlements/", body, headers...))

		// The settlement's key on a payout or a wallet transfer is another route.
		forgetIdempotencyKey(t, acct, key)
		assertKeyReused(t, ps.payout(t, acct, payoutBody("97000123"), "Idempotency-Key", key))
		forgetIdempotencyKey(t, acct, key)
		assertKeyReused(t, ps.call(t, "POST", "/api/v1/wallet-transfers/", map[string]string{"amount": "5000", "from_country": "BJ", "to_country": "CI"}, headers...))

		var list struct{ Count int }
		ps.call(t, "GET", "/api/v1/settlements/", nil, headers[:2]...).data(t, &list)
		assert.Equal(t, 1, list.Count)
		assert.Equal(t, 2, merchantTransactions(t, acct), "the funding and one settlement")
	})

	t.Run("wallet transfers", func(t *testing.T) {
		acct := ps.newAccount(t, true)
		whitelistLoopback(t, acct, sika.EnvironmentTest)
		fund(t, acct, "BJ", "MTN_BJ", "10000")
		headers := append(acct.key(sika.EnvironmentTest, sika.ScopePayout), "Idempotency-Key", uuid.NewString())
		key := headers[len(headers)-1]
		body := map[string]string{"amount": "4000", "from_country": "BJ", "to_country": "CM"}
		first := ps.call(t, "POST", "/api/v1/wallet-transfers/", body, headers...)
		require.Equal(t, 201, first.Status, "%s", first.Body)
		id := idOf(t, first)

		forgetIdempotencyKey(t, acct, key)
		same := ps.call(t, "POST", "/api/v1/wallet-transfers/", body, headers...)
		require.Equal(t, 201, same.Status, "%s", same.Body)
		assert.Equal(t, id, idOf(t, same))

		forgetIdempotencyKey(t, acct, key)
		body["amount"] = "3000"
		assertKeyReused(t, ps.call(t, "POST", "/api/v1/wallet-transfers/", body, headers...))

		balances := map[string]string{}
		for _, w := range ps.balances(t, acct) {
			balances[w.Country] = sika.FormatAmount(w.AvailableAmount.Decimal)
		}
		assert.Equal(t, map[string]string{"BJ": "6000.00", "CM": "4000.00"}, balances, "transferred once")
	})
}
