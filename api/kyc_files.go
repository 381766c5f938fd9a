package api

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/filestore"
)

// FileStore keeps uploaded files under content-addressed names; filestore.Dir is the local
// one, and an S3-compatible bucket can stand behind the same two methods.
type FileStore interface {
	// Put stores what content yields as "<sha256>.<ext>"; an error from content is returned
	// wrapped, and then nothing is stored.
	Put(ctx context.Context, content io.Reader, ext string) (filestore.Object, error)
	// Open reads a stored file; filestore.ErrNotFound when it is not stored.
	Open(ctx context.Context, name string) (io.ReadCloser, error)
}

const (
	// kycFilesPath is where stored KYC files are served, under basePath.
	kycFilesPath = "/merchant-kyc/files/"
	// maxKYCUploadBody is the largest upload body read: the file and the multipart framing
	// around it. Beyond it the body is not read further (413 file_too_large).
	maxKYCUploadBody = sika.MaxKYCFileSize + 64<<10
	// sniffLen is how much of a file decides its type (as much as http.DetectContentType reads).
	sniffLen = 512
)

var (
	errKYCFileTooLarge = sika.Errorf(sika.CodeFileTooLarge, "The file is larger than 10 MB (%d bytes).", sika.MaxKYCFileSize)
	errKYCFileType     = sika.Errorf(sika.CodeUnsupportedMediaType, "The file is not a JPEG, PNG, WebP or PDF file (its type is read from its content).")
	errKYCUnreadable   = sika.FieldError("file", `Send the file as multipart/form-data, in the field "file".`)
	sha256Pattern      = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// kycFileUpload is the answer to an upload: url is what a document's file_url takes.
type kycFileUpload struct {
	URL         string `json:"url"`
	ContentType string `json:"content_type"`
	Size        int64  `json:"size"`
}

// kycFilesURL is the absolute URL stored KYC files are served under.
func (s *Server) kycFilesURL() string { return s.cfg.PublicURL + basePath + kycFilesPath }

// uploadKYCFile stores the multipart field `file` of a JPEG, PNG, WebP or PDF file of at most
// 10 MB. The type is read from the bytes; the body is streamed to the file store while it is
// hashed, never held in memory, and never read past the limit.
func (s *Server) uploadKYCFile(w http.ResponseWriter, r *http.Request) error {
	if s.cfg.Files == nil {
		return errors.New("upload: no file store configured")
	}
	if r.ContentLength > maxKYCUploadBody {
		return errKYCFileTooLarge // refused on its declared length, before reading any of it
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxKYCUploadBody)
	parts, err := r.MultipartReader()
	if err != nil {
		return errKYCUnreadable
	}
	for {
		part, err := parts.NextPart()
		if err == io.EOF {
			return sika.FieldError("file", sika.MsgRequired)
		}
		if err != nil {
			return uploadReadError(err)
		}
		if part.FormName() == "file" {
			return s.storeKYCFile(w, r, part)
		}
		// NextPart skips what is left of a part that is not the file.
	}
}

// storeKYCFile decides the type from the first bytes, then streams the whole part to the file
// store and records that the merchant owns the file.
func (s *Server) storeKYCFile(w http.ResponseWriter, r *http.Request, part io.Reader) error {
	head := make([]byte, sniffLen)
	n, err := io.ReadFull(part, head)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return uploadReadError(err)
	}
	head = head[:n]
	if n == 0 {
		return sika.FieldError("file", "The submitted file is empty.")
	}
	contentType := sniffKYCFileType(head)
	if contentType == "" {
		return errKYCFileType
	}
	ctx := r.Context()
	content := &cappedReader{r: io.MultiReader(bytes.NewReader(head), part), left: sika.MaxKYCFileSize}
	obj, err := s.cfg.Files.Put(ctx, content, sika.KYCFileExtensions[contentType])
	if err != nil {
		return err // a *sika.Error from content (too large, unreadable) is rendered as it is
	}
	p := principalFrom(ctx)
	file := sika.KYCFile{Merchant: p.Merchant.ID, SHA256: obj.SHA256, ContentType: contentType, Size: obj.Size}
	if err := s.store.RecordKYCFile(ctx, file, &p.Member.ID); err != nil {
		return err
	}
	writeData(w, http.StatusCreated, kycFileUpload{URL: s.kycFilesURL() + file.Name(), ContentType: contentType, Size: obj.Size})
	return nil
}

