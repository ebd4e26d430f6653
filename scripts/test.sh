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

run_suite() { # $1: label; the rest: environment assignments
  local label=$1; shift
  echo "=== suite on $label ==="
  env "$@" npx --no-install mocha --reporter spec 2>&1 | tee "$log"
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
