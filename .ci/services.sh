#!/usr/bin/env bash
# Makes sure PostgreSQL and MariaDB are installed, running and reachable as the tests expect, and
# that the client libraries the postgres and mysql features link against are there, and PgBouncer
# in transaction mode in front of PostgreSQL on 127.0.0.1:6432. Idempotent:
# installs only what is missing (Debian, as root, no systemd), starts only what is stopped.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
# A failure here says which command failed and how each server stands, so that CI's log tells.
trap 'rc=$?; echo "services.sh: line $LINENO failed (exit $rc): $BASH_COMMAND" >&2;
  pg_isready -h 127.0.0.1 -p 5432 >&2 || true; pg_isready -h 127.0.0.1 -p 6432 >&2 || true;
  mariadb-admin ping >&2 || true' ERR

need=()
command -v pg_ctlcluster >/dev/null || need+=(postgresql postgresql-contrib)
command -v mariadbd >/dev/null || need+=(mariadb-server mariadb-client)
dpkg -s libpq-dev >/dev/null 2>&1 || need+=(libpq-dev)
dpkg -s default-libmysqlclient-dev >/dev/null 2>&1 || need+=(default-libmysqlclient-dev)
command -v pkg-config >/dev/null || need+=(pkg-config)
command -v pgbouncer >/dev/null || need+=(pgbouncer)
if [ ${#need[@]} -gt 0 ]; then
  echo "installing: ${need[*]}"
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

# PostgreSQL: trust on loopback TCP, database `test`.
pg_version=$(ls /etc/postgresql | sort -n | tail -1)
hba=/etc/postgresql/$pg_version/main/pg_hba.conf
if grep -qE '^host\s+all\s+all\s+(127\.0\.0\.1/32|::1/128)\s+(scram-sha-256|md5|peer)' "$hba"; then
  sed -i -E 's/^(host\s+all\s+all\s+(127\.0\.0\.1\/32|::1\/128)\s+)(scram-sha-256|md5|peer)/\1trust/' "$hba"
  pg_ctlcluster --skip-systemctl-redirect "$pg_version" main reload 2>/dev/null || true
fi
if ! pg_isready -q -h 127.0.0.1 -p 5432; then
  pg_ctlcluster --skip-systemctl-redirect "$pg_version" main start
  for _ in $(seq 1 60); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 0.5; done
fi
psql -h 127.0.0.1 -U postgres -d postgres -Atc "SELECT 1 FROM pg_database WHERE datname = 'test'" | grep -q 1 \
  || psql -h 127.0.0.1 -U postgres -d postgres -qc "CREATE DATABASE test"

# MariaDB: root with an empty password over 127.0.0.1:3306, database `test`.
install -d -o mysql -g mysql -m 0755 /run/mysqld /var/log/mysql
if ! mariadb-admin ping --silent 2>/dev/null; then
  start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd -- \
    --user=mysql --log-error=/var/log/mysql/error.log
  for _ in $(seq 1 60); do mariadb-admin ping --silent 2>/dev/null && break; sleep 0.5; done
fi
if ! mariadb -h 127.0.0.1 -P 3306 -u root -e "SELECT 1" >/dev/null 2>&1; then
  mariadb -e "CREATE USER IF NOT EXISTS root@'127.0.0.1' IDENTIFIED BY '';
    GRANT ALL ON *.* TO root@'127.0.0.1' WITH GRANT OPTION; FLUSH PRIVILEGES;"
fi
mariadb -h 127.0.0.1 -P 3306 -u root -e "CREATE DATABASE IF NOT EXISTS test"

# PgBouncer in transaction mode on 127.0.0.1:6432, in front of every database of the local
# PostgreSQL: the pooler the pooler-safe setup (diesel_lease::pg::PgTransactionPooling) is tested
# through. No max_prepared_statements: Debian 12's PgBouncer 1.18 has none, which is the case the
# setup is for. PgBouncer refuses to run as root, so its folder belongs to postgres.
bouncer=/var/lib/diesel-lease/pgbouncer
install -d -o postgres -g postgres -m 0755 "$bouncer"
cat > "$bouncer/pgbouncer.ini.new" <<'INI'
[databases]
* = host=127.0.0.1 port=5432

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = 6432
unix_socket_dir =
auth_type = trust
auth_file = /var/lib/diesel-lease/pgbouncer/userlist.txt
pool_mode = transaction
default_pool_size = 5
max_client_conn = 500
logfile = /var/lib/diesel-lease/pgbouncer/pgbouncer.log
pidfile = /var/lib/diesel-lease/pgbouncer/pgbouncer.pid
log_connections = 0
log_disconnections = 0
INI
echo '"postgres" ""' > "$bouncer/userlist.txt"
mv "$bouncer/pgbouncer.ini.new" "$bouncer/pgbouncer.ini"
chown postgres:postgres "$bouncer"/*
# Whether it answers, not whether its pid file names a live process: a PgBouncer killed with the
# session that started it leaves its pid file, whose pid may since be another process's.
if ! pg_isready -q -h 127.0.0.1 -p 6432; then
  # The package's own PgBouncer, if its install started one, would hold the port with its settings.
  if [ -x /etc/init.d/pgbouncer ]; then /etc/init.d/pgbouncer stop >/dev/null 2>&1 || true; fi
  stale=$(cat "$bouncer/pgbouncer.pid" 2>/dev/null || true)
  if [ -n "$stale" ] && [ "$(cat "/proc/$stale/comm" 2>/dev/null)" = pgbouncer ]; then
    kill "$stale" 2>/dev/null || true  # ours, not answering
    sleep 1
  fi
  rm -f "$bouncer/pgbouncer.pid"
  runuser -u postgres -- pgbouncer -d "$bouncer/pgbouncer.ini"
  for _ in $(seq 1 60); do pg_isready -q -h 127.0.0.1 -p 6432 && break; sleep 0.5; done
fi

psql "postgres://postgres@127.0.0.1:5432/test" -Atc "SELECT 'PostgreSQL ready: ' || version()"
mariadb -h 127.0.0.1 -P 3306 -u root test -Nse "SELECT CONCAT('MariaDB ready: ', VERSION())"
psql "postgres://postgres@127.0.0.1:6432/test" -Atc "SELECT 'PgBouncer ready: ' || current_setting('server_version')"
