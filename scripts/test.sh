#!/usr/bin/env bash
# Sets everything up and runs every test: the bundle check, the frontend unit tests, then pytest (unit, API,
# real-TensorFlow dumps, a real tensorboard process, and end-to-end tests in Debian's Chromium).
# Extra arguments go to pytest (e.g. scripts/test.sh -k reader).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/scripts/setup.sh"
cd "$ROOT"

echo "== bundle: the committed bundle must equal a fresh webpack build"
node scripts/check_bundle.mjs

echo "== frontend unit tests"
npm test --silent

echo "== pytest"
python -m pytest -ra "$@"
