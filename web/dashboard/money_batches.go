package dashboard

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/gorilla/mux"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/web/webapp"
)

// batchColumns are the columns of a payout batch's CSV file, as POST /payout-batches/ names an
// item's fields; the header row names them, in any order (description may be left out).
var batchColumns = []string{"amount", "currency", "country", "phone", "network", "reference", "description"}

// maxBatchFileBytes bounds the CSV read: 1,000 rows of a few hundred bytes.
const maxBatchFileBytes = 1 << 20

// batchesData is the payout batches page: the upload form, what the API refused of the last
// upload (by CSV line), and the latest batches.
type batchesData struct {
	Form    *formState
	Lines   []batchLineError
	Batches []sika.PayoutBatch
}

// batchLineError is what was wrong with one line of an uploaded file (0: the file itself).
type batchLineError struct {
	Line     int
	Messages []string
}

// batchData is one batch's page: its status, progress and items, and what the member may do.
type batchData struct {
	Batch sika.PayoutBatch
	Items []sika.PayoutBatchItem
	More  bool
	Form  *formState
}

func (a *App) batchRoutes(r *mux.Router) {
	get, post := http.MethodGet, http.MethodPost
	r.Handle(Prefix+"payout-batches/", a.forMerchant(a.payoutBatches)).Methods(get)
	r.Handle(Prefix+"payout-batches/", a.forUpload(a.uploadPayoutBatch)).Methods(post)
	r.Handle(Prefix+"payout-batches/{id}/", a.forMerchant(a.payoutBatch)).Methods(get)
	r.Handle(Prefix+"payout-batches/{id}/results/", a.forMerchant(a.payoutBatchResults)).Methods(get)
	for _, action := range []string{"approve", "reject", "cancel"} {
		r.Handle(Prefix+"payout-batches/{id}/"+action+"/", a.forMerchant(a.decidePayoutBatch(action))).Methods(post)
	}
}

func (a *App) payoutBatches(w http.ResponseWriter, r *http.Request, v *visit) error {
	f := newForm(map[string]string{"description": ""})
	f.IdempotencyKey = newIdempotencyKey()
	return a.batchesPage(w, r, v, &batchesData{Form: f})
}

func (a *App) batchesPage(w http.ResponseWriter, r *http.Request, v *visit, d *batchesData) error {
	var page struct {
		Results []sika.PayoutBatch `json:"results"`
	}
	if err := a.call(r, v, http.MethodGet, "/payout-batches/", url.Values{"page_size": {"20"}}, nil, "", &page); err != nil {
		return err
	}
	d.Batches = page.Results
	status := d.Form.Status
	if status == 0 {
		status = http.StatusOK
	}
	return a.render(w, r, status, "payout_batches", &view{visit: v, Title: "batches_title", Nav: "payouts", Data: d})
}

// uploadPayoutBatch reads the uploaded CSV file and sends its rows as one batch
// (POST /payout-batches/, with the form's Idempotency-Key): the API validates every row before
// anything moves; what it refuses is shown by line of the file.
func (a *App) uploadPayoutBatch(w http.ResponseWriter, r *http.Request, v *visit) error {
	f := newForm(map[string]string{"description": "", "idempotency_key": ""})
	var items []map[string]string
	var csvErr error
	fileErr := readUpload(v.Parts, f, func(part *multipart.Part) bool {
		items, csvErr = readBatchCSV(io.LimitReader(part, maxBatchFileBytes))
		return true
	})
	if fileErr == nil {
		fileErr = csvErr
	}
	d := &batchesData{Form: f}
	f.IdempotencyKey = f.Val("idempotency_key")
	if f.IdempotencyKey == "" {
		f.IdempotencyKey = newIdempotencyKey()
	}
	if fileErr == nil && items == nil {
		fileErr = errors.New(translate(v.Lang, "batch_file_missing"))
	}
	if fileErr != nil {
		f.Status = http.StatusBadRequest
		d.Lines = []batchLineError{{Line: 0, Messages: []string{fileErr.Error()}}}
		return a.batchesPage(w, r, v, d)
	}
	var b sika.PayoutBatch
	err := a.callMoving(r, v, http.MethodPost, "/payout-batches/", map[string]any{"description": f.Val("description"), "items": items},
		f.IdempotencyKey, &b)
	if err != nil {
		f.IdempotencyKey = newIdempotencyKey() // a corrected file is a new batch
		var e *sika.Error
		if errors.As(err, &e) && e.Code == sika.CodeValidation {
			f.Status = http.StatusBadRequest
			d.Lines = batchLineErrors(e.Fields)
			return a.batchesPage(w, r, v, d)
		}
		return f.again(v.Lang, err, func() error { return a.batchesPage(w, r, v, d) })
	}
	webapp.Redirect(w, r, Prefix+"payout-batches/"+b.ID.String()+"/")
	return nil
}

