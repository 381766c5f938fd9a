package store

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// lazyTx is the transaction InTx hands out. Its BEGIN is not a round trip of its own: it goes
// to Postgres in one batch with the transaction's first statement (pgx's Batch.BeginTx), so a
// transaction of n statements costs n + 1 round trips instead of n + 2, and one that runs no
// statement costs none. Postgres opens the transaction at BEGIN as before and takes each
// statement's snapshot when the statement runs, so nothing a statement sees changes. Once
// begun, every call goes to pgx's own transaction. It also keeps what must happen only once
// the transaction has committed (afterCommit).
type lazyTx struct {
	conn      *pgx.Conn
	tx        pgx.Tx // nil until the first statement
	ended     bool   // committed or rolled back before any statement
	committed []func()
}

var _ pgx.Tx = (*lazyTx)(nil)

// open reports whether the transaction still waits for its first statement; after it ended
// without one, err says so.
func (tx *lazyTx) open() (waiting bool, err error) {
	switch {
	case tx.tx != nil:
		return false, nil
	case tx.ended:
		return false, pgx.ErrTxClosed
	}
	return true, nil
}

// first sends BEGIN with the statements queue puts in the batch, reads BEGIN's result and
// returns the batch for theirs.
func (tx *lazyTx) first(ctx context.Context, queue func(*pgx.Batch)) pgx.BatchResults {
	b := &pgx.Batch{}
	b.BeginTx(pgx.TxOptions{})
	queue(b)
	br := tx.conn.SendBatch(ctx, b)
	tx.tx = br.Tx()
	if _, err := br.Exec(); err != nil {
		_ = br.Close()
		return errBatch{err}
	}
	return br
}

func (tx *lazyTx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if waiting, err := tx.open(); !waiting {
		if err != nil {
			return pgconn.CommandTag{}, err
		}
		return tx.tx.Exec(ctx, sql, args...)
	}
	br := tx.first(ctx, func(b *pgx.Batch) { b.Queue(sql, args...) })
	tag, err := br.Exec()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return tag, err
}

func (tx *lazyTx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if waiting, err := tx.open(); !waiting {
		if err != nil {
			return nil, err
		}
		return tx.tx.Query(ctx, sql, args...)
	}
	br := tx.first(ctx, func(b *pgx.Batch) { b.Queue(sql, args...) })
	rows, err := br.Query()
	if err != nil {
		_ = br.Close()
		return nil, err
	}
	return &batchRows{Rows: rows, batch: br}, nil
}

func (tx *lazyTx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	if waiting, err := tx.open(); !waiting {
		if err != nil {
			return errRow{err}
		}
		return tx.tx.QueryRow(ctx, sql, args...)
	}
	br := tx.first(ctx, func(b *pgx.Batch) { b.Queue(sql, args...) })
	return batchRow{Row: br.QueryRow(), batch: br}
}

func (tx *lazyTx) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	if waiting, err := tx.open(); !waiting {
		if err != nil {
			return errBatch{err}
		}
		return tx.tx.SendBatch(ctx, b)
	}
	return tx.first(ctx, func(all *pgx.Batch) { all.QueuedQueries = append(all.QueuedQueries, b.QueuedQueries...) })
}

// begin sends BEGIN alone, for what cannot share its round trip.
func (tx *lazyTx) begin(ctx context.Context) error {
	if waiting, err := tx.open(); !waiting {
		return err
	}
	return tx.first(ctx, func(*pgx.Batch) {}).Close()
}

func (tx *lazyTx) CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, src pgx.CopyFromSource) (int64, error) {
	if err := tx.begin(ctx); err != nil {
		return 0, err
	}
	return tx.tx.CopyFrom(ctx, table, columns, src)
}

func (tx *lazyTx) Prepare(ctx context.Context, name, sql string) (*pgconn.StatementDescription, error) {
	if _, err := tx.open(); err != nil {
		return nil, err
	}
	return tx.conn.Prepare(ctx, name, sql)
}

// Begin starts a savepoint (pgx's pseudo nested transaction).
func (tx *lazyTx) Begin(ctx context.Context) (pgx.Tx, error) {
	if err := tx.begin(ctx); err != nil {
		return nil, err
	}
	return tx.tx.Begin(ctx)
}

// LargeObjects is pgx's, once a statement has begun the transaction.
func (tx *lazyTx) LargeObjects() pgx.LargeObjects {
	if tx.tx == nil {
		panic("store: large objects need a statement first: the transaction has not begun")
	}
	return tx.tx.LargeObjects()
}

func (tx *lazyTx) Conn() *pgx.Conn { return tx.conn }

// Commit and Rollback are pgx's; before any statement there is nothing to end.
func (tx *lazyTx) Commit(ctx context.Context) error {
	if waiting, err := tx.open(); !waiting {
		if err != nil {
			return err
		}
		return tx.tx.Commit(ctx)
	}
	tx.ended = true
	return nil
}

func (tx *lazyTx) Rollback(ctx context.Context) error {
	if waiting, err := tx.open(); !waiting {
		if err != nil {
			return err
		}
		return tx.tx.Rollback(ctx)
	}
	tx.ended = true
	return nil
}

// batchRows are the rows of a transaction's first statement, read from the batch that began
// it: the batch is closed with them, and when they run out (as pgx's rows close themselves
// then), so that the next statement finds the connection free.
type batchRows struct {
	pgx.Rows
	batch pgx.BatchResults
}

func (r *batchRows) Next() bool {
	if r.Rows.Next() {
		return true
	}
	r.Close()
	return false
}

func (r *batchRows) Close() {
	r.Rows.Close()
	if r.batch != nil {
		_ = r.batch.Close()
		r.batch = nil
	}
}

// batchRow is the row of a transaction's first statement, pgx's own (it closes its rows once
// scanned); the batch that began the transaction is closed after it.
type batchRow struct {
	pgx.Row
	batch pgx.BatchResults
}

func (r batchRow) Scan(dest ...any) error {
	err := r.Row.Scan(dest...)
	if cerr := r.batch.Close(); err == nil {
		err = cerr
	}
	return err
}

// errRow and errBatch answer what could not be sent.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

type errBatch struct{ err error }

func (b errBatch) Exec() (pgconn.CommandTag, error) { return pgconn.CommandTag{}, b.err }
func (b errBatch) Query() (pgx.Rows, error)         { return nil, b.err }
func (b errBatch) QueryRow() pgx.Row                { return errRow{b.err} }
func (b errBatch) Close() error                     { return b.err }
func (b errBatch) Tx() pgx.Tx                       { return nil }
