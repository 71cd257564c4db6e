#!/usr/bin/env bash
# Round 8's red-team gateway (issue 33 re-attack): port 19300 (metrics 19301), database
# quarry_redteam_r8 (owned by quarry), var dir redteam/var8 with data (2 GiB, documents in it
# a 1 GiB one) and sandbox run dir (16 MiB), as the k8s pod's volumes, each a tmpfs of their own, mount privacy required, the pod's
# heap (-Xmx2304m). Makes two tenant keys (var8/key, var8/key2) with the admin token.
# `r8_serve.sh stop` stops the gateway and unmounts.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"; root="$(cd "$here/.." && pwd)"
port="${RT_PORT:-19300}"; var="$here/var8"; db=quarry_redteam_r8
if [ "${1:-}" = stop ]; then
  [ -s "$var/pid" ] && kill "$(cat "$var/pid")" 2>/dev/null || true
  sleep 3; for d in "$var/data/documents" "$var/data" "$var/run"; do mountpoint -q "$d" && umount -l "$d" || true; done; exit 0
fi
mkdir -p "$var/data" "$var/run"
mountpoint -q "$var/data" || mount -t tmpfs -o size=2g,mode=0755 tmpfs "$var/data"
mkdir -p "$var/data/documents"; mountpoint -q "$var/data/documents" || mount -t tmpfs -o size=1g,mode=0755 tmpfs "$var/data/documents"
mountpoint -q "$var/run" || mount -t tmpfs -o size=16m,mode=0755 tmpfs "$var/run"
PGPASSWORD=quarry psql -h 127.0.0.1 -U quarry -d postgres -Atc "select 1 from pg_database where datname='$db'" | grep -q 1 \
  || PGPASSWORD=quarry psql -h 127.0.0.1 -U quarry -d postgres -c "CREATE DATABASE $db OWNER quarry"
export QUARRY_ADMIN_TOKEN="$(cat "$var/admin_token" 2>/dev/null || (head -c 24 /dev/urandom | base64 | tr -d '/+=' | tee "$var/admin_token"))"
export QUARRY_PG_DATABASE=$db QUARRY_HTTP_PORT="$port" QUARRY_METRICS_PORT=$((port + 1))
export QUARRY_DATA_DIR="$var/data" QUARRY_SANDBOX_RUN_DIR="$var/run" QUARRY_SANDBOX_MOUNT_PRIVACY=require
export QUARRY_LOG_FORMAT=text QUARRY_PG_POOL_SIZE=16 QUARRY_SANDBOX_MAX_ACTIVE=16 QUARRY_SANDBOX_POOL_PER_TENANT=2
for kv in ${RT_ENV:-}; do export "$kv"; done
JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64
nohup "$JAVA_HOME/bin/java" -Xmx2304m --add-modules jdk.incubator.vector -cp "$root/gateway/target/quarry-gateway-0.1.0-SNAPSHOT.jar" dev.quarry.cli.Main serve --port "$port" >"$var/gw.log" 2>&1 &
echo $! >"$var/pid"
for i in $(seq 1 180); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 1; done
mk() { curl -s -X POST "http://127.0.0.1:$port/v1/admin/tenants" -H "Authorization: Bearer $QUARRY_ADMIN_TOKEN" \
  -H 'Content-Type: application/json' -d "{\"name\": \"$1-$RANDOM$RANDOM\"}"; }
for k in key key2; do
  [ -s "$var/$k" ] || mk "r8$k" | tee "$var/$k.json" | python3 -c 'import json,sys; print(json.load(sys.stdin)["api_key"])' >"$var/$k"
done
echo "gateway pid $(cat "$var/pid") on $port; keys in $var/key, $var/key2"