// readBatchCSV reads a batch file: a header row naming the columns, then one payout per row.
func readBatchCSV(r io.Reader) ([]map[string]string, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	header, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("the file is not a CSV file with a header row (%v)", err)
	}
	index := map[string]int{}
	for i, h := range header {
		index[strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")))] = i
	}
	var missing []string
	for _, c := range batchColumns {
		if _, ok := index[c]; !ok && c != "description" {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("the header row lacks the columns %s (expected: %s)", strings.Join(missing, ", "), strings.Join(batchColumns, ","))
	}
	items := []map[string]string{}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", len(items)+2, err)
		}
		item := map[string]string{}
		for _, c := range batchColumns {
			if i, ok := index[c]; ok && i < len(rec) {
				item[c] = strings.TrimSpace(rec[i])
			}
		}
		items = append(items, item)
	}
	if len(items) == 0 {
		return nil, errors.New("the file has no payout row")
	}
	return items, nil
}

// itemField reads the API's item error names: items[3].amount, items[3].
var itemField = regexp.MustCompile(`^items\[(\d+)\](?:\.(.+))?$`)

// batchLineErrors turns the API's errors by item index into errors by line of the file (the
// header is line 1, item 0 line 2); other fields (the description) are line 0.
func batchLineErrors(fields map[string][]string) []batchLineError {
	byLine := map[int][]string{}
	for field, msgs := range fields {
		m := itemField.FindStringSubmatch(field)
		if m == nil {
			byLine[0] = append(byLine[0], field+": "+strings.Join(msgs, " "))
			continue
		}
		n, _ := strconv.Atoi(m[1])
		prefix := ""
		if m[2] != "" {
			prefix = m[2] + ": "
		}
		byLine[n+2] = append(byLine[n+2], prefix+strings.Join(msgs, " "))
	}
	out := make([]batchLineError, 0, len(byLine))
	for line, msgs := range byLine {
		sort.Strings(msgs)
		out = append(out, batchLineError{Line: line, Messages: msgs})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Line < out[j].Line })
	return out
}

func (a *App) payoutBatch(w http.ResponseWriter, r *http.Request, v *visit) error {
	return a.batchPage(w, r, v, newForm(nil))
}

func (a *App) batchPage(w http.ResponseWriter, r *http.Request, v *visit, f *formState) error {
	id, err := webapp.PathID(r, "Payout batch")
	if err != nil {
		return err
	}
	d := batchData{Form: f}
	if err := a.call(r, v, http.MethodGet, "/payout-batches/"+id.String()+"/", nil, nil, "", &d.Batch); err != nil {
		return err
	}
	var page struct {
		Next    *string                `json:"next"`
		Results []sika.PayoutBatchItem `json:"results"`
	}
	if err := a.call(r, v, http.MethodGet, "/payout-batches/"+id.String()+"/items/", url.Values{"page_size": {"100"}}, nil, "", &page); err != nil {
		return err
	}
	d.Items, d.More = page.Results, page.Next != nil
	status := f.Status
	if status == 0 {
		status = http.StatusOK
	}
	return a.render(w, r, status, "payout_batch", &view{visit: v, Title: "batch_title", Nav: "payouts", Data: d})
}

// payoutBatchResults hands over a batch's results file, one row per item with its status
// (GET /payout-batches/{id}/results/); another merchant's batch is not found.
func (a *App) payoutBatchResults(w http.ResponseWriter, r *http.Request, v *visit) error {
	id, err := webapp.PathID(r, "Payout batch")
	if err != nil {
		return err
	}
	return a.download(w, r, v, "/payout-batches/"+id.String()+"/results/", nil)
}

// decidePayoutBatch approves, rejects or cancels a batch through the API; a refusal (the
// creator approving, a role that may not) is shown on the batch's page.
func (a *App) decidePayoutBatch(action string) handler {
	return func(w http.ResponseWriter, r *http.Request, v *visit) error {
		id, err := webapp.PathID(r, "Payout batch")
		if err != nil {
			return err
		}
		var body any
		if action != "cancel" {
			body = map[string]string{"note": strings.TrimSpace(r.PostFormValue("note"))}
		}
		if err := a.call(r, v, http.MethodPost, "/payout-batches/"+id.String()+"/"+action+"/", nil, body, "", nil); err != nil {
			f := newForm(nil)
			return f.again(v.Lang, err, func() error { return a.batchPage(w, r, v, f) })
		}
		webapp.Redirect(w, r, Prefix+"payout-batches/"+id.String()+"/")
		return nil
	}
}
