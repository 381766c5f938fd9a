package api

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
	"github.com/sikahq/sika/workflows"
)

// payoutBatchRequest is the body of POST /payout-batches/.
type payoutBatchRequest struct {
	Description string            `json:"description"`
	Items       []json.RawMessage `json:"items"`
}

// PayoutBatchRow is one payout of a batch as the merchant sends it (a JSON item, or a CSV row
// of the dashboard's upload with the same columns).
type PayoutBatchRow struct {
	Amount      string `json:"amount"`
	Currency    string `json:"currency"`
	Country     string `json:"country"`
	Phone       string `json:"phone"`
	Network     string `json:"network"`
	Reference   string `json:"reference"`
	Description string `json:"description"`
}

// createPayoutBatch accepts up to 1,000 payouts as one order: every item is validated and
// priced by the payout's own rule before anything moves (400 with the errors of every invalid
// item, by index), the batch is recorded with its total held (refused whole when a wallet
// cannot cover it, fees included) and its workflow sends the items.
func (s *Server) createPayoutBatch(w http.ResponseWriter, r *http.Request, req payoutBatchRequest) error {
	var v sika.Validation
	switch {
	case req.Items == nil:
		v.Add("items", sika.MsgRequired)
	case len(req.Items) == 0:
		v.Add("items", "Ensure this field has at least 1 item.")
	case len(req.Items) > sika.MaxPayoutBatchItems:
		v.Add("items", fmt.Sprintf("Ensure this field has no more than %d items.", sika.MaxPayoutBatchItems))
	}
	if v.Has("items") {
		maxLength(&v, "description", req.Description, maxBatchDescription) // named in the same 400
		return v.Err()
	}
	rows := make([]PayoutBatchRow, len(req.Items))
	rowErrs := make([]error, len(req.Items))
	for i, raw := range req.Items {
		rowErrs[i] = decodeJSONObject(raw, &rows[i]) // each item as strict as a body
	}
	ctx := r.Context()
	merchant, env := tenant(ctx)
	key, fingerprint := idempotencyFrom(r)
	b, err := s.SubmitPayoutBatch(ctx, merchant, env, PayoutBatchOrder{
		Description: req.Description, Rows: rows, RowErrors: rowErrs, By: principalFrom(ctx),
		IdempotencyKey: key, Fingerprint: fingerprint,
	})
	if err != nil {
		return err
	}
	writeData(w, http.StatusCreated, b)
	return nil
}

// PayoutBatchOrder is a batch to submit (SubmitPayoutBatch).
type PayoutBatchOrder struct {
	Description string
	Rows        []PayoutBatchRow
	// RowErrors, when set, holds for each row the error of reading it (nil when it was read).
	RowErrors []error
	// By is who asks: an API key or a dashboard member.
	By *Principal
	// IdempotencyKey and Fingerprint make a second order with the same key answer the first
	// batch.
	IdempotencyKey string
	Fingerprint    []byte
	// RowField names a row's field in errors (default "items[<index>].<field>"; the dashboard's
	// upload names CSV lines).
	RowField func(index int, field string) string
}

func (o PayoutBatchOrder) rowField(i int, field string) string {
	if o.RowField != nil {
		return o.RowField(i, field)
	}
	if field == "" {
		return "items[" + strconv.Itoa(i) + "]"
	}
	return "items[" + strconv.Itoa(i) + "]." + field
}

// rowFieldNames maps pricePayout's field names to a batch row's.
var rowFieldNames = map[string]string{"method": "network", "recipient": "phone"}

// maxBatchDescription is the longest description a payout batch takes, in characters.
const maxBatchDescription = 500

