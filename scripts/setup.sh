#!/usr/bin/env bash
# Sets up everything the demo and the tests need, idempotently: a virtualenv in .venv with the package installed
# editable (with its demo and dev extras, at the versions pinned in constraints.txt), Debian's Chromium for the
# browser tests, and the pinned Node toolchain.
# Sourced by scripts/demo.sh and scripts/test.sh; fails loudly when something cannot be had.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

PYTHON="${PYTHON:-python3}"
need_chromium="${NEED_CHROMIUM:-1}"
need_node="${NEED_NODE:-1}"

if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv with $($PYTHON --version)"
  "$PYTHON" -m venv .venv
fi
# The stamp names what was installed from: the project's metadata and the pinned versions (constraints.txt). A
# change to either reinstalls; pip then moves every package to its pinned version.
stamp=.venv/.installed-$(cat pyproject.toml constraints.txt | sha1sum | cut -c1-12)
if [ ! -f "$stamp" ]; then
  echo "setup: installing tensorboard-plugin-dbg[demo,dev] into .venv (versions pinned by constraints.txt)"
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -c constraints.txt -e ".[demo,dev]"
  rm -f .venv/.installed-*
  touch "$stamp"
fi

if [ "$need_chromium" = 1 ] && ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    echo "setup: installing Debian's chromium"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "setup: FAILED: chromium is missing and this user is not root; run: sudo apt-get install chromium" >&2
    exit 1
  fi
fi

if [ "$need_node" = 1 ]; then
  command -v npm >/dev/null 2>&1 || { echo "setup: FAILED: node/npm is missing (apt-get install nodejs npm)" >&2; exit 1; }
  lockstamp=node_modules/.installed-$(sha1sum package-lock.json | cut -c1-12)
  if [ ! -f "$lockstamp" ]; then
    echo "setup: npm ci"
    npm ci --no-audit --no-fund --loglevel=error
    touch "$lockstamp"
  fi
fi
export PATH="$ROOT/.venv/bin:$PATH"
