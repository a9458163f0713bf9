#!/usr/bin/env bash
# Make sure Debian's Chromium and its matching driver are installed for the web-console
# browser tests (tests/app/console). Installs them with apt-get when missing and this
# runs as root with apt-get available; otherwise prints how to install them and returns
# 1 (the browser tests would then fail, never skip).
set -euo pipefail
CHROMIUM="${COSTWISE_CHROMIUM:-/usr/bin/chromium}"
CHROMEDRIVER="${COSTWISE_CHROMEDRIVER:-/usr/bin/chromedriver}"
if [ -x "$CHROMIUM" ] && [ -x "$CHROMEDRIVER" ]; then
  exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "Chromium for the browser tests is missing: installing chromium and chromium-driver"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends chromium chromium-driver
  exit 0
fi
echo "The web-console browser tests need $CHROMIUM and $CHROMEDRIVER." >&2
echo "Install them as root: apt-get update && apt-get install -y chromium chromium-driver" >&2
echo "(or set COSTWISE_CHROMIUM / COSTWISE_CHROMEDRIVER); without them those tests fail." >&2
exit 1
