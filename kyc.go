package sika

import (
	"slices"
	"time"

	"github.com/google/uuid"
)

// KYCType says whether a dossier verifies a person or a company. No field depends on it: a
// BUSINESS dossier without company fields is accepted (spec).
type KYCType string

// KYC dossier types.
const (
	KYCIndividual KYCType = "INDIVIDUAL"
	KYCBusiness   KYCType = "BUSINESS"
)

// Valid reports whether t is a known dossier type.
func (t KYCType) Valid() bool { return t == KYCIndividual || t == KYCBusiness }

// KYCDossierStatus is where a dossier stands in review. Only an admin moves it out of PENDING.
type KYCDossierStatus string

// KYC dossier statuses.
const (
	KYCDossierPending  KYCDossierStatus = "PENDING"
	KYCDossierApproved KYCDossierStatus = "APPROVED"
	KYCDossierRejected KYCDossierStatus = "REJECTED"
)

// KYCDocumentType is what a document attached to a dossier shows.
type KYCDocumentType string

// KYC document types.
const (
	KYCDocumentIDCard               KYCDocumentType = "ID_CARD"
	KYCDocumentPassport             KYCDocumentType = "PASSPORT"
	KYCDocumentSelfie               KYCDocumentType = "SELFIE"
	KYCDocumentBusinessRegistration KYCDocumentType = "BUSINESS_REGISTRATION"
	KYCDocumentFiscal               KYCDocumentType = "FISCAL"
	KYCDocumentOther                KYCDocumentType = "OTHER"
)

// KYCDocumentTypes lists the document types in the order the API documents them.
var KYCDocumentTypes = []KYCDocumentType{KYCDocumentIDCard, KYCDocumentPassport, KYCDocumentSelfie,
	KYCDocumentBusinessRegistration, KYCDocumentFiscal, KYCDocumentOther}

// Valid reports whether t is a known document type.
func (t KYCDocumentType) Valid() bool { return slices.Contains(KYCDocumentTypes, t) }

// KYCDossier is the identity a merchant submits for verification. A dossier belongs to one
// merchant and is not per environment; it is never edited or deleted, only reviewed.
type KYCDossier struct {
	ID       uuid.UUID `json:"id"`
	Merchant uuid.UUID `json:"merchant"`
	KYCType  KYCType   `json:"kyc_type"`
	// Text fields are empty strings when absent.
	FirstName      string  `json:"first_name"`
	LastName       string  `json:"last_name"`
	DateOfBirth    *string `json:"date_of_birth"` // YYYY-MM-DD
	IDDocumentType string  `json:"id_document_type"`
	CompanyName    string  `json:"company_name"`
	RCCMNumber     string  `json:"rccm_number"`
	IFUNumber      string  `json:"ifu_number"`

	Status          KYCDossierStatus `json:"status"`
	ReviewedByAdmin *uuid.UUID       `json:"reviewed_by_admin"`
	ReviewNote      string           `json:"review_note"`
	ReviewedAt      *time.Time       `json:"reviewed_at"`
	Documents       []KYCDocument    `json:"documents"`
	CreatedAt       time.Time        `json:"created_at"`
	UpdatedAt       time.Time        `json:"updated_at"`
}

// KYCDocument is a file attached to a dossier: FileURL is the URL the upload answered.
type KYCDocument struct {
	ID           uuid.UUID       `json:"id"`
	Dossier      uuid.UUID       `json:"kyc"`
	DocumentType KYCDocumentType `json:"document_type"`
	Label        string          `json:"label"`
	FileURL      string          `json:"file_url"`
	CreatedAt    time.Time       `json:"created_at"`
}

// MsgKYCFileURL is the validation message of a document's file_url that is not a URL the
// upload answered to the same merchant.
const MsgKYCFileURL = "Must be a URL answered by POST /merchant-kyc/upload/ for this merchant."

// MaxKYCFileSize is the largest KYC upload accepted: 10 MiB.
const MaxKYCFileSize = 10 << 20

// KYCFileExtensions maps each content type a KYC upload may have to the extension of its
// stored name. The type is read from the file's bytes, never from what the client says.
var KYCFileExtensions = map[string]string{
	"image/jpeg":      "jpg",
	"image/png":       "png",
	"image/webp":      "webp",
	"application/pdf": "pdf",
}

// KYCFile is an uploaded file as its merchant owns it. The bytes are stored once under their
// content-addressed name, SHA256 + "." + extension; each merchant that uploaded them owns
// them.
type KYCFile struct {
	Merchant    uuid.UUID
	SHA256      string
	ContentType string
	Size        int64
	CreatedAt   time.Time
}

// Name is the file's stored name.
func (f KYCFile) Name() string { return f.SHA256 + "." + KYCFileExtensions[f.ContentType] }
