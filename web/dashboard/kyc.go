package dashboard

import (
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"sort"
	"strconv"
	"strings"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
	"github.com/sikahq/sika/web/webapp"
)

// kycData is the KYC page: the merchant's standing, its dossiers newest first with their
// documents and review, the form of a new dossier and the upload form of the pending one.
type kycData struct {
	Dossiers []sika.KYCDossier
	// Pending is the dossier documents are added to (the newest, while it waits for review).
	Pending *sika.KYCDossier
	// CanSubmit: no dossier yet, or the newest was rejected.
	CanSubmit              bool
	DossierForm, DocForm   *formState
	Notice                 string
	DocumentTypes          []string
	KYCTypes               []string
	MaxFileSize            int64
	MaxFileSizeMB          int64
	AcceptTypes, AcceptExt string
}

// kycFields are the fields of a new dossier, those of POST /merchant-kyc/.
var kycFields = []string{"kyc_type", "first_name", "last_name", "date_of_birth", "id_document_type", "company_name",
	"rccm_number", "ifu_number"}

// kyc shows the merchant's KYC dossiers (GET /merchant-kyc/): the review status and the
// reviewer's note of each, its documents, and what the merchant can do next.
func (a *App) kyc(w http.ResponseWriter, r *http.Request, v *visit) error {
	return a.renderKYC(w, r, v, http.StatusOK, &kycData{Notice: notice(r)})
}

func (a *App) renderKYC(w http.ResponseWriter, r *http.Request, v *visit, status int, d *kycData) error {
	var err error
	if d.Dossiers, _, err = a.cfg.Store.ListKYCDossiers(r.Context(), v.merchant.ID, store.PageRequest{Page: 1, PageSize: managedListSize}); err != nil {
		return err
	}
	if len(d.Dossiers) > 0 && d.Dossiers[0].Status == sika.KYCDossierPending {
		d.Pending = &d.Dossiers[0]
	}
	d.CanSubmit = len(d.Dossiers) == 0 || d.Dossiers[0].Status == sika.KYCDossierRejected
	if d.DossierForm == nil {
		d.DossierForm = newForm(map[string]string{"kyc_type": string(sika.KYCIndividual)})
	}
	if d.DocForm == nil {
		d.DocForm = newForm(map[string]string{"document_type": string(sika.KYCDocumentIDCard), "label": "", "file": ""})
	}
	for _, t := range sika.KYCDocumentTypes {
		d.DocumentTypes = append(d.DocumentTypes, string(t))
	}
	d.KYCTypes = []string{string(sika.KYCIndividual), string(sika.KYCBusiness)}
	// The browser checks type and size before sending, from the API's own list and limit; the
	// API checks again on the bytes it reads.
	d.MaxFileSize, d.MaxFileSizeMB = sika.MaxKYCFileSize, sika.MaxKYCFileSize>>20
	var types, exts []string
	for ct, ext := range sika.KYCFileExtensions {
		types = append(types, ct)
		exts = append(exts, "."+ext)
		if ext == "jpg" {
			exts = append(exts, ".jpeg")
		}
	}
	sort.Strings(types)
	sort.Strings(exts)
	d.AcceptTypes, d.AcceptExt = strings.Join(types, ","), strings.Join(exts, ",")
	return a.render(w, r, status, "kyc", &view{visit: v, Title: "kyc_title", Nav: "kyc", Data: d})
}

// submitDossier records a new dossier by POST /merchant-kyc/ for the session's merchant.
func (a *App) submitDossier(w http.ResponseWriter, r *http.Request, v *visit) error {
	f := newForm(formValues(r, kycFields...))
	body := map[string]any{"merchant": v.merchant.ID.String()}
	for _, k := range kycFields {
		if k == "date_of_birth" && f.Val(k) == "" {
			continue // absent, not an empty date
		}
		body[k] = f.Val(k)
	}
	return a.submit(w, r, v, f, http.MethodPost, "/merchant-kyc/", body, Prefix+"kyc/", "done_dossier_submitted", func() error {
		return a.renderKYC(w, r, v, f.Status, &kycData{DossierForm: f})
	})
}

