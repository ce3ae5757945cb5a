#!/usr/bin/env bash
# Runs a command with DATABASE_URL pointing at a real PostgreSQL server:
#   bash .ci/with-postgres.sh <command...>
# The server is chosen in this order:
#   1. DATABASE_URL already set and non-empty: used as is.
#   2. A server on 127.0.0.1:5432 where postgres://postgres@127.0.0.1:5432/test works
#      (trust auth, database `test`).
#   3. A throwaway cluster of the installed PostgreSQL (highest version under
#      /usr/lib/postgresql/*/bin) on 127.0.0.1:54329 (or one of the next ports), in a temp
#      directory; stopped and removed when the command ends, fails or is interrupted.
#   4. Otherwise: an error saying what is needed, exit 1.
# The command's exit status is the script's exit status.
# For testing this script only: IPOKIT_CI_SKIP_LOCAL=1 skips step 2, to force step 3.
set -euo pipefail

log() { printf 'with-postgres: %s\n' "$*" >&2; }

if [ "$#" -eq 0 ]; then
  log "usage: bash .ci/with-postgres.sh <command...>"
  exit 2
fi

# Masks passwords for printing: user:pass@ -> user:***@, password=... -> password=***.
mask_url() {
  printf '%s' "$1" | sed -E 's#^([^:/?]+://[^:/@?]*):.*@#\1:***@#; s#(password=)[^&[:space:]]*#\1***#g'
}

# Highest-version /usr/lib/postgresql/<v>/bin that has all the named executables.
pg_bin_with() {
  local dir tool ok
  while IFS= read -r dir; do
    ok=1
    for tool in "$@"; do
      [ -x "$dir/$tool" ] || { ok=0; break; }
    done
    if [ "$ok" = 1 ]; then
      printf '%s\n' "$dir"
      return 0
    fi
  done < <(compgen -G '/usr/lib/postgresql/*/bin' | sort -rV)
  return 1
}

# A PostgreSQL client tool that runs: from PATH, else from /usr/lib/postgresql/*/bin.
# (Debian's pg_wrapper can be on PATH with no client version behind it.)
pg_tool() {
  local dir
  if command -v "$1" >/dev/null 2>&1 && "$1" --version </dev/null >/dev/null 2>&1; then
    command -v "$1"
  elif dir=$(pg_bin_with "$1"); then
    printf '%s\n' "$dir/$1"
  else
    return 1
  fi
}

# True when something accepts TCP connections on 127.0.0.1:$1.
port_in_use() {
  timeout 3 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null
}

# --- 1. DATABASE_URL from the environment -----------------------------------------------
if [ -n "${DATABASE_URL:-}" ]; then
  log "using DATABASE_URL from the environment: $(mask_url "$DATABASE_URL")"
  export DATABASE_URL
  exec "$@"
fi

# --- 2. A local server on 127.0.0.1:5432 ------------------------------------------------
local_note=""
if [ "${IPOKIT_CI_SKIP_LOCAL:-}" != 1 ]; then
  url="postgres://postgres@127.0.0.1:5432/test"
  pg_isready_bin=$(pg_tool pg_isready || true)
  psql_bin=$(pg_tool psql || true)
  usable=0
  if [ -z "$pg_isready_bin" ] && [ -z "$psql_bin" ]; then
    # No client tools at all: all that can be checked is that the port is open.
    if port_in_use 5432; then
      usable=1
      local_note=" (port open; not verified: no pg_isready/psql installed)"
    fi
  else
    usable=1
    if [ -n "$pg_isready_bin" ] \
      && ! "$pg_isready_bin" -q -t 5 -h 127.0.0.1 -p 5432 -d test -U postgres </dev/null >/dev/null 2>&1; then
      usable=0
      local_note="no server accepting connections on 127.0.0.1:5432"
    fi
    if [ "$usable" = 1 ] && [ -n "$psql_bin" ]; then
      if out=$(PGCONNECT_TIMEOUT=5 "$psql_bin" "$url" -X -w -Atc 'select 1' </dev/null 2>&1) && [ "$out" = 1 ]; then
        :
      else
        usable=0
        local_note="127.0.0.1:5432 answers, but '$url' does not work: $(printf '%s' "$out" | head -n 1)"
      fi
    fi
  fi
  if [ "$usable" = 1 ]; then
    log "using the local server: $url$local_note"
    export DATABASE_URL="$url"
    exec "$@"
  fi
fi

# --- 3. A throwaway cluster --------------------------------------------------------------
if pg_bin=$(pg_bin_with initdb pg_ctl postgres); then
  :
elif command -v initdb >/dev/null 2>&1 && command -v pg_ctl >/dev/null 2>&1; then
  pg_bin=$(dirname "$(command -v pg_ctl)")
