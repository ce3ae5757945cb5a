#!/usr/bin/env bash
# Runs a command with REDIS_URL pointing at a real Redis server:
#   bash .ci/with-redis.sh <command...>
# The server is chosen in this order:
#   1. REDIS_URL already set and non-empty: used as is.
#   2. A server answering PING on 127.0.0.1:6379: REDIS_URL=redis://127.0.0.1:6379.
#   3. redis-server on PATH (or /usr/bin/redis-server): a throwaway server, keeping nothing
#      on disk, on 127.0.0.1:63790 (or one of the next free ports), in a temp directory;
#      stopped and removed when the command ends, fails or is interrupted.
#   4. Otherwise: one line saying that the Redis tests will skip, and the command runs
#      without REDIS_URL.
# The command's exit status is the script's exit status.
# For testing this script only: IPOKIT_CI_SKIP_LOCAL=1 skips step 2, IPOKIT_CI_SKIP_SERVER=1
# skips step 3.
set -euo pipefail

log() { printf 'with-redis: %s\n' "$*" >&2; }

if [ "$#" -eq 0 ]; then
  log "usage: bash .ci/with-redis.sh <command...>"
  exit 2
fi

# Masks a password for printing: redis://user:pass@host -> redis://user:***@host.
mask_url() {
  printf '%s' "$1" | sed -E 's#^([^:/?]+://[^:/@?]*):[^@]*@#\1:***@#'
}

# True when something on 127.0.0.1:$1 answers PING with PONG (no redis-cli needed). A
# server that wants a password answers -NOAUTH: not usable without one.
answers_ping() {
  timeout 3 bash -c '
    exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
    printf "PING\r\n" >&3
    IFS= read -r -t 2 line <&3 || exit 1
    [ "${line%$'"'"'\r'"'"'}" = "+PONG" ]
  ' _ "$1" 2>/dev/null
}

# True when something accepts TCP connections on 127.0.0.1:$1.
port_in_use() {
  timeout 3 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1"' _ "$1" 2>/dev/null
}

# --- 1. REDIS_URL from the environment ----------------------------------------------------
if [ -n "${REDIS_URL:-}" ]; then
  log "using REDIS_URL from the environment: $(mask_url "$REDIS_URL")"
  export REDIS_URL
  exec "$@"
fi

# --- 2. A local server on 127.0.0.1:6379 ----------------------------------------------------
if [ "${IPOKIT_CI_SKIP_LOCAL:-}" != 1 ] && answers_ping 6379; then
  export REDIS_URL="redis://127.0.0.1:6379"
  log "using the local server: $REDIS_URL"
  exec "$@"
fi

# --- 3. A throwaway server ------------------------------------------------------------------
server_bin=""
if [ "${IPOKIT_CI_SKIP_SERVER:-}" != 1 ]; then
  if command -v redis-server >/dev/null 2>&1; then
    server_bin=$(command -v redis-server)
  elif [ -x /usr/bin/redis-server ]; then
    server_bin=/usr/bin/redis-server
  fi
fi

# --- 4. Nothing to run the tests against ----------------------------------------------------
if [ -z "$server_bin" ]; then
  log "no Redis (REDIS_URL unset, no PONG from 127.0.0.1:6379, no redis-server): the Redis tests will skip"
  unset REDIS_URL
  exec "$@"
fi

tmp=""
pid=""
# shellcheck disable=SC2317  # called from the EXIT trap
cleanup() {
  local rc=$?
  set +e
  trap - EXIT INT TERM
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null
    # SIGTERM makes redis-server exit at once (it saves nothing: --save ''); a second look
    # after 10 s ends one that hangs.
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  fi
  if [ -n "$tmp" ]; then rm -rf "$tmp"; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ipokit-redis.XXXXXX")
port=""
for p in 63790 63791 63792 63793 63794 63795 63796 63797 63798 63799; do
  if port_in_use "$p"; then continue; fi
  "$server_bin" --port "$p" --bind 127.0.0.1 --save '' --appendonly no --dir "$tmp" \
    --logfile "$tmp/redis.log" --daemonize no </dev/null >/dev/null 2>&1 &
  pid=$!
  for _ in $(seq 1 100); do
    if answers_ping "$p"; then port=$p; break; fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if [ -n "$port" ]; then break; fi
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  pid=""
  # Lost a race for the port, or the server cannot start at all: the log tells.
  if ! grep -q 'Address already in use' "$tmp/redis.log" 2>/dev/null; then break; fi
done
if [ -z "$port" ]; then
  if [ -s "$tmp/redis.log" ]; then
    log "could not start a throwaway redis-server ($server_bin); its log:"
    cat "$tmp/redis.log" >&2
  else
    log "could not start a throwaway redis-server: ports 63790-63799 are all in use"
  fi
  exit 1
fi

export REDIS_URL="redis://127.0.0.1:$port"
version=$("$server_bin" --version 2>/dev/null | sed -nE 's/.* v=([^ ]+).*/\1/p' || true)
log "using a throwaway Redis ${version:-server} at $REDIS_URL (in $tmp)"

rc=0
"$@" || rc=$?
exit "$rc"
