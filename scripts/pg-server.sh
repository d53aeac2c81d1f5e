#!/usr/bin/env bash
# What the PostgreSQL tests need before they run (`make test` runs this first, and so CI): the
# server's binaries, from which the tests start a throwaway cluster of their own
# (test/support/pg-keeper.ts, which finds them the same way: `pg_config --bindir`, else
# /usr/lib/postgresql/<version>/bin). As root with apt-get, it installs them where they are
# missing, without the system cluster Debian would make and start (the tests never use one);
# otherwise it says in one line what to install, and fails. With LEDGERSTORE_PG_URL set, the
# tests use that server instead, and nothing is needed here.
set -euo pipefail

[ -z "${LEDGERSTORE_PG_URL:-}" ] || exit 0

pg_binaries() {
  [ -x "$(pg_config --bindir 2>/dev/null)/initdb" ] || compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null
}
pg_binaries && exit 0

if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "PostgreSQL's server is not installed, and the tests need it: install it (Debian or Ubuntu: sudo apt-get install postgresql; Fedora: sudo dnf install postgresql-server; macOS: brew install postgresql), or set LEDGERSTORE_PG_URL=postgres://... to a server of yours" >&2
  exit 1
fi

echo "installing PostgreSQL's server for the tests (apt-get install postgresql, without a system cluster)"
mkdir -p /etc/postgresql-common
[ -e /etc/postgresql-common/createcluster.conf ] || echo 'create_main_cluster = false' >/etc/postgresql-common/createcluster.conf
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold postgresql >/dev/null
pg_binaries || { echo "apt-get installed postgresql, but no initdb is in \`pg_config --bindir\` or /usr/lib/postgresql/*/bin" >&2; exit 1; }
