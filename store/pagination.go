package store

import (
	"context"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"
)

// PageRequest is a page-number request, already validated and clamped by the API layer.
type PageRequest struct {
	Page     int
	PageSize int
}

// offset is the number of rows before the requested page.
func (p PageRequest) offset() int { return (p.Page - 1) * p.PageSize }

// queryPage runs a page-number list: `SELECT count(*) <from>` for the total, then
// `SELECT <columns> <from> ORDER BY <orderBy> LIMIT … OFFSET …` for the rows. from holds the
// FROM and WHERE clauses with $1…$n placeholders for args.
func queryPage[T any](ctx context.Context, s *Store, columns, from, orderBy string, args []any, page PageRequest, scan func(pgx.Row) (T, error)) ([]T, int, error) {
	var count int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) `+from, args...).Scan(&count); err != nil {
		return nil, 0, fmt.Errorf("count: %w", err)
	}
	n := len(args)
	query := `SELECT ` + columns + ` ` + from + ` ORDER BY ` + orderBy +
		` LIMIT $` + strconv.Itoa(n+1) + ` OFFSET $` + strconv.Itoa(n+2)
	rows, err := s.pool.Query(ctx, query, append(args, page.PageSize, page.offset())...)
	if err != nil {
		return nil, 0, fmt.Errorf("list: %w", err)
	}
	items, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (T, error) { return scan(r) })
	if err != nil {
		return nil, 0, fmt.Errorf("scan: %w", err)
	}
	return items, count, nil
}
