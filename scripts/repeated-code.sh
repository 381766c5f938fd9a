#!/usr/bin/env bash
# The repeated-code scan of issue 26: pairs of places sharing runs of six or more identical or
# same-shape lines in the hand-written code, tests (_test.go), generated clients (sdk/), vendored
# front-end files and test data set aside. It copies the tracked files it reads to a temporary
# folder and runs the `duplicates` tool there (not part of the project: any runs-of-lines scanner
# does the same job). Usage: scripts/repeated-code.sh [rows to list, default 40]
set -euo pipefail
cd "$(dirname "$0")/.."
command -v duplicates >/dev/null || { echo "the duplicates tool is not on PATH" >&2; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
git ls-files | grep -v '_test\.go$' | grep -vE '^(sdk/|web/webapp/static/vendor/|.*testdata/)' |
	grep -vE '\.(md|sum|mod|txt|yaml|yml|json|sha256|LICENSE|png|svg)$' |
	while read -r f; do mkdir -p "$out/$(dirname "$f")" && cp "$f" "$out/$f"; done
duplicates --repo "$out" --most "${1:-40}" --seconds 300
