#!/usr/bin/env bash
# Type-checks the code samples the API reference (/docs/, api/docs.js) writes from the OpenAPI
# document: every Go sample against the Go client (sdk/go) and every TypeScript sample against
# the TypeScript client (sdk/typescript, needs npm). The samples are taken from the page as a
# browser shows it by TestDocsGoSamplesCompile (api/docs_samples_test.go), which compiles the Go
# ones itself (it runs in make test) and, with SIKA_DOCS_SAMPLES_OUT, keeps them all; the
# TypeScript ones are checked here (make test does not: it would need the client's npm packages
# installed before the api package's tests). Run it after changing api/docs.js, the document's
# operation ids or the clients.
#
#   scripts/check-docs-samples.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
work=$(mktemp -d)
trap 'rm -rf "$work" "$root/sdk/typescript/zz-docsamples"' EXIT

go build -o bin/sika ./cmd/sika
SIKA_DOCS_SAMPLES_OUT="$work" bin/sika stack -- go test -count=1 -v -run '^TestDocsGoSamplesCompile$' ./api >"$work/go-test.log" 2>&1 ||
	{ cat "$work/go-test.log"; exit 1; }
grep -E 'Go samples:' "$work/go-test.log"

# Each TypeScript sample becomes the body of a function; samples are separated by a blank line
# and start with the id of their operation.
awk '
	function close_fn() { print "  return data;\n}" }
	BEGIN { inside = 0 }
	/^$/ { if (inside) close_fn(); inside = 0; next }
	!inside { print "// " $0; n++; print "export async function sample" n "() {"; inside = 1; next }
	/^\/\/ const sika/ { next }
	{ print "  " $0 }
	END { if (inside) close_fn() }
' "$work/ts.txt" >"$work/ts-functions.txt"

mkdir -p sdk/typescript/zz-docsamples
{
	printf 'import { Sika } from "../src/index.js";\ndeclare const sika: Sika;\ndeclare const formData: FormData;\n\n'
	cat "$work/ts-functions.txt"
} >sdk/typescript/zz-docsamples/samples.ts
# (Not `a && b` chains: set -e does not stop on a failure inside one, which let a Go sample that
# did not compile pass unnoticed.)
cd sdk/typescript
[[ -d node_modules ]] || npm ci --no-audit --no-fund >/dev/null
npx tsc --noEmit --strict --module nodenext --moduleResolution nodenext --target es2022 --skipLibCheck zz-docsamples/samples.ts
n=$(grep -c '^export async function sample' zz-docsamples/samples.ts)
echo "docs samples: TypeScript: $n of $n type-check against sdk/typescript"