// PriceBatchRows validates and prices every row of a batch by the payout's rule (pricePayout)
// and answers the items, or one validation error holding the errors of every invalid row and of
// the batch's description (a business refusal of a row, such as amount_out_of_range, is reported
// as that row's error).
func (s *Server) PriceBatchRows(ctx context.Context, merchant uuid.UUID, env sika.Environment, o PayoutBatchOrder) ([]sika.PayoutBatchItem, error) {
	var v sika.Validation
	maxLength(&v, "description", o.Description, maxBatchDescription)
	items := make([]sika.PayoutBatchItem, 0, len(o.Rows))
	seen := make(map[string]int, len(o.Rows))
	for i, row := range o.Rows {
		if i < len(o.RowErrors) && o.RowErrors[i] != nil {
			addRowError(&v, o, i, o.RowErrors[i])
			continue
		}
		ref := strings.TrimSpace(row.Reference)
		switch first, dup := seen[ref]; {
		case ref == "":
			v.Add(o.rowField(i, "reference"), sika.MsgRequired)
		case len([]rune(ref)) > 100:
			v.Add(o.rowField(i, "reference"), msgTooLong(100))
		case dup:
			v.Add(o.rowField(i, "reference"), fmt.Sprintf("Already used by item %d; each reference must be unique in the batch.", first))
		default:
			seen[ref] = i
		}
		network, err := s.batchRowNetwork(ctx, row)
		if err != nil {
			addRowError(&v, o, i, err)
			continue
		}
		p, err := s.pricePayout(ctx, merchant, env, payoutRequest{Amount: row.Amount, Currency: row.Currency, Country: row.Country,
			Method: network, Recipient: row.Phone, Description: row.Description})
		if err != nil {
			var e *sika.Error
			if !errors.As(err, &e) {
				return nil, err // the store or the catalogue failed: not the row's fault
			}
			addRowError(&v, o, i, err)
			continue
		}
		f := p.fees
		items = append(items, sika.PayoutBatchItem{
			Index: i, Reference: ref, RequestedAmount: sika.NewAmount(f.RequestedAmount), ClientFee: sika.NewAmount(f.ClientFee),
			GatewayFee: sika.NewAmount(f.GatewayFee), PlatformFee: sika.NewAmount(f.PlatformFee),
			DebitedAmount: sika.NewAmount(f.DebitedAmount), NetAmount: sika.NewAmount(f.NetAmount), FeeChargeMode: f.Mode,
			Currency: p.country.DefaultCurrency, Country: p.country.ISOCode, NetworkID: p.network.ID, Network: p.network.Code,
			Phone: p.recipient, Description: strings.TrimSpace(row.Description),
		})
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	return items, nil
}

// batchRowNetwork is the network a row pays out on: the one it names, or else the one the
// number's numbering plan gives (sika.PredictNetwork, as GET /networks/predict/ answers) when the
// plan is sure of it (HIGH, or MEDIUM: the prefix's operator, the number possibly ported, which
// the operator would refuse as a definite failure that releases the item's hold). A number the
// plan cannot place is refused with what was found, so the merchant names the network.
func (s *Server) batchRowNetwork(ctx context.Context, row PayoutBatchRow) (string, error) {
	if strings.TrimSpace(row.Network) != "" {
		return row.Network, nil
	}
	if strings.TrimSpace(row.Phone) == "" {
		return "", sika.FieldError("network", sika.MsgRequired)
	}
	p, err := sika.PredictNetwork(row.Phone, row.Country)
	if err != nil {
		return "", sika.FieldError("network", "Required: the network could not be told from this number.")
	}
	networks, err := s.store.CountryNetworks(ctx, p.Country)
	if err != nil {
		return "", err
	}
	codes := make([]string, len(networks))
	for i, n := range networks {
		codes[i] = n.Code
	}
	if p = p.InCatalogue(codes); p.Network == "" || (p.Confidence != sika.ConfidenceHigh && p.Confidence != sika.ConfidenceMedium) {
		return "", sika.FieldError("network", "Required: the network could not be told from this number with confidence; name it.")
	}
	return p.Network, nil
}

// addRowError adds a row's error to v: each invalid field under the row's name for it, a
// business refusal (its message) under the row itself.
func addRowError(v *sika.Validation, o PayoutBatchOrder, i int, err error) {
	var e *sika.Error
	switch {
	case !errors.As(err, &e):
		v.Add(o.rowField(i, ""), "This item could not be read.")
		return
	case e.Code != sika.CodeValidation:
		v.Add(o.rowField(i, ""), e.Message)
		return
	}
	for field, msgs := range e.Fields {
		if name, ok := rowFieldNames[field]; ok {
			field = name
		}
		for _, m := range msgs {
			v.Add(o.rowField(i, field), m)
		}
	}
}

// SubmitPayoutBatch prices a batch's rows (PriceBatchRows), records it with its total held
// (store.CreatePayoutBatch: refused whole when a wallet cannot cover it) and starts its
// workflow. An Idempotency-Key already used by the same order answers the first batch.
func (s *Server) SubmitPayoutBatch(ctx context.Context, merchant uuid.UUID, env sika.Environment, o PayoutBatchOrder) (sika.PayoutBatch, error) {
	items, err := s.PriceBatchRows(ctx, merchant, env, o)
	if err != nil {
		return sika.PayoutBatch{}, err
	}
	id, ref, err := s.newMoneyRecord("BAT")
	if err != nil {
		return sika.PayoutBatch{}, err
	}
	b := sika.PayoutBatch{ID: id, Reference: ref, Merchant: merchant, Environment: env, Status: sika.BatchProcessing,
		Description: strings.TrimSpace(o.Description)}
	settings, err := s.store.MerchantSettings(ctx, merchant, env)
	if err != nil {
		return sika.PayoutBatch{}, err
	}
	if needsApproval(settings, items) {
		expires := s.cfg.Now().UTC().Add(time.Duration(settings.ApprovalWindowHours) * time.Hour)
		b.Status, b.ApprovalExpiresAt = sika.BatchAwaitingApproval, &expires
	}
	if o.By != nil && o.By.Member != nil {
		b.CreatedByMember = &o.By.Member.ID
	} else if o.By != nil {
		b.CreatedByAPIKey = &o.By.APIKeyID
	}
	b, outboxID, created, err := s.store.CreatePayoutBatch(ctx, store.NewPayoutBatch{Batch: b, Items: items,
		IdempotencyKey: o.IdempotencyKey, Fingerprint: o.Fingerprint}, workflows.PayoutBatchStart(workflows.PayoutBatchInput{BatchID: id}))
	if err != nil {
		return b, err
	}
	if created {
		s.startPayoutBatch(ctx, b.ID, outboxID)
	}
	return b, nil
}

// startPayoutBatch starts a committed batch's workflow and clears its outbox row; when Temporal
// cannot be reached the row stays and the sweeper starts it.
func (s *Server) startPayoutBatch(ctx context.Context, id uuid.UUID, outboxID int64) {
	if s.cfg.Temporal == nil {
		return // no Temporal configured (API-only tests): the outbox row waits for a sweeper
	}
	ctx = context.WithoutCancel(ctx)
	if err := workflows.StartPayoutBatch(ctx, s.cfg.Temporal, workflows.PayoutBatchInput{BatchID: id}); err != nil {
		logFrom(ctx).Warn("payout batch workflow not started; the outbox sweeper will", "batch", id, "err", err)
		return
	}
	if err := s.store.DeleteOutbox(ctx, outboxID); err != nil {
		logFrom(ctx).Warn("delete outbox row", "batch", id, "err", err)
	}
}

// signalPayoutBatch wakes a batch's workflow after a decision or a cancel (wake).
func (s *Server) signalPayoutBatch(ctx context.Context, id uuid.UUID) {
	s.wake(ctx, workflows.PayoutBatchWorkflowID(id), workflows.SignalPayoutBatchChanged)
}

// wake signals a workflow that a record it reads has changed (a decision, a cancel), best
// effort: a lost signal only delays the workflow until it reads the record again.
func (s *Server) wake(ctx context.Context, workflowID, signal string) {
	if s.cfg.Temporal == nil {
		return
	}
	if err := s.cfg.Temporal.SignalWorkflow(context.WithoutCancel(ctx), workflowID, "", signal, nil); err != nil {
		logFrom(ctx).Warn("signal workflow", "workflow", workflowID, "signal", signal, "err", err)
	}
}

func (s *Server) listPayoutBatches(w http.ResponseWriter, r *http.Request) error {
	return writeCursorList(s, w, r, nil, s.store.ListPayoutBatches,
		func(b sika.PayoutBatch) Cursor { return Cursor{CreatedAt: b.CreatedAt, ID: b.ID} })
}

func (s *Server) getPayoutBatch(w http.ResponseWriter, r *http.Request) error {
	return writeTenantObject(w, r, "Payout batch", s.store.PayoutBatchByID)
}

func (s *Server) listPayoutBatchItems(w http.ResponseWriter, r *http.Request) error {
	id, err := pathUUID(r, "id", "Payout batch")
	if err != nil {
		return err
	}
	return writeCursorList(s, w, r, nil, func(ctx context.Context, merchant uuid.UUID, env sika.Environment, req store.KeysetRequest) ([]sika.PayoutBatchItem, bool, error) {
		return s.store.ListPayoutBatchItems(ctx, merchant, env, id, req)
	}, func(it sika.PayoutBatchItem) Cursor { return Cursor{CreatedAt: it.CreatedAt, ID: it.ID} })
}

// cancelPayoutBatch cancels the items of a batch not sent yet and releases their hold; the
// items already sent go on to their end.
func (s *Server) cancelPayoutBatch(w http.ResponseWriter, r *http.Request) error {
	return tenantAction(w, r, "Payout batch", s.store.CancelPayoutBatch, func(ctx context.Context, b sika.PayoutBatch) {
		s.signalPayoutBatch(ctx, b.ID)
	})
}

// payoutBatchResultsHeader is the header row of a batch's results file.
var payoutBatchResultsHeader = []string{"index", "reference", "status", "amount", "client_fee", "debited_amount", "net_amount",
	"currency", "country", "network", "phone", "description", "transaction", "failure_code", "failure_message", "updated_at"}

// payoutBatchResults answers a batch's items as CSV, one row per item in the batch's order,
// with each item's status and its payout transaction.
func (s *Server) payoutBatchResults(w http.ResponseWriter, r *http.Request) error {
	b, err := tenantObject(r, "Payout batch", s.store.PayoutBatchByID)
	if err != nil {
		return err
	}
	ctx := r.Context()
	merchant, env := tenant(ctx)
	items, err := s.store.PayoutBatchItems(ctx, merchant, env, b.ID)
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", "text/csv; charset=utf-8")
	h.Set("Content-Disposition", `attachment; filename="sika-payout-batch-`+b.Reference+`.csv"`)
	w.WriteHeader(http.StatusOK)
	out := csv.NewWriter(w)
	_ = out.Write(payoutBatchResultsHeader)
	amount := func(a sika.Amount) string { return sika.FormatAmount(a.Decimal) }
	for _, it := range items {
		_ = out.Write([]string{strconv.Itoa(it.Index), csvText(it.Reference), string(it.Status), amount(it.RequestedAmount),
			amount(it.ClientFee), amount(it.DebitedAmount), amount(it.NetAmount), it.Currency, it.Country, it.Network,
			csvPhone(it.Phone), csvText(it.Description), csvOptional(it.Transaction, uuid.UUID.String),
			csvText(it.FailureCode), csvText(it.FailureMessage), csvTime(it.UpdatedAt)})
	}
	out.Flush()
	return nil
}

// needsApproval says whether a batch's items wait for a second member: the merchant has a
// threshold and the batch's total in one currency (fees included) is over it.
func needsApproval(settings sika.MerchantSettings, items []sika.PayoutBatchItem) bool {
	if settings.PayoutApprovalThreshold == nil {
		return false
	}
	totals := map[string]decimal.Decimal{}
	for _, it := range items {
		totals[it.Currency] = totals[it.Currency].Add(it.DebitedAmount.Decimal)
	}
	for _, t := range totals {
		if t.GreaterThan(settings.PayoutApprovalThreshold.Decimal) {
			return true
		}
	}
	return false
}
