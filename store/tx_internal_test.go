package store

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika/internal/testenv"
)

// countingConn counts what the client sends: with pgx, one Write per round trip.
type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c countingConn) Write(b []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(b)
}

// storeCountingWrites is a Store of one connection whose writes are counted.
func storeCountingWrites(t *testing.T) (*Store, *atomic.Int64) {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(testenv.Current().DatabaseURL)
	require.NoError(t, err)
	cfg.MaxConns, cfg.MinConns = 1, 1
	writes := &atomic.Int64{}
	dial := cfg.ConnConfig.DialFunc
	cfg.ConnConfig.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return countingConn{Conn: c, writes: writes}, nil
	}
	pool, err := pgxpool.NewWithConfig(t.Context(), cfg)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	require.NoError(t, pool.Ping(t.Context()))
	s := &Store{pool: pool, now: time.Now}
	// Warm the statement cache: a statement's first use on a connection also describes it.
	for range 2 {
		require.NoError(t, s.InTx(t.Context(), func(tx pgx.Tx) error {
			var n int
			if err := tx.QueryRow(t.Context(), "SELECT 1").Scan(&n); err != nil {
				return err
			}
			_, err := tx.Exec(t.Context(), "SELECT pg_sleep(0)")
			return err
		}))
	}
	return s, writes
}

// A transaction's BEGIN travels with its first statement: n statements cost n + 1 round trips
// (the statements and COMMIT), and a transaction that runs none costs nothing.
func TestInTxSendsBeginWithTheFirstStatement(t *testing.T) {
	ctx := t.Context()
	s, writes := storeCountingWrites(t)

	before := writes.Load()
	require.NoError(t, s.InTx(ctx, func(tx pgx.Tx) error {
		var n int
		if err := tx.QueryRow(ctx, "SELECT 1").Scan(&n); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, "SELECT pg_sleep(0)")
		return err
	}))
	assert.Equal(t, int64(3), writes.Load()-before, "two statements and COMMIT, BEGIN with the first")

	before = writes.Load()
	require.NoError(t, s.InTx(ctx, func(pgx.Tx) error { return nil }))
	assert.Equal(t, before, writes.Load(), "a transaction without statements sends nothing")
}

// Whatever the first statement is, it runs inside the transaction: what it wrote is rolled
// back with the rest, the statements after it share its transaction, and the connection is
// free for them once its rows are read.
func TestInTxFirstStatementIsInTheTransaction(t *testing.T) {
	ctx := t.Context()
	s, err := Open(ctx, testenv.Current().DatabaseURL)
	require.NoError(t, err)
	t.Cleanup(s.Close)
	_, err = s.pool.Exec(ctx, `CREATE TABLE IF NOT EXISTS lazy_tx_probe (n int)`)
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = s.pool.Exec(context.Background(), `DROP TABLE IF EXISTS lazy_tx_probe`) })

	count := func() int {
		var n int
		require.NoError(t, s.pool.QueryRow(ctx, `SELECT count(*) FROM lazy_tx_probe`).Scan(&n))
		return n
	}
	sameTx := func(tx pgx.Tx) error {
		var a, b int64
		if err := tx.QueryRow(ctx, `SELECT txid_current()`).Scan(&a); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, `SELECT txid_current()`).Scan(&b); err != nil {
			return err
		}
		if a != b {
			return errors.New("statements in two transactions")
		}
		return nil
	}
	firsts := map[string]func(pgx.Tx) error{
		"Exec": func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, `INSERT INTO lazy_tx_probe VALUES (1)`)
			return err
		},
		"Query, read to the end without Close": func(tx pgx.Tx) error {
			rows, err := tx.Query(ctx, `INSERT INTO lazy_tx_probe VALUES (1), (2) RETURNING n`)
			if err != nil {
				return err
			}
			for rows.Next() {
			}
			return rows.Err()
		},
		"QueryRow": func(tx pgx.Tx) error {
			var n int
			return tx.QueryRow(ctx, `INSERT INTO lazy_tx_probe VALUES (1) RETURNING n`).Scan(&n)
		},
		"SendBatch": func(tx pgx.Tx) error {
			b := &pgx.Batch{}
			b.Queue(`INSERT INTO lazy_tx_probe VALUES (1)`)
			b.Queue(`INSERT INTO lazy_tx_probe VALUES (2)`)
			return tx.SendBatch(ctx, b).Close()
		},
		"CopyFrom": func(tx pgx.Tx) error {
			_, err := tx.CopyFrom(ctx, pgx.Identifier{"lazy_tx_probe"}, []string{"n"}, pgx.CopyFromRows([][]any{{1}, {2}}))
			return err
		},
	}
	for name, first := range firsts {
		t.Run(name, func(t *testing.T) {
			start := count()
			rollback := errors.New("roll back")
			err := s.InTx(ctx, func(tx pgx.Tx) error {
				if err := first(tx); err != nil {
					return err
				}
				if err := sameTx(tx); err != nil {
					return err
				}
				return rollback
			})
			require.ErrorIs(t, err, rollback)
			assert.Equal(t, start, count(), "rolled back with the transaction")

			require.NoError(t, s.InTx(ctx, func(tx pgx.Tx) error {
				if err := first(tx); err != nil {
					return err
				}
				return sameTx(tx)
			}))
			assert.Greater(t, count(), start, "committed")
		})
	}

	t.Run("QueryRow without a row", func(t *testing.T) {
		err := s.InTx(ctx, func(tx pgx.Tx) error {
			var n int
			return tx.QueryRow(ctx, `SELECT n FROM lazy_tx_probe WHERE false`).Scan(&n)
		})
		assert.ErrorIs(t, err, pgx.ErrNoRows)
	})
	t.Run("a failed first statement rolls the whole transaction back", func(t *testing.T) {
		start := count()
		err := s.InTx(ctx, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, `INSERT INTO lazy_tx_probe VALUES (1 / 0)`)
			require.Error(t, err)
			return nil // ignored: COMMIT finds the transaction failed
		})
		assert.ErrorIs(t, err, pgx.ErrTxCommitRollback)
		assert.Equal(t, start, count())
	})
}
