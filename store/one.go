package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/sikahq/sika"
)

// one is the row a query answers, read by scan: not_found (of kind, the API's name of the
// object) when there is none, the error wrapped with what when the query fails. The store's
// reads of one object by its id go through it.
func one[T any](row pgx.Row, scan func(pgx.Row) (T, error), kind, what string) (T, error) {
	v, err := scan(row)
	if isNoRows(err) {
		return v, sika.NotFound(kind)
	}
	if err != nil {
		return v, fmt.Errorf("%s: %w", what, err)
	}
	return v, nil
}

// listPage is queryPage with its error wrapped with what: the store's lists of a merchant's
// objects go through it.
func listPage[T any](ctx context.Context, s *Store, what, columns, from, orderBy string, args []any, page PageRequest,
	scan func(pgx.Row) (T, error)) ([]T, int, error) {
	items, n, err := queryPage(ctx, s, columns, from, orderBy, args, page, scan)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", what, err)
	}
	return items, n, nil
}
