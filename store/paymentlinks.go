package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/sikahq/sika"
)

const paymentLinkColumns = `l.id, l.merchant_id, l.environment, l.created_by_member, l.name, l.slug, l.url, l.description,
	l.amount_type, l.amount, l.min_amount, l.currency, l.country, l.usage_limit,
	(SELECT count(*) FROM transactions t WHERE t.payment_link_id = l.id), l.is_active, l.metadata, l.created_at, l.updated_at`

func scanPaymentLink(row pgx.Row) (sika.PaymentLink, error) {
	var l sika.PaymentLink
	var amount, minAmount *decimal.Decimal
	var metadata []byte
	err := row.Scan(&l.ID, &l.Merchant, &l.Environment, &l.CreatedByMember, &l.Name, &l.Slug, &l.URL, &l.Description,
		&l.AmountType, &amount, &minAmount, &l.Currency, &l.Country, &l.UsageLimit, &l.UsageCount, &l.IsActive, &metadata,
		&l.CreatedAt, &l.UpdatedAt)
	if amount != nil {
		a := sika.NewAmount(*amount)
		l.Amount = &a
	}
	if minAmount != nil {
		a := sika.NewAmount(*minAmount)
		l.MinAmount = &a
	}
	l.Metadata = json.RawMessage(metadata)
	return l, err
}

var paymentLinkTable = table[sika.PaymentLink]{kind: "Payment link", what: "payment links", columns: paymentLinkColumns,
	from: "payment_links l", alias: "l.", scan: scanPaymentLink}

func amountArg(a *sika.Amount) *decimal.Decimal {
	if a == nil {
		return nil
	}
	return &a.Decimal
}

func metadataArg(m json.RawMessage) []byte {
	if len(m) == 0 {
		return []byte("{}")
	}
	return []byte(m)
}

// CreatePaymentLink inserts a payment link.
func (s *Store) CreatePaymentLink(ctx context.Context, l sika.PaymentLink) (sika.PaymentLink, error) {
	created, err := scanPaymentLink(s.pool.QueryRow(ctx, `INSERT INTO payment_links AS l (id, merchant_id, environment,
			created_by_member, name, slug, url, description, amount_type, amount, min_amount, currency, country, usage_limit,
			is_active, metadata)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16) RETURNING `+paymentLinkColumns,
		l.ID, l.Merchant, l.Environment, l.CreatedByMember, l.Name, l.Slug, l.URL, l.Description, l.AmountType,
		amountArg(l.Amount), amountArg(l.MinAmount), l.Currency, l.Country, l.UsageLimit, l.IsActive, metadataArg(l.Metadata)))
	if err != nil {
		return created, fmt.Errorf("insert payment link: %w", err)
	}
	return created, nil
}

// PaymentLinkByID returns a link of the merchant and environment, or not_found.
func (s *Store) PaymentLinkByID(ctx context.Context, merchantID uuid.UUID, env sika.Environment, id uuid.UUID) (sika.PaymentLink, error) {
	return s.paymentLink(ctx, `l.id = $1 AND l.merchant_id = $2 AND l.environment = $3`, id, merchantID, env)
}

// PaymentLinkBySlug returns a link by its public slug, for its hosted page.
func (s *Store) PaymentLinkBySlug(ctx context.Context, slug string) (sika.PaymentLink, error) {
	if !postgresText(slug) {
		return sika.PaymentLink{}, sika.NotFound("Payment link")
	}
	return s.paymentLink(ctx, `l.slug = $1`, slug)
}

func (s *Store) paymentLink(ctx context.Context, where string, args ...any) (sika.PaymentLink, error) {
	return one(s.pool.QueryRow(ctx, `SELECT `+paymentLinkColumns+` FROM payment_links l
		WHERE l.deleted_at IS NULL AND `+where, args...), scanPaymentLink, "Payment link", "select payment link")
}

// ListPaymentLinks returns a page of the merchant's links, newest first.
func (s *Store) ListPaymentLinks(ctx context.Context, merchantID uuid.UUID, env sika.Environment, page PageRequest) ([]sika.PaymentLink, int, error) {
	return listPage(ctx, s, "list payment links", paymentLinkColumns, `FROM payment_links l WHERE l.merchant_id = $1 AND l.environment = $2
		AND l.deleted_at IS NULL`, `l.created_at DESC, l.id DESC`, []any{merchantID, env}, page, scanPaymentLink)
}

