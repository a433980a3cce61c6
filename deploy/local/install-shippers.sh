#!/usr/bin/env bash
# Installs the real shippers the test suite runs (Debian's rsyslog + rsyslog-kafka, kcat) when they are missing.
# The tests start rsyslogd instances of their own (own config, pid file and work dir); the system one is left alone.
set -euo pipefail
have() { command -v rsyslogd >/dev/null && command -v kcat >/dev/null && compgen -G "/usr/lib/*/rsyslog/omkafka.so" >/dev/null; }
have && exit 0
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
command -v apt-get >/dev/null || { echo "shippers: rsyslog, rsyslog-kafka and kcat are missing and apt-get is not available" >&2; exit 1; }
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null
$SUDO apt-get install -y -qq --no-install-recommends rsyslog rsyslog-kafka kcat >/dev/null
( $SUDO systemctl stop rsyslog || $SUDO service rsyslog stop ) >/dev/null 2>&1 || true
have || { echo "shippers: installing rsyslog, rsyslog-kafka and kcat failed" >&2; exit 1; }
