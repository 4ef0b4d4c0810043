# Shared by scripts/run and scripts/test: a project virtualenv, installed only when pyproject changes.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PY="${PYTHON:-python3}"
VENV="$ROOT/.venv"

ensure_venv() {  # $1: pip extras spec, e.g. "." or ".[dev]"
  local spec="$1" stamp="$VENV/.sleuth-installed"
  local want
  want="$(sha256sum pyproject.toml | cut -c1-16) $spec"
  if [ ! -x "$VENV/bin/python" ]; then
    "$PY" -m venv "$VENV"
    "$VENV/bin/pip" install -q --upgrade pip
  fi
  if [ ! -f "$stamp" ] || ! grep -qxF -- "$want" "$stamp"; then
    echo "Installing Sleuth ($spec) into .venv ..."
    "$VENV/bin/pip" install -q -e "$spec"
    echo "$want" > "$stamp"
  fi
}

ensure_frontend_deps() {  # frontend/node_modules, installed when missing or older than the lock file
  command -v npm >/dev/null || { echo "npm is needed to build the web UI (install Node.js 20+)." >&2; exit 1; }
  local fe="$ROOT/frontend"
  if [ ! -d "$fe/node_modules" ] || [ "$fe/package-lock.json" -nt "$fe/node_modules/.package-lock.json" ]; then
    (cd "$fe" && npm ci --no-audit --no-fund --loglevel=error)
  fi
}

ensure_frontend() {  # build frontend/dist when missing or older than its sources
  ensure_frontend_deps
  local fe="$ROOT/frontend"
  if [ ! -f "$fe/dist/index.html" ] || [ -n "$(find "$fe/src" "$fe/index.html" "$fe/vite.config.ts" "$fe/package.json" -newer "$fe/dist/index.html" 2>/dev/null | head -1)" ]; then
    echo "Building the web UI ..."
    (cd "$fe" && npm run build --silent)
  fi
}

ensure_debian_packages() {  # $@: "command-or-file:package" pairs; installs what is missing (as root) or says how
  local missing=() pair probe pkg
  for pair in "$@"; do
    probe="${pair%%:*}"; pkg="${pair##*:}"
    if [ "${probe#/}" != "$probe" ]; then [ -e "$probe" ] && continue; else command -v "$probe" >/dev/null && continue; fi
    missing+=("$pkg")
  done
  [ "${#missing[@]}" = 0 ] && return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "Installing Debian packages: ${missing[*]} ..."
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}") >/dev/null
  else
    echo "Sleuth needs these Debian packages: sudo apt-get install -y ${missing[*]}" >&2; exit 1
  fi
}

# PDF export embeds DejaVu (Latin, Greek, Cyrillic...) and WenQuanYi Micro Hei (Chinese, Japanese,
# Korean: 1.6 MB download); offline audio speaks with eSpeak NG.
ARTIFACT_PACKAGES=(
  "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf:fonts-dejavu-core"
  "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc:fonts-wqy-microhei"
  "espeak-ng:espeak-ng"
)
# The tests read exported PDFs back as text and pictures with poppler's pdftotext and pdftoppm.
TEST_PACKAGES=("pdftotext:poppler-utils")
