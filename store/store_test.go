package store_test

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/internal/devstack"
	"github.com/sikahq/sika/internal/testenv"
	"github.com/sikahq/sika/store"
)

var st *store.Store

func TestMain(m *testing.M) {
	os.Exit(testenv.Run(m, func(env *testenv.Env) error {
		var err error
		if st, err = store.Open(context.Background(), env.DatabaseURL); err != nil {
			return err
		}
		_, err = st.Migrate(context.Background())
		return err
	}))
}

func TestMigrationsRunOnceWhenInstancesStartTogether(t *testing.T) {
	ctx := t.Context()
	env := testenv.Current()
	name := "sika_migrate_race_" + uuid.NewString()[:8]
	require.NoError(t, devstack.CreateDatabase(ctx, env.AdminURL, name))
	t.Cleanup(func() { _ = devstack.DropDatabase(context.Background(), env.AdminURL, name) })
	url, err := devstack.DatabaseURL(env.AdminURL, name)
	require.NoError(t, err)

	const instances = 4
	applied := make([][]string, instances)
	errs := make([]error, instances)
	var wg sync.WaitGroup
	for i := range instances {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			s, err := store.Open(ctx, url)
			if err != nil {
				errs[i] = err
				return
			}
			defer s.Close()
			applied[i], errs[i] = s.Migrate(ctx)
		}(i)
	}
	wg.Wait()
	total := 0
	for i := range instances {
		require.NoError(t, errs[i], "instance %d", i)
		total += len(applied[i])
	}
	files, err := os.ReadDir("../migrations")
	require.NoError(t, err)
	sqlFiles := 0
	for _, f := range files {
		if len(f.Name()) > 4 && f.Name()[len(f.Name())-4:] == ".sql" {
			sqlFiles++
		}
	}
	assert.Equal(t, sqlFiles, total, "every migration applied exactly once across the instances")

	s, err := store.Open(ctx, url)
	require.NoError(t, err)
	defer s.Close()
	again, err := s.Migrate(ctx)
	require.NoError(t, err)
	assert.Empty(t, again)
	var recorded int
	require.NoError(t, s.Pool().QueryRow(ctx, `SELECT count(*) FROM schema_migrations`).Scan(&recorded))
	assert.Equal(t, sqlFiles, recorded)
}

// TestSchemaRules checks two rules of the schema on every table, so that later migrations keep
// them: money is NUMERIC (never a float), and every merchant-owned row carries its environment.
func TestSchemaRules(t *testing.T) {
	ctx := t.Context()
	rows, err := st.Pool().Query(ctx, `SELECT table_name, column_name, data_type FROM information_schema.columns
		WHERE table_schema = 'public'`)
	require.NoError(t, err)
	columns := map[string]map[string]string{}
	for rows.Next() {
		var table, column, typ string
		require.NoError(t, rows.Scan(&table, &column, &typ))
		if columns[table] == nil {
			columns[table] = map[string]string{}
		}
		columns[table][column] = typ
	}
	require.NoError(t, rows.Err())
	require.NotEmpty(t, columns)
	environmentFree := map[string]bool{"memberships": true, "kyc_files": true, "kyc_dossiers": true, "kyc_documents": true}
	for table, cols := range columns {
		for column, typ := range cols {
			assert.NotContains(t, []string{"real", "double precision"}, typ, "%s.%s is a float", table, column)
		}
		// memberships link a member to a merchant; they belong to no environment. Nor does KYC:
		// a merchant's identity is the same in TEST and LIVE.
		if _, ok := cols["merchant_id"]; ok && !environmentFree[table] {
			assert.Contains(t, cols, "environment", "%s has merchant_id but no environment", table)
		}
	}
	for _, c := range []string{"fee_fixed", "min_fee", "max_fee", "fee_percent", "gateway_fee_fixed"} {
		assert.Equal(t, "numeric", columns["pricing"][c], "pricing.%s", c)
	}
	assert.Equal(t, "numeric", columns["exchange_rates"]["rate"])
}

func newMerchant(t *testing.T) sika.Merchant {
	t.Helper()
	_, m, err := st.RegisterMember(t.Context(), uuid.NewString()+"@example.com", "x", "T", "", &store.NewMerchant{Name: "Shop", Country: "CI"})
	require.NoError(t, err)
	return *m
}

