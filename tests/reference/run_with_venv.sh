#!/bin/sh
# Runs a Python test with the project's environment (.venv, made by scripts/setup.sh);
# exits 77, which ctest reports as skipped, when there is none.
#   run_with_venv.sh ROOT SCRIPT [ARGS...]
root=$1
shift
if [ ! -x "$root/.venv/bin/python" ]; then
  echo "SKIPPED: $root/.venv is missing: run scripts/setup.sh to make the project's Python environment"
  exit 77
fi
exec "$root/.venv/bin/python" "$@"