else
  # --- 4. Nothing to run the tests against ------------------------------------------------
  {
    echo "with-postgres: no PostgreSQL to test against. The real-PostgreSQL tests need one of:"
    echo "  - DATABASE_URL set to a PostgreSQL server the tests may create schemas in;"
    echo "  - a server on 127.0.0.1:5432 where postgres://postgres@127.0.0.1:5432/test works"
    echo "    (user postgres, trust auth, database test);"
    echo "  - PostgreSQL installed (e.g. apt-get install postgresql), to start a throwaway cluster."
    if [ -n "$local_note" ]; then echo "  (127.0.0.1:5432 was checked: $local_note)"; fi
  } >&2
  exit 1
fi

# As root, the cluster runs as the postgres user (PostgreSQL refuses to run as root).
as_pg=()
if [ "$(id -u)" = 0 ]; then
  if ! id -u postgres >/dev/null 2>&1; then
    log "running as root, but there is no 'postgres' user to run the throwaway cluster as"
    exit 1
  fi
  as_pg=(runuser -u postgres --)
fi

tmp=""
pgdata=""
# shellcheck disable=SC2317  # called from the EXIT trap
cleanup() {
  local rc=$?
  set +e
  trap - EXIT INT TERM
  if [ -n "$pgdata" ] && [ -f "$pgdata/postmaster.pid" ]; then
    if ! "${as_pg[@]}" "$pg_bin/pg_ctl" -D "$pgdata" -m fast -w -t 30 stop >/dev/null 2>&1; then
      log "warning: fast stop of the throwaway cluster failed; stopping it immediately"
      "${as_pg[@]}" "$pg_bin/pg_ctl" -D "$pgdata" -m immediate -w -t 30 stop >/dev/null 2>&1
    fi
  fi
  if [ -n "$tmp" ]; then rm -rf "$tmp"; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

started=${EPOCHREALTIME:-}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ipokit-pg.XXXXXX")
if [ "${#as_pg[@]}" -gt 0 ]; then
  chown postgres: "$tmp"
  if ! "${as_pg[@]}" test -w "$tmp"; then
    # e.g. TMPDIR under /root: the postgres user cannot reach it.
    rm -rf "$tmp"
    tmp=$(mktemp -d /tmp/ipokit-pg.XXXXXX)
    chown postgres: "$tmp"
  fi
fi
pgdata="$tmp/data"
sock="$tmp/sock"
"${as_pg[@]}" mkdir -m 700 "$sock"

# UTF8 whatever the environment's locale (a C/POSIX locale would give SQL_ASCII);
# C.UTF-8 where installed, as on the usual Debian server.
locale_opt=(--locale=C)
locales=$(locale -a 2>/dev/null || true)
if grep -qixE 'c\.utf-?8' <<<"$locales"; then locale_opt=(--locale=C.UTF-8); fi
if ! "${as_pg[@]}" "$pg_bin/initdb" -D "$pgdata" -A trust -U postgres --no-sync \
  -E UTF8 "${locale_opt[@]}" >"$tmp/initdb.log" 2>&1; then
  log "initdb failed:"
  cat "$tmp/initdb.log" >&2
  exit 1
fi

port=""
for p in 54329 54330 54331 54332 54333 54334 54335 54336 54337 54338; do
  if port_in_use "$p"; then continue; fi
  if "${as_pg[@]}" "$pg_bin/pg_ctl" -D "$pgdata" -l "$tmp/postgres.log" -w -t 60 \
    -o "-k $sock -p $p -c listen_addresses=127.0.0.1 -c fsync=off" start >/dev/null 2>&1; then
    port=$p
    break
  fi
  # Lost a race for the port, or the server cannot start at all: the log tells.
  if ! grep -q 'could not bind\|Address already in use' "$tmp/postgres.log" 2>/dev/null; then
    break
  fi
done
if [ -z "$port" ]; then
  if [ -s "$tmp/postgres.log" ]; then
    log "could not start a throwaway PostgreSQL cluster ($pg_bin); server log:"
    cat "$tmp/postgres.log" >&2
  else
    log "could not start a throwaway PostgreSQL cluster: ports 54329-54338 are all in use"
  fi
  exit 1
fi

if [ -x "$pg_bin/createdb" ]; then
  "$pg_bin/createdb" -w -h 127.0.0.1 -p "$port" -U postgres test
else
  "$pg_bin/psql" -X -w -q -h 127.0.0.1 -p "$port" -U postgres -d postgres -c 'CREATE DATABASE test'
fi

export DATABASE_URL="postgres://postgres@127.0.0.1:$port/test"
elapsed=""
if [ -n "$started" ]; then
  elapsed=$(awk -v a="$started" -v b="${EPOCHREALTIME}" 'BEGIN { printf ", started in %.1fs", b - a }')
fi
version=$("$pg_bin/postgres" --version 2>/dev/null | awk '{ print $3 }' || true)
log "using a throwaway PostgreSQL ${version:-cluster} at $DATABASE_URL (in $tmp$elapsed)"

rc=0
"$@" || rc=$?
exit "$rc"