// UpdatePaymentLink writes the editable fields of a link; merchant, environment, slug and url
// never change.
func (s *Store) UpdatePaymentLink(ctx context.Context, l sika.PaymentLink) (sika.PaymentLink, error) {
	return one(s.pool.QueryRow(ctx, `UPDATE payment_links l SET name = $4, description = $5,
			amount_type = $6, amount = $7, min_amount = $8, currency = $9, country = $10, usage_limit = $11, is_active = $12,
			metadata = $13, updated_at = now()
		WHERE l.id = $1 AND l.merchant_id = $2 AND l.environment = $3 AND l.deleted_at IS NULL RETURNING `+paymentLinkColumns,
		l.ID, l.Merchant, l.Environment, l.Name, l.Description, l.AmountType, amountArg(l.Amount), amountArg(l.MinAmount),
		l.Currency, l.Country, l.UsageLimit, l.IsActive, metadataArg(l.Metadata)), scanPaymentLink, "Payment link", "update payment link")
}

// DeletePaymentLink removes a link: its page answers 404 from then on; the transactions it
// generated keep their payment_link.
func (s *Store) DeletePaymentLink(ctx context.Context, merchantID uuid.UUID, env sika.Environment, id uuid.UUID) error {
	return paymentLinkTable.softDelete(ctx, s, merchantID, env, id)
}

// ListLinkTransactions returns a page of the transactions a link generated, newest first.
func (s *Store) ListLinkTransactions(ctx context.Context, linkID uuid.UUID, page PageRequest) ([]sika.Transaction, int, error) {
	return listPage(ctx, s, "list link transactions", transactionColumns, `FROM transactions t WHERE t.payment_link_id = $1`,
		`t.created_at DESC, t.id DESC`, []any{linkID}, page, scanTransaction)
}

// CreateLinkPayment creates a payment of a link (as CreateTransaction). In the same Postgres
// transaction, after the insert, it locks the link row and counts the link's transactions, the
// new one included: concurrent payments on one link queue on that lock and each counts what
// the previous ones committed, so a link never generates more than usage_limit transactions
// (409 usage_limit_reached). A disabled or deleted link answers 409 link_inactive. A customer
// whose earlier payment of the link may still be paid at its operator waits (409
// outcome_unresolved, waitForUnresolved); one whose earlier payment is still PENDING waits too
// (409 checkout_payment_in_progress: the same lock orders them, so a double submit, a replayed
// form or a second device never puts two payment requests on one number), while the link's
// other customers pay.
func (s *Store) CreateLinkPayment(ctx context.Context, nt NewTransaction, start WorkflowStart) (sika.Transaction, int64, error) {
	if nt.PaymentLink == nil {
		return sika.Transaction{}, 0, fmt.Errorf("create link payment: no link")
	}
	t, outboxID, _, err := s.createTransaction(ctx, nt, start, func(tx pgx.Tx, t sika.Transaction) error {
		var active bool
		var limit *int
		var slug string
		err := tx.QueryRow(ctx, `SELECT is_active AND deleted_at IS NULL, usage_limit, slug FROM payment_links WHERE id = $1 FOR UPDATE`,
			*t.PaymentLink).Scan(&active, &limit, &slug)
		if isNoRows(err) {
			return sika.NotFound("Payment link")
		}
		if err != nil {
			return fmt.Errorf("lock payment link: %w", err)
		}
		if !active {
			return sika.Errorf(sika.CodeLinkInactive, "This payment link is disabled.")
		}
		if err := waitForUnresolved(ctx, tx, "this customer on this payment link", `t.payment_link_id = $1 AND t.customer_phone = $2 AND t.id <> $3`,
			*t.PaymentLink, t.CustomerPhone, t.ID); err != nil {
			return err
		}
		if err := setTransactionSlug(ctx, tx, t.ID, "payment_link_slug", slug); err != nil {
			return err
		}
		// One read of the link's transactions answers both: how many it generated (this one
		// included) and whether this number has another still PENDING.
		var used int
		var inFlight bool
		if err := tx.QueryRow(ctx, `SELECT count(*), coalesce(bool_or(customer_phone = $2 AND status = 'PENDING' AND id <> $3), false)
			FROM transactions WHERE payment_link_id = $1`, *t.PaymentLink, t.CustomerPhone, t.ID).Scan(&used, &inFlight); err != nil {
			return fmt.Errorf("read link transactions: %w", err)
		}
		if limit != nil && used > *limit {
			return sika.Errorf(sika.CodeUsageLimitReached, "This payment link has reached its limit of %d payments.", *limit)
		}
		if inFlight {
			return sika.Errorf(sika.CodePaymentInProgress, "A payment of this payment link from this number is already in progress; wait for its outcome.")
		}
		return nil
	})
	return t, outboxID, err
}
