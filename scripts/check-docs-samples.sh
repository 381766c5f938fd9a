#!/usr/bin/env bash
# Type-checks the code samples the API reference (/docs/, api/docs.js) writes from the OpenAPI
# document: every Go sample against the Go client (sdk/go) and every TypeScript sample against
# the TypeScript client (sdk/typescript, needs npm). The samples are taken from the page as a
# browser shows it, by TestDocsPageInBrowser with SIKA_DOCS_SAMPLES_OUT. Run it after changing
# api/docs.js, the document's operation ids or the clients.
#
#   scripts/check-docs-samples.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
work=$(mktemp -d)
trap 'rm -rf "$work" "$root/sdk/go/zz_docsamples_test.go" "$root/sdk/typescript/zz-docsamples"' EXIT

go build -o bin/sika ./cmd/sika
SIKA_DOCS_SAMPLES_OUT="$work" bin/sika stack -- go test -count=1 -run '^TestDocsPageInBrowser$' ./api

# Each sample becomes the body of a function; samples are separated by a blank line and start
# with the id of their operation.
wrap() { # lang file
	awk -v lang="$1" '
		function open_fn() {
			n++
			if (lang == "go") print "func sample" n "(ctx context.Context, c *sika.Client) error {\n\tvar buf bytes.Buffer\n\tform := multipart.NewWriter(&buf)\n\t_ = form"
			else print "export async function sample" n "() {"
		}
		function close_fn() { print (lang == "go" ? "\treturn nil\n}" : "  return data;\n}") }
		BEGIN { inside = 0 }
		/^$/ { if (inside) close_fn(); inside = 0; next }
		!inside { print "// " $0; open_fn(); inside = 1; next }
		/^\/\/ (c, err|const sika)/ { next }
		{ print (lang == "go" ? "\t" : "  ") $0 }
		END { if (inside) close_fn() }
	' "$2"
}

{
	printf 'package sika_test\n\nimport (\n\t"bytes"\n\t"context"\n\t"mime/multipart"\n\n\t"github.com/google/uuid"\n\n\tsika "github.com/sikahq/sika/sdk/go"\n)\n\nvar _ = uuid.Nil\n\n'
	wrap go "$work/go.txt"
} >sdk/go/zz_docsamples_test.go
(cd sdk/go && go vet ./) && echo "docs samples: Go: $(grep -c '^func sample' sdk/go/zz_docsamples_test.go) compile against sdk/go"

mkdir -p sdk/typescript/zz-docsamples
{
	printf 'import { Sika } from "../src/index.js";\ndeclare const sika: Sika;\ndeclare const formData: FormData;\n\n'
	wrap ts "$work/ts.txt"
} >sdk/typescript/zz-docsamples/samples.ts
(cd sdk/typescript && { [[ -d node_modules ]] || npm ci --no-audit --no-fund >/dev/null; } &&
	npx tsc --noEmit --strict --module nodenext --moduleResolution nodenext --target es2022 --skipLibCheck zz-docsamples/samples.ts) &&
	echo "docs samples: TypeScript: $(grep -c '^export async function sample' sdk/typescript/zz-docsamples/samples.ts) type-check against sdk/typescript"
