#!/usr/bin/env bash
# Lints the OpenAPI document the service serves (/openapi.json) with Redocly CLI (@redocly/cli,
# at the version pinned in package-lock.json, installed here with npm ci from the npm registry),
# configured by redocly.yaml. Exits non-zero on any error; warnings are printed. make test runs
# it (lint_test.go) on the document a server of this checkout serves.
#
#   tools/openapi-lint/lint.sh             lint api/openapi.yaml as served (go run ./sdk/openapijson)
#   tools/openapi-lint/lint.sh DOC.json    lint that file
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

command -v npm >/dev/null || { echo "openapi-lint: npm is needed (Node 20.19+)" >&2; exit 1; }
pinned=$(node -e 'process.stdout.write(require(process.argv[1]).packages["node_modules/@redocly/cli"].version)' "$here/package-lock.json")
installed=$(node -e 'try { process.stdout.write(require(process.argv[1]).version) } catch { }' "$here/node_modules/@redocly/cli/package.json")
if [[ "$installed" != "$pinned" ]]; then
	(cd "$here" && npm ci --ignore-scripts --no-audit --no-fund >&2)
fi

doc=${1:-}
if [[ -z "$doc" ]]; then
	work=$(mktemp -d)
	trap 'rm -rf "$work"' EXIT
	(cd "$root" && go run ./sdk/openapijson) >"$work/openapi.json"
	doc="$work/openapi.json"
fi
# No telemetry and no update check: CI reaches only the package registries.
REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true \
	"$here/node_modules/.bin/redocly" lint --config "$here/redocly.yaml" --format=stylish "$doc"
