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
	order := " ORDER BY " + alias + "created_at DESC, " + alias + "id DESC"
	if req.After != nil {
		n := len(args)
		op := "<"
		if req.Backward {
			op = ">"
			order = " ORDER BY " + alias + "created_at ASC, " + alias + "id ASC"
		}
		from += fmt.Sprintf(" AND (%screated_at, %sid) %s ($%d, $%d)", alias, alias, op, n+1, n+2)
		args = append(args, req.After.CreatedAt, req.After.ID)
	}
	query := "SELECT " + columns + " " + from + order + " LIMIT " + strconv.Itoa(req.Limit+1)
	rows, err := s.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, false, fmt.Errorf("keyset list: %w", err)
	}
	items, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (T, error) { return scan(r) })
	if err != nil {
		return nil, false, fmt.Errorf("keyset scan: %w", err)
	}
	more := len(items) > req.Limit
	if more {
		items = items[:req.Limit]
	}
	if req.After != nil && req.Backward {
		slices.Reverse(items)
	}
	return items, more, nil
}
