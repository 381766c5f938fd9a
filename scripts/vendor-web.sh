#!/usr/bin/env bash
# Vendors the front-end libraries of the web apps (web/dashboard, web/console: package web/webapp) from the npm registry at pinned
# versions: each package is fetched with `npm pack` into a temporary directory, its tarball's
# integrity is checked against the registry's, and only the minified file the pages load is
# copied into web/webapp/static/vendor/ with its licence. The copied files are committed and
# embedded in the binary (go:embed): nothing is loaded from a CDN at run time, and building
# Sika needs neither npm nor the network. Run it again after changing a version below, then
# commit the result.
#
#   scripts/vendor-web.sh          vendor every library
#   scripts/vendor-web.sh --check  fail when the committed files differ from the pinned packages
set -euo pipefail

# package@version  file in the package  name under vendor/
LIBRARIES=(
	"htmx.org@2.0.11 dist/htmx.min.js htmx.min.js"
	"uplot@1.6.32 dist/uPlot.iife.min.js uPlot.iife.min.js"
	"uplot@1.6.32 dist/uPlot.min.css uPlot.min.css"
)

root=$(cd "$(dirname "$0")/.." && pwd)
dest="$root/web/webapp/static/vendor"
check=false
[[ "${1:-}" == "--check" ]] && check=true

command -v npm >/dev/null || { echo "vendor-web: npm is needed (apt-get install npm)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$dest"

versions="$work/VERSIONS"
{
	echo "# Vendored by scripts/vendor-web.sh from the npm registry; do not edit by hand."
	echo "# file  package@version  licence  sha256"
} >"$versions"

status=0
for lib in "${LIBRARIES[@]}"; do
	read -r spec file name <<<"$lib"
	pkg=${spec%@*}
	mkdir -p "$work/$pkg"
	# --json gives the tarball's name and the registry's integrity hash; npm verifies the
	# download against it.
	(cd "$work/$pkg" && npm pack --silent --json "$spec" >pack.json 2>/dev/null)
	tarball=$(cd "$work/$pkg" && node -e 'const p=require("./pack.json")[0]; process.stdout.write(p.filename)')
	tar -xzf "$work/$pkg/$tarball" -C "$work/$pkg"
	src="$work/$pkg/package/$file"
	[[ -f "$src" ]] || { echo "vendor-web: $spec has no $file" >&2; exit 1; }
	licence=$(node -e 'process.stdout.write(require(process.argv[1]).license || "UNKNOWN")' "$work/$pkg/package/package.json")
	licence_file=$(ls "$work/$pkg/package" | grep -iE '^licen[cs]e' | head -n1 || true)
	sum=$(sha256sum "$src" | cut -d' ' -f1)
	echo "$name  $spec  $licence  $sum" >>"$versions"
	if $check; then
		if ! cmp -s "$src" "$dest/$name"; then
			echo "vendor-web: $dest/$name differs from $spec $file" >&2
			status=1
		fi
		continue
	fi
	cp "$src" "$dest/$name"
	if [[ -n "$licence_file" ]]; then
		cp "$work/$pkg/package/$licence_file" "$dest/$name.LICENSE"
	else
		echo "$spec is distributed under the $licence licence (the package ships no licence file)." >"$dest/$name.LICENSE"
	fi
	echo "vendored $spec $file -> web/webapp/static/vendor/$name ($licence)"
done

if $check; then
	cmp -s "$versions" "$dest/VERSIONS" || { echo "vendor-web: $dest/VERSIONS is out of date" >&2; status=1; }
	exit $status
fi
cp "$versions" "$dest/VERSIONS"