// uploadDocument adds a document to a pending dossier of the merchant: the file goes to POST
// /merchant-kyc/upload/ as the multipart body the API reads, streamed from the browser's body
// (the API decides the type on the bytes and the size on what it reads), then POST
// /merchant-kyc/{id}/documents/ attaches the URL it answered. The form sends document_type and
// label before the file (its field order), so they are known once the file is read.
func (a *App) uploadDocument(w http.ResponseWriter, r *http.Request, v *visit) error {
	id, err := webapp.PathID(r, "KYC dossier")
	if err != nil {
		return err
	}
	// Another merchant's dossier is not found before any of the file is read or stored.
	if err := a.call(r, v, http.MethodGet, "/merchant-kyc/"+id.String()+"/", nil, nil, "", nil); err != nil {
		return err
	}
	f := newForm(map[string]string{"document_type": "", "label": "", "file": ""})
	var upload kycUpload
	var forwardErr error
	bodyErr := readUpload(v.Parts, f, func(part *multipart.Part) bool {
		if part.FileName() == "" {
			return true // the file input left empty
		}
		upload, forwardErr = a.forwardKYCFile(r, v, part)
		return false // what follows the file is not read
	})
	if forwardErr != nil {
		return forwardErr
	}
	if bodyErr != nil {
		upload.err = bodyErr
	}
	if upload.err != nil {
		return f.again(v.Lang, upload.err, func() error { return a.renderKYC(w, r, v, f.Status, &kycData{DocForm: f}) })
	}
	body := map[string]any{"document_type": f.Val("document_type"), "label": f.Val("label"), "file_url": upload.URL}
	if upload.URL == "" {
		// No file: the API says what is missing, beside the file input.
		body["file_url"] = ""
	}
	if err := a.call(r, v, http.MethodPost, "/merchant-kyc/"+id.String()+"/documents/", nil, body, "", nil); err != nil {
		var e *sika.Error
		if errors.As(err, &e) && e.Code == sika.CodeValidation {
			if msgs, ok := e.Fields["file_url"]; ok {
				e.Fields["file"] = msgs // the form's file input is what file_url came from
				delete(e.Fields, "file_url")
			}
		}
		return f.again(v.Lang, err, func() error { return a.renderKYC(w, r, v, f.Status, &kycData{DocForm: f}) })
	}
	a.cfg.Logger.InfoContext(r.Context(), "kyc document added from the dashboard", "dossier", id, "member", v.Member.ID,
		"content_type", upload.ContentType, "size", upload.Size)
	backTo(w, r, Prefix+"kyc/", "done_document_added")
	return nil
}

// kycUpload is the API's answer to the upload (its url goes in the document's file_url), or
// its refusal.
type kycUpload struct {
	URL         string `json:"url"`
	ContentType string `json:"content_type"`
	Size        int64  `json:"size"`
	err         error
}

