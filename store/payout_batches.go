package store

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/sikahq/sika"
)

// BatchItemState is an item's own state as stored (payout_batch_items.status): QUEUED until it
// is sent, SENT once its payout transaction exists, CANCELLED when the batch was cancelled,
// rejected or expired first. The API shows a sent item with its payout's status instead
// (sika.PayoutBatchItemStatus).
type BatchItemState string

// The states of a batch item.
const (
	ItemStateQueued    BatchItemState = "QUEUED"
	ItemStateSent      BatchItemState = "SENT"
	ItemStateCancelled BatchItemState = "CANCELLED"
)

// NewPayoutBatch is a validated, priced batch to record (CreatePayoutBatch): its items carry
// their fees, their index and their reference; Batch carries who asked for it, its status
// (PROCESSING, or AWAITING_APPROVAL with ApprovalExpiresAt) and its description.
type NewPayoutBatch struct {
	Batch sika.PayoutBatch
	Items []sika.PayoutBatchItem
	// IdempotencyKey and Fingerprint dedupe a second creation as NewTransaction's do.
	IdempotencyKey string
	Fingerprint    []byte
}

// CreatePayoutBatch records a batch and its items and holds its total on the merchant's
// wallets (one PAYOUT_HOLD/DEBIT per wallet, naming the batch), with the outbox row of its
// workflow, in one Postgres transaction. Each wallet is locked while its balance is checked: a
// batch that one wallet cannot cover, fees included, is refused whole (422
// insufficient_balance, or wallet_frozen) and nothing is written. An idempotency key already
// used by the same request answers the first batch (created false); by another request, 409
// idempotency_key_reused.
func (s *Store) CreatePayoutBatch(ctx context.Context, nb NewPayoutBatch, start WorkflowStart) (sika.PayoutBatch, int64, bool, error) {
	b := nb.Batch
	if len(nb.Items) == 0 || len(nb.Items) > sika.MaxPayoutBatchItems {
		return b, 0, false, fmt.Errorf("create payout batch: %d items", len(nb.Items))
	}
	var outboxID int64
	var created sika.PayoutBatch
	err := s.InTx(ctx, func(tx pgx.Tx) error {
		var key *string
		var fingerprint []byte
		if nb.IdempotencyKey != "" {
			key, fingerprint = &nb.IdempotencyKey, nb.Fingerprint
		}
		tag, err := tx.Exec(ctx, `INSERT INTO payout_batches (id, reference, merchant_id, environment, status, description, item_count,
				created_by_member, created_by_api_key, approval_expires_at, idempotency_key, idempotency_fingerprint)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
			ON CONFLICT (merchant_id, environment, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING`,
			b.ID, b.Reference, b.Merchant, b.Environment, b.Status, b.Description, len(nb.Items),
			b.CreatedByMember, b.CreatedByAPIKey, b.ApprovalExpiresAt, key, fingerprint)
		if err != nil {
			return fmt.Errorf("insert payout batch: %w", err)
		}
		if tag.RowsAffected() == 0 {
			return errDuplicateKey
		}
		if err := insertBatchItems(ctx, tx, b, nb.Items); err != nil {
			return err
		}
		for _, w := range batchWalletSums(nb.Items) {
			if err := reserveWallet(ctx, tx, b.Merchant, b.Environment, w.country, w.currency, w.amount); err != nil {
				return err
			}
			if _, err := postLedgerEntry(ctx, tx, ledgerPosting{
				Merchant: b.Merchant, Environment: b.Environment, Country: w.country, Currency: w.currency,
				Type: sika.LedgerPayoutHold, Direction: sika.Debit, Amount: w.amount,
				AvailableDelta: w.amount.Neg(), PendingDelta: w.amount, PayoutBatch: &b.ID,
				Description: fmt.Sprintf("%s held (%d payouts)", b.Reference, w.count),
			}); err != nil {
				return err
			}
		}
		if outboxID, err = insertOutbox(ctx, tx, start); err != nil {
			return err
		}
		created, err = payoutBatch(ctx, tx, b.Merchant, b.Environment, b.ID)
		return err
	})
	if err == errDuplicateKey {
		existing, err := s.payoutBatchOfKey(ctx, nb)
		return existing, 0, false, err
	}
	if err != nil {
		return b, 0, false, err
	}
	return created, outboxID, true, nil
}

