package store

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/internal/testenv"
)

// cachedKeys lists what the read cache holds.
func (s *Store) cachedKeys() []string {
	s.cache.mu.Lock()
	defer s.cache.mu.Unlock()
	keys := make([]string, 0, len(s.cache.entries))
	for k := range s.cache.entries {
		keys = append(keys, k)
	}
	return keys
}

func openCachedStore(t *testing.T) *Store {
	t.Helper()
	s, err := Open(t.Context(), testenv.Current().DatabaseURL)
	require.NoError(t, err)
	s.StartReadCache(context.Background())
	t.Cleanup(s.Close)
	require.Eventually(t, s.cache.live.Load, 10*time.Second, 10*time.Millisecond, "the listener is up")
	return s
}

func TestReadCacheForgetsWhatAnyoneChanges(t *testing.T) {
	ctx := t.Context()
	s := openCachedStore(t)
	other, err := Open(ctx, testenv.Current().DatabaseURL) // another replica, without a cache
	require.NoError(t, err)
	t.Cleanup(other.Close)

	// Other tests of the package change the cached tables at any moment (each change empties
	// the cache): read until an answer is seen kept.
	n, err := s.NetworkByCode(ctx, "mtn_bj")
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		_, err := s.NetworkByCode(ctx, "MTN_BJ")
		return err == nil && slices.Contains(s.cachedKeys(), "network code = $1MTN_BJ")
	}, 10*time.Second, 10*time.Millisecond, "kept after a read")
	again, err := s.NetworkByCode(ctx, "MTN_BJ")
	require.NoError(t, err)
	assert.Equal(t, n, again)

	// A change committed elsewhere (another replica, an operator's psql) is announced by the
	// table's trigger; the listener empties the cache and the next read sees the change.
	_, err = other.pool.Exec(ctx, `UPDATE networks SET otp_instructions = otp_instructions || ' ' WHERE code = 'MTN_BJ'`)
	require.NoError(t, err)
	t.Cleanup(func() {
		_, err := other.pool.Exec(context.Background(), `UPDATE networks SET otp_instructions = rtrim(otp_instructions) WHERE code = 'MTN_BJ'`)
		assert.NoError(t, err)
	})
	require.Eventually(t, func() bool { return len(s.cachedKeys()) == 0 }, 10*time.Second, 5*time.Millisecond,
		"the change's notification empties the cache")
	changed, err := s.NetworkByCode(ctx, "MTN_BJ")
	require.NoError(t, err)
	assert.Equal(t, n.OTPInstructions+" ", changed.OTPInstructions)

	// A key's last use, written once a minute, announces nothing; its revocation does. Other
	// tests of the package change the cached tables meanwhile: listen for api_keys alone.
	m := newTestMerchant(t, s)
	k, err := s.CreateAPIKey(ctx, m.ID, sika.EnvironmentTest, sika.ScopeBoth, "cache", nil)
	require.NoError(t, err)
	conn, err := other.pool.Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()
	_, err = conn.Exec(ctx, "LISTEN "+readCacheChannel)
	require.NoError(t, err)
	announced := func() bool {
		wait, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancel()
		for {
			n, err := conn.Conn().WaitForNotification(wait)
			if err != nil {
				return false
			}
			if n.Payload == "api_keys" {
				return true
			}
		}
	}
	require.NoError(t, other.TouchAPIKey(ctx, k.ID, time.Now()))
	assert.False(t, announced(), "a key's use is not announced")
	_, err = other.RevokeAPIKey(ctx, m.ID, sika.EnvironmentTest, k.ID)
	require.NoError(t, err)
	assert.True(t, announced(), "a key's revocation is announced")
	_, err = conn.Exec(ctx, "UNLISTEN "+readCacheChannel)
	require.NoError(t, err)
}

func TestReadCacheRefusesARevokedKeyAtOnce(t *testing.T) {
	ctx := t.Context()
	s := openCachedStore(t)
	m := newTestMerchant(t, s)
	k, err := s.CreateAPIKey(ctx, m.ID, sika.EnvironmentLive, sika.ScopePayin, "revoked", nil)
	require.NoError(t, err)
	hash := sika.HashAPIKey(k.Secret)
	got, merchant, err := s.APIKeyWithMerchant(ctx, hash)
	require.NoError(t, err)
	assert.Nil(t, got.RevokedAt)
	assert.Equal(t, m.ID, merchant.ID)

	// Revoked through this Store: refused by the very next read, before any notification.
	_, err = s.RevokeAPIKey(ctx, m.ID, sika.EnvironmentLive, k.ID)
	require.NoError(t, err)
	got, _, err = s.APIKeyWithMerchant(ctx, hash)
	require.NoError(t, err)
	assert.NotNil(t, got.RevokedAt)

	// So is a merchant whose status changes through this Store.
	require.NoError(t, s.SetMerchantStatus(ctx, m.ID, sika.KYCRejected, false))
	_, merchant, err = s.APIKeyWithMerchant(ctx, hash)
	require.NoError(t, err)
	assert.False(t, merchant.IsActive)
	assert.Equal(t, sika.KYCRejected, merchant.KYCStatus)
}

func TestReadCacheWithoutItsListenerReadsPostgres(t *testing.T) {
	ctx := t.Context()
	s := openCachedStore(t)
	require.Eventually(t, func() bool {
		_, err := s.CountryByISO(ctx, "CI")
		return err == nil && len(s.cachedKeys()) > 0
	}, 10*time.Second, 10*time.Millisecond, "kept after a read")

	s.stopCache() // the listener is gone: nothing it would have heard may be trusted
	s.stopCache = nil
	assert.False(t, s.cache.live.Load())
	assert.Empty(t, s.cachedKeys())
	_, err := s.CountryByISO(ctx, "CI")
	require.NoError(t, err)
	assert.Empty(t, s.cachedKeys(), "nothing is kept without a listener")
}

func TestReadCacheDropsAnAnswerReadAcrossAChange(t *testing.T) {
	var c readCache
	c.live.Store(true)
	now := time.Now()
	_, gen, ok := c.get("k", now)
	require.False(t, ok)
	c.flush() // a change is announced while the answer is being read
	c.put("k", 1, gen, now)
	_, _, ok = c.get("k", now)
	assert.False(t, ok, "an answer read before the change is not kept")

	_, gen, _ = c.get("k", now)
	c.put("k", 2, gen, now)
	v, _, ok := c.get("k", now)
	require.True(t, ok)
	assert.Equal(t, 2, v)
	_, _, ok = c.get("k", now.Add(readCacheTTL))
	assert.False(t, ok, "nothing is kept past its time")
}

func newTestMerchant(t *testing.T, s *Store) sika.Merchant {
	t.Helper()
	_, m, err := s.RegisterMember(t.Context(), uuid.NewString()+"@example.com", "x", "T", "", &NewMerchant{Name: "Shop", Country: "CI"})
	require.NoError(t, err)
	return *m
}
