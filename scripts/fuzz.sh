#!/usr/bin/env bash
# The dedicated fuzz run (issue 7): >= 10,000 mutated dumps and 10,000 hostile requests.
#   scripts/fuzz.sh            # 10,000 cases each (about 30 minutes on 2 cores)
#   DBG_FUZZ_CASES=500 scripts/fuzz.sh
# The normal test run draws a small sample of the same generators (60 dumps, 300 requests).
set -euo pipefail
cd "$(dirname "$0")/.."
export DBG_FUZZ_CASES="${DBG_FUZZ_CASES:-10000}"
exec .venv/bin/python -m pytest -q -p no:cacheprovider tests/test_fuzz_dumps.py tests/test_fuzz_requests.py \
    -k "fuzzed" -s "$@"
