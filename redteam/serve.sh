#!/usr/bin/env bash
# Starts a red-team gateway on 127.0.0.1:18480 against its own database (quarry_redteam), with the
# heap the k8s pod gets (1536Mi limit x MaxRAMPercentage=75 ~= 1152m). Writes redteam/var/gateway.pid
# and redteam/var/key (a tenant key) and redteam/var/key2 (a second tenant).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
var="$here/var"; mkdir -p "$var/data" "$var/run"
for d in "$var/data" "$var/run"; do mountpoint -q "$d" || mount -t tmpfs -o size=2g,mode=0755 tmpfs "$d"; done
export QUARRY_ADMIN_TOKEN="${QUARRY_ADMIN_TOKEN:-redteam-admin-token-0123456789}"
export QUARRY_PG_DATABASE=quarry_redteam QUARRY_HTTP_PORT=18480 QUARRY_METRICS_PORT=19480
export QUARRY_DATA_DIR="$var/data" QUARRY_SANDBOX_RUN_DIR="$var/run" QUARRY_SANDBOX_MOUNT_PRIVACY=require
JAVA_HOME=$("$root/scripts/setup.sh" --print-java-home)
nohup "$JAVA_HOME/bin/java" -Xmx${RT_XMX:-1152m} -jar "$root/gateway/target/quarry-gateway-0.1.0-SNAPSHOT.jar" serve --port 18480 >"$var/gateway.log" 2>&1 &
echo $! >"$var/gateway.pid"
for i in $(seq 1 120); do curl -sf http://127.0.0.1:18480/healthz >/dev/null && break; sleep 1; done
mk() { curl -s -X POST http://127.0.0.1:18480/v1/admin/tenants -H "Authorization: Bearer $QUARRY_ADMIN_TOKEN" \
  -H 'Content-Type: application/json' -d "{\"name\": \"$1-$RANDOM$RANDOM\"}" | python3 -c 'import json,sys; print(json.load(sys.stdin)["api_key"])'; }
mk redteam >"$var/key"; mk victim >"$var/key2"
echo "gateway pid $(cat "$var/gateway.pid"); keys in $var/key, $var/key2"
