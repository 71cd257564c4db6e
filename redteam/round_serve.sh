#!/usr/bin/env bash
# Red-team rounds 5 on: `round_serve.sh N` starts a red-team gateway of this branch on
# 127.0.0.1:${RT_PORT:-18080 + 100 N} against its own database (quarry_redteamN), var dir
# redteam/varN (data/run each its own tmpfs, mount privacy required), and makes two tenant keys
# (varN/key, varN/key2) unless they exist for this database. Each round's rN_serve.sh calls it.
# Env: RT_PORT, RT_XMX, RT_ENV (extra "K=V K=V" settings, e.g. a model URL), RT_TAG (a suffix for
# varN files when running a second gateway), RT_JAR.
set -euo pipefail
round="$1"
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
port="${RT_PORT:-$((18080 + 100 * round))}"; tag="${RT_TAG:-$port}"
var="$here/var$round"; mkdir -p "$var/data-$tag" "$var/run-$tag"
for d in "$var/data-$tag" "$var/run-$tag"; do mountpoint -q "$d" || mount -t tmpfs -o size=512m,mode=0755 tmpfs "$d"; done
PGPASSWORD=quarry psql -h 127.0.0.1 -U quarry -d postgres -Atc "select 1 from pg_database where datname='quarry_redteam$round'" | grep -q 1 \
  || PGPASSWORD=quarry psql -h 127.0.0.1 -U quarry -d postgres -c "CREATE DATABASE quarry_redteam$round"
export QUARRY_ADMIN_TOKEN="${QUARRY_ADMIN_TOKEN:-$(cat "$var/admin_token" 2>/dev/null || (head -c 24 /dev/urandom | base64 | tr -d '/+=' | tee "$var/admin_token"))}"
export QUARRY_PG_DATABASE=quarry_redteam$round QUARRY_HTTP_PORT="$port" QUARRY_METRICS_PORT=$((port + 1000))
export QUARRY_DATA_DIR="$var/data-$tag" QUARRY_SANDBOX_RUN_DIR="$var/run-$tag" QUARRY_SANDBOX_MOUNT_PRIVACY=require
export QUARRY_LOG_FORMAT=text
for kv in ${RT_ENV:-}; do export "$kv"; done
JAVA_HOME=$("$root/scripts/setup.sh" --print-java-home)
nohup "$JAVA_HOME/bin/java" -Xmx${RT_XMX:-1152m} -jar "${RT_JAR:-$root/gateway/target/quarry-gateway-0.1.0-SNAPSHOT.jar}" serve --port "$port" >"$var/$tag.log" 2>&1 &
echo $! >"$var/$tag.pid"
for i in $(seq 1 180); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 1; done
mk() { curl -s -X POST "http://127.0.0.1:$port/v1/admin/tenants" -H "Authorization: Bearer $QUARRY_ADMIN_TOKEN" \
  -H 'Content-Type: application/json' -d "{\"name\": \"$1-$RANDOM$RANDOM\"}"; }
for k in key key2; do
  [ -s "$var/$k" ] || mk "r$round$k" | tee "$var/$k.json" | python3 -c 'import json,sys; print(json.load(sys.stdin)["api_key"])' >"$var/$k"
done
echo "gateway pid $(cat "$var/$tag.pid") on $port; keys in $var/key, $var/key2"