// insertBatchItems writes the items of a new batch (one round trip). Their ids are time-ordered in reverse of
// their index, so that the newest-first cursor lists (created_at, id descending; every item
// has the batch's creation time) show them in the batch's order.
func insertBatchItems(ctx context.Context, tx pgx.Tx, b sika.PayoutBatch, items []sika.PayoutBatchItem) error {
	ids := make([]uuid.UUID, len(items))
	for i := range ids {
		id, err := uuid.NewV7()
		if err != nil {
			return err
		}
		ids[len(ids)-1-i] = id
	}
	batch := &pgx.Batch{}
	for i, it := range items {
		batch.Queue(`INSERT INTO payout_batch_items (id, batch_id, merchant_id, environment, index, reference, requested_amount,
				client_fee, gateway_fee, platform_fee, debited_amount, net_amount, fee_charge_mode, currency, country, network_id,
				network, phone, description, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, now())`,
			ids[i], b.ID, b.Merchant, b.Environment, it.Index, it.Reference, it.RequestedAmount.Decimal,
			it.ClientFee.Decimal, it.GatewayFee.Decimal, it.PlatformFee.Decimal, it.DebitedAmount.Decimal, it.NetAmount.Decimal,
			it.FeeChargeMode, it.Currency, it.Country, it.NetworkID, it.Network, it.Phone, it.Description)
	}
	if err := tx.SendBatch(ctx, batch).Close(); err != nil {
		return fmt.Errorf("insert payout batch items: %w", err)
	}
	return nil
}

// walletSum is what a batch's items debit from one wallet.
type walletSum struct {
	country, currency string
	amount            decimal.Decimal
	count             int
}

// batchWalletSums sums items' debited amounts per wallet (country), in country order: two
// batches lock their wallets in the same order.
func batchWalletSums(items []sika.PayoutBatchItem) []walletSum {
	byCountry := map[string]*walletSum{}
	for _, it := range items {
		w := byCountry[it.Country]
		if w == nil {
			w = &walletSum{country: it.Country, currency: it.Currency}
			byCountry[it.Country] = w
		}
		w.amount = w.amount.Add(it.DebitedAmount.Decimal)
		w.count++
	}
	out := make([]walletSum, 0, len(byCountry))
	for _, w := range byCountry {
		out = append(out, *w)
	}
	slices.SortFunc(out, func(a, b walletSum) int { return cmp.Compare(a.country, b.country) })
	return out
}

// payoutBatchOfKey is transactionOfKey for batches.
func (s *Store) payoutBatchOfKey(ctx context.Context, nb NewPayoutBatch) (sika.PayoutBatch, error) {
	var id uuid.UUID
	var fingerprint []byte
	if err := s.pool.QueryRow(ctx, `SELECT id, idempotency_fingerprint FROM payout_batches
		WHERE merchant_id = $1 AND environment = $2 AND idempotency_key = $3`, nb.Batch.Merchant, nb.Batch.Environment, nb.IdempotencyKey).
		Scan(&id, &fingerprint); err != nil {
		return sika.PayoutBatch{}, fmt.Errorf("read payout batch of idempotency key: %w", err)
	}
	b, err := s.PayoutBatchByID(ctx, nb.Batch.Merchant, nb.Batch.Environment, id)
	if err != nil {
		return b, err
	}
	if fingerprint != nil && nb.Fingerprint != nil && !bytes.Equal(fingerprint, nb.Fingerprint) {
		return sika.PayoutBatch{}, sika.Errorf(sika.CodeIdempotencyKeyReused,
			"This Idempotency-Key already created payout batch %s with another request body or route; use a new key for a new request.", b.Reference)
	}
	return b, nil
}

