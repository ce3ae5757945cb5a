#!/usr/bin/env bash
# Makes sure a Chromium is installed for the browser tests (the account dashboard's):
#   bash .ci/ensure-chromium.sh
# 1. CHROMIUM_PATH set to an executable, or /usr/bin/chromium present: nothing to do.
# 2. Running as root with apt-get: installs Debian's chromium (apt-get update first).
# 3. Otherwise: one line saying that the browser tests will skip.
# Never fails: without a browser the tests skip visibly, as they do on a user's machine.
set -uo pipefail

log() { printf 'ensure-chromium: %s\n' "$*" >&2; }

if [ -n "${CHROMIUM_PATH:-}" ] && [ -x "${CHROMIUM_PATH}" ]; then
  log "using CHROMIUM_PATH=${CHROMIUM_PATH}"
  exit 0
fi
if [ -x /usr/bin/chromium ]; then
  log "using /usr/bin/chromium ($(/usr/bin/chromium --version 2>/dev/null | head -1))"
  exit 0
fi
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  log "installing Debian's chromium (apt-get update; apt-get install -y chromium)"
  if timeout 900 apt-get update -qq >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive timeout 1200 apt-get install -y -qq chromium >/dev/null 2>&1 && [ -x /usr/bin/chromium ]; then
    log "installed /usr/bin/chromium ($(/usr/bin/chromium --version 2>/dev/null | head -1))"
    exit 0
  fi
  log "could not install chromium: the browser tests will skip"
  exit 0
fi
log "no Chromium (/usr/bin/chromium or CHROMIUM_PATH) and no way to install one: the browser tests will skip"
exit 0
