package store

import (
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"
)

// registerUUID makes pgx send and read github.com/google/uuid values as Postgres's 16-byte binary
// uuid. Without it pgx takes uuid.UUID as a driver.Valuer and a sql.Scanner: every parameter
// became its 36-character text (uuid.UUID.Value) that pgx parsed back into 16 bytes, and every
// uuid read went from 16 bytes to text and was parsed again by uuid.UUID.Scan. A payment passes
// and reads dozens of them (docs/performance.md). Values read and write as before; a NULL read
// into a uuid.UUID leaves it as it was, as uuid.UUID.Scan does (a *uuid.UUID becomes nil).
// A uuid.UUID sent where Postgres expects another type (text) still goes through its text.
func registerUUID(m *pgtype.Map) {
	t := &pgtype.Type{Name: "uuid", OID: pgtype.UUIDOID, Codec: uuidCodec{}}
	m.RegisterType(t)
	m.RegisterType(&pgtype.Type{Name: "_uuid", OID: pgtype.UUIDArrayOID, Codec: &pgtype.ArrayCodec{ElementType: t}})
}

// uuidCodec is pgx's uuid codec, which also plans uuid.UUID values and *uuid.UUID targets.
type uuidCodec struct{ pgtype.UUIDCodec }

func (c uuidCodec) PlanEncode(m *pgtype.Map, oid uint32, format int16, value any) pgtype.EncodePlan {
	if _, ok := value.(uuid.UUID); ok {
		if next := c.UUIDCodec.PlanEncode(m, oid, format, pgUUID{}); next != nil {
			return uuidEncodePlan{next}
		}
	}
	return c.UUIDCodec.PlanEncode(m, oid, format, value)
}

func (c uuidCodec) PlanScan(m *pgtype.Map, oid uint32, format int16, target any) pgtype.ScanPlan {
	if _, ok := target.(*uuid.UUID); ok {
		if next := c.UUIDCodec.PlanScan(m, oid, format, (*pgUUID)(nil)); next != nil {
			return uuidScanPlan{next}
		}
	}
	return c.UUIDCodec.PlanScan(m, oid, format, target)
}

// pgUUID is a uuid.UUID as pgx's uuid codec reads and writes it (pgtype.UUIDValuer and
// pgtype.UUIDScanner).
type pgUUID uuid.UUID

func (u pgUUID) UUIDValue() (pgtype.UUID, error) { return pgtype.UUID{Bytes: u, Valid: true}, nil }

func (u *pgUUID) ScanUUID(v pgtype.UUID) error {
	if v.Valid {
		*u = v.Bytes
	}
	return nil
}

type uuidEncodePlan struct{ next pgtype.EncodePlan }

func (p uuidEncodePlan) Encode(value any, buf []byte) ([]byte, error) {
	return p.next.Encode(pgUUID(value.(uuid.UUID)), buf)
}

type uuidScanPlan struct{ next pgtype.ScanPlan }

func (p uuidScanPlan) Scan(src []byte, dst any) error {
	return p.next.Scan(src, (*pgUUID)(dst.(*uuid.UUID)))
}