const payoutBatchColumns = `b.id, b.reference, b.merchant_id, b.environment, b.status, b.description, b.item_count,
	b.created_by_member, b.created_by_api_key, b.approval_expires_at, b.decided_by, b.decided_at, b.decision_note,
	b.cancel_requested_at, b.created_at, b.updated_at, b.completed_at`

func scanPayoutBatch(row pgx.Row) (sika.PayoutBatch, error) {
	var b sika.PayoutBatch
	err := row.Scan(&b.ID, &b.Reference, &b.Merchant, &b.Environment, &b.Status, &b.Description, &b.ItemCount,
		&b.CreatedByMember, &b.CreatedByAPIKey, &b.ApprovalExpiresAt, &b.DecidedBy, &b.DecidedAt, &b.DecisionNote,
		&b.CancelRequestedAt, &b.CreatedAt, &b.UpdatedAt, &b.CompletedAt)
	return b, err
}

var payoutBatchTable = table[sika.PayoutBatch]{kind: "Payout batch", what: "payout batches", columns: payoutBatchColumns,
	from: "payout_batches b", alias: "b.", scan: scanPayoutBatch}

// batchQueryer reads: the pool or a Postgres transaction.
type batchQueryer interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// payoutBatch reads a batch of the tenancy with its totals and progress, or not_found.
func payoutBatch(ctx context.Context, q batchQueryer, merchant uuid.UUID, env sika.Environment, id uuid.UUID) (sika.PayoutBatch, error) {
	b, err := payoutBatchTable.byID(ctx, q, merchant, env, id, false)
	if err != nil {
		return b, err
	}
	return b, batchFigures(ctx, q, &b)
}

// batchFigures fills a batch's totals and progress from its items (an item sent has its
// transaction's status).
func batchFigures(ctx context.Context, q batchQueryer, b *sika.PayoutBatch) error {
	rows, err := q.Query(ctx, `SELECT CASE WHEN i.status = 'SENT' THEN t.status ELSE i.status END, i.currency,
			count(*), sum(i.debited_amount), sum(i.net_amount)
		FROM payout_batch_items i LEFT JOIN transactions t ON t.id = i.transaction_id
		WHERE i.batch_id = $1 GROUP BY 1, 2`, b.ID)
	if err != nil {
		return fmt.Errorf("payout batch progress: %w", err)
	}
	defer rows.Close()
	totals := map[string]*sika.PayoutBatchTotal{}
	var currencies []string
	b.Progress = []sika.PayoutBatchProgress{}
	for rows.Next() {
		var p sika.PayoutBatchProgress
		var debited, net decimal.Decimal
		if err := rows.Scan(&p.Status, &p.Currency, &p.Count, &debited, &net); err != nil {
			return fmt.Errorf("scan payout batch progress: %w", err)
		}
		p.DebitedAmount = sika.NewAmount(debited)
		b.Progress = append(b.Progress, p)
		t := totals[p.Currency]
		if t == nil {
			t = &sika.PayoutBatchTotal{Currency: p.Currency}
			totals[p.Currency] = t
			currencies = append(currencies, p.Currency)
		}
		t.DebitedAmount.Decimal = t.DebitedAmount.Add(debited)
		t.NetAmount.Decimal = t.NetAmount.Add(net)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("payout batch progress: %w", err)
	}
	order := func(s sika.PayoutBatchItemStatus) int { return slices.Index(sika.PayoutBatchItemStatuses, s) }
	slices.SortFunc(b.Progress, func(x, y sika.PayoutBatchProgress) int {
		if c := cmp.Compare(x.Currency, y.Currency); c != 0 {
			return c
		}
		return order(x.Status) - order(y.Status)
	})
	slices.Sort(currencies)
	b.Totals = make([]sika.PayoutBatchTotal, 0, len(currencies))
	for _, c := range currencies {
		b.Totals = append(b.Totals, *totals[c])
	}
	return nil
}

// PayoutBatchByID returns a batch of the merchant and environment with its totals and
// progress, or not_found.
func (s *Store) PayoutBatchByID(ctx context.Context, merchantID uuid.UUID, env sika.Environment, id uuid.UUID) (sika.PayoutBatch, error) {
	return payoutBatch(ctx, s.pool, merchantID, env, id)
}

