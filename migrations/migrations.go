// Package migrations embeds the SQL migrations of the service, applied in file-name order by
// store.Migrate and recorded in the schema_migrations table.
package migrations

import "embed"

// FS holds every NNNN_name.sql migration.
//
//go:embed *.sql
var FS embed.FS
