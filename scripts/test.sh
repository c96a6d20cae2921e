#!/usr/bin/env bash
# Install corix with its development extras and run every check: lint, types, tests.
# This is the one test command; CI runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."
# The machines this runs on set PYTHONDONTWRITEBYTECODE: then every test process (three
# pytest workers, each `corix` child process, each Ray worker) compiles every module it
# imports again. Collecting the tests took 27 s of CPU per worker so, 12 s with the
# bytecode cached. The caches go into this clone and its .venv only.
unset PYTHONDONTWRITEBYTECODE

python3 -m venv .venv
# uv installs the ~140 packages: pip took 72 s of CPU-bound unpacking here (of an 8-minute
# budget), uv 4 s, the same versions of the same packages. pip fetches uv itself. Neither
# byte-compiles what it installs: the tests compile (and cache) only what they import.
.venv/bin/pip install --quiet --disable-pip-version-check "uv>=0.5,<1"
.venv/bin/uv pip install --quiet --python .venv/bin/python -e ".[dev]"

# Browser tests drive Debian's chromium; install it when missing (never a downloaded build).
if ! command -v chromium >/dev/null 2>&1; then
    if [ "$(id -u)" = "0" ]; then
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
    else
        sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
    fi
fi

.venv/bin/ruff check src tests benchmarks
.venv/bin/ruff format --check src tests benchmarks
mkdir -p test-artifacts
# Types and layering are checked while the tests run (mostly one core, about 25 s); their
# verdict is read once the tests are done.
(.venv/bin/mypy && .venv/bin/lint-imports) > test-artifacts/static-checks.log 2>&1 &
static_checks=$!
# Three workers on two cores: most tests wait on subprocesses, browsers, servers and model
# stubs, and two workers kept the cores about half idle. Grouped tests (the Ray cluster's)
# stay on one worker.
.venv/bin/python -m pytest -n 3 --dist loadgroup -rs --junitxml=test-artifacts/junit.xml "$@"
if ! wait "$static_checks"; then
    cat test-artifacts/static-checks.log >&2
    echo "error: mypy or lint-imports failed" >&2
    exit 1
fi
tail -n 3 test-artifacts/static-checks.log
# pytest fails when it collects nothing; a filtered run that ran no test fails here too.
ran=$(grep -o 'tests="[0-9]*"' test-artifacts/junit.xml | head -1 | tr -dc '0-9')
if [ -z "$ran" ] || [ "$ran" -eq 0 ]; then
    echo "error: no tests ran" >&2
    exit 1
fi
echo "$ran tests ran"
