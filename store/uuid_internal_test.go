package store

import (
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika/internal/testenv"
)

// UUIDs travel as Postgres's binary uuid both ways (registerUUID), alone and in arrays, as NULLs
// and into text, with the values they had as driver.Valuer and sql.Scanner.
func TestUUIDsTravelAsBinaryUUIDs(t *testing.T) {
	ctx := t.Context()
	s, err := Open(ctx, testenv.Current().DatabaseURL)
	require.NoError(t, err)
	t.Cleanup(s.Close)
	conn, err := s.pool.Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()

	m := conn.Conn().TypeMap()
	_, ours := m.PlanEncode(pgtype.UUIDOID, pgtype.BinaryFormatCode, uuid.New()).(uuidEncodePlan)
	assert.True(t, ours, "a uuid.UUID parameter is encoded as 16 bytes, not through its text")
	_, ours = m.PlanScan(pgtype.UUIDOID, pgtype.BinaryFormatCode, new(uuid.UUID)).(uuidScanPlan)
	assert.True(t, ours, "a uuid column is read into a uuid.UUID from its 16 bytes")

	a, b := uuid.New(), uuid.New()
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeDescribeExec} {
		var (
			got, null   uuid.UUID
			nullPtr     *uuid.UUID
			ptr         *uuid.UUID
			list        []uuid.UUID
			text        string
			nullParam   bool
			nullable    uuid.NullUUID
			nilNullable uuid.NullUUID
		)
		kept := uuid.New()
		null = kept // a NULL leaves it as it was, as uuid.UUID.Scan does
		err := conn.QueryRow(ctx, `SELECT $1::uuid, NULL::uuid, NULL::uuid, $1::uuid, $2::uuid[], $3::text, $4::uuid IS NULL, $5::uuid, NULL::uuid`,
			mode, a, []uuid.UUID{a, b}, b, (*uuid.UUID)(nil), uuid.NullUUID{UUID: b, Valid: true}).
			Scan(&got, &null, &nullPtr, &ptr, &list, &text, &nullParam, &nullable, &nilNullable)
		require.NoError(t, err, "mode %v", mode)
		assert.Equal(t, a, got, "mode %v", mode)
		assert.Equal(t, kept, null, "mode %v", mode)
		assert.Nil(t, nullPtr, "mode %v", mode)
		require.NotNil(t, ptr, "mode %v", mode)
		assert.Equal(t, a, *ptr, "mode %v", mode)
		assert.Equal(t, []uuid.UUID{a, b}, list, "mode %v", mode)
		assert.Equal(t, b.String(), text, "mode %v", mode)
		assert.True(t, nullParam, "mode %v", mode)
		assert.Equal(t, uuid.NullUUID{UUID: b, Valid: true}, nullable, "mode %v", mode)
		assert.False(t, nilNullable.Valid, "mode %v", mode)
	}
}
