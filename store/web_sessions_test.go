package store_test

import (
	"crypto/sha256"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
)

func TestWebSessions(t *testing.T) {
	ctx := t.Context()
	member, m, err := st.RegisterMember(ctx, uuid.NewString()+"@example.com", "x", "T", "", &store.NewMerchant{Name: "Shop", Country: "BJ"})
	require.NoError(t, err)
	now := time.Now().UTC().Truncate(time.Microsecond)
	newSession := func(app store.WebApp, idle, lifetime time.Duration) store.WebSession {
		h := sha256.Sum256([]byte(uuid.NewString()))
		ws := store.WebSession{TokenHash: h[:], App: app, Member: member.ID, Environment: sika.EnvironmentTest, CSRFToken: "csrf",
			CreatedAt: now, LastSeenAt: now, ExpiresAt: now.Add(idle), AbsoluteExpiresAt: now.Add(lifetime)}
		require.NoError(t, st.CreateWebSession(ctx, ws))
		return ws
	}

	t.Run("found by its app only, until it expires", func(t *testing.T) {
		ws := newSession(store.WebAppDashboard, 30*time.Minute, time.Hour)
		got, err := st.WebSessionByToken(ctx, store.WebAppDashboard, ws.TokenHash, now)
		require.NoError(t, err)
		assert.Equal(t, member.ID, got.Member)
		assert.Nil(t, got.Merchant)
		_, err = st.WebSessionByToken(ctx, store.WebAppConsole, ws.TokenHash, now)
		assert.Equal(t, sika.CodeNotFound, sika.ErrorCode(err), "a dashboard session is not the console's")
		_, err = st.WebSessionByToken(ctx, store.WebAppDashboard, ws.TokenHash, now.Add(30*time.Minute))
		assert.Equal(t, sika.CodeNotFound, sika.ErrorCode(err), "expired at its idle deadline")
	})

	t.Run("use moves the idle deadline, never past the absolute one", func(t *testing.T) {
		ws := newSession(store.WebAppDashboard, 30*time.Minute, 45*time.Minute)
		at := now.Add(20 * time.Minute)
		require.NoError(t, st.TouchWebSession(ctx, store.WebAppDashboard, ws.TokenHash, at, 30*time.Minute))
		got, err := st.WebSessionByToken(ctx, store.WebAppDashboard, ws.TokenHash, at)
		require.NoError(t, err)
		assert.True(t, got.ExpiresAt.Equal(now.Add(45*time.Minute)), "capped: got %v", got.ExpiresAt)
		assert.True(t, got.LastSeenAt.Equal(at))
		_, err = st.WebSessionByToken(ctx, store.WebAppDashboard, ws.TokenHash, now.Add(45*time.Minute))
		assert.Equal(t, sika.CodeNotFound, sika.ErrorCode(err))
	})

	t.Run("tenancy, delete, and the purge of expired sessions", func(t *testing.T) {
		ws := newSession(store.WebAppDashboard, time.Minute, time.Hour)
		require.NoError(t, st.SetWebSessionTenancy(ctx, store.WebAppDashboard, ws.TokenHash, &m.ID, sika.EnvironmentLive))
		got, err := st.WebSessionByToken(ctx, store.WebAppDashboard, ws.TokenHash, now)
		require.NoError(t, err)
		assert.Equal(t, m.ID, *got.Merchant)
		assert.Equal(t, sika.EnvironmentLive, got.Environment)
		require.NoError(t, st.DeleteWebSession(ctx, store.WebAppDashboard, ws.TokenHash))
		_, err = st.WebSessionByToken(ctx, store.WebAppDashboard, ws.TokenHash, now)
		assert.Equal(t, sika.CodeNotFound, sika.ErrorCode(err))
		require.NoError(t, st.DeleteWebSession(ctx, store.WebAppDashboard, ws.TokenHash), "deleting twice is fine")

		old := newSession(store.WebAppDashboard, time.Minute, time.Hour)
		h := sha256.Sum256([]byte(uuid.NewString()))
		later := store.WebSession{TokenHash: h[:], App: store.WebAppConsole, Member: member.ID, Environment: sika.EnvironmentLive,
			CSRFToken: "c", CreatedAt: now.Add(2 * time.Minute), LastSeenAt: now.Add(2 * time.Minute),
			ExpiresAt: now.Add(time.Hour), AbsoluteExpiresAt: now.Add(time.Hour)}
		require.NoError(t, st.CreateWebSession(ctx, later))
		var n int
		require.NoError(t, st.Pool().QueryRow(ctx, `SELECT count(*) FROM web_sessions WHERE token_hash = $1`, old.TokenHash).Scan(&n))
		assert.Zero(t, n, "a new session purges the expired ones")
	})
}
