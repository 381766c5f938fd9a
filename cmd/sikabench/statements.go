package main

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sikahq/sika/internal/devstack"
)

// harnessRole is the Postgres role of the bench's own connections to the service's database
// (completion reads, the closed loop's watcher, pg_stat_database snapshots), so that
// pg_stat_statements tells the service's statements from the harness's.
const harnessRole = "sikabench"

// statementsTop is how many statements the report lists.
const statementsTop = 15

// postgresSettings are the settings of the Postgres servers the bench starts: pg_stat_statements
// preloaded when the server binaries have it (a server told to preload a missing module does
// not start; the report then says why the statements are missing).
func postgresSettings() []string {
	if !devstack.PostgresHasLibrary("pg_stat_statements") {
		return nil
	}
	return []string{"shared_preload_libraries=pg_stat_statements"}
}

// harnessDB opens the bench's pool on the service's database (dbURL, as a superuser) logged in
// as harnessRole, which it creates, and creates pg_stat_statements there when the server
// preloads it. The string is why statements cannot be read, "" when they can.
func harnessDB(ctx context.Context, dbURL string) (*pgxpool.Pool, string, error) {
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return nil, "", fmt.Errorf("connect to the service's database: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, `DO $$ BEGIN CREATE ROLE `+harnessRole+` LOGIN SUPERUSER;
		EXCEPTION WHEN duplicate_object THEN NULL; END $$`); err != nil {
		return nil, "", fmt.Errorf("create the bench's role: %w", err)
	}
	off := ""
	var preload string
	if err := conn.QueryRow(ctx, `SELECT current_setting('shared_preload_libraries')`).Scan(&preload); err != nil {
		return nil, "", err
	}
	if strings.Contains(preload, "pg_stat_statements") {
		if _, err := conn.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS pg_stat_statements`); err != nil {
			return nil, "", fmt.Errorf("create pg_stat_statements: %w", err)
		}
	} else {
		off = "the Postgres server does not preload pg_stat_statements (its module is not installed beside the server binaries)"
	}
	cfg, err := pgxpool.ParseConfig(dbURL)
	if err != nil {
		return nil, "", err
	}
	cfg.ConnConfig.User = harnessRole
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, "", err
	}
	return pool, off, nil
}

// statements are what the service's statements did in a window (pg_stat_statements of its
// database, the harness's own left out), from a reset at the window's start to a read at its end.
type statements struct {
	skipped  string // why not read
	all      statement
	top      []statement // by calls, most first
	distinct int
	harness  int64 // calls of the bench's own connections, left out of the figures
}

type statement struct {
	query     string // normalised ($1 for constants), on one line
	calls     int64
	rows      int64
	total     time.Duration // execution time, all calls
	fromBench bool
}

// resetStatements empties pg_stat_statements (every database of the server).
func resetStatements(ctx context.Context, db *pgxpool.Pool) error {
	_, err := db.Exec(ctx, `SELECT pg_stat_statements_reset()`)
	return err
}

// readStatements reads pg_stat_statements for the database db is connected to.
func readStatements(ctx context.Context, db *pgxpool.Pool) (*statements, error) {
	rows, err := db.Query(ctx, `SELECT s.query, s.calls, s.total_exec_time, s.rows, r.rolname = $1
		FROM pg_stat_statements s JOIN pg_roles r ON r.oid = s.userid
		WHERE s.dbid = (SELECT oid FROM pg_database WHERE datname = current_database())`, harnessRole)
	if err != nil {
		return nil, fmt.Errorf("read pg_stat_statements: %w", err)
	}
	list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (statement, error) {
		var s statement
		var ms float64
		err := row.Scan(&s.query, &s.calls, &ms, &s.rows, &s.fromBench)
		s.total = time.Duration(ms * float64(time.Millisecond))
		s.query = strings.Join(strings.Fields(s.query), " ")
		return s, err
	})
	if err != nil {
		return nil, fmt.Errorf("read pg_stat_statements: %w", err)
	}
	st := &statements{}
	for _, s := range list {
		if s.fromBench {
			st.harness += s.calls
			continue
		}
		st.top = append(st.top, s)
		st.all.calls, st.all.rows, st.all.total = st.all.calls+s.calls, st.all.rows+s.rows, st.all.total+s.total
	}
	st.distinct = len(st.top)
	slices.SortFunc(st.top, func(a, b statement) int {
		if a.calls != b.calls {
			return int(b.calls - a.calls)
		}
		return strings.Compare(a.query, b.query)
	})
	return st, nil
}

