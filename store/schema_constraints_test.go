package store_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The schema accepts every state the code can write, and nothing the code does not know: each
// CHECK (column IN (…)) of the migrated database is compared with the string constants of the
// Go type that the column stores, read from the source. A constant added in Go without its
// migration (a flag kind the database refuses with 23514, as PAYOUT_PAID_TWICE once was), or a
// value left in a constraint that no code writes, fails here.

// enumColumns maps each enumerated column ("table.column") to the Go type whose constants it
// stores ("package.Type"; a "package.Var" names a map whose keys are the values). A new
// enumerated constraint must be listed here (or in enumByColumnName).
var enumColumns = map[string]string{
	"api_keys.scope":                       "sika.Scope",
	"checkout_sessions.fee_charge_mode":    "sika.FeeChargeMode",
	"checkout_sessions.status":             "sika.CheckoutStatus",
	"pricing.direction":                    "sika.Direction",
	"transactions.fee_charge_mode":         "sika.FeeChargeMode",
	"merchant_payout_methods.type":         "sika.PayoutMethodType",
	"kyc_documents.document_type":          "sika.KYCDocumentType",
	"kyc_dossiers.kyc_type":                "sika.KYCType",
	"kyc_dossiers.status":                  "sika.KYCDossierStatus",
	"kyc_files.content_type":               "sika.KYCFileExtensions",
	"ledger_entries.direction":             "sika.LedgerDirection",
	"ledger_entries.type":                  "sika.LedgerType",
	"memberships.role":                     "sika.MembershipRole",
	"merchant_settings.fee_charge_mode":    "sika.FeeChargeMode",
	"merchants.kyc_status":                 "sika.KYCStatus",
	"members.staff_role":                   "sika.StaffRole",
	"money_decisions.kind":                 "store.DecisionKind",
	"money_decisions.status":               "store.DecisionStatus",
	"money_flags.kind":                     "store.FlagKind",
	"networks.otp_kind":                    "sika.OTPKind",
	"operator_answers.outcome":             "store.ReconcileOutcome",
	"operator_answers.status":              "store.AnswerStatus",
	"payment_links.amount_type":            "sika.AmountType",
	"payout_approvals.decision":            "store.ApprovalDecision",
	"payout_batches.status":                "sika.PayoutBatchStatus",
	"payout_batch_items.status":            "store.BatchItemState",
	"payout_batch_items.fee_charge_mode":   "sika.FeeChargeMode",
	"transaction_attempts.status":          "sika.AttemptStatus",
	"transaction_status_logs.from_status":  "sika.TransactionStatus",
	"transaction_status_logs.to_status":    "sika.TransactionStatus",
	"transaction_status_logs.triggered_by": "sika.Trigger",
	"transactions.status":                  "sika.TransactionStatus",
	"transactions.transaction_type":        "sika.TransactionType",
	"transactions.refund_via":              "store.RefundVia",
	"web_sessions.app":                     "store.WebApp",
}

// enumByColumnName names the type of a column by its name alone, in every table.
var enumByColumnName = map[string]string{"environment": "sika.Environment"}

// enumExtras are values a constraint accepts beyond the type's constants, each with why the
// code writes it.
var enumExtras = map[string][]string{
	// '' is a session that takes the merchant's default mode (sika.CheckoutSession.FeeChargeMode).
	"checkout_sessions.fee_charge_mode": {""},
	// '' is an answer not processed yet (the inbox row waits for its run to end).
	"operator_answers.outcome": {""},
}

var inList = regexp.MustCompile(`^CHECK \(\(\(?([a-z_]+)\)?(?:::text)? = (?:ANY \(\(?ARRAY\[(.*)\]\)?(?:::text\[\])?\)|('[^']*'::text))\)\)$`)
var quoted = regexp.MustCompile(`'((?:[^']|'')*)'`)