// forwardKYCFile streams the browser's file part to POST /merchant-kyc/upload/ in a multipart
// body of its own (the API's field "file"). A refusal of the API (too large, not an allowed
// type) comes back in the answer's err; any other failure is returned.
func (a *App) forwardKYCFile(r *http.Request, v *visit, file *multipart.Part) (kycUpload, error) {
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	copied := make(chan error, 1)
	go func() {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="file"; filename=%s`, strconv.Quote(cleanFileName(file.FileName()))))
		h.Set("Content-Type", "application/octet-stream") // the API reads the type from the bytes
		part, err := mw.CreatePart(h)
		if err == nil {
			_, err = io.Copy(part, file)
		}
		if err == nil {
			err = mw.Close()
		}
		pw.CloseWithError(err)
		copied <- err
	}()
	call := webapp.APICall{Method: http.MethodPost, Path: "/merchant-kyc/upload/", RawBody: pr, ContentType: mw.FormDataContentType()}
	var out kycUpload
	err := a.send(r, v, call, &out)
	// The API may answer before reading the whole file (a type refused on its first bytes):
	// closing the pipe ends the copy, which then stops reading the browser's body.
	pr.CloseWithError(errUploadAnswered)
	copyErr := <-copied
	var e *sika.Error
	if errors.As(err, &e) {
		out.err = err
		return out, nil
	}
	if err != nil {
		return out, err
	}
	if copyErr != nil && !errors.Is(copyErr, errUploadAnswered) {
		return out, uploadBodyError(copyErr)
	}
	return out, nil
}

// errUploadAnswered ends the copy of a file the API has answered about.
var errUploadAnswered = errors.New("the API answered the upload")

// maxUploadFieldBytes bounds a text field of an upload form.
const maxUploadFieldBytes = 1 << 10

// readUpload reads an upload form's parts in their order: a text field f has a value for into
// f.Values, and the part of the file input to file, which says whether to read on. A body that
// cannot be read is the refusal uploadBodyError says.
func readUpload(parts *multipart.Reader, f *formState, file func(*multipart.Part) bool) error {
	for {
		part, err := parts.NextPart()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return uploadBodyError(err)
		}
		name := part.FormName()
		if name == "file" {
			if !file(part) {
				return nil
			}
			continue
		}
		if _, ok := f.Values[name]; ok {
			raw, err := io.ReadAll(io.LimitReader(part, maxUploadFieldBytes))
			if err != nil {
				return uploadBodyError(err)
			}
			f.Values[name] = string(raw)
		}
	}
}

// uploadBodyError is what a failure to read the browser's upload means: over the upload
// bound, the API's file_too_large; a body that breaks off, a bad request.
func uploadBodyError(err error) error {
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return sika.Errorf(sika.CodeFileTooLarge, "The file is larger than 10 MB.")
	}
	return sika.FieldError("file", "The upload could not be read.")
}

// cleanFileName keeps a file name printable and short; the API ignores it (files are named
// by their content) but it travels in a header.
func cleanFileName(name string) string {
	name = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == '"' || r == '\\' {
			return -1
		}
		return r
	}, name)
	if name == "" {
		name = "document"
	}
	return webapp.Truncate(name, 120)
}

// kycTranslations are the strings of the KYC page.
var kycTranslations = webapp.Catalogue{
	"fr": {
		"kyc_title":                 "Vérification (KYC)",
		"kyc_merchant_status":       "Statut du marchand :",
		"kyc_status_PENDING":        "En attente de vérification",
		"kyc_status_VERIFIED":       "Vérifié",
		"kyc_status_REJECTED":       "Refusé",
		"kyc_live_open":             "Le mode LIVE est ouvert.",
		"kyc_live_closed":           "Le mode LIVE s'ouvrira après l'approbation d'un dossier.",
		"add_document":              "Ajouter une pièce justificative",
		"upload_help":               "Pièce d'identité, selfie, registre de commerce (RCCM), attestation fiscale (IFU)…",
		"document_type":             "Type de document",
		"document_label":            "Libellé (facultatif)",
		"document_file":             "Fichier",
		"document_file_help":        "JPEG, PNG, WebP ou PDF, au plus",
		"megabytes":                 "Mo",
		"kilobytes":                 "ko",
		"drop_here":                 "Ou déposez le fichier ici.",
		"file_chosen":               "Fichier choisi :",
		"file_type_refused":         "Ce fichier n'est ni une image JPEG, PNG ou WebP, ni un PDF.",
		"file_size_refused":         "Ce fichier dépasse 10 Mo.",
		"upload":                    "Envoyer le document",
		"new_dossier":               "Nouveau dossier",
		"new_dossier_help":          "Une personne (entrepreneur individuel) ou une société. Le support Sika l'examine sous 48 heures ouvrées.",
		"kyc_type":                  "Type de dossier",
		"kyc_type_INDIVIDUAL":       "Personne",
		"kyc_type_BUSINESS":         "Société",
		"kyc_first_name":            "Prénom",
		"kyc_last_name":             "Nom",
		"kyc_date_of_birth":         "Date de naissance",
		"kyc_id_document_type":      "Pièce d'identité (type)",
		"kyc_company_name":          "Raison sociale",
		"kyc_rccm_number":           "Numéro RCCM",
		"kyc_ifu_number":            "Numéro IFU",
		"submit_dossier":            "Envoyer le dossier",
		"dossiers":                  "Vos dossiers",
		"review_status":             "Examen :",
		"dossier_PENDING":           "En cours d'examen",
		"dossier_APPROVED":          "Approuvé",
		"dossier_REJECTED":          "Refusé",
		"review_note":               "Note du vérificateur",
		"no_dossier":                "Aucun dossier pour l'instant.",
		"doc_ID_CARD":               "Carte d'identité",
		"doc_PASSPORT":              "Passeport",
		"doc_SELFIE":                "Selfie",
		"doc_BUSINESS_REGISTRATION": "Registre de commerce",
		"doc_FISCAL":                "Attestation fiscale",
		"doc_OTHER":                 "Autre",
	},
	"en": {
		"kyc_title":                 "Verification (KYC)",
		"kyc_merchant_status":       "Merchant status:",
		"kyc_status_PENDING":        "Awaiting verification",
		"kyc_status_VERIFIED":       "Verified",
		"kyc_status_REJECTED":       "Rejected",
		"kyc_live_open":             "LIVE is open.",
		"kyc_live_closed":           "LIVE opens once a dossier is approved.",
		"add_document":              "Add a supporting document",
		"upload_help":               "Identity document, selfie, trade register (RCCM), tax certificate (IFU)…",
		"document_type":             "Document type",
		"document_label":            "Label (optional)",
		"document_file":             "File",
		"document_file_help":        "JPEG, PNG, WebP or PDF, at most",
		"megabytes":                 "MB",
		"kilobytes":                 "kB",
		"drop_here":                 "Or drop the file here.",
		"file_chosen":               "File chosen:",
		"file_type_refused":         "This file is not a JPEG, PNG or WebP image, nor a PDF.",
		"file_size_refused":         "This file is larger than 10 MB.",
		"upload":                    "Send the document",
		"new_dossier":               "New dossier",
		"new_dossier_help":          "A person (sole trader) or a company. Sika support reviews it within 48 working hours.",
		"kyc_type":                  "Dossier type",
		"kyc_type_INDIVIDUAL":       "Person",
		"kyc_type_BUSINESS":         "Company",
		"kyc_first_name":            "First name",
		"kyc_last_name":             "Last name",
		"kyc_date_of_birth":         "Date of birth",
		"kyc_id_document_type":      "Identity document (type)",
		"kyc_company_name":          "Company name",
		"kyc_rccm_number":           "RCCM number",
		"kyc_ifu_number":            "IFU number",
		"submit_dossier":            "Send the dossier",
		"dossiers":                  "Your dossiers",
		"review_status":             "Review:",
		"dossier_PENDING":           "Under review",
		"dossier_APPROVED":          "Approved",
		"dossier_REJECTED":          "Rejected",
		"review_note":               "Reviewer's note",
		"no_dossier":                "No dossier yet.",
		"doc_ID_CARD":               "Identity card",
		"doc_PASSPORT":              "Passport",
		"doc_SELFIE":                "Selfie",
		"doc_BUSINESS_REGISTRATION": "Trade register",
		"doc_FISCAL":                "Tax certificate",
		"doc_OTHER":                 "Other",
	},
}
