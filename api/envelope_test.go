package api

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/assert"
	"go.temporal.io/api/serviceerror"
)

// A dependency going down answers 503 (retry with the same key), a bug 500.
func TestDependencyDown(t *testing.T) {
	for _, tc := range []struct {
		err  error
		down bool
	}{
		{fmt.Errorf("insert: %w", &pgconn.PgError{Code: "57P01", Message: "terminating connection due to administrator command"}), true},
		{&pgconn.PgError{Code: "08006"}, true},
		{&pgconn.PgError{Code: "23505"}, false},
		{fmt.Errorf("signal: %w", serviceerror.NewUnavailable("connection refused")), true},
		{serviceerror.NewDeadlineExceeded("deadline"), true},
		{fmt.Errorf("wrapped: %w", context.DeadlineExceeded), true},
		{fmt.Errorf("claim idempotency key: failed to receive message: %w", io.ErrUnexpectedEOF), true},
		{errors.New("a bug"), false},
	} {
		assert.Equal(t, tc.down, dependencyDown(tc.err), "%v", tc.err)
	}
}

// A write that fails while Postgres is away is retried in the background until it succeeds.
func TestPersistRetriesInTheBackground(t *testing.T) {
	var calls atomic.Int32
	done := make(chan struct{})
	(&Server{}).persist(t.Context(), "release idempotency key", func(context.Context) error {
		if calls.Add(1) < 3 {
			return &pgconn.PgError{Code: "57P01"}
		}
		close(done)
		return nil
	})
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the write was not retried")
	}
	assert.Equal(t, int32(3), calls.Load())
}
