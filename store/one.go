package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/sikahq/sika"
)

// one is the row a query answers, read by scan: not_found (of kind, the API's name of the
// object) when there is none, the error wrapped with what when the query fails. The store's
// reads of one object by its id go through it.
func one[T any](row pgx.Row, scan func(pgx.Row) (T, error), kind, what string) (T, error) {
	v, err := scan(row)
	return v, rowErr(err, kind, what)
}

// rowErr is the error of a read of one row: not_found (of kind) when there was none, err
// wrapped with what when the query failed, nil when the row was read.
func rowErr(err error, kind, what string) error {
	if isNoRows(err) {
		return sika.NotFound(kind)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
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

// collect is every row query answers on q (the pool or a transaction), each read by scan; its
// errors are wrapped with what ("list money flags", "scan money flags"). The store's lists that
// are not pages go through it.
func collect[T any](ctx context.Context, q queryer, what string, scan func(pgx.Row) (T, error), query string, args ...any) ([]T, error) {
	rows, err := q.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", what, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (T, error) { return scan(r) })
	if err != nil {
		return nil, fmt.Errorf("scan %s: %w", what, err)
	}
	return out, nil
}

// table is how the store reads one kind of merchant-owned row: kind is the API's name of one
// (for not_found), what the rows' name in errors ("settlements"), from the table with the joins
// its columns need, alias the owning table's ("s."), where merchant_id, environment, id and
// created_at are.
type table[T any] struct {
	kind, what, columns, from, alias string
	scan                             func(pgx.Row) (T, error)
}

// where reads the one row that matches cond on q (the pool, or a transaction), or not_found;
// what names the read in errors.
func (tb table[T]) where(ctx context.Context, q rowQueryer, what, cond string, args ...any) (T, error) {
	return one(q.QueryRow(ctx, `SELECT `+tb.columns+` FROM `+tb.from+` WHERE `+cond, args...), tb.scan, tb.kind, what)
}

// cached is where through the read cache (clone copies what a caller could change).
func (tb table[T]) cached(ctx context.Context, s *Store, clone func(T) T, cond string, arg any) (T, error) {
	return cachedRead(s, fmt.Sprint(strings.ToLower(tb.kind)+" ", cond, arg), func() (T, error) {
		return tb.where(ctx, s.pool, "select "+strings.ToLower(tb.kind), cond, arg)
	}, clone)
}

// byID reads the row id of the tenancy on q, or not_found; lock adds FOR UPDATE (q is then a
// transaction).
func (tb table[T]) byID(ctx context.Context, q rowQueryer, merchantID uuid.UUID, env sika.Environment, id uuid.UUID, lock bool) (T, error) {
	a, verb, suffix := tb.alias, "select ", ""
	if lock {
		verb, suffix = "lock ", " FOR UPDATE"
	}
	return tb.where(ctx, q, verb+strings.ToLower(tb.kind),
		a+`id = $1 AND `+a+`merchant_id = $2 AND `+a+`environment = $3`+suffix, id, merchantID, env)
}

// page is a page of the tenancy's rows, newest first.
func (tb table[T]) page(ctx context.Context, s *Store, merchantID uuid.UUID, env sika.Environment, page PageRequest) ([]T, int, error) {
	a := tb.alias
	return listPage(ctx, s, "list "+tb.what, tb.columns, `FROM `+tb.from+` WHERE `+a+`merchant_id = $1 AND `+a+`environment = $2`,
		a+`created_at DESC, `+a+`id DESC`, []any{merchantID, env}, page, tb.scan)
}

// filter is one optional condition of a list: column = value, when set.
type filter struct {
	column string
	value  any
	set    bool
}

// keyset is a keyset page of the tenancy's rows that match the filters that are set.
func (tb table[T]) keyset(ctx context.Context, s *Store, merchantID uuid.UUID, env sika.Environment, req KeysetRequest, filters ...filter) ([]T, bool, error) {
	w := tenantWhere(tb.alias, merchantID, env)
	for _, f := range filters {
		w.addIf(f.set, tb.alias+f.column+" = ?", f.value)
	}
	return tb.keysetWhere(ctx, s, w, req)
}

// keysetWhere is a keyset page of the rows under w.
func (tb table[T]) keysetWhere(ctx context.Context, s *Store, w *sqlWhere, req KeysetRequest) ([]T, bool, error) {
	items, more, err := queryKeyset(ctx, s, tb.columns, w.from(tb.from), tb.alias, w.args, req, tb.scan)
	if err != nil {
		return nil, false, fmt.Errorf("list %s: %w", tb.what, err)
	}
	return items, more, nil
}

// softDelete takes the row id of the tenancy out of use (deleted and inactive, kept for what
// refers to it), or answers not_found when there is none left to delete.
func (tb table[T]) softDelete(ctx context.Context, s *Store, merchantID uuid.UUID, env sika.Environment, id uuid.UUID) error {
	tag, err := s.pool.Exec(ctx, `UPDATE `+tb.from+` SET deleted_at = now(), is_active = false, updated_at = now()
		WHERE id = $1 AND merchant_id = $2 AND environment = $3 AND deleted_at IS NULL`, id, merchantID, env)
	if err != nil {
		return fmt.Errorf("delete %s: %w", strings.ToLower(tb.kind), err)
	}
	if tag.RowsAffected() == 0 {
		return sika.NotFound(tb.kind)
	}
	return nil
}

// ofTransaction reads the record (a settlement, a wallet transfer) of the transaction t that
// its creation wrote or, created false, found under its idempotency key. A key that holds a
// transaction without such a record (a payout or payment written before fingerprints were
// kept, or by a caller without one) was used for another request.
func (tb table[T]) ofTransaction(ctx context.Context, s *Store, t sika.Transaction, created bool) (T, bool, error) {
	v, err := tb.where(ctx, s.pool, "select "+strings.ToLower(tb.kind), tb.alias+`transaction_id = $1`, t.ID)
	if !created && sika.ErrorCode(err) == sika.CodeNotFound {
		var zero T
		return zero, false, errKeyReused(t)
	}
	return v, created, err
}
