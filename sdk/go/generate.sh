#!/usr/bin/env bash
# Regenerates the generated part of the Go client of the Sika API from the OpenAPI document the
# service serves. Commit its output after every change to api/openapi.yaml.
#
#   sdk/go/generate.sh          regenerate sika.gen.go, routes.gen.go and openapi.sha256
#   sdk/go/generate.sh --check  fail when the committed files differ from a fresh generation
#
# The pipeline, every step pinned:
#   1. `go run ./sdk/openapijson` (main module) prints the served document: api/openapi.yaml as
#      JSON, anchors and merge keys resolved (OpenAPI 3.1);
#   2. `go run ./internal/cmd/openapi30` (this module) turns it into OpenAPI 3.0, which is what
#      oapi-codegen reads (see internal/openapi30 for each rule), and writes routes.gen.go, the
#      routes that take an Idempotency-Key;
#   3. oapi-codegen at the version below (`go run …@version`, checked by the Go checksum
#      database) writes sika.gen.go with oapi-codegen.yaml.
# openapi.sha256 records the SHA-256 of the document of step 1: the main module's test
# TestGoClientMatchesTheDocument fails when it is not the current document's.
set -euo pipefail

OAPI_CODEGEN=github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
check=false
[[ "${1:-}" == "--check" ]] && check=true

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$root" && go run ./sdk/openapijson) >"$work/openapi.json"
mkdir -p "$work/out"
(cd "$here" && go run ./internal/cmd/openapi30 -routes "$work/out/routes.gen.go") <"$work/openapi.json" >"$work/openapi30.json"
(cd "$here" && go run "$OAPI_CODEGEN" -config oapi-codegen.yaml -o "$work/out/sika.gen.go" "$work/openapi30.json")
(cd "$work" && sha256sum openapi.json | cut -d' ' -f1) >"$work/out/openapi.sha256"

files=(sika.gen.go routes.gen.go openapi.sha256)
if $check; then
	status=0
	for f in "${files[@]}"; do
		if ! cmp -s "$work/out/$f" "$here/$f"; then
			echo "sdk/go/$f is out of date with api/openapi.yaml: run sdk/go/generate.sh and commit the result" >&2
			status=1
		fi
	done
	exit $status
fi
for f in "${files[@]}"; do cp "$work/out/$f" "$here/$f"; done
echo "generated sdk/go/sika.gen.go ($(wc -l <"$here/sika.gen.go") lines) from the OpenAPI document $(cat "$here/openapi.sha256")"
