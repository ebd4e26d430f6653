#!/usr/bin/env bash
# Runs the whole suite on SQLite, then on PostgreSQL (and its Redis-backed parts
# when Redis is there). Under CI=true an unreachable PostgreSQL or Redis is a
# failure; elsewhere it is skipped with a line saying so.
set -uo pipefail
cd "$(dirname "$0")/.."

export TEST_POSTGRES_URL="${TEST_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/test}"
export TEST_REDIS_URL="${TEST_REDIS_URL:-redis://127.0.0.1:6379}"
passed=0 failed=0 skipped=0 status=0
log=$(mktemp)

run_suite() { # $1: label; then environment assignments; after `--`, mocha's arguments
  local label=$1; shift
  local vars=() args=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do vars+=("$1"); shift; done
  [ $# -gt 0 ] && shift && args=("$@")
  echo "=== suite on $label ==="
  env "${vars[@]}" npx --no-install mocha --reporter spec "${args[@]}" 2>&1 | tee "$log"
  local rc=${PIPESTATUS[0]}
  local p f s
  p=$(grep -Eo '^ +[0-9]+ passing' "$log" | grep -Eo '[0-9]+' | tail -1)
  f=$(grep -Eo '^ +[0-9]+ failing' "$log" | grep -Eo '[0-9]+' | tail -1)
  s=$(grep -Eo '^ +[0-9]+ pending' "$log" | grep -Eo '[0-9]+' | tail -1)
  passed=$((passed + ${p:-0})); failed=$((failed + ${f:-0})); skipped=$((skipped + ${s:-0}))
  if [ "$rc" -ne 0 ]; then status=1; [ -z "$f" ] && failed=$((failed + 1)); fi
}

reachable() { node scripts/reachable.js "$1"; }

redis_env=()
if reachable "$TEST_REDIS_URL"; then
  redis_env=(TEST_REDIS=1)
elif [ "${CI:-}" = "true" ]; then
  echo "FAIL: Redis at $TEST_REDIS_URL is unreachable, and CI requires it"; status=1
else
  echo "SKIPPED: Redis at $TEST_REDIS_URL is unreachable; the Redis-backed tests are skipped (CI requires them)"
fi

run_suite sqlite TEST_DATABASE=sqlite "${redis_env[@]}"

# The web console in a real browser, once, against the built server on SQLite.
chromium_path="${CHROMIUM_PATH:-/usr/bin/chromium}"
if [ ! -x "$chromium_path" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "Installing Debian's Chromium for the browser tests (apt-get install chromium)"
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } >/dev/null 2>&1
fi
if [ -x "$chromium_path" ]; then
  run_suite "Chromium (web console, SQLite)" TEST_DATABASE=sqlite CHROMIUM_PATH="$chromium_path" -- --config test/browser/.mocharc.json
elif [ "${CI:-}" = "true" ]; then
  echo "FAIL: Chromium ($chromium_path) is missing and could not be installed, and CI requires the browser tests"; status=1; failed=$((failed + 1))
else
  echo "SKIPPED: Chromium ($chromium_path) is missing and could not be installed; the browser tests are skipped (CI requires them)"
fi

if reachable "$TEST_POSTGRES_URL"; then
  run_suite postgres TEST_DATABASE=postgres "${redis_env[@]}"
elif [ "${CI:-}" = "true" ]; then
  echo "FAIL: PostgreSQL at $TEST_POSTGRES_URL is unreachable, and CI requires it"; status=1; failed=$((failed + 1))
else
  echo "SKIPPED: PostgreSQL at $TEST_POSTGRES_URL is unreachable; the PostgreSQL run is skipped (CI requires it)"
fi

rm -f "$log"
echo
echo "Tests: $passed passed, $failed failed, $skipped skipped"
exit $status