// ListPayoutBatches returns a cursor page of a merchant's batches, newest first, each with its
// totals and progress.
func (s *Store) ListPayoutBatches(ctx context.Context, merchantID uuid.UUID, env sika.Environment, req KeysetRequest) ([]sika.PayoutBatch, bool, error) {
	items, more, err := payoutBatchTable.keyset(ctx, s, merchantID, env, req)
	if err != nil {
		return nil, false, err
	}
	for i := range items {
		if err := batchFigures(ctx, s.pool, &items[i]); err != nil {
			return nil, false, err
		}
	}
	return items, more, nil
}

const batchItemColumns = `i.id, i.batch_id, i.index, i.reference, CASE WHEN i.status = 'SENT' THEN t.status ELSE i.status END,
	i.requested_amount, i.client_fee, i.gateway_fee, i.platform_fee, i.debited_amount, i.net_amount, i.fee_charge_mode,
	i.currency, i.country, i.network_id, i.network, i.phone, i.description, i.transaction_id,
	coalesce(t.failure_code, ''), coalesce(t.failure_message, ''), i.created_at, greatest(i.updated_at, t.updated_at)`

func scanBatchItem(row pgx.Row) (sika.PayoutBatchItem, error) {
	var it sika.PayoutBatchItem
	err := row.Scan(&it.ID, &it.Batch, &it.Index, &it.Reference, &it.Status, &it.RequestedAmount, &it.ClientFee, &it.GatewayFee,
		&it.PlatformFee, &it.DebitedAmount, &it.NetAmount, &it.FeeChargeMode, &it.Currency, &it.Country, &it.NetworkID,
		&it.Network, &it.Phone, &it.Description, &it.Transaction, &it.FailureCode, &it.FailureMessage, &it.CreatedAt, &it.UpdatedAt)
	return it, err
}

const batchItemsFrom = `FROM payout_batch_items i LEFT JOIN transactions t ON t.id = i.transaction_id
	WHERE i.batch_id = $1 AND i.merchant_id = $2 AND i.environment = $3`

// ListPayoutBatchItems returns a cursor page of a batch's items in the batch's order (see
// insertBatchItems); a batch of another tenancy is not_found.
func (s *Store) ListPayoutBatchItems(ctx context.Context, merchantID uuid.UUID, env sika.Environment, batchID uuid.UUID, req KeysetRequest) ([]sika.PayoutBatchItem, bool, error) {
	err := s.pool.QueryRow(ctx, `SELECT id FROM payout_batches WHERE id = $1 AND merchant_id = $2 AND environment = $3`,
		batchID, merchantID, env).Scan(new(uuid.UUID))
	if err := rowErr(err, "Payout batch", "select payout batch"); err != nil {
		return nil, false, err
	}
	items, more, err := queryKeyset(ctx, s, batchItemColumns, batchItemsFrom, "i.", []any{batchID, merchantID, env}, req, scanBatchItem)
	if err != nil {
		return nil, false, fmt.Errorf("list payout batch items: %w", err)
	}
	return items, more, nil
}

// PayoutBatchItems returns every item of a batch by index (the results file).
func (s *Store) PayoutBatchItems(ctx context.Context, merchantID uuid.UUID, env sika.Environment, batchID uuid.UUID) ([]sika.PayoutBatchItem, error) {
	return collect(ctx, s.pool, "payout batch items", scanBatchItem, `SELECT `+batchItemColumns+` `+batchItemsFrom+` ORDER BY i.index`, batchID, merchantID, env)
}

// PayoutBatchState is what a batch's workflow reads to decide its next step.
type PayoutBatchState struct {
	Status            sika.PayoutBatchStatus
	ItemCount         int
	ApprovalExpiresAt *time.Time
	CancelRequested   bool
}