func TestSchemaAcceptsEveryStateTheCodeWrites(t *testing.T) {
	ctx := t.Context()
	rows, err := st.Pool().Query(ctx, `SELECT c.conrelid::regclass::text, pg_get_constraintdef(c.oid)
		FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
		WHERE c.contype = 'c' AND n.nspname = current_schema() ORDER BY 1, 2`)
	require.NoError(t, err)
	schema := map[string][]string{}
	for rows.Next() {
		var table, def string
		require.NoError(t, rows.Scan(&table, &def))
		m := inList.FindStringSubmatch(def)
		if m == nil {
			if strings.Contains(def, "ANY") && strings.Contains(def, "ARRAY[") {
				t.Errorf("%s: an enumerated constraint this test cannot read: %s", table, def)
			}
			continue
		}
		var values []string
		for _, q := range quoted.FindAllStringSubmatch(m[2]+m[3], -1) {
			values = append(values, strings.ReplaceAll(q[1], "''", "'"))
		}
		schema[table+"."+m[1]] = values
	}
	require.NoError(t, rows.Err())
	require.NotEmpty(t, schema)

	code := goConstants(t, map[string]string{"sika": "..", "store": "."})
	for col, values := range schema {
		typ, ok := enumColumns[col]
		if !ok {
			_, column, _ := strings.Cut(col, ".")
			typ, ok = enumByColumnName[column]
		}
		if !assert.True(t, ok, "%s has an enumerated CHECK %v: name the Go type it stores in enumColumns", col, values) {
			continue
		}
		want := append(slices.Clone(code[typ]), enumExtras[col]...)
		if !assert.NotEmpty(t, code[typ], "%s: no string constants of %s found in the source", col, typ) {
			continue
		}
		slices.Sort(want)
		got := slices.Clone(values)
		slices.Sort(got)
		for _, v := range want {
			assert.Contains(t, got, v, "%s: the code can write %q (%s) but the database refuses it", col, v, typ)
		}
		for _, v := range got {
			assert.Contains(t, want, v, "%s: the database accepts %q, which no constant of %s names", col, v, typ)
		}
	}
	for col := range enumColumns {
		if _, ok := schema[col]; !ok && enumColumnExists(t, col) {
			t.Errorf("%s is listed in enumColumns but has no enumerated CHECK in the database", col)
		}
	}
}

// enumColumnExists says whether a listed column exists (a listed table another migration has
// not created yet is not an error).
func enumColumnExists(t *testing.T, col string) bool {
	table, column, _ := strings.Cut(col, ".")
	var n int
	require.NoError(t, st.Pool().QueryRow(t.Context(), `SELECT count(*) FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name = $1 AND column_name = $2`, table, column).Scan(&n))
	return n > 0
}

// goConstants reads, from the non-test Go files of each package directory, the string values of
// the constants of each named type ("pkg.Type") and the string keys of each map variable
// ("pkg.Var").
func goConstants(t *testing.T, dirs map[string]string) map[string][]string {
	out := map[string][]string{}
	for pkg, dir := range dirs {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		require.NoError(t, err)
		fset := token.NewFileSet()
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, name, nil, 0)
			require.NoError(t, err)
			for _, decl := range f.Decls {
				gd, ok := decl.(*ast.GenDecl)
				if !ok {
					continue
				}
				for _, spec := range gd.Specs {
					vs, ok := spec.(*ast.ValueSpec)
					if !ok {
						continue
					}
					if gd.Tok == token.CONST {
						typ, ok := vs.Type.(*ast.Ident)
						if !ok {
							continue
						}
						for _, v := range vs.Values {
							if s, ok := stringLit(v); ok {
								out[pkg+"."+typ.Name] = append(out[pkg+"."+typ.Name], s)
							}
						}
						continue
					}
					for i, v := range vs.Values {
						cl, ok := v.(*ast.CompositeLit)
						if !ok {
							continue
						}
						if _, ok := cl.Type.(*ast.MapType); !ok {
							continue
						}
						for _, e := range cl.Elts {
							if kv, ok := e.(*ast.KeyValueExpr); ok {
								if s, ok := stringLit(kv.Key); ok {
									out[pkg+"."+vs.Names[i].Name] = append(out[pkg+"."+vs.Names[i].Name], s)
								}
							}
						}
					}
				}
			}
		}
	}
	return out
}

func stringLit(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}
