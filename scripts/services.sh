#!/usr/bin/env bash
# Starts every server the test suites talk to, on loopback, and prints the
# variables that point the suites at them:
#
#   eval "$(bash scripts/services.sh)"   # then: npm test
#
# - MariaDB (Debian's mariadb-server): root with an empty password,
#   database `test`  -> MYSQL_URL
# - Redis (Debian's redis-server), no persistence     -> REDIS_URL
# - FerretDB 1.24.2, a server that speaks MongoDB's wire protocol, on an
#   SQLite back end in a temporary folder             -> MONGODB_URL
#   No MongoDB server is packaged by the registries these machines reach;
#   FerretDB is a Go module, built once with the machine's Go toolchain and
#   kept in the cache folder below, so a second run does not rebuild it.
#   Real MongoDB runs from docker-compose.yml (docs/stores.md).
#
# Each server that already answers is left as it is. Installing the Debian
# packages needs root (apt-get); a machine that has them needs nothing else.
# Everything it logs goes to stderr, so stdout is only the `export` lines.
set -euo pipefail

log() { printf '==> %s\n' "$*" >&2; }

FERRETDB_VERSION=v1.24.2
FERRETDB_PORT=${FERRETDB_PORT:-27017}
cache="${LPC_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/long-poll-chat}"

# --- Debian packages ---------------------------------------------------------
need=()
command -v mariadbd >/dev/null || [ -x /usr/sbin/mariadbd ] || need+=(mariadb-server)
command -v redis-server >/dev/null || need+=(redis-server)
if [ ${#need[@]} -gt 0 ]; then
  log "apt-get install ${need[*]}"
  apt-get update -q >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need[@]}" >&2
fi

# --- MariaDB -----------------------------------------------------------------
if ! mariadb-admin ping >/dev/null 2>&1; then
  log "starting MariaDB"
  install -d -o mysql -g mysql /run/mysqld
  [ -d /var/lib/mysql/mysql ] || mariadb-install-db --user=mysql --datadir=/var/lib/mysql --skip-test-db >/dev/null
  (/usr/sbin/mariadbd --user=mysql >/tmp/mariadbd.log 2>&1 &)
  for _ in $(seq 60); do mariadb-admin ping >/dev/null 2>&1 && break; sleep 1; done
  mariadb-admin ping >/dev/null
fi
mariadb -uroot -e "CREATE DATABASE IF NOT EXISTS test CHARACTER SET utf8mb4;"
# Root over TCP with an empty password (a fresh install allows only the socket).
mariadb -uroot -h127.0.0.1 -e "SELECT 1" >/dev/null 2>&1 ||
  mariadb -uroot -e "ALTER USER 'root'@'localhost' IDENTIFIED VIA mysql_native_password USING PASSWORD('') OR unix_socket; FLUSH PRIVILEGES;"

# --- Redis -------------------------------------------------------------------
if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
  log "starting Redis"
  redis-server --bind 127.0.0.1 --port 6379 --daemonize yes --save '' --appendonly no >&2
  for _ in $(seq 30); do redis-cli -h 127.0.0.1 ping >/dev/null 2>&1 && break; sleep 0.5; done
fi

# --- FerretDB ----------------------------------------------------------------
# The module's own source leaves build/version/version.txt empty (its
# release tooling writes it) and the binary refuses to start without it, so
# the build copies the module out of Go's module cache and writes the
# version in first; `go install …@version` alone gives a binary that panics.
ferretdb="$cache/ferretdb-$FERRETDB_VERSION/ferretdb"
if [ ! -x "$ferretdb" ]; then
  command -v go >/dev/null || { log "FerretDB needs Go (the machine's toolchain) to build"; exit 1; }
  log "building FerretDB $FERRETDB_VERSION (once; cached in $(dirname "$ferretdb"))"
  GOFLAGS=-mod=mod go mod download -json "github.com/FerretDB/FerretDB@$FERRETDB_VERSION" >/dev/null
  src="$(go env GOMODCACHE)/github.com/!ferret!d!b/!ferret!d!b@$FERRETDB_VERSION"
  work="$(mktemp -d)"
  cp -r "$src/." "$work/"
  chmod -R u+w "$work"
  echo "$FERRETDB_VERSION" >"$work/build/version/version.txt"
  mkdir -p "$(dirname "$ferretdb")"
  (cd "$work" && go build -trimpath -o "$ferretdb.part" ./cmd/ferretdb) >&2
  mv "$ferretdb.part" "$ferretdb"
  rm -rf "$work"
fi
ferret_up() { (exec 3<>"/dev/tcp/127.0.0.1/$FERRETDB_PORT") 2>/dev/null; }
if ! ferret_up; then
  log "starting FerretDB on 127.0.0.1:$FERRETDB_PORT"
  state="$(mktemp -d /tmp/ferretdb.XXXXXX)"
  mkdir -p "$state/data"
  # Loopback only, no telemetry, no debug listener.
  (cd "$state" && exec "$ferretdb" --handler=sqlite --sqlite-url="file:$state/data/" \
    --listen-addr="127.0.0.1:$FERRETDB_PORT" --state-dir="$state" --debug-addr=- \
    --telemetry=disable --log-level=warn >"$state/ferretdb.log" 2>&1 &)
  for _ in $(seq 60); do ferret_up && break; sleep 0.5; done
  ferret_up || { log "FerretDB did not start: $state/ferretdb.log"; cat "$state/ferretdb.log" >&2; exit 1; }
fi

echo "export MYSQL_URL=mysql://root@127.0.0.1:3306/test"
echo "export REDIS_URL=redis://127.0.0.1:6379"
echo "export MONGODB_URL=mongodb://127.0.0.1:$FERRETDB_PORT/test"
# The binary, for the suites that start and stop a FerretDB of their own.
echo "export FERRETDB_BIN=$ferretdb"
