#!/usr/bin/env bash
# The container step (run by .ci/run after the test suite): prepare podman with the
# machine's ../shared/tools/container-env.sh (COSTWISE_CONTAINER_ENV names another copy),
# then build the image and run it and the compose services (scripts/container_test.py).
# Arguments go to scripts/container_test.py (--json FILE, --no-build).
set -euo pipefail
cd "$(dirname "$0")/.."
env_script=${COSTWISE_CONTAINER_ENV:-../shared/tools/container-env.sh}
if [ ! -f "$env_script" ]; then
  echo "!!!!!!!! container step skipped: $env_script not found !!!!!!!!"
  exit 0
fi
# shellcheck source=/dev/null
source "$env_script"
exec .venv/bin/python scripts/container_test.py "$@"