// PayoutBatchStateOf reads a batch's state for its workflow.
func (s *Store) PayoutBatchStateOf(ctx context.Context, id uuid.UUID) (PayoutBatchState, error) {
	var st PayoutBatchState
	var cancel *time.Time
	err := s.pool.QueryRow(ctx, `SELECT status, item_count, approval_expires_at, cancel_requested_at FROM payout_batches WHERE id = $1`, id).
		Scan(&st.Status, &st.ItemCount, &st.ApprovalExpiresAt, &cancel)
	if err != nil {
		return st, fmt.Errorf("read payout batch %s: %w", id, err)
	}
	st.CancelRequested = cancel != nil
	return st, nil
}

// BatchDispatch says what became of an item the batch's workflow asked to send.
type BatchDispatch struct {
	// Transaction is the item's payout, to run (Sent).
	Transaction uuid.UUID
	Sent        bool
	// Stop is true once the batch was cancelled: no later item will be sent either.
	Stop bool
}

// DispatchPayoutBatchItem sends the item of index of a PROCESSING batch: in one Postgres
// transaction it creates the item's payout transaction (PENDING, its status log and events,
// priced as the batch was) and moves the item's part of the batch's hold to it (a
// PAYOUT_REVERSAL/CREDIT naming the batch, then the transaction's PAYOUT_HOLD/DEBIT: the
// wallet's amounts do not change). The batch row is share-locked and the item row locked, so a
// cancel (which takes the batch row exclusively) either comes first, and the item is CANCELLED
// and not sent, or after, and the item is SENT and not released. Asked again (a retried
// activity, a replayed workflow), it answers the same transaction and writes nothing.
func (s *Store) DispatchPayoutBatchItem(ctx context.Context, batchID uuid.UUID, index int) (BatchDispatch, error) {
	var d BatchDispatch
	err := s.InTx(ctx, func(tx pgx.Tx) error {
		var b sika.PayoutBatch
		var cancel *time.Time
		if err := tx.QueryRow(ctx, `SELECT id, reference, merchant_id, environment, status, cancel_requested_at
			FROM payout_batches WHERE id = $1 FOR SHARE`, batchID).
			Scan(&b.ID, &b.Reference, &b.Merchant, &b.Environment, &b.Status, &cancel); err != nil {
			return fmt.Errorf("lock payout batch: %w", err)
		}
		it, err := scanBatchItem(tx.QueryRow(ctx, `SELECT `+batchItemColumns+` FROM payout_batch_items i
			LEFT JOIN transactions t ON t.id = i.transaction_id WHERE i.batch_id = $1 AND i.index = $2 FOR UPDATE OF i`, batchID, index))
		if err != nil {
			return fmt.Errorf("lock payout batch item %d: %w", index, err)
		}
		d.Stop = cancel != nil || b.Status != sika.BatchProcessing
		if it.Transaction != nil {
			d.Transaction, d.Sent = *it.Transaction, true
			return nil
		}
		if it.Status != sika.ItemQueued || d.Stop {
			return nil
		}
		t, err := insertBatchPayout(ctx, tx, b, it)
		if err != nil {
			return err
		}
		d.Transaction, d.Sent = t.ID, true
		return nil
	})
	return d, err
}

