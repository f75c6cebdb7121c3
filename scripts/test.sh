#!/usr/bin/env bash
# Sets everything up and runs every gate and test, in order: ruff (lint, then formatting), mypy, the frontend's
# lint, the bundle check, the frontend unit tests, then pytest (unit, API, real-TensorFlow dumps, a real tensorboard
# process, and end-to-end tests in Debian's Chromium). The first failure stops the run.
# Extra arguments go to pytest (e.g. scripts/test.sh -k reader; scripts/test.sh -m "not e2e and not slow").
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/scripts/setup.sh"
cd "$ROOT"

echo "== ruff check"
python -m ruff check .

echo "== ruff format --check"
python -m ruff format --check .

echo "== mypy"
python -m mypy

echo "== frontend lint (npm run lint)"
npm run lint --silent

echo "== bundle: the committed bundle must equal a fresh webpack build"
node scripts/check_bundle.mjs

echo "== frontend unit tests"
# tsx keeps a compile cache in the temp directory (tsx-<uid>): give it one of its own, removed afterwards, so a
# test run leaves nothing in /tmp
node_tmp="$(mktemp -d)"
trap 'rm -rf "$node_tmp"' EXIT
TMPDIR="$node_tmp" npm test --silent

echo "== pytest"
python -m pytest -ra "$@"
