#!/usr/bin/env bash
# install-deps.sh installs the Debian packages the test suite needs and that
# are missing: redis-server (api/ratelimit starts one per test run),
# postgresql and chromium (the hosted-page browser tests drive it).
# Idempotent, and silent when everything is present. As root it
# installs them with apt-get; otherwise it prints what to install and exits 1.
set -euo pipefail

missing=()
if ! command -v redis-server >/dev/null 2>&1 && [[ ! -x /usr/bin/redis-server ]]; then
	missing+=(redis-server)
fi
if ! compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null; then
	missing+=(postgresql)
fi
if ! command -v chromium >/dev/null 2>&1 && [[ ! -x /usr/bin/chromium ]]; then
	missing+=(chromium)
fi
if [[ ${#missing[@]} -eq 0 ]]; then
	exit 0
fi

if [[ $(id -u) -ne 0 ]]; then
	echo "missing Debian packages: ${missing[*]}" >&2
	echo "install them as root with:" >&2
	echo "  apt-get update && apt-get install -y --no-install-recommends ${missing[*]}" >&2
	exit 1
fi

export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "installed: ${missing[*]}"
