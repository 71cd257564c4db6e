#!/usr/bin/env bash
# Round 4: starts red-team gateway replica(s) of this branch on one database (quarry_redteam4).
#   redteam/w_serve.sh PORT [MEMORY_MB] [XMX]     e.g. w_serve.sh 8091 64 512m
# Writes redteam/var4/PORT.pid and PORT.log; the tenant keys are made by w_tenants.sh.
# RT_JAR: another gateway jar (a saved build, to compare builds); RT_JAVA_OPTS: extra JVM options.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
port="$1"; mem="${2:-1024}"; xmx="${3:-1152m}"
var="$here/var4"; mkdir -p "$var/data-$port" "$var/run-$port"
# as serve.sh: each its own tmpfs, so that the sandbox mount-privacy check (require) passes
for d in "$var/data-$port" "$var/run-$port"; do mountpoint -q "$d" || mount -t tmpfs -o size=512m,mode=0755 tmpfs "$d"; done
# the database, created as serve.sh's setup does (owner quarry; template1 carries pgvector)
PGPASSWORD=quarry psql -h 127.0.0.1 -U quarry -d postgres -Atc "select 1 from pg_database where datname='quarry_redteam4'" | grep -q 1 \
  || PGPASSWORD=quarry psql -h 127.0.0.1 -U quarry -d postgres -c "CREATE DATABASE quarry_redteam4"
export QUARRY_ADMIN_TOKEN="${QUARRY_ADMIN_TOKEN:-redteam-admin-token-0123456789}"
export QUARRY_PG_DATABASE=quarry_redteam4 QUARRY_HTTP_PORT="$port" QUARRY_SEARCH_MEMORY_MB="$mem"
export QUARRY_METRICS_PORT=$((port + 1000))  # GET /metrics is served there, not on the API's port
export QUARRY_DATA_DIR="$var/data-$port" QUARRY_SANDBOX_RUN_DIR="$var/run-$port" QUARRY_SANDBOX_MOUNT_PRIVACY=require
JAVA_HOME=$("$root/scripts/setup.sh" --print-java-home)
nohup "$JAVA_HOME/bin/java" -Xmx"$xmx" ${RT_JAVA_OPTS:-} -jar "${RT_JAR:-$root/gateway/target/quarry-gateway-0.1.0-SNAPSHOT.jar}" serve --port "$port" >"$var/$port.log" 2>&1 &
echo $! >"$var/$port.pid"
for i in $(seq 1 180); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 1; done
echo "gateway pid $(cat "$var/$port.pid") on $port (QUARRY_SEARCH_MEMORY_MB=$mem, -Xmx$xmx)"
