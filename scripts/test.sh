#!/usr/bin/env bash
# Run the test suite. PostgreSQL variants run when COSTWISE_TEST_DATABASE_URL is set, or
# when a server answers on 127.0.0.1:5432 (then the `test` database is used as the
# server from which each test run creates and drops its own temporary databases). The
# job-worker tests run against Redis when COSTWISE_TEST_REDIS_URL is set or one answers
# on 127.0.0.1:6379.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${COSTWISE_TEST_DATABASE_URL:-}" ]; then
  if python -c "import socket; socket.create_connection(('127.0.0.1', 5432), 1).close()" 2>/dev/null; then
    export COSTWISE_TEST_DATABASE_URL="postgresql+psycopg://postgres@127.0.0.1:5432/test"
  fi
fi
echo "PostgreSQL tests: ${COSTWISE_TEST_DATABASE_URL:-skipped (no server on 127.0.0.1:5432)}"
if [ -z "${COSTWISE_TEST_REDIS_URL:-}" ]; then
  if python -c "import socket; socket.create_connection(('127.0.0.1', 6379), 1).close()" 2>/dev/null; then
    export COSTWISE_TEST_REDIS_URL="redis://127.0.0.1:6379/0"
  fi
fi
echo "Redis (job worker) tests: ${COSTWISE_TEST_REDIS_URL:-skipped (no server on 127.0.0.1:6379)}"
# The web console's browser tests drive Debian's Chromium + ChromeDriver (same version).
# Install them when missing and this is a root shell with apt-get (CI, containers);
# elsewhere the browser tests fail and say how to install them.
if [ -z "${COSTWISE_CHROMIUM:-}" ] && { [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; }; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "Installing Chromium + ChromeDriver (Debian packages) for the console's browser tests"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null
  else
    echo "Chromium/ChromeDriver missing and not root: the browser tests will fail (see docs/development.md)" >&2
  fi
fi
exec python -m pytest "$@"