func TestIdempotencyKeyClaims(t *testing.T) {
	ctx := t.Context()
	m := newMerchant(t)
	req := store.IdempotencyRequest{Merchant: m.ID, Environment: sika.EnvironmentTest, Key: "k1", Method: "POST", Path: "/p/", Hash: []byte("hash-a")}

	outcome, _, err := st.ClaimIdempotencyKey(ctx, req, time.Minute, time.Hour)
	require.NoError(t, err)
	assert.Equal(t, store.ClaimAcquired, outcome)

	outcome, _, err = st.ClaimIdempotencyKey(ctx, req, time.Minute, time.Hour)
	require.NoError(t, err)
	assert.Equal(t, store.ClaimInUse, outcome, "a claim under its lease is in use")

	other := req
	other.Hash = []byte("hash-b")
	outcome, _, err = st.ClaimIdempotencyKey(ctx, other, time.Minute, time.Hour)
	require.NoError(t, err)
	assert.Equal(t, store.ClaimMismatch, outcome)

	resp := store.StoredResponse{Status: 201, ContentType: "application/json", Body: []byte(`{"success":true}`)}
	require.NoError(t, st.CompleteIdempotencyKey(ctx, req, resp))
	outcome, got, err := st.ClaimIdempotencyKey(ctx, req, time.Minute, time.Hour)
	require.NoError(t, err)
	assert.Equal(t, store.ClaimReplay, outcome)
	assert.Equal(t, resp, *got)

	t.Run("a released claim can be taken again", func(t *testing.T) {
		r := req
		r.Key = "k2"
		o, _, err := st.ClaimIdempotencyKey(ctx, r, time.Minute, time.Hour)
		require.NoError(t, err)
		require.Equal(t, store.ClaimAcquired, o)
		require.NoError(t, st.ReleaseIdempotencyKey(ctx, r))
		o, _, err = st.ClaimIdempotencyKey(ctx, r, time.Minute, time.Hour)
		require.NoError(t, err)
		assert.Equal(t, store.ClaimAcquired, o)
	})
	t.Run("an abandoned claim is taken over after its lease, by the same request only", func(t *testing.T) {
		r := req
		r.Key = "k3"
		o, _, err := st.ClaimIdempotencyKey(ctx, r, time.Millisecond, time.Hour)
		require.NoError(t, err)
		require.Equal(t, store.ClaimAcquired, o)
		ageIdempotencyKey(t, r.Key, "locked_until")
		mismatch := r
		mismatch.Hash = []byte("other")
		o, _, err = st.ClaimIdempotencyKey(ctx, mismatch, time.Minute, time.Hour)
		require.NoError(t, err)
		assert.Equal(t, store.ClaimMismatch, o)
		o, _, err = st.ClaimIdempotencyKey(ctx, r, time.Minute, time.Hour)
		require.NoError(t, err)
		assert.Equal(t, store.ClaimAcquired, o)
	})
	t.Run("an expired key is a new key, and the purge removes expired keys only", func(t *testing.T) {
		r := req
		r.Key = "k4"
		o, _, err := st.ClaimIdempotencyKey(ctx, r, time.Minute, time.Millisecond)
		require.NoError(t, err)
		require.Equal(t, store.ClaimAcquired, o)
		require.NoError(t, st.CompleteIdempotencyKey(ctx, r, resp))
		ageIdempotencyKey(t, r.Key, "expires_at")
		n, err := st.PurgeExpiredIdempotencyKeys(ctx, 1)
		require.NoError(t, err)
		assert.EqualValues(t, 1, n)
		o, _, err = st.ClaimIdempotencyKey(ctx, req, time.Minute, time.Hour)
		require.NoError(t, err)
		assert.Equal(t, store.ClaimReplay, o, "a live key survives the purge")
	})
}

func TestCountryAndNetworkLookups(t *testing.T) {
	ctx := t.Context()
	c, err := st.CountryByISO(ctx, "sn")
	require.NoError(t, err)
	assert.Equal(t, "221", c.CallingCode)
	assert.Equal(t, []int{9}, c.NationalNumberLengths)
	n, err := st.NetworkByCode(ctx, "orange_sn")
	require.NoError(t, err)
	assert.Equal(t, sika.OTPPrePayment, n.OTPKind)
	assert.Equal(t, c.ID, n.Country)
	_, err = st.NetworkByCode(ctx, "NOPE_XX")
	assert.Equal(t, sika.CodeNotFound, sika.ErrorCode(err))
	rate, err := st.ExchangeRate(ctx, "XOF", "XAF")
	require.NoError(t, err)
	assert.Equal(t, "1", rate.String())
	rate, err = st.ExchangeRate(ctx, "EUR", "EUR")
	require.NoError(t, err)
	assert.Equal(t, "1", rate.String())
	_, err = st.ExchangeRate(ctx, "XOF", "JPY")
	assert.Equal(t, sika.CodeNotFound, sika.ErrorCode(err))
}

// ageIdempotencyKey moves a key's lease or expiry into the past, instead of waiting for it.
func ageIdempotencyKey(t *testing.T, key, column string) {
	t.Helper()
	_, err := st.Pool().Exec(t.Context(), `UPDATE idempotency_keys SET `+column+` = now() - interval '1 second' WHERE key = $1`, key)
	require.NoError(t, err)
}