// insertBatchPayout creates the payout transaction of a queued item and moves its part of the
// batch's hold to it, in the caller's Postgres transaction.
func insertBatchPayout(ctx context.Context, tx pgx.Tx, b sika.PayoutBatch, it sika.PayoutBatchItem) (sika.Transaction, error) {
	id, err := uuid.NewV7()
	if err != nil {
		return sika.Transaction{}, err
	}
	ref, err := sika.NewReference("OUT", time.Now())
	if err != nil {
		return sika.Transaction{}, err
	}
	metadata, err := json.Marshal(map[string]any{"payout_batch": b.ID, "payout_batch_reference": b.Reference,
		"payout_batch_item": it.Reference, "payout_batch_index": it.Index})
	if err != nil {
		return sika.Transaction{}, err
	}
	t := sika.Transaction{
		ID: id, Reference: ref, Merchant: b.Merchant, Environment: b.Environment, Type: sika.TypePayout,
		RequestedAmount: it.RequestedAmount, ClientFee: it.ClientFee, GatewayFee: it.GatewayFee, PlatformFee: it.PlatformFee,
		DebitedAmount: it.DebitedAmount, NetAmount: it.NetAmount, Currency: it.Currency, Country: it.Country,
		NetworkID: it.NetworkID, Network: it.Network, Recipient: it.Phone, Description: it.Description,
		Metadata: metadata, FeeChargeMode: it.FeeChargeMode,
	}
	if err := t.CheckAmounts(); err != nil {
		return t, fmt.Errorf("payout of batch item %d: %w", it.Index, err)
	}
	if t, err = insertTransaction(ctx, tx, NewTransaction{Transaction: t,
		Reason: fmt.Sprintf("Payout %s of batch %s", it.Reference, b.Reference)}); err != nil {
		return t, err
	}
	amount := it.DebitedAmount.Decimal
	if _, err := postLedgerEntry(ctx, tx, ledgerPosting{
		Merchant: b.Merchant, Environment: b.Environment, Country: it.Country, Currency: it.Currency,
		Type: sika.LedgerPayoutReversal, Direction: sika.Credit, Amount: amount,
		AvailableDelta: amount, PendingDelta: amount.Neg(), PayoutBatch: &b.ID,
		Description: fmt.Sprintf("%s: %s moved to %s", b.Reference, it.Reference, t.Reference),
	}); err != nil {
		return t, err
	}
	if _, err := postLedgerEntry(ctx, tx, ledgerPosting{
		Merchant: b.Merchant, Environment: b.Environment, Country: it.Country, Currency: it.Currency,
		Type: sika.LedgerPayoutHold, Direction: sika.Debit, Amount: amount,
		AvailableDelta: amount.Neg(), PendingDelta: amount, Transaction: &t.ID,
		Description: t.Reference + " held (batch " + b.Reference + ")",
	}); err != nil {
		return t, err
	}
	if _, err := tx.Exec(ctx, `UPDATE payout_batch_items SET status = 'SENT', transaction_id = $2, updated_at = now() WHERE id = $1`,
		it.ID, t.ID); err != nil {
		return t, fmt.Errorf("mark payout batch item sent: %w", err)
	}
	return t, nil
}

// CancelPayoutBatch cancels the items of a batch not sent yet and releases their part of the
// hold (one PAYOUT_REVERSAL/CREDIT per wallet, naming the batch), under the batch row's lock:
// an item is either sent (DispatchPayoutBatchItem) or cancelled, never both, and a second
// cancel finds nothing left to release. A batch still awaiting approval ends CANCELLED at once
// (payout_batch.completed); a PROCESSING one ends when its items already sent have ended. A
// batch already ended is 409 not_pending.
func (s *Store) CancelPayoutBatch(ctx context.Context, merchantID uuid.UUID, env sika.Environment, id uuid.UUID) (sika.PayoutBatch, error) {
	var b sika.PayoutBatch
	err := s.InTx(ctx, func(tx pgx.Tx) error {
		cur, err := lockPayoutBatch(ctx, tx, merchantID, env, id)
		if err != nil {
			return err
		}
		if cur.Status.Final() {
			return sika.Errorf(sika.CodeNotPending, "Payout batch %s is %s; nothing is left to cancel.", cur.Reference, cur.Status)
		}
		if _, err := tx.Exec(ctx, `UPDATE payout_batches SET cancel_requested_at = coalesce(cancel_requested_at, now()), updated_at = now()
			WHERE id = $1`, id); err != nil {
			return fmt.Errorf("cancel payout batch: %w", err)
		}
		if err := releaseQueuedItems(ctx, tx, cur, "cancelled"); err != nil {
			return err
		}
		if cur.Status == sika.BatchAwaitingApproval {
			if err := endPayoutBatch(ctx, tx, cur, sika.BatchCancelled); err != nil {
				return err
			}
		}
		b, err = payoutBatch(ctx, tx, merchantID, env, id)
		return err
	})
	return b, err
}

