// Package store is the Postgres side of the service: the connection pool, the transaction
// helper, the migration runner and one file of hand-written SQL per aggregate.
package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	pgxdecimal "github.com/jackc/pgx-shopspring-decimal"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/shopspring/decimal"
)

// Store holds the connection pool; its methods are the service's queries.
type Store struct {
	pool  *pgxpool.Pool
	now   func() time.Time
	cache readCache // rarely changed rows every payment reads (readcache.go)
	// touched holds when this process last recorded each API key's use (TouchAPIKey).
	touched sync.Map
	// stopCache ends the read cache's listener (StartReadCache); nil when none runs.
	stopCache func()
	// outboxDeletes batches the deletes of DeleteOutboxSoon.
	outboxDeletes outboxDeleter
}

// Open connects to Postgres and checks the connection. Timestamps are read back in UTC.
func Open(ctx context.Context, url string) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("parse database url: %w", err)
	}
	// pgx's default (4 connections on 2 cores) makes API and worker wait for each other; a
	// pool_max_conns in the URL still wins.
	if !strings.Contains(url, "pool_max_conns") {
		cfg.MaxConns = max(cfg.MaxConns, 20)
	}
	cfg.AfterConnect = func(_ context.Context, conn *pgx.Conn) error {
		conn.TypeMap().RegisterType(&pgtype.Type{
			Name: "timestamptz", OID: pgtype.TimestamptzOID,
			Codec: &pgtype.TimestamptzCodec{ScanLocation: time.UTC},
		})
		// numeric to and from decimals in Postgres's binary form (see numeric).
		pgxdecimal.Register(conn.TypeMap())
		registerUUID(conn.TypeMap())
		return nil
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open database pool: %w", err)
	}
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := pool.Ping(pingCtx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("ping database: %w", err)
	}
	return &Store{pool: pool, now: time.Now}, nil
}

// Close releases every connection.
func (s *Store) Close() {
	if s.stopCache != nil {
		s.stopCache()
	}
	s.outboxDeletes.stop()
	s.pool.Close()
}

// Pool exposes the pool to callers that stream (exports) or need LISTEN.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Ping reports whether Postgres answers, for readiness checks.
func (s *Store) Ping(ctx context.Context) error { return s.pool.Ping(ctx) }

// InTx runs fn in one Postgres transaction, committed when fn returns nil and rolled back
// otherwise (also when fn panics).
func (s *Store) InTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	defer conn.Release() // after the rollback below; a connection left in a transaction is closed
	tx := &lazyTx{conn: conn.Conn()}
	defer func() { _ = tx.Rollback(ctx) }()
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit transaction: %w", err)
	}
	for _, f := range tx.committed {
		f()
	}
	return nil
}

// afterCommit runs f once tx has committed, and never when it rolls back: metrics count what
// Postgres kept, not what a rolled-back attempt wrote. Outside InTx, f runs at once.
func afterCommit(tx pgx.Tx, f func()) {
	if h, ok := tx.(*lazyTx); ok {
		h.committed = append(h.committed, f)
		return
	}
	f()
}

// isUniqueViolation reports whether err is a unique-constraint violation (SQLSTATE 23505),
// optionally of a named constraint.
func isUniqueViolation(err error, constraint string) bool {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "23505" {
		return false
	}
	return constraint == "" || pgErr.ConstraintName == constraint
}

// isNoRows reports whether err means the query found nothing.
func isNoRows(err error) bool { return errors.Is(err, pgx.ErrNoRows) }

// postgresText reports whether s can be a Postgres text value: valid UTF-8 without a NUL byte.
// A lookup by a value that cannot be stored finds nothing; sent to Postgres it is an error
// (22021), which would answer a request from the public with a 500.
func postgresText(s string) bool { return utf8.ValidString(s) && !strings.ContainsRune(s, 0) }

// numeric is where a NOT NULL numeric column scans into d in Postgres's binary form, exactly
// (coefficient and exponent). A *decimal.Decimal target is a sql.Scanner, which pgx serves
// through text (binary to math/big, to a string, parsed back): for a transaction's seven amounts
// that round trip was a fifth of the CSV export's CPU (issue 23).
func numeric(d *decimal.Decimal) *pgxdecimal.Decimal { return (*pgxdecimal.Decimal)(d) }
