#!/bin/sh
# Frontend container entry point: apply the database migrations, then become the frontend.
#
#   entrypoint-frontend.sh [frontend flags...]  migrate (waiting for the database), then
#                                               exec node dist/apps/frontend/main.js "$@"
#   entrypoint-frontend.sh migrate              migrate (waiting for the database) and exit;
#                                               for a Kubernetes init container or a one-off job
#
# Environment:
#   SLUICE_DATABASE_URL            the database to migrate (a --database-url flag wins)
#   SLUICE_MIGRATE_ON_START        "false" skips the migration step (e.g. when an init container
#                                  or a job already ran it); default "true"
#   SLUICE_MIGRATE_ATTEMPTS        how many times to try before giving up; default 30
#   SLUICE_MIGRATE_RETRY_SECS      pause between attempts; default 2
set -eu

MIGRATE="node dist/apps/migrate/main.js"
attempts="${SLUICE_MIGRATE_ATTEMPTS:-30}"
pause="${SLUICE_MIGRATE_RETRY_SECS:-2}"

log() { printf 'sluice-entrypoint: %s\n' "$*" >&2; }

# The URL the frontend will use: a --database-url flag wins over SLUICE_DATABASE_URL, as in the
# frontend itself, so the schema is migrated where the frontend will look for it.
database_url="${SLUICE_DATABASE_URL:-}"
prev=""
for arg in "$@"; do
  case "$arg" in
    --database-url=*) database_url="${arg#--database-url=}" ;;
    *) [ "$prev" = "--database-url" ] && database_url="$arg" ;;
  esac
  prev="$arg"
done

# Exit 0: migrated. Exit 2: bad usage (a malformed URL), which no retry can fix. Exit 1: the
# database is not reachable yet (or a replica starting beside this one migrated at the same
# moment): wait and try again, a bounded number of times.
migrate() {
  i=1
  while :; do
    status=0
    SLUICE_DATABASE_URL="$database_url" $MIGRATE run || status=$?
    case "$status" in
      0) return 0 ;;
      2) log "migration refused its arguments (exit 2); not retrying"; return 2 ;;
    esac
    if [ "$i" -ge "$attempts" ]; then
      log "gave up after $attempts attempts: the database named by SLUICE_DATABASE_URL is not reachable or not migratable (see above)"
      return 1
    fi
    log "waiting for PostgreSQL (attempt $i/$attempts failed with exit $status; the line above names host, port and database); retrying in ${pause}s"
    i=$((i + 1))
    sleep "$pause"
  done
}

if [ "${1:-}" = "migrate" ]; then
  [ -n "$database_url" ] || { log "migrate: SLUICE_DATABASE_URL is not set"; exit 2; }
  migrate
  exit $?
fi

if [ "${SLUICE_MIGRATE_ON_START:-true}" = "false" ]; then
  log "SLUICE_MIGRATE_ON_START=false: not migrating"
elif [ -z "$database_url" ]; then
  # The embedded database (under --data-dir) is migrated by the frontend itself at start.
  log "no SLUICE_DATABASE_URL: the frontend uses its embedded database, nothing to migrate here"
else
  migrate
fi

exec node dist/apps/frontend/main.js "$@"
