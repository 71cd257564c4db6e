#!/usr/bin/env bash
# R5-5: a gateway that dies (SIGKILL) while a cell swallows its interrupts (a bare except in a loop)
# leaves that sandbox running at full CPU for good: the runner only stops at a cell's end, and the
# next gateway process (a new random QUARRY_GATEWAY_ID, QUARRY_SANDBOX_REAP_ALL_ON_START=false by
# default, as under ./quarry serve) reaps only containers labelled with its own id.
# Restarts the gateway on RT_PORT (default 18580) with RT_ENV as given.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"; port="${RT_PORT:-18580}"; var="$here/var5"
key=$(cat "$var/key"); tid=$(python3 -c "import json;print(json.load(open('$var/key.json'))['id'])")
code='while True:\n    try:\n        while True:\n            pass\n    except:\n        pass'
curl -s -m 5 "http://127.0.0.1:$port/v1/executions" -H "Authorization: Bearer $key" -H 'Content-Type: application/json' \
  -d "{\"code\": \"$code\", \"limits\": {\"wall_time_ms\": 20000}}" >/dev/null &
sleep 3
echo "running: $(docker ps -q --filter label=quarry.tenant=$tid | wc -l) containers of the tenant"
kill -9 "$(cat "$var/$port.pid")"; sleep 1
"$here/r5_serve.sh" >/dev/null
echo "restarted; waiting 75 s (past the 60 s reap interval and the cell's 20 s wall time)"; sleep 75
docker ps --filter label=quarry.tenant=$tid --format '{{.Names}} {{.Status}} {{.Label "quarry.gateway"}}'
for c in $(docker ps -q --filter label=quarry.tenant=$tid); do docker stats --no-stream --format '{{.Name}} CPU {{.CPUPerc}} MEM {{.MemUsage}}' $c; done
echo "run dirs: $(ls "$var/run-$port")"
