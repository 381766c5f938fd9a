package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sikahq/sika"
)

// RecordKYCFile records that a merchant uploaded a stored file; uploading the same bytes again
// changes nothing.
func (s *Store) RecordKYCFile(ctx context.Context, f sika.KYCFile, member *uuid.UUID) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO kyc_files (merchant_id, sha256, content_type, size_bytes, uploaded_by_member)
		VALUES ($1, $2, $3, $4, $5) ON CONFLICT (merchant_id, sha256) DO NOTHING`, f.Merchant, f.SHA256, f.ContentType, f.Size, member)
	if err != nil {
		return fmt.Errorf("insert kyc file: %w", err)
	}
	return nil
}

// KYCFile returns the merchant's record of an uploaded file, or not_found. With merchant nil
// (staff) the record of any merchant that uploaded those bytes is returned.
func (s *Store) KYCFile(ctx context.Context, merchant *uuid.UUID, sha256 string) (sika.KYCFile, error) {
	var f sika.KYCFile
	err := s.pool.QueryRow(ctx, `SELECT merchant_id, sha256, content_type, size_bytes, created_at FROM kyc_files
		WHERE sha256 = $1 AND ($2::uuid IS NULL OR merchant_id = $2) ORDER BY created_at LIMIT 1`, sha256, merchant).
		Scan(&f.Merchant, &f.SHA256, &f.ContentType, &f.Size, &f.CreatedAt)
	return f, rowErr(err, "File", "select kyc file")
}

const kycDossierColumns = `d.id, d.merchant_id, d.kyc_type, d.first_name, d.last_name,
	to_char(d.date_of_birth, 'YYYY-MM-DD'), d.id_document_type, d.company_name, d.rccm_number, d.ifu_number,
	d.status, d.reviewed_by_admin, d.review_note, d.reviewed_at, d.created_at, d.updated_at`

func scanKYCDossier(row pgx.Row) (sika.KYCDossier, error) {
	d := sika.KYCDossier{Documents: []sika.KYCDocument{}}
	err := row.Scan(&d.ID, &d.Merchant, &d.KYCType, &d.FirstName, &d.LastName, &d.DateOfBirth, &d.IDDocumentType,
		&d.CompanyName, &d.RCCMNumber, &d.IFUNumber, &d.Status, &d.ReviewedByAdmin, &d.ReviewNote, &d.ReviewedAt,
		&d.CreatedAt, &d.UpdatedAt)
	return d, err
}

const kycDocumentColumns = `id, dossier_id, document_type, label, file_url, created_at`

func scanKYCDocument(row pgx.Row) (sika.KYCDocument, error) {
	var doc sika.KYCDocument
	err := row.Scan(&doc.ID, &doc.Dossier, &doc.DocumentType, &doc.Label, &doc.FileURL, &doc.CreatedAt)
	return doc, err
}

// SubmitKYCDossier records a new PENDING dossier of d.Merchant and puts the merchant's
// kyc_status back to PENDING, leaving is_active as it is (spec: API access stays open during a
// re-review).
func (s *Store) SubmitKYCDossier(ctx context.Context, d sika.KYCDossier, member uuid.UUID) (sika.KYCDossier, error) {
	defer s.FlushReadCache() // the merchant or its settings are cached (readcache.go)
	var out sika.KYCDossier
	err := s.InTx(ctx, func(tx pgx.Tx) error {
		var err error
		out, err = scanKYCDossier(tx.QueryRow(ctx, `INSERT INTO kyc_dossiers AS d (merchant_id, kyc_type, first_name, last_name,
				date_of_birth, id_document_type, company_name, rccm_number, ifu_number, submitted_by_member)
			VALUES ($1, $2, $3, $4, $5::text::date, $6, $7, $8, $9, $10) RETURNING `+kycDossierColumns,
			d.Merchant, d.KYCType, d.FirstName, d.LastName, d.DateOfBirth, d.IDDocumentType, d.CompanyName, d.RCCMNumber,
			d.IFUNumber, member))
		if err != nil {
			return fmt.Errorf("insert kyc dossier: %w", err)
		}
		if _, err := tx.Exec(ctx, `UPDATE merchants SET kyc_status = 'PENDING', updated_at = now() WHERE id = $1`, d.Merchant); err != nil {
			return fmt.Errorf("set merchant kyc pending: %w", err)
		}
		return nil
	})
	return out, err
}

// ListKYCDossiers returns a page of the merchant's dossiers, newest first, with their documents.
func (s *Store) ListKYCDossiers(ctx context.Context, merchant uuid.UUID, page PageRequest) ([]sika.KYCDossier, int, error) {
	items, n, err := queryPage(ctx, s, kycDossierColumns, `FROM kyc_dossiers d WHERE d.merchant_id = $1`,
		`d.created_at DESC, d.id DESC`, []any{merchant}, page, scanKYCDossier)
	if err != nil {
		return nil, 0, fmt.Errorf("list kyc dossiers: %w", err)
	}
	if err := withDocuments(ctx, s.pool, items); err != nil {
		return nil, 0, err
	}
	return items, n, nil
}

// KYCDossierByID returns a dossier of the merchant with its documents, or not_found.
func (s *Store) KYCDossierByID(ctx context.Context, merchant, id uuid.UUID) (sika.KYCDossier, error) {
	d, err := one(s.pool.QueryRow(ctx, `SELECT `+kycDossierColumns+` FROM kyc_dossiers d
		WHERE d.id = $1 AND d.merchant_id = $2`, id, merchant), scanKYCDossier, "KYC dossier", "select kyc dossier")
	if err != nil {
		return d, err
	}
	one := []sika.KYCDossier{d}
	err = withDocuments(ctx, s.pool, one)
	return one[0], err
}

// KYCDocuments lists the documents of a dossier of the merchant, oldest first; a dossier of
// another merchant (or none) has none (spec: 200 with an empty list, not 404).
func (s *Store) KYCDocuments(ctx context.Context, merchant, dossier uuid.UUID) ([]sika.KYCDocument, error) {
	docs, err := collect(ctx, s.pool, "kyc documents", scanKYCDocument, `SELECT `+kycDocumentColumns+` FROM kyc_documents
		WHERE dossier_id = $1 AND merchant_id = $2 ORDER BY created_at, id`, dossier, merchant)
	if err != nil {
		return nil, err
	}
	if docs == nil {
		docs = []sika.KYCDocument{}
	}
	return docs, nil
}

// withDocuments fills the documents of each dossier with one query.
func withDocuments(ctx context.Context, q queryer, dossiers []sika.KYCDossier) error {
	if len(dossiers) == 0 {
		return nil
	}
	index := make(map[uuid.UUID]int, len(dossiers))
	ids := make([]uuid.UUID, len(dossiers))
	for i, d := range dossiers {
		index[d.ID], ids[i] = i, d.ID
	}
	docs, err := collect(ctx, q, "kyc documents", scanKYCDocument, `SELECT `+kycDocumentColumns+` FROM kyc_documents
		WHERE dossier_id = ANY($1) ORDER BY created_at, id`, ids)
	if err != nil {
		return err
	}
	for _, doc := range docs {
		d := &dossiers[index[doc.Dossier]]
		d.Documents = append(d.Documents, doc)
	}
	return nil
}

// AttachKYCDocument adds a document to a PENDING dossier of the merchant: not_found for a
// dossier of another merchant, not_pending once the dossier has been reviewed (what was
// reviewed does not change; submit a new dossier). fileSHA256 must be a file the merchant
// uploaded.
func (s *Store) AttachKYCDocument(ctx context.Context, merchant uuid.UUID, doc sika.KYCDocument, fileSHA256 string) (sika.KYCDocument, error) {
	var out sika.KYCDocument
	err := s.InTx(ctx, func(tx pgx.Tx) error {
		if err := lockPendingKYCDossier(ctx, tx, doc.Dossier, &merchant, " Submit a new dossier."); err != nil {
			return err
		}
		var err error
		out, err = scanKYCDocument(tx.QueryRow(ctx, `INSERT INTO kyc_documents (dossier_id, merchant_id, document_type,
				label, file_sha256, file_url) VALUES ($1, $2, $3, $4, $5, $6) RETURNING `+kycDocumentColumns,
			doc.Dossier, merchant, doc.DocumentType, doc.Label, fileSHA256, doc.FileURL))
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "23503" {
			return sika.FieldError("file_url", sika.MsgKYCFileURL)
		}
		if err != nil {
			return fmt.Errorf("insert kyc document: %w", err)
		}
		if _, err := tx.Exec(ctx, `UPDATE kyc_dossiers SET updated_at = now() WHERE id = $1`, doc.Dossier); err != nil {
			return fmt.Errorf("touch kyc dossier: %w", err)
		}
		return nil
	})
	return out, err
}

// lockPendingKYCDossier locks a dossier (of merchant, unless nil) for the rest of the
// transaction: not_found when there is none, not_pending (the message naming its status, then
// hint) once it has been reviewed.
func lockPendingKYCDossier(ctx context.Context, tx pgx.Tx, id uuid.UUID, merchant *uuid.UUID, hint string) error {
	var status sika.KYCDossierStatus
	err := tx.QueryRow(ctx, `SELECT status FROM kyc_dossiers WHERE id = $1 AND ($2::uuid IS NULL OR merchant_id = $2)
		FOR UPDATE`, id, merchant).Scan(&status)
	if err := rowErr(err, "KYC dossier", "lock kyc dossier"); err != nil {
		return err
	}
	if status != sika.KYCDossierPending {
		return sika.Errorf(sika.CodeNotPending, "KYC dossier is %s, not PENDING.%s", status, hint)
	}
	return nil
}

// ReviewKYCDossier records a staff member's decision on a PENDING dossier (not_pending
// otherwise), in one transaction with its consequences: approval makes the merchant VERIFIED
// and active, rejection leaves the merchant as it is; either way a kyc.approved or kyc.rejected
// event is recorded in both environments, whose webhooks receive it, and the staff action
// (kyc_approved or kyc_rejected, the note as its reason) is audited.
func (s *Store) ReviewKYCDossier(ctx context.Context, id, admin uuid.UUID, decision sika.KYCDossierStatus, note string) (sika.KYCDossier, error) {
	defer s.FlushReadCache() // the merchant or its settings are cached (readcache.go)
	event := map[sika.KYCDossierStatus]sika.EventType{sika.KYCDossierApproved: sika.EventKYCApproved,
		sika.KYCDossierRejected: sika.EventKYCRejected}[decision]
	if event == "" {
		return sika.KYCDossier{}, fmt.Errorf("review kyc dossier: %q is not a decision", decision)
	}
	var out sika.KYCDossier
	err := s.InTx(ctx, func(tx pgx.Tx) error {
		if err := lockPendingKYCDossier(ctx, tx, id, nil, ""); err != nil {
			return err
		}
		// Staff accounts belong to no merchant (keepStaffApart); a reviewer who belongs to this
		// merchant all the same (an account from before that rule) does not decide on it.
		var own bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM memberships ms JOIN kyc_dossiers d ON d.merchant_id = ms.merchant_id
			WHERE d.id = $1 AND ms.member_id = $2)`, id, admin).Scan(&own); err != nil {
			return fmt.Errorf("review kyc dossier: look up the reviewer's merchants: %w", err)
		}
		if own {
			return sika.Errorf(sika.CodeSelfApprovalForbidden, "You belong to this merchant's team: another staff member reviews its dossier.")
		}
		var err error
		out, err = scanKYCDossier(tx.QueryRow(ctx, `UPDATE kyc_dossiers AS d SET status = $2, reviewed_by_admin = $3,
				review_note = $4, reviewed_at = now(), updated_at = now()
			WHERE d.id = $1 RETURNING `+kycDossierColumns, id, decision, admin, note))
		if err != nil {
			return fmt.Errorf("review kyc dossier: %w", err)
		}
		if decision == sika.KYCDossierApproved {
			if _, err := tx.Exec(ctx, `UPDATE merchants SET kyc_status = 'VERIFIED', is_active = true, updated_at = now()
				WHERE id = $1`, out.Merchant); err != nil {
				return fmt.Errorf("activate merchant: %w", err)
			}
		}
		one := []sika.KYCDossier{out}
		if err := withDocuments(ctx, tx, one); err != nil {
			return err
		}
		out = one[0]
		action := map[sika.KYCDossierStatus]string{sika.KYCDossierApproved: StaffActionKYCApproved,
			sika.KYCDossierRejected: StaffActionKYCRejected}[decision]
		if err := recordStaffAction(ctx, tx, StaffAction{Staff: admin, Action: action, Reason: note,
			Detail: map[string]any{"merchant": out.Merchant, "kyc_dossier": out.ID}}); err != nil {
			return err
		}
		for _, env := range []sika.Environment{sika.EnvironmentTest, sika.EnvironmentLive} {
			if _, err := recordEvent(ctx, tx, event, out.Merchant, env, nil, nil, out); err != nil {
				return err
			}
		}
		return nil
	})
	return out, err
}
