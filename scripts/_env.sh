# Shared by scripts/run and scripts/test: a project virtualenv, installed only when pyproject changes.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PY="${PYTHON:-python3}"
VENV="$ROOT/.venv"
SHOW_SKIPPED="${SHOW_SKIPPED:-}"  # scripts/run sets it: a step with nothing to do says so too

# Steps: what is about to take a while, then how long it took. A step that has nothing to do is
# silent unless SHOW_SKIPPED is set.
_now_ms() { date +%s%3N; }
step() { STEP_STARTED="$(_now_ms)"; echo "==> $*"; }
step_done() {  # $1: what was done (optional)
  local ms=$(( $(_now_ms) - STEP_STARTED ))
  printf '    %s in %d.%d s\n' "${1:-done}" $((ms / 1000)) $((ms % 1000 / 100))
}
step_skipped() { [ -z "$SHOW_SKIPPED" ] || echo "==> $*"; }

# Python packages are installed by uv (from PyPI, into the project's venv): a tenth of pip's time
# on the same cache, which every CI run and every `scripts/run` pays. Bytecode is compiled at install,
# as pip does, so no first start pays for it. uv itself comes from PyPI through the venv's pip. What
# uv says goes to a log; on failure, its end is shown.
_uv() {
  local log="$VENV/uv.log"
  if ! "$VENV/bin/uv" pip install --quiet --compile-bytecode --python "$VENV/bin/python" "$@" >"$log" 2>&1; then
    tail -n 25 "$log" >&2
    echo "installing Python packages failed (uv's whole output: $log)" >&2
    exit 1
  fi
}

ensure_venv() {  # $1: pip extras spec, e.g. "." or ".[dev]"
  local spec="$1" stamp="$VENV/.sleuth-installed"
  local want
  want="$(sha256sum pyproject.toml | cut -c1-16) $spec"
  if [ ! -x "$VENV/bin/uv" ]; then
    step "Creating the virtualenv .venv"
    [ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
    "$VENV/bin/pip" install --quiet --progress-bar off uv >"$VENV/uv.log" 2>&1 || {
      tail -n 25 "$VENV/uv.log" >&2; echo "pip could not install uv (log: $VENV/uv.log)" >&2; exit 1; }
    step_done
  fi
  if [ ! -f "$stamp" ] || ! grep -qxF -- "$want" "$stamp"; then
    step "Installing Sleuth ($spec) and its Python packages into .venv (uv)"
    _uv -e "$spec"
    echo "$want" > "$stamp"
    step_done "installed"
  else
    step_skipped "Python packages: up to date in .venv"
  fi
}

ensure_frontend_deps() {  # frontend/node_modules, installed when missing or older than the lock file
  command -v npm >/dev/null || { echo "npm is needed to build the web UI (install Node.js 20+)." >&2; exit 1; }
  local fe="$ROOT/frontend"
  if [ ! -d "$fe/node_modules" ] || [ "$fe/package-lock.json" -nt "$fe/node_modules/.package-lock.json" ]; then
    step "Installing the web UI's packages (npm ci)"
    (cd "$fe" && npm ci --no-audit --no-fund --loglevel=error)
    step_done "installed"
  fi
}

ensure_frontend() {  # build frontend/dist when missing or older than its sources
  ensure_frontend_deps
  local fe="$ROOT/frontend"
  if [ ! -f "$fe/dist/index.html" ] || [ -n "$(find "$fe/src" "$fe/index.html" "$fe/vite.config.ts" "$fe/package.json" -newer "$fe/dist/index.html" 2>/dev/null | head -1)" ]; then
    step "Building the web UI (npm run build)"
    (cd "$fe" && npm run build --silent)
    step_done "built"
  else
    step_skipped "Web UI: built and up to date"
  fi
}

ensure_debian_packages() {  # $@: "command-or-file:package" pairs; installs what is missing (as root) or says how
  local missing=() pair probe pkg
  for pair in "$@"; do
    probe="${pair%%:*}"; pkg="${pair##*:}"
    if [ "${probe#/}" != "$probe" ]; then [ -e "$probe" ] && continue; else command -v "$probe" >/dev/null && continue; fi
    missing+=("$pkg")
  done
  if [ "${#missing[@]}" = 0 ]; then
    step_skipped "Debian packages: installed"
    return 0
  fi
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    step "Installing Debian packages: ${missing[*]} (apt-get)"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}") >/dev/null
    step_done "installed"
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
