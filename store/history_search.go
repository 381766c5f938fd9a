package store

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/sikahq/sika"
)

// wholeReference matches a complete transaction reference (sika.NewReference), in any case.
var wholeReference = regexp.MustCompile(`^(?i)[A-Z0-9]+-[0-9]{8}-[0-9A-Z]{10}$`)

// searchWindow is how many of a merchant's rows (those of the other filters, from the cursor on)
// a search first walks newest first. Measured on 800 000 rows (cmd/sikabench-history): walking
// costs about 1 µs a row and finds a page of a term in more than 0.5% of rows within the
// window; a rarer term is then found through the trigram index, whose cost grows with the
// matches (about 6 µs each: at most 0.5% of the history). Both stay near 10 to 25 ms.
var searchWindow = 10_000

// searchTransactions is ListTransactions with a search. Neither plan is fast for every term: the
// ordered walk of the merchant's rows is fast for a common term and scans the whole history for
// a rare one (1.5 s on 800 000 rows), the trigram bitmap is fast for a rare term and fetches and
// sorts every match of a common one (0.4 s for a term in 40% of rows). The planner chooses
// between them from global statistics, which a merchant's own data may contradict. So the walk
// comes first, bounded to searchWindow rows; only when it fills no page and rows remain beyond
// the window does the search turn to the trigram index, with the planner told not to walk.
func (s *Store) searchTransactions(ctx context.Context, merchantID uuid.UUID, env sika.Environment, f TransactionFilter, req KeysetRequest) ([]sika.Transaction, bool, error) {
	search := f.Search
	f.Search = ""

	// A whole reference is looked up by its unique index: through the trigram index its common
	// trigrams (the prefix, the date) cost 20 ms, and no other field holds a reference.
	if wholeReference.MatchString(search) {
		w := transactionWhere(merchantID, env, f)
		w.add("t.reference = ?", strings.ToUpper(search))
		return queryKeyset(ctx, s, transactionColumns, w.from("transactions t"), "t.", w.args, req, scanTransaction)
	}

	// 1. The window: the next searchWindow rows of the other filters, searched.
	w := transactionWhere(merchantID, env, f)
	cond, args, order := keysetClause("t.", len(w.args), req)
	w.args = append(w.args, args...)
	window := "FROM (SELECT t.* " + w.from("transactions t") + cond + order + " LIMIT " + strconv.Itoa(searchWindow) +
		") t WHERE " + searchCondition(w, search)
	items, more, err := queryKeyset(ctx, s, transactionColumns, window, "t.", w.args, req, scanTransaction)
	if err != nil {
		return nil, false, fmt.Errorf("search transactions (window): %w", err)
	}
	if more {
		return items, true, nil
	}
	beyond, err := s.rowsBeyondWindow(ctx, merchantID, env, f, req)
	if err != nil || !beyond {
		return items, false, err
	}

	// 2. A rare term: the trigram index on search_text, never a walk.
	f.Search = search
	w = transactionWhere(merchantID, env, f)
	err = s.InTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, searchByIndex); err != nil {
			return err
		}
		items, more, err = queryKeysetOn(ctx, tx, transactionColumns, w.from("transactions t"), "t.", w.args, req, scanTransaction)
		return err
	})
	if err != nil {
		return nil, false, fmt.Errorf("search transactions (index): %w", err)
	}
	return items, more, nil
}

// searchByIndex leaves the planner, for the rest of the transaction, bitmap scans only: the
// trigram index rather than a walk of the merchant's history or a scan of the table.
const searchByIndex = `SELECT set_config('enable_indexscan', 'off', true), set_config('enable_seqscan', 'off', true)`

// rowsBeyondWindow reports whether the filter has rows beyond the search window, counted from
// the cursor: an index-only walk of searchWindow entries.
func (s *Store) rowsBeyondWindow(ctx context.Context, merchantID uuid.UUID, env sika.Environment, f TransactionFilter, req KeysetRequest) (bool, error) {
	w := transactionWhere(merchantID, env, f)
	cond, args, order := keysetClause("t.", len(w.args), req)
	var beyond bool
	err := s.pool.QueryRow(ctx, "SELECT EXISTS (SELECT 1 "+w.from("transactions t")+cond+order+
		" OFFSET "+strconv.Itoa(searchWindow)+")", append(w.args, args...)...).Scan(&beyond)
	if err != nil {
		return false, fmt.Errorf("search transactions (window bound): %w", err)
	}
	return beyond, nil
}