// lockPayoutBatch locks a batch row of the tenancy (FOR UPDATE), or answers not_found.
func lockPayoutBatch(ctx context.Context, tx pgx.Tx, merchantID uuid.UUID, env sika.Environment, id uuid.UUID) (sika.PayoutBatch, error) {
	return payoutBatchTable.byID(ctx, tx, merchantID, env, id, true)
}

// lockPayoutBatchByID locks a batch row whatever its tenancy (the workflow's steps).
func lockPayoutBatchByID(ctx context.Context, tx pgx.Tx, id uuid.UUID) (sika.PayoutBatch, error) {
	b, err := scanPayoutBatch(tx.QueryRow(ctx, `SELECT `+payoutBatchColumns+` FROM payout_batches b WHERE b.id = $1 FOR UPDATE`, id))
	if err != nil {
		return b, fmt.Errorf("lock payout batch %s: %w", id, err)
	}
	return b, nil
}

// releaseQueuedItems marks a locked batch's queued items CANCELLED and returns their part of
// the hold to available, one PAYOUT_REVERSAL/CREDIT per wallet.
func releaseQueuedItems(ctx context.Context, tx pgx.Tx, b sika.PayoutBatch, why string) error {
	items, err := collect(ctx, tx, "cancelled payout batch items", func(r pgx.Row) (sika.PayoutBatchItem, error) {
		var it sika.PayoutBatchItem
		return it, r.Scan(&it.Country, &it.Currency, &it.DebitedAmount)
	}, `UPDATE payout_batch_items SET status = 'CANCELLED', updated_at = now()
		WHERE batch_id = $1 AND status = 'QUEUED' RETURNING country, currency, debited_amount`, b.ID)
	if err != nil {
		return err
	}
	for _, w := range batchWalletSums(items) {
		if _, err := postLedgerEntry(ctx, tx, ledgerPosting{
			Merchant: b.Merchant, Environment: b.Environment, Country: w.country, Currency: w.currency,
			Type: sika.LedgerPayoutReversal, Direction: sika.Credit, Amount: w.amount,
			AvailableDelta: w.amount, PendingDelta: w.amount.Neg(), PayoutBatch: &b.ID,
			Description: fmt.Sprintf("%s released (%d payouts %s)", b.Reference, w.count, why),
		}); err != nil {
			return err
		}
	}
	return nil
}

// endPayoutBatch gives a locked batch its final status and records payout_batch.completed.
func endPayoutBatch(ctx context.Context, tx pgx.Tx, b sika.PayoutBatch, status sika.PayoutBatchStatus) error {
	if _, err := tx.Exec(ctx, `UPDATE payout_batches SET status = $2, completed_at = now(), updated_at = now() WHERE id = $1`,
		b.ID, status); err != nil {
		return fmt.Errorf("end payout batch: %w", err)
	}
	ended, err := payoutBatch(ctx, tx, b.Merchant, b.Environment, b.ID)
	if err != nil {
		return err
	}
	_, err = recordEvent(ctx, tx, sika.EventPayoutBatchCompleted, b.Merchant, b.Environment, nil, nil, ended)
	return err
}

