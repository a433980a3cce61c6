#!/usr/bin/env bash
# Installs Debian's chromium when it is missing: the report test shows the HTML report in it, headless.
set -euo pipefail
command -v chromium >/dev/null && exit 0
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
command -v apt-get >/dev/null || { echo "chromium: missing and apt-get is not available; install chromium" >&2; exit 1; }
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null
$SUDO apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
command -v chromium >/dev/null || { echo "chromium: installing it failed" >&2; exit 1; }
