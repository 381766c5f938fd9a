package workflows

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/activities"
	"github.com/sikahq/sika/internal/testenv"
	"github.com/sikahq/sika/payloadcodec"
	"github.com/sikahq/sika/store"
)

var st *store.Store

func TestMain(m *testing.M) {
	os.Exit(testenv.Run(m, func(env *testenv.Env) error {
		TaskQueue = "test-" + env.DatabaseName // packages share the Temporal server
		var err error
		if st, err = store.Open(context.Background(), env.DatabaseURL); err != nil {
			return err
		}
		_, err = st.Migrate(context.Background())
		return err
	}))
}

func TestPurgeIdempotencyKeysBranches(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	var a *activities.Activities

	t.Run("reports what the activity deleted", func(t *testing.T) {
		env := s.NewTestWorkflowEnvironment()
		env.OnActivity(a.PurgeExpiredIdempotencyKeys, mock.Anything).Return(int64(42), nil)
		env.OnActivity(a.PurgeAPIRequestLogs, mock.Anything).Return(int64(5), nil)
		env.ExecuteWorkflow(PurgeIdempotencyKeys)
		require.True(t, env.IsWorkflowCompleted())
		require.NoError(t, env.GetWorkflowError())
		var res PurgeIdempotencyKeysResult
		require.NoError(t, env.GetWorkflowResult(&res))
		assert.EqualValues(t, 42, res.Deleted)
		assert.EqualValues(t, 5, res.RequestLogsDeleted)
	})
	t.Run("retries a failing purge, then succeeds", func(t *testing.T) {
		env := s.NewTestWorkflowEnvironment()
		calls := 0
		env.OnActivity(a.PurgeExpiredIdempotencyKeys, mock.Anything).Return(func(context.Context) (int64, error) {
			calls++
			if calls < 3 {
				return 0, errors.New("database restarting")
			}
			return 7, nil
		})
		env.OnActivity(a.PurgeAPIRequestLogs, mock.Anything).Return(int64(0), nil)
		env.ExecuteWorkflow(PurgeIdempotencyKeys)
		require.NoError(t, env.GetWorkflowError())
		assert.Equal(t, 3, calls)
	})
	t.Run("gives up after its attempts", func(t *testing.T) {
		env := s.NewTestWorkflowEnvironment()
		env.OnActivity(a.PurgeExpiredIdempotencyKeys, mock.Anything).Return(int64(0), errors.New("down"))
		env.ExecuteWorkflow(PurgeIdempotencyKeys)
		assert.Error(t, env.GetWorkflowError())
	})
}

// TestHousekeepingOnTheDevServer runs the worker against the real Temporal dev server and
// Postgres: the schedule is created (twice, as two workers starting would), and a purge run
// deletes the expired keys.
func TestHousekeepingOnTheDevServer(t *testing.T) {
	ctx := t.Context()
	addr, err := testenv.Current().TemporalAddress()
	require.NoError(t, err)
	keys, err := payloadcodec.NewRing() // as every client of the service
	require.NoError(t, err)
	Payloads = keys.DataConverter()
	c, err := client.Dial(client.Options{HostPort: addr, DataConverter: Payloads})
	require.NoError(t, err)
	defer c.Close()

	w := worker.New(c, TaskQueue, worker.Options{})
	Register(w, &activities.Activities{Store: st})
	require.NoError(t, w.Start())
	defer w.Stop()

	require.NoError(t, EnsureSchedules(ctx, c))
	require.NoError(t, EnsureSchedules(ctx, c), "a second worker starting finds the schedule")
	desc, err := c.ScheduleClient().GetHandle(ctx, IdempotencyPurgeScheduleID).Describe(ctx)
	require.NoError(t, err)
	assert.Equal(t, time.Hour, desc.Schedule.Spec.Intervals[0].Every)
	recheck, err := c.ScheduleClient().GetHandle(ctx, RecheckScheduleID).Describe(ctx)
	require.NoError(t, err, "the re-check of ended attempts is scheduled too")
	assert.Equal(t, RecheckInterval, recheck.Schedule.Spec.Intervals[0].Every)

	_, m, err := st.RegisterMember(ctx, uuid.NewString()+"@example.com", "x", "T", "", &store.NewMerchant{Name: "S", Country: "BJ"})
	require.NoError(t, err)
	for i, ttl := range []time.Duration{time.Millisecond, time.Millisecond, time.Hour} {
		r := store.IdempotencyRequest{Merchant: m.ID, Environment: sika.EnvironmentTest, Key: uuid.NewString(), Method: "POST", Path: "/x/", Hash: []byte{byte(i)}}
		_, _, err := st.ClaimIdempotencyKey(ctx, r, time.Minute, ttl)
		require.NoError(t, err)
	}
	// The two short-lived keys expire now rather than after a wait.
	_, err = st.Pool().Exec(ctx, `UPDATE idempotency_keys SET expires_at = now() - interval '1 second'
		WHERE merchant_id = $1 AND expires_at < now() + interval '1 minute'`, m.ID)
	require.NoError(t, err)
	// Two request logs: one past the retention, one recent.
	logged := func(at time.Time) store.APIRequestLog {
		return store.APIRequestLog{Merchant: m.ID, Environment: sika.EnvironmentTest, Method: "GET", Route: "/api/v1/networks/",
			Path: "/api/v1/networks/", Status: 200, RequestID: uuid.NewString(), CreatedAt: at}
	}
	require.NoError(t, st.InsertAPIRequestLogs(ctx, []store.APIRequestLog{
		logged(time.Now().Add(-activities.RequestLogRetention - time.Hour)), logged(time.Now())}))
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "test-purge-" + uuid.NewString(), TaskQueue: TaskQueue}, PurgeIdempotencyKeys)
	require.NoError(t, err)
	var res PurgeIdempotencyKeysResult
	require.NoError(t, run.Get(ctx, &res))
	assert.GreaterOrEqual(t, res.Deleted, int64(2))
	var left int
	require.NoError(t, st.Pool().QueryRow(ctx, `SELECT count(*) FROM idempotency_keys WHERE merchant_id = $1`, m.ID).Scan(&left))
	assert.Equal(t, 1, left, "the live key stays")
	assert.GreaterOrEqual(t, res.RequestLogsDeleted, int64(1))
	require.NoError(t, st.Pool().QueryRow(ctx, `SELECT count(*) FROM api_request_logs WHERE merchant_id = $1`, m.ID).Scan(&left))
	assert.Equal(t, 1, left, "the recent request log stays")
}
