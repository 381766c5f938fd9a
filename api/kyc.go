package api

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
)

// kycRoutes mounts KYC: dossiers, file upload and download, documents, and the staff
// operations that review dossiers and suspend merchants. Writes need a dashboard session (an
// API key gets 403 dashboard_only); reads accept an API key. A dossier is the merchant's, not
// an environment's: TEST and LIVE see the same ones.
func (s *Server) kycRoutes(root *mux.Router) {
	merchant := routeOpts{access: accessMerchant}
	dashboard := routeOpts{access: accessDashboard}
	staff := routeOpts{access: accessStaff}

	s.handle(root, http.MethodPost, "/merchant-kyc/", withBody(s.submitKYCDossier), dashboard)
	s.handle(root, http.MethodGet, "/merchant-kyc/", s.listKYCDossiers, merchant)
	s.handle(root, http.MethodPost, "/merchant-kyc/upload/", s.uploadKYCFile, dashboard)
	// The file's name ends in its extension, so the path has no trailing slash (ServeHTTP
	// leaves such paths alone); its access depends on the caller (serveKYCFile).
	root.HandleFunc(basePath+kycFilesPath+"{sha256}.{ext}", s.serveKYCFile).Methods(http.MethodGet)
	s.handle(root, http.MethodGet, "/merchant-kyc/{id}/", s.getKYCDossier, merchant)
	s.handle(root, http.MethodPost, "/merchant-kyc/{id}/documents/", s.attachKYCDocument, dashboard)
	s.handle(root, http.MethodGet, "/merchant-kyc/{id}/documents/", s.listKYCDocuments, merchant)

	// Each staff write needs the role that allows it (sika.StaffRole.Can), role_forbidden otherwise.
	s.handle(root, http.MethodPost, "/admin/merchant-kyc/{id}/approve/", requireStaff(sika.PermReviewKYC, s.approveKYCDossier), staff)
	s.handle(root, http.MethodPost, "/admin/merchant-kyc/{id}/reject/", requireStaff(sika.PermReviewKYC, s.rejectKYCDossier), staff)
	s.handle(root, http.MethodPost, "/admin/merchants/{id}/suspend/", requireStaff(sika.PermSuspendMerchant, s.suspendMerchant), staff)
	s.handle(root, http.MethodPost, "/admin/merchants/{id}/unsuspend/", requireStaff(sika.PermReinstateMerchant, s.unsuspendMerchant), staff)
}

// kycTextMax bounds every free-text field of a dossier.
const kycTextMax = 200

type kycDossierRequest struct {
	Merchant       *string `json:"merchant"`
	KYCType        string  `json:"kyc_type"`
	FirstName      string  `json:"first_name"`
	LastName       string  `json:"last_name"`
	DateOfBirth    *string `json:"date_of_birth"`
	IDDocumentType string  `json:"id_document_type"`
	CompanyName    string  `json:"company_name"`
	RCCMNumber     string  `json:"rccm_number"`
	IFUNumber      string  `json:"ifu_number"`
}

// submitKYCDossier records a new dossier for the caller's merchant (whatever `merchant` says)
// and puts the merchant's kyc_status back to PENDING; is_active is left as it is.
func (s *Server) submitKYCDossier(w http.ResponseWriter, r *http.Request, req kycDossierRequest) error {
	var v sika.Validation
	// The spec requires `merchant`, then replaces it with the caller's own merchant.
	if req.Merchant == nil || *req.Merchant == "" {
		v.Add("merchant", sika.MsgRequired)
	} else if _, err := uuid.Parse(*req.Merchant); err != nil {
		v.Add("merchant", sika.MsgInvalidUUID)
	}
	p := principalFrom(r.Context())
	d := sika.KYCDossier{Merchant: p.Merchant.ID, KYCType: sika.KYCType(strings.ToUpper(strings.TrimSpace(req.KYCType)))}
	switch {
	case d.KYCType == "":
		v.Add("kyc_type", sika.MsgRequired)
	case !d.KYCType.Valid():
		v.Add("kyc_type", `Must be "INDIVIDUAL" or "BUSINESS".`)
	}
	for _, f := range []struct {
		name string
		dst  *string
		in   string
	}{{"first_name", &d.FirstName, req.FirstName}, {"last_name", &d.LastName, req.LastName},
		{"id_document_type", &d.IDDocumentType, req.IDDocumentType}, {"company_name", &d.CompanyName, req.CompanyName},
		{"rccm_number", &d.RCCMNumber, req.RCCMNumber}, {"ifu_number", &d.IFUNumber, req.IFUNumber}} {
		*f.dst = strings.TrimSpace(f.in)
		maxLength(&v, f.name, *f.dst, kycTextMax)
	}
	if req.DateOfBirth != nil && strings.TrimSpace(*req.DateOfBirth) != "" {
		dob := strings.TrimSpace(*req.DateOfBirth)
		if born, err := time.Parse(time.DateOnly, dob); err != nil {
			v.Add("date_of_birth", "Date has wrong format. Use YYYY-MM-DD.")
		} else if born.After(s.cfg.Now()) {
			v.Add("date_of_birth", "Must not be in the future.")
		}
		d.DateOfBirth = &dob
	}
	if err := v.Err(); err != nil {
		return err
	}
	created, err := s.store.SubmitKYCDossier(r.Context(), d, p.Member.ID)
	return reply(w, http.StatusCreated, created, err)
}

