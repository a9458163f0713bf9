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
exec python -m pytest "$@"
