#!/usr/bin/env bash
# Installs Debian's redis-server when it is missing, and keeps the packaged service from holding port 6379.
set -euo pipefail
command -v redis-server >/dev/null && exit 0
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
command -v apt-get >/dev/null || { echo "redis: redis-server is missing and apt-get is not available; install Redis 7" >&2; exit 1; }
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null
$SUDO apt-get install -y -qq --no-install-recommends redis-server >/dev/null
# Tests and the demo start their own instances on other ports; the packaged one is not needed.
( $SUDO systemctl stop redis-server || $SUDO service redis-server stop ) >/dev/null 2>&1 || true
command -v redis-server >/dev/null || { echo "redis: installing redis-server failed" >&2; exit 1; }