// EndPayoutBatch ends a PROCESSING batch once its workflow has seen every item sent end:
// COMPLETED, or CANCELLED when a cancel stopped it, with the payout_batch.completed event. A
// batch already ended is left as it is (changed false); one with an item still queued is an
// error (the workflow must send or see cancelled every item first).
func (s *Store) EndPayoutBatch(ctx context.Context, id uuid.UUID) (sika.PayoutBatchStatus, bool, error) {
	var status sika.PayoutBatchStatus
	var changed bool
	err := s.InTx(ctx, func(tx pgx.Tx) error {
		b, err := lockPayoutBatchByID(ctx, tx, id)
		if err != nil {
			return err
		}
		status = b.Status
		if b.Status.Final() {
			return nil
		}
		var queued int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM payout_batch_items WHERE batch_id = $1 AND status = 'QUEUED'`, id).Scan(&queued); err != nil {
			return fmt.Errorf("count queued items: %w", err)
		}
		if queued > 0 {
			return fmt.Errorf("end payout batch %s: %d items still queued", b.Reference, queued)
		}
		status, changed = sika.BatchCompleted, true
		if b.CancelRequestedAt != nil {
			status = sika.BatchCancelled
		}
		return endPayoutBatch(ctx, tx, b, status)
	})
	return status, changed, err
}

// ExpirePayoutBatch ends a batch whose approval has expired: EXPIRED, every item cancelled and
// its hold released, payout_batch.completed, all under the batch row's lock. A batch decided
// meanwhile (or not yet due) is left as it is; its state is answered either way.
func (s *Store) ExpirePayoutBatch(ctx context.Context, id uuid.UUID) (PayoutBatchState, error) {
	var st PayoutBatchState
	err := s.InTx(ctx, func(tx pgx.Tx) error {
		b, err := lockPayoutBatchByID(ctx, tx, id)
		if err != nil {
			return err
		}
		st = PayoutBatchState{Status: b.Status, ItemCount: b.ItemCount, ApprovalExpiresAt: b.ApprovalExpiresAt,
			CancelRequested: b.CancelRequestedAt != nil}
		if st.Status != sika.BatchAwaitingApproval || st.ApprovalExpiresAt == nil || time.Now().Before(*st.ApprovalExpiresAt) {
			return nil
		}
		if err := releaseQueuedItems(ctx, tx, b, "not approved in time"); err != nil {
			return err
		}
		st.Status = sika.BatchExpired
		return endPayoutBatch(ctx, tx, b, sika.BatchExpired)
	})
	return st, err
}

// DecidePayoutBatch records a second member's decision on a batch that waits for approval,
// under the batch row's lock: approved, it becomes PROCESSING (its workflow sends it); rejected,
// it ends REJECTED, every item cancelled and its hold released (payout_batch.completed). The
// member who created the batch may not decide it (403 self_approval_forbidden); a batch that no
// longer waits, or whose approval has expired, answers 409 not_awaiting_approval.
func (s *Store) DecidePayoutBatch(ctx context.Context, merchantID uuid.UUID, env sika.Environment, id, member uuid.UUID, approve bool, note string) (sika.PayoutBatch, error) {
	var out sika.PayoutBatch
	err := s.InTx(ctx, func(tx pgx.Tx) error {
		b, err := lockPayoutBatch(ctx, tx, merchantID, env, id)
		if err != nil {
			return err
		}
		if b.Status != sika.BatchAwaitingApproval {
			return sika.Errorf(sika.CodeNotAwaitingApproval, "Payout batch %s is %s; it does not wait for approval.", b.Reference, b.Status)
		}
		if b.ApprovalExpiresAt != nil && !time.Now().Before(*b.ApprovalExpiresAt) {
			return sika.Errorf(sika.CodeNotAwaitingApproval, "The approval of payout batch %s expired at %s.", b.Reference,
				b.ApprovalExpiresAt.UTC().Format(time.RFC3339))
		}
		if b.CreatedByMember != nil && *b.CreatedByMember == member {
			return sika.Errorf(sika.CodeSelfApprovalForbidden, "Payout batch %s was created by you; another member must approve or reject it.", b.Reference)
		}
		status := sika.BatchProcessing
		if !approve {
			status = b.Status // endPayoutBatch gives it its final status, with completed_at
		}
		if _, err := tx.Exec(ctx, `UPDATE payout_batches SET status = $2, decided_by = $3, decided_at = now(), decision_note = $4,
			updated_at = now() WHERE id = $1`, id, status, member, note); err != nil {
			return fmt.Errorf("decide payout batch: %w", err)
		}
		if !approve {
			if err := releaseQueuedItems(ctx, tx, b, "rejected"); err != nil {
				return err
			}
			if err := endPayoutBatch(ctx, tx, b, sika.BatchRejected); err != nil {
				return err
			}
		}
		out, err = payoutBatch(ctx, tx, merchantID, env, id)
		return err
	})
	return out, err
}
