#!/usr/bin/env bash
# Makes sure PostgreSQL and MariaDB are installed, running and reachable as the tests expect, and
# that the client libraries the postgres and mysql features link against are there. Idempotent:
# installs only what is missing (Debian, as root, no systemd), starts only what is stopped.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

need=()
command -v pg_ctlcluster >/dev/null || need+=(postgresql postgresql-contrib)
command -v mariadbd >/dev/null || need+=(mariadb-server mariadb-client)
dpkg -s libpq-dev >/dev/null 2>&1 || need+=(libpq-dev)
dpkg -s default-libmysqlclient-dev >/dev/null 2>&1 || need+=(default-libmysqlclient-dev)
command -v pkg-config >/dev/null || need+=(pkg-config)
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

psql "postgres://postgres@127.0.0.1:5432/test" -Atc "SELECT 'PostgreSQL ready: ' || version()"
mariadb -h 127.0.0.1 -P 3306 -u root test -Nse "SELECT CONCAT('MariaDB ready: ', VERSION())"
