# Sourced by test/run.sh: makes sure PostgreSQL and Redis are reachable for the tests.
# Uses the machine's servers on the default ports when they answer; otherwise starts
# throwaway ones on free ports (stopped again on exit); otherwise says exactly what is
# missing. Exports TEST_PG_ADMIN_URL and TEST_REDIS_URL.

SERVICES_STATE=$(mktemp -d -t leasehold-test.XXXXXX)
chmod 755 "$SERVICES_STATE"
_started_pg=""; _started_redis=""

services_cleanup() {
  if [ -n "$_started_pg" ]; then
    runuser -u postgres -- "$_pg_bin/pg_ctl" -D "$_started_pg" -m fast -w stop >/dev/null 2>&1 \
      || "$_pg_bin/pg_ctl" -D "$_started_pg" -m fast -w stop >/dev/null 2>&1 || true
  fi
  if [ -n "$_started_redis" ] && [ -f "$SERVICES_STATE/redis.pid" ]; then
    kill "$(cat "$SERVICES_STATE/redis.pid")" 2>/dev/null || true
  fi
  rm -rf "$SERVICES_STATE"
}

free_port() { node -e "const s=require('net').createServer();s.listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"; }

pg_answers() { # url
  node -e "const {Client}=require('pg');const c=new Client({connectionString:process.argv[1],connectionTimeoutMillis:2000});c.connect().then(()=>c.end()).then(()=>process.exit(0),()=>process.exit(1))" "$1" 2>/dev/null
}

if [ -z "${TEST_PG_ADMIN_URL:-}" ]; then
  if pg_answers "postgres://postgres@127.0.0.1:5432/postgres"; then
    export TEST_PG_ADMIN_URL="postgres://postgres@127.0.0.1:5432/postgres"
  else
    _pg_bin=""
    if command -v pg_config >/dev/null && [ -x "$(pg_config --bindir)/initdb" ]; then _pg_bin=$(pg_config --bindir)
    else _pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1); fi
    if [ -z "$_pg_bin" ] || [ ! -x "$_pg_bin/initdb" ]; then
      echo "PostgreSQL is not answering at 127.0.0.1:5432 (user postgres, no password) and no initdb was found to start one." >&2
      echo "Install it (apt-get install -y postgresql), start it, or set TEST_PG_ADMIN_URL to an admin connection string." >&2
      exit 1
    fi
    port=$(free_port)
    _started_pg="$SERVICES_STATE/pg"
    mkdir -p "$_started_pg"
    as_pg=()
    if [ "$(id -u)" = 0 ]; then chown postgres: "$_started_pg"; as_pg=(runuser -u postgres --); fi
    echo "[test] starting a throwaway PostgreSQL on 127.0.0.1:$port" >&2
    "${as_pg[@]}" "$_pg_bin/initdb" -D "$_started_pg" -U postgres --auth=trust -E UTF8 >/dev/null
    "${as_pg[@]}" "$_pg_bin/pg_ctl" -D "$_started_pg" -l "$_started_pg/log" -w \
      -o "-p $port -c listen_addresses=127.0.0.1 -c unix_socket_directories='' -c max_connections=300" start >/dev/null
    export TEST_PG_ADMIN_URL="postgres://postgres@127.0.0.1:$port/postgres"
  fi
fi

if [ -z "${TEST_REDIS_URL:-}" ]; then
  if command -v redis-cli >/dev/null && [ "$(redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null)" = "PONG" ]; then
    export TEST_REDIS_URL="redis://127.0.0.1:6379"
  elif command -v redis-server >/dev/null; then
    port=$(free_port)
    echo "[test] starting a throwaway Redis on 127.0.0.1:$port" >&2
    redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --daemonize yes \
      --pidfile "$SERVICES_STATE/redis.pid" --logfile "$SERVICES_STATE/redis.log" >/dev/null
    _started_redis=1
    for _ in $(seq 1 50); do [ "$(redis-cli -p "$port" ping 2>/dev/null)" = "PONG" ] && break; sleep 0.1; done
    export TEST_REDIS_URL="redis://127.0.0.1:$port"
  else
    echo "Redis is not answering at 127.0.0.1:6379 and redis-server is not installed." >&2
    echo "Install it (apt-get install -y redis-server), start it, or set TEST_REDIS_URL." >&2
    exit 1
  fi
fi
if ! command -v redis-server >/dev/null; then
  echo "redis-server is not installed: the tests that stop and restart Redis start their own. apt-get install -y redis-server" >&2
  exit 1
fi
