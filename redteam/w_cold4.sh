#!/usr/bin/env bash
# R4-4 rerun: restart 8091 with budget $1 (MB), run w_coldstart.py (WAVE=90), save output + log under /tmp/rt44/$2
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"; mem="$1"; tag="$2"; out=/tmp/rt44/$tag; mkdir -p "$out"
if [ -f "$here/var4/8091.pid" ]; then p=$(cat "$here/var4/8091.pid"); kill "$p" 2>/dev/null; for i in $(seq 1 60); do kill -0 "$p" 2>/dev/null || break; sleep 1; done; fi
"$here/w_serve.sh" 8091 "$mem" | tee "$out/serve.txt"
echo "jar ${RT_JAR:-worktree}" >> "$out/serve.txt"
sleep 5
(uptime; top -bn1 | head -15) > "$out/load_before.txt"
( while sleep 10; do echo "$(date +%T) $(cat /proc/loadavg)"; done ) > "$out/loadavg.txt" & lp=$!
( while sleep 5; do echo "$(date +%T) $(PGPASSWORD=quarry psql -h 127.0.0.1 -U quarry -d postgres -Atc "select count(*) filter (where state='active'), string_agg(distinct datname||':'||left(query,30), ' | ') filter (where state='active') from pg_stat_activity where backend_type='client backend' and datname not in ('quarry_redteam4','postgres')")"; done ) > "$out/otherdb.txt" & op=$!
gp=$(cat "$here/var4/8091.pid"); ( sleep 55; for i in 1 2 3; do date +%T; top -H -b -d 5 -n 2 -p "$gp" | awk '/^top -/{n++} n==2' | sed -n 7,16p; top -b -d 5 -n 2 | awk '/^top -/{n++} n==2' | sed -n 7,14p; sleep 10; done ) > "$out/threads.txt" & tp=$!
cd "$here" && PORT=8091 WAVE=${WAVE:-90} python3 ${SCRIPT:-w_coldstart.py} 2>&1 | tee "$out/coldstart.txt"
kill $lp $op; kill $tp 2>/dev/null
cp "$here/var4/8091.log" "$out/8091.log"
echo "blocked warnings: $(grep -c -i blocked "$out/8091.log")" | tee -a "$out/coldstart.txt"
grep -c '"level":"WARN"\|"level":"ERROR"' "$out/8091.log" | sed 's/^/warn+error lines: /' | tee -a "$out/coldstart.txt"