// listKYCDossiers lists the merchant's dossiers, newest first, each with its documents.
func (s *Server) listKYCDossiers(w http.ResponseWriter, r *http.Request) error {
	return tenantList(s, w, r, func(ctx context.Context, merchant uuid.UUID, _ sika.Environment, p store.PageRequest) ([]sika.KYCDossier, int, error) {
		return s.store.ListKYCDossiers(ctx, merchant, p)
	})
}

// kycDossierOf reads a dossier of the merchant in either environment: a dossier is the
// merchant's, not an environment's.
func (s *Server) kycDossierOf(ctx context.Context, merchant uuid.UUID, _ sika.Environment, id uuid.UUID) (sika.KYCDossier, error) {
	return s.store.KYCDossierByID(ctx, merchant, id)
}

func (s *Server) getKYCDossier(w http.ResponseWriter, r *http.Request) error {
	return writeTenantObject(w, r, "KYC dossier", s.kycDossierOf)
}

type kycDocumentRequest struct {
	DocumentType sika.KYCDocumentType `json:"document_type"`
	Label        string               `json:"label"`
	FileURL      string               `json:"file_url"`
}

// attachKYCDocument attaches an uploaded file to a PENDING dossier of the merchant: 404 for a
// dossier of another merchant (spec); the file must be one this merchant uploaded.
func (s *Server) attachKYCDocument(w http.ResponseWriter, r *http.Request) error {
	dossier, err := tenantObject(r, "KYC dossier", s.kycDossierOf)
	if err != nil {
		return err // another merchant's dossier is not found, whatever the body says
	}
	id, ctx := dossier.ID, r.Context()
	merchant, _ := tenant(ctx)
	var req kycDocumentRequest
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	doc := sika.KYCDocument{Dossier: id, DocumentType: sika.KYCDocumentType(strings.ToUpper(strings.TrimSpace(string(req.DocumentType)))),
		Label: strings.TrimSpace(req.Label)}
	var v sika.Validation
	switch {
	case doc.DocumentType == "":
		v.Add("document_type", sika.MsgRequired)
	case !doc.DocumentType.Valid():
		v.Add("document_type", `Must be one of "ID_CARD", "PASSPORT", "SELFIE", "BUSINESS_REGISTRATION", "FISCAL", "OTHER".`)
	}
	maxLength(&v, "label", doc.Label, kycTextMax)
	var file sika.KYCFile
	if req.FileURL = strings.TrimSpace(req.FileURL); req.FileURL == "" {
		v.Add("file_url", sika.MsgRequired)
	} else {
		sha, ext, _ := strings.Cut(strings.TrimPrefix(req.FileURL, s.kycFilesURL()), ".")
		file, err = s.ownedKYCFile(ctx, &merchant, sha, ext)
		switch {
		case !strings.HasPrefix(req.FileURL, s.kycFilesURL()) || sika.ErrorCode(err) == sika.CodeNotFound:
			v.Add("file_url", sika.MsgKYCFileURL)
		case err != nil:
			return err
		}
	}
	if err := v.Err(); err != nil {
		return err
	}
	doc.FileURL = s.kycFilesURL() + file.Name()
	created, err := s.store.AttachKYCDocument(ctx, merchant, doc, file.SHA256)
	return reply(w, http.StatusCreated, created, err)
}

// listKYCDocuments lists a dossier's documents; for a dossier of another merchant the list is
// empty (spec: 200, not 404).
func (s *Server) listKYCDocuments(w http.ResponseWriter, r *http.Request) error {
	return writeTenantObject(w, r, "KYC dossier", func(ctx context.Context, merchant uuid.UUID, _ sika.Environment, id uuid.UUID) ([]sika.KYCDocument, error) {
		return s.store.KYCDocuments(ctx, merchant, id)
	})
}
