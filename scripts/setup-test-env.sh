#!/usr/bin/env bash
# Makes this machine ready for scripts/test.sh: installs the Debian packages the tests use
# (only the missing ones, only when running as root with apt-get) and starts a MariaDB server
# on 127.0.0.1:3306 when none answers. Safe to run again.
set -euo pipefail

# command -> Debian package
declare -A NEED=(
  [fio]=fio
  [sysbench]=sysbench
  [iostat]=sysstat
  [pt-diskstats]=percona-toolkit
  [mkfs.xfs]=xfsprogs
  [mkfs.ext4]=e2fsprogs
  [parted]=parted
  [sgdisk]=gdisk
  [sfdisk]=fdisk
  [pvcreate]=lvm2
  [mariadb]=mariadb-client
  [mariadbd]=mariadb-server
  [promtool]=prometheus
  # mysql chunk --ssl-mode tests make a CA and a server certificate
  [openssl]=openssl
  [bc]=bc
  [python3]=python3
  [zsh]=zsh
  [fish]=fish
  [groff]=groff-base
  # dbio report's HTML page is opened in headless Chromium and its screenshot checked
  [chromium]=chromium
)
missing=()
for cmd in "${!NEED[@]}"; do
  if ! command -v "$cmd" >/dev/null 2>&1 && [ ! -x "/usr/sbin/$cmd" ]; then
    missing+=("${NEED[$cmd]}")
  fi
done
# The IANA time-zone database: innodb grep --tz reads named zones from /usr/share/zoneinfo
# (jiff, no bundled copy), and its tests use Europe/Berlin, America/New_York and others.
if [ ! -e /usr/share/zoneinfo/Europe/Berlin ]; then
  missing+=(tzdata)
fi
# MariaDB's compression provider plugins: make-innodb-testdata.sh makes page_compressed tables
# with every algorithm MariaDB offers (innodb::regenerated_tablespaces_from_mariadb runs it)
for algo in lz4 lzo lzma bzip2 snappy; do
  if [ ! -e "/usr/lib/mysql/plugin/provider_$algo.so" ]; then
    missing+=("mariadb-plugin-provider-$algo")
  fi
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "setup: installing ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    # apt and debconf talk on stderr too: keep it in a log, shown whole when a step fails.
    log=$(mktemp /tmp/dbio-setup-apt.XXXXXX)
    if ! { apt-get update -qq && apt-get install -y -qq "${missing[@]}"; } >"$log" 2>&1; then
      cat "$log" >&2
      echo "setup: apt-get failed installing ${missing[*]} (log above, $log)" >&2
      exit 1
    fi
    rm -f "$log"
  else
    echo "setup: missing packages ${missing[*]}; install them (as root: apt-get install ${missing[*]})" >&2
  fi
fi

# A MariaDB server for the InnoDB tests.
mysql_up() { mariadb -h127.0.0.1 -P3306 -uroot -e 'select 1' >/dev/null 2>&1; }
if command -v mariadb >/dev/null && ! mysql_up; then
  echo "setup: starting MariaDB" >&2
  if [ ! -d /var/lib/mysql/mysql ]; then
    mariadb-install-db --user=mysql --datadir=/var/lib/mysql >/dev/null 2>&1 || true
  fi
  mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld 2>/dev/null || true
  start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd -- --user=mysql \
    >/dev/null 2>&1 || true
  for _ in $(seq 1 60); do mysql_up && break; sleep 1; done
  mysql_up || echo "setup: MariaDB did not start; the InnoDB tests that need it will fail" >&2
  mariadb -h127.0.0.1 -uroot -e 'create database if not exists test' 2>/dev/null || true
fi