// windowStatements resets pg_stat_statements when a window opens and reads it when it closes;
// off is why it cannot ("" when it can).
type windowStatements struct {
	db     *pgxpool.Pool
	off    string
	result *statements
}

func (w *windowStatements) start(ctx context.Context) {
	if w.off != "" {
		return
	}
	if err := resetStatements(ctx, w.db); err != nil {
		w.off = err.Error()
	}
}

func (w *windowStatements) end(ctx context.Context) *statements {
	if w.off != "" {
		return &statements{skipped: w.off}
	}
	st, err := readStatements(ctx, w.db)
	if err != nil {
		return &statements{skipped: err.Error()}
	}
	return st
}

// print prints the service's statements per completed payment: in all, then the most called.
func (st *statements) print(w io.Writer, payments int, top int) {
	if st == nil {
		return
	}
	if st.skipped != "" {
		line(w, "statements", "not read: %s", st.skipped)
		return
	}
	if payments == 0 {
		line(w, "statements", "no payment completed in the window")
		return
	}
	n := float64(payments)
	line(w, "statements per payment", "%.1f calls of %d distinct statements, %.2f ms executing, %.1f rows",
		float64(st.all.calls)/n, st.distinct, st.all.total.Seconds()*1000/n, float64(st.all.rows)/n)
	line(w, "the bench's own (left out)", "%.1f calls per payment", float64(st.harness)/n)
	fmt.Fprintf(w, "  %9s %9s %9s  %s\n", "calls/pay", "mean ms", "rows/pay", "statement (normalised, shortened)")
	row := func(s statement) {
		fmt.Fprintf(w, "  %9.2f %9.3f %9.2f  %s\n", float64(s.calls)/n, s.total.Seconds()*1000/float64(max(s.calls, 1)),
			float64(s.rows)/n, shorten(brief(s.query), 110))
	}
	shown := st.top[:min(top, len(st.top))]
	for _, s := range shown {
		row(s)
	}
	// A statement called once per payment that waits (on a row lock, say) costs more than the
	// most called ones: the longest in all that the list above left out.
	rest := slices.Clone(st.top[len(shown):])
	slices.SortFunc(rest, func(a, b statement) int { return cmpDesc(a.total, b.total, a.query, b.query) })
	if len(rest) > 0 {
		fmt.Fprintf(w, "  and the longest in execution time of the others:\n")
	}
	for _, s := range rest[:min(5, len(rest))] {
		row(s)
	}
}

// A select list (with one level of parentheses), and lists of three or more columns or
// parameters folded into their first: the statement's shape (its tables and conditions) stays
// readable on one line.
var (
	selectList = regexp.MustCompile(`SELECT (?:[^()]|\([^()]*\))+? FROM `)
	columnList = regexp.MustCompile(`\b((?:[a-z_]+\.)?[a-z_]+)(?:, (?:[a-z_]+\.)?[a-z_]+){2,}`)
	paramList  = regexp.MustCompile(`(\$\d+)(?:, \$\d+){2,}`)
)

// brief is a normalised statement on one line with its select, column and parameter lists
// folded.
func brief(query string) string {
	query = selectList.ReplaceAllString(query, "SELECT … FROM ")
	return paramList.ReplaceAllString(columnList.ReplaceAllString(query, "$1, …"), "$1, …")
}

// shorten cuts s to at most width runes, marking the cut.
func shorten(s string, width int) string {
	r := []rune(s)
	if len(r) <= width {
		return s
	}
	return string(r[:width-1]) + "…"
}
