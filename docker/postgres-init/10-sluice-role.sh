#!/bin/sh
# Runs once, when the postgres container initialises its data directory (docker-entrypoint-initdb.d),
# as the superuser named by POSTGRES_USER. Sluice itself connects as SLUICE_DB_USER: a plain role
# (no superuser, no CREATEDB, no CREATEROLE) that owns the schema of its database and therefore
# only the tables its migrations create there — a leaked frontend password cannot read other
# databases, create roles or run server-side programs.
set -eu
: "${SLUICE_DB_USER:=sluice}"
: "${SLUICE_DB_PASSWORD:?SLUICE_DB_PASSWORD is not set}"
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "${POSTGRES_DB:-$POSTGRES_USER}" \
  -v role="$SLUICE_DB_USER" -v password="$SLUICE_DB_PASSWORD" <<'SQL'
CREATE ROLE :"role" LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS
  PASSWORD :'password';
ALTER SCHEMA public OWNER TO :"role";
REVOKE ALL ON SCHEMA public FROM PUBLIC;
SQL
