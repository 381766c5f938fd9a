#!/usr/bin/env bash
# Regenerates the TypeScript types of the Sika API (src/generated/schema.ts) from the OpenAPI
# document the service serves: `go run ./sdk/openapijson` prints it (api/openapi.yaml as JSON,
# anchors and merge keys resolved, exactly what /api/v1/openapi.json answers less the absolute
# server URLs), and openapi-typescript, at the version pinned in package-lock.json, turns it into
# types (scripts/normalize-openapi.mjs first spells out two allOf idioms it would otherwise type
# loosely; the meaning is unchanged). src/generated/openapi.sha256 records the document the
# types were made from. Commit both after a change to api/openapi.yaml.
#
#   sdk/typescript/generate.sh          regenerate
#   sdk/typescript/generate.sh --check  fail when the committed files differ from a fresh generation
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
check=false
[[ "${1:-}" == "--check" ]] && check=true

command -v npm >/dev/null || { echo "generate.sh: npm is needed (Node 18+)" >&2; exit 1; }
if [[ ! -x "$here/node_modules/.bin/openapi-typescript" ]]; then
	(cd "$here" && npm ci --ignore-scripts --no-audit --no-fund >&2)
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$root" && go run ./sdk/openapijson) >"$work/openapi.json"
mkdir -p "$work/out"
node "$here/scripts/normalize-openapi.mjs" <"$work/openapi.json" >"$work/normalized.json"
"$here/node_modules/.bin/openapi-typescript" "$work/normalized.json" -o "$work/out/schema.ts" \
	--empty-objects-unknown >/dev/null
(cd "$work" && sha256sum openapi.json | cut -d' ' -f1) >"$work/out/openapi.sha256"

dest="$here/src/generated"
if $check; then
	status=0
	for f in schema.ts openapi.sha256; do
		if ! cmp -s "$work/out/$f" "$dest/$f"; then
			echo "sdk/typescript/src/generated/$f is out of date with api/openapi.yaml: run sdk/typescript/generate.sh and commit the result" >&2
			status=1
		fi
	done
	exit $status
fi
mkdir -p "$dest"
cp "$work/out/schema.ts" "$work/out/openapi.sha256" "$dest/"
echo "generated $dest/schema.ts ($(wc -l <"$dest/schema.ts") lines) from the OpenAPI document $(cat "$dest/openapi.sha256")"
