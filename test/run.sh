#!/usr/bin/env bash
# npm test — the whole suite: unit → database/integration (real PostgreSQL, Redis and
# worker processes) → browser (real Chromium against `npm start`).
#   npm test            everything
#   npm test -- unit    one stage: unit | db | e2e
# Prints a last line "N passed, M failed" and exits non-zero on any failure.
set -uo pipefail
cd "$(dirname "$0")/.."
stage=${1:-all}
export NEXT_TELEMETRY_DISABLED=1 LEASEHOLD_LOG=${LEASEHOLD_LOG:-warn}

source test/services.sh
# This run's databases are named after it (test/env.ts) and dropped when it ends.
export TEST_RUN_ID=${TEST_RUN_ID:-r$$$(date +%s | tail -c 5)}
export E2E_PORT=${E2E_PORT:-$(free_port)}
# The second console of the browser tests, with sign-in on (test/e2e/auth/).
export E2E_AUTH_PORT=${E2E_AUTH_PORT:-$(free_port)}
while [ "$E2E_AUTH_PORT" = "$E2E_PORT" ]; do E2E_AUTH_PORT=$(free_port); done
finish() {
  node --import tsx test/cleanup-dbs.ts >&2 || true
  services_cleanup
}
trap finish EXIT

LOGS=()
node_tests() { # label files...
  local label=$1; shift
  [ $# -eq 0 ] && return 0
  local out="$SERVICES_STATE/$label.out"
  LOGS+=("$out")
  echo "== $label: $# files" >&2
  # --test-force-exit: a handle a failed test leaves open (a reconnecting pool) must not
  # keep a file's process, and so the whole run, alive after its tests have ended. (It
  # also cuts off reporters writing to files, so the totals are read from the spec output.)
  node --import tsx --test --test-force-exit --test-concurrency="${CONCURRENCY:-1}" \
    --test-reporter=spec "$@" | tee "$out"
}

find_tests() { # pattern
  find app components lib worker bin bench test -name "$1" -not -path '*/node_modules/*' 2>/dev/null | sort
}

rc=0
if [ "$stage" = all ] || [ "$stage" = unit ]; then
  mapfile -t unit < <(find_tests '*.test.ts' | grep -v -e '\.db\.test\.ts$' -e '^test/e2e/')
  node_tests unit "${unit[@]}" || rc=1
fi
if [ "$stage" = all ] || [ "$stage" = db ]; then
  node --import tsx test/global-setup.ts >&2 || exit 1
  # Two files at a time (each has its own database, Redis prefix and processes, and much of
  # a file's time is waiting on leases, timers and child processes): 722 s instead of about
  # 880 here. The chaos suite (450 s) runs alone after them: its scenarios hold recovery
  # times to bounds, which a neighbour's CPU would eat into.
  mapfile -t dbt < <(find_tests '*.db.test.ts' | grep -v -e '^test/e2e/' -e '^test/chaos/')
  mapfile -t chaos < <(find_tests '*.db.test.ts' | grep '^test/chaos/')
  CONCURRENCY=${TEST_CONCURRENCY:-2} node_tests db "${dbt[@]}" || rc=1
  node_tests db-chaos "${chaos[@]}" || rc=1
fi
E2E_JSON="$SERVICES_STATE/e2e.json"
if [ "$stage" = all ] || [ "$stage" = e2e ]; then
  if [ ! -x "${CHROMIUM:-/usr/bin/chromium}" ]; then
    echo "Chromium is not installed at /usr/bin/chromium: apt-get install -y chromium (the browser tests drive it)" >&2
    rc=1
  else
    node --import tsx test/e2e/prepare.ts >&2 || exit 1
    PLAYWRIGHT_JSON_OUTPUT_NAME="$E2E_JSON" node node_modules/@playwright/test/cli.js test --reporter=list,json || rc=1
    mapfile -t fresh < <(find test/e2e -name '*.test.ts' | sort)
    node_tests e2e-node "${fresh[@]}" || rc=1
  fi
fi

pass=0; fail=0
for t in "${LOGS[@]}"; do
  [ -f "$t" ] || continue
  p=$(grep -E '^ℹ pass ' "$t" | tail -1 | awk '{print $3}'); f=$(grep -E '^ℹ fail ' "$t" | tail -1 | awk '{print $3}')
  pass=$((pass + ${p:-0})); fail=$((fail + ${f:-0}))
done
if [ -f "$E2E_JSON" ]; then
  read -r ep ef < <(node -e "const s=require(process.argv[1]).stats;console.log((s.expected||0)+' '+((s.unexpected||0)+(s.flaky||0)))" "$E2E_JSON")
  pass=$((pass + ep)); fail=$((fail + ef))
fi
[ "$fail" -gt 0 ] && rc=1
echo "$pass passed, $fail failed"
exit $rc
