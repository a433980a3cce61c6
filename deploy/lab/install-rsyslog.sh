#!/usr/bin/env bash
# Installs Debian's rsyslog and its Kafka output (omkafka) when missing. The lab runs its own rsyslogd instance (own
# config, pid file and work dir); the packaged system service is not needed and is left stopped.
set -euo pipefail
have() { command -v rsyslogd >/dev/null && compgen -G "/usr/lib/*/rsyslog/omkafka.so" >/dev/null; }
have && exit 0
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
command -v apt-get >/dev/null || { echo "lab: rsyslog with omkafka is missing and apt-get is not available" >&2; exit 1; }
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null
$SUDO apt-get install -y -qq --no-install-recommends rsyslog rsyslog-kafka >/dev/null
( $SUDO systemctl stop rsyslog || $SUDO service rsyslog stop ) >/dev/null 2>&1 || true
have || { echo "lab: installing rsyslog and rsyslog-kafka failed" >&2; exit 1; }
