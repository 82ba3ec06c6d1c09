#!/usr/bin/env bash
# Installs what the end-to-end tests need on a clean Debian machine (run as root), then proves that
# code-server starts. Idempotent: every step checks first and does nothing when it is already done.
#
#   tools/e2e-setup.sh            # install + verify
#   E2E_SKIP_APT=1 tools/e2e-setup.sh   # skip the apt step (packages installed some other way)
#
# Versions and pitfalls: ../shared/e2e-recipe.md (code-server 4.100.3 needs Node 20; its postinstall needs
# npm_config_unsafe_perm as root; node-pty's postinstall calls `npx node-gyp`, so npm_config_yes).
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CS_DIR="$REPO_ROOT/test/e2e/code-server"
STAMP="$CS_DIR/node_modules/.e2e-setup-stamp"
LOG_DIR="$REPO_ROOT/test-results/e2e-setup"   # git-ignored
log() { printf '[e2e-setup] %s\n' "$*"; }
die() { printf '[e2e-setup] error: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "run tools/e2e-setup.sh as root (it installs Debian packages with apt-get)"
node_major="$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo none)"
[ "$node_major" = 20 ] || die "Node 20 is required (code-server 4.100.3 declares engines.node 20); found: $node_major"

# --- 1. Debian packages -------------------------------------------------------------------------------
# chromium: the browser playwright-core drives; libkrb5-dev: gssapi.h for code-server's `kerberos` module;
# ripgrep: fed to @vscode/ripgrep below; build tools: node-pty and kerberos compile with node-gyp;
# fonts: so that screenshots show text rather than boxes.
APT_PKGS=(chromium libkrb5-dev ripgrep build-essential python3 pkg-config fonts-liberation fonts-dejavu-core ca-certificates)
missing=()
for p in "${APT_PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ] && [ -z "${E2E_SKIP_APT:-}" ]; then
  log "apt-get install ${missing[*]}"
  # Other jobs may hold the dpkg lock; wait for it instead of failing.
  apt-get -o DPkg::Lock::Timeout=900 update -qq
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  log "Debian packages present"
fi
[ -x /usr/bin/chromium ] || die "/usr/bin/chromium missing: apt-get install chromium"
command -v rg >/dev/null || die "rg missing: apt-get install ripgrep"

# --- 2. ripgrep cache: @vscode/ripgrep downloads rg from GitHub unless this archive is already there -----
# Names follow code-server 4.100.3's lockfile (@vscode/ripgrep 1.15.11, rg v13.0.0-10); recheck on upgrade.
RG_CACHE_DIR="$(node -p 'require("os").tmpdir()')/vscode-ripgrep-cache-1.15.11"
RG_ARCHIVE="$RG_CACHE_DIR/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz"
if [ ! -s "$RG_ARCHIVE" ]; then
  log "ripgrep cache -> $RG_ARCHIVE"
  mkdir -p "$RG_CACHE_DIR"
  tar -C "$(dirname "$(command -v rg)")" -czf "$RG_ARCHIVE" rg
fi

# --- 3. code-server, playwright-core, vsce (own lockfile, so the extension's npm ci stays normal) --------
lock_hash="$(sha256sum "$CS_DIR/package-lock.json" | cut -d' ' -f1)"
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$lock_hash" ]; then
  log "test/e2e/code-server/node_modules up to date"
else
  log "npm ci in test/e2e/code-server (a few minutes: code-server's postinstall builds native modules)"
  rm -f "$STAMP"
  mkdir -p "$LOG_DIR"
  # node-gyp builds code-server's native modules against Node's headers, which it would download from
  # nodejs.org: point it at the headers Debian's nodejs ships instead (unless npm is already told where they are).
  if [ -z "${npm_config_nodedir:-}" ] && [ -z "$(npm config get nodedir 2>/dev/null | grep -v '^undefined$')" ] \
     && [ -f /usr/include/node/node.h ]; then
    export npm_config_nodedir=/usr
    log "node-gyp uses Node's headers from /usr/include/node (no download)"
  fi
  # --foreground-scripts: install-script output shows in the log, so a failing postinstall is visible.
  (cd "$CS_DIR" && npm_config_unsafe_perm=true npm_config_yes=true npm_config_update_notifier=false \
     npm ci --no-audit --no-fund --foreground-scripts >"$LOG_DIR/npm-ci.log" 2>&1) \
    || { tail -40 "$LOG_DIR/npm-ci.log" >&2; die "npm ci failed in test/e2e/code-server; full log: test-results/e2e-setup/npm-ci.log"; }
  # npm 11 may skip dependency install scripts; code-server is useless without its postinstall.
  # These files exist only if it ran to the end (native modules of its bundled VS Code server).
  node "$REPO_ROOT/test/e2e/lib/check-install.mjs" \
    || die "code-server's postinstall did not complete; see test-results/e2e-setup/npm-ci.log"
  echo "$lock_hash" >"$STAMP"
fi

# --- 4. prove that code-server starts and answers /healthz on 127.0.0.1 ---------------------------------
node "$REPO_ROOT/test/e2e/lib/healthcheck.mjs"
log "ready"
