package store

import (
	"context"
	"strings"

	"github.com/jackc/pgx/v5"
)

// SetHistoryLimits lowers the search window and the export batch so that tests cross them with
// a few rows; the returned function restores them.
func SetHistoryLimits(window, batch int) (restore func()) {
	w, b := searchWindow, exportBatch
	searchWindow, exportBatch = window, batch
	return func() { searchWindow, exportBatch = w, b }
}

// ExplainSearchCondition is the plan of the search condition alone over the whole table, with
// the planner's settings of the rare-term step (searchByIndex): it shows whether the trigram
// index can serve the condition at all.
func ExplainSearchCondition(ctx context.Context, s *Store, q string) (string, error) {
	w := &sqlWhere{}
	w.clauses = append(w.clauses, searchCondition(w, q))
	var plan []string
	err := s.InTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, searchByIndex); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, "EXPLAIN SELECT t.id "+w.from("transactions t"), w.args...)
		if err != nil {
			return err
		}
		plan, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	return strings.Join(plan, "\n"), err
}
