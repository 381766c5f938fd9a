package store

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// KeysetRequest is a cursor-pagination request over rows ordered newest first by
// (created_at, id). Without a position it reads the first page; Backward reads the page of
// rows newer than the position (the `previous` link).
type KeysetRequest struct {
	After    *KeysetPosition
	Backward bool
	Limit    int
}

// KeysetPosition is a row's place in the order.
type KeysetPosition struct {
	CreatedAt time.Time
	ID        uuid.UUID
}

// queryKeyset runs `SELECT <columns> <from> [AND position] ORDER BY … LIMIT Limit+1` where from
// holds FROM and a WHERE clause (with $1…$n for args; "WHERE true" when unfiltered), and alias
// prefixes created_at and id ("t." or ""). It returns at most Limit rows newest first and
// whether more rows lie in the requested direction.
func queryKeyset[T any](ctx context.Context, s *Store, columns, from, alias string, args []any, req KeysetRequest, scan func(pgx.Row) (T, error)) ([]T, bool, error) {
	return queryKeysetOn(ctx, s.pool, columns, from, alias, args, req, scan)
}

// queryer runs a query: the pool, or a transaction.
type queryer interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// keysetClause is the position condition of req (" AND (created_at, id) < ($n+1, $n+2)", or ""
// without a position) with its arguments, and the ORDER BY of its direction.
func keysetClause(alias string, n int, req KeysetRequest) (cond string, args []any, order string) {
	order = " ORDER BY " + alias + "created_at DESC, " + alias + "id DESC"
	if req.After == nil {
		return "", nil, order
	}
	op := "<"
	if req.Backward {
		op = ">"
		order = " ORDER BY " + alias + "created_at ASC, " + alias + "id ASC"
	}
	cond = fmt.Sprintf(" AND (%screated_at, %sid) %s ($%d, $%d)", alias, alias, op, n+1, n+2)
	return cond, []any{req.After.CreatedAt, req.After.ID}, order
}

// queryKeysetOn is queryKeyset on q (the pool, or a transaction with its own settings).
func queryKeysetOn[T any](ctx context.Context, q queryer, columns, from, alias string, args []any, req KeysetRequest, scan func(pgx.Row) (T, error)) ([]T, bool, error) {
	cond, more, order := keysetClause(alias, len(args), req)
	query := "SELECT " + columns + " " + from + cond + order + " LIMIT " + strconv.Itoa(req.Limit+1)
	rows, err := q.Query(ctx, query, append(args, more...)...)
	if err != nil {
		return nil, false, fmt.Errorf("keyset list: %w", err)
	}
	items, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (T, error) { return scan(r) })
	if err != nil {
		return nil, false, fmt.Errorf("keyset scan: %w", err)
	}
	hasMore := len(items) > req.Limit
	if hasMore {
		items = items[:req.Limit]
	}
	if req.After != nil && req.Backward {
		slices.Reverse(items)
	}
	return items, hasMore, nil
}