// sniffKYCFileType returns the content type of an allowed file from its first bytes, or "".
func sniffKYCFileType(head []byte) string {
	// RIFF, the chunk size, WEBP, then a VP8 (lossy), VP8L (lossless) or VP8X (extended) chunk.
	if len(head) >= 15 && string(head[:4]) == "RIFF" && string(head[8:15]) == "WEBPVP8" {
		return "image/webp"
	}
	switch ct := http.DetectContentType(head); ct {
	case "image/jpeg", "image/png", "application/pdf":
		return ct
	}
	return ""
}

// cappedReader reads at most left bytes of a file and turns every failure into the error the
// client should see: 413 past the limit (ours or the body's), 400 for a body that breaks off.
type cappedReader struct {
	r    io.Reader
	left int64
}

func (c *cappedReader) Read(p []byte) (int, error) {
	if int64(len(p)) > c.left+1 {
		p = p[:c.left+1] // one byte past the limit is enough to know
	}
	n, err := c.r.Read(p)
	if c.left -= int64(n); c.left < 0 {
		return n, errKYCFileTooLarge
	}
	if err != nil && err != io.EOF {
		err = uploadReadError(err)
	}
	return n, err
}

// uploadReadError is what a failure to read the upload body means for the client.
func uploadReadError(err error) error {
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return errKYCFileTooLarge
	}
	return errKYCUnreadable
}

// serveKYCFile serves a stored KYC file to the merchants that uploaded it (API key or
// dashboard session acting for that merchant) and to staff; to anyone else it does not exist.
func (s *Server) serveKYCFile(w http.ResponseWriter, r *http.Request) {
	routeName(r)
	o := routeOpts{access: accessMerchant}
	if _, cred, _ := strings.Cut(r.Header.Get("Authorization"), " "); cred != "" && !strings.HasPrefix(strings.TrimSpace(cred), "sk_") {
		o.access = accessMember // a session: a staff member needs no merchant
	}
	if err := s.guard(w, r, s.writeKYCFile, o); err != nil {
		writeError(w, r, err)
	}
}

func (s *Server) writeKYCFile(w http.ResponseWriter, r *http.Request) error {
	var owner *uuid.UUID // nil: staff, any owner
	if p := principalFrom(r.Context()); p.Merchant != nil {
		owner = &p.Merchant.ID
	} else if !p.Member.IsStaff {
		acting, err := s.authenticate(r, accessMerchant) // the merchant the member acts for
		if err != nil {
			return err
		}
		owner = &acting.Merchant.ID
	}
	vars := mux.Vars(r)
	return s.writeStoredKYCFile(w, r, owner, vars["sha256"], vars["ext"], false)
}

// writeStoredKYCFile writes the stored file named sha256.ext when owner uploaded it (any
// merchant's when owner is nil: staff), or answers not_found: as a download, or inline (the
// console shows a dossier's documents in the page; a PDF then opens in the browser's viewer,
// sandboxed).
func (s *Server) writeStoredKYCFile(w http.ResponseWriter, r *http.Request, owner *uuid.UUID, sha256, ext string, inline bool) error {
	file, err := s.ownedKYCFile(r.Context(), owner, sha256, ext)
	if err != nil {
		return err
	}
	if s.cfg.Files == nil {
		return errors.New("download: no file store configured")
	}
	content, err := s.cfg.Files.Open(r.Context(), file.Name())
	if errors.Is(err, filestore.ErrNotFound) {
		return sika.NotFound("File")
	}
	if err != nil {
		return err
	}
	defer content.Close()
	disposition := "attachment"
	h := w.Header()
	if inline {
		disposition = "inline"
		if file.ContentType == "application/pdf" {
			// The browser's PDF viewer runs in its own sandboxed origin; nothing else is allowed.
			h.Set("Content-Security-Policy", "default-src 'none'; sandbox")
		}
	}
	h.Set("Content-Type", file.ContentType)
	h.Set("Content-Length", strconv.FormatInt(file.Size, 10))
	h.Set("Content-Disposition", disposition+`; filename="`+file.Name()+`"`)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "private, no-store")
	w.WriteHeader(http.StatusOK)
	if _, err := io.Copy(w, content); err != nil {
		logFrom(r.Context()).Warn("kyc file cut short", "file", file.Name(), "err", err)
	}
	return nil
}

// ownedKYCFile returns the file named sha256.ext when owner uploaded it (any merchant when
// owner is nil), or not_found.
func (s *Server) ownedKYCFile(ctx context.Context, owner *uuid.UUID, sha256, ext string) (sika.KYCFile, error) {
	if !sha256Pattern.MatchString(sha256) {
		return sika.KYCFile{}, sika.NotFound("File")
	}
	file, err := s.store.KYCFile(ctx, owner, sha256)
	if err != nil {
		return file, err
	}
	if sika.KYCFileExtensions[file.ContentType] != ext {
		return file, sika.NotFound("File")
	}
	return file, nil
}
