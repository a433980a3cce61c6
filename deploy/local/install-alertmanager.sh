#!/usr/bin/env bash
# Installs Debian's prometheus-alertmanager when it is missing: `correlator alerts` is tested against the real one.
# The tests start their own instances (own config, storage and port); the packaged service is left stopped.
set -euo pipefail
command -v prometheus-alertmanager >/dev/null && exit 0
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
command -v apt-get >/dev/null || { echo "alertmanager: prometheus-alertmanager is missing and apt-get is not available" >&2; exit 1; }
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null
$SUDO apt-get install -y -qq --no-install-recommends prometheus-alertmanager >/dev/null
( $SUDO systemctl stop prometheus-alertmanager || $SUDO service prometheus-alertmanager stop ) >/dev/null 2>&1 || true
command -v prometheus-alertmanager >/dev/null || { echo "alertmanager: installing prometheus-alertmanager failed" >&2; exit 1; }
