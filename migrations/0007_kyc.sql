-- KYC: the files merchants upload, their dossiers with attached documents, and who suspended a
-- merchant. Dossiers are not per environment: a merchant's identity is the same in TEST and LIVE.

-- An uploaded file as its merchant owns it. The bytes live once in the file store under
-- "<sha256>.<extension>"; a row here is what lets a merchant fetch and attach them.
CREATE TABLE kyc_files (
    merchant_id        uuid NOT NULL REFERENCES merchants (id) ON DELETE CASCADE,
    sha256             text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
    content_type       text NOT NULL CHECK (content_type IN ('image/jpeg', 'image/png', 'image/webp', 'application/pdf')),
    size_bytes         bigint NOT NULL CHECK (size_bytes > 0),
    uploaded_by_member uuid REFERENCES members (id) ON DELETE SET NULL,
    created_at         timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (merchant_id, sha256)
);
CREATE INDEX kyc_files_sha256_idx ON kyc_files (sha256);

CREATE TABLE kyc_dossiers (
    id                  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    merchant_id         uuid NOT NULL REFERENCES merchants (id) ON DELETE CASCADE,
    kyc_type            text NOT NULL CHECK (kyc_type IN ('INDIVIDUAL', 'BUSINESS')),
    first_name          text NOT NULL DEFAULT '',
    last_name           text NOT NULL DEFAULT '',
    date_of_birth       date,
    id_document_type    text NOT NULL DEFAULT '',
    company_name        text NOT NULL DEFAULT '',
    rccm_number         text NOT NULL DEFAULT '',
    ifu_number          text NOT NULL DEFAULT '',
    status              text NOT NULL DEFAULT 'PENDING' CHECK (status IN ('PENDING', 'APPROVED', 'REJECTED')),
    reviewed_by_admin   uuid REFERENCES members (id) ON DELETE SET NULL,
    review_note         text NOT NULL DEFAULT '',
    reviewed_at         timestamptz,
    submitted_by_member uuid REFERENCES members (id) ON DELETE SET NULL,
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now(),
    CHECK ((status = 'PENDING') = (reviewed_at IS NULL))
);
CREATE INDEX kyc_dossiers_merchant_idx ON kyc_dossiers (merchant_id, created_at DESC, id DESC);

-- A document points at a file its dossier's merchant uploaded (the foreign key on
-- (merchant_id, file_sha256)); file_url is the URL the upload answered.
CREATE TABLE kyc_documents (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    dossier_id    uuid NOT NULL REFERENCES kyc_dossiers (id) ON DELETE CASCADE,
    merchant_id   uuid NOT NULL,
    document_type text NOT NULL CHECK (document_type IN ('ID_CARD', 'PASSPORT', 'SELFIE', 'BUSINESS_REGISTRATION', 'FISCAL', 'OTHER')),
    label         text NOT NULL DEFAULT '',
    file_sha256   text NOT NULL,
    file_url      text NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (merchant_id, file_sha256) REFERENCES kyc_files (merchant_id, sha256)
);
CREATE INDEX kyc_documents_dossier_idx ON kyc_documents (dossier_id, created_at, id);

-- Who suspended a merchant, and when (is_suspended itself is in 0001).
ALTER TABLE merchants
    ADD COLUMN suspended_at        timestamptz,
    ADD COLUMN suspended_by_member uuid REFERENCES members (id) ON DELETE SET NULL;
