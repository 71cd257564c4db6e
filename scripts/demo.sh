#!/usr/bin/env bash
# The Quarry demo: start a gateway, ingest the example corpus (a fictional ferry operator's
# documents in five formats) and show what search returns: a table, a whole section, a paraphrase,
# a document's section tree and items, and a program run in a sandbox over the same documents
# (quarry exec). It ends with the web console's address and a key to sign in with; on a terminal
# the gateway then stays up until Ctrl-C, otherwise it stops at once. The gateway is stopped on
# every exit path.
#
# Assumes setup and build were done (PostgreSQL running, gateway/target/*.jar built).
# Environment: JAVA_HOME (optional); QUARRY_DEMO_PORT to pin the port (default: any free port);
# the gateway's own QUARRY_* settings (database etc.) are passed through. The demo works as the
# default tenant, with an API key it makes through the admin API (QUARRY_ADMIN_TOKEN, a random one
# unless set).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
jar="$root/gateway/target/quarry-gateway-0.1.0-SNAPSHOT.jar"
corpus="$root/examples/corpus"
java="${JAVA_HOME:+$JAVA_HOME/bin/}java"
readonly START_TIMEOUT_S=120

if [[ ! -f "$jar" ]]; then
  echo "demo: $jar is missing; build first (./quarry build)" >&2
  exit 1
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/quarry-demo.XXXXXX")"
log="$work/gateway.log"
gateway_pid=""

stop_gateway() {
  local status=$?
  if [[ -n "$gateway_pid" ]] && kill -0 "$gateway_pid" 2>/dev/null; then
    kill -TERM "$gateway_pid" 2>/dev/null || true
    # The gateway drains and closes its pool on SIGTERM; give it a bounded while.
    for _ in $(seq 1 30); do
      kill -0 "$gateway_pid" 2>/dev/null || break
      sleep 0.5
    done
    kill -KILL "$gateway_pid" 2>/dev/null || true
    wait "$gateway_pid" 2>/dev/null || true
  fi
  if [[ $status -ne 0 && -s "$log" ]]; then
    echo "--- last lines of the gateway log ($log) ---" >&2
    tail -n 20 "$log" >&2
  fi
  umount -l "$work/data" "$work/run" 2>/dev/null || true
  rm -rf "$work"
  exit $status
}
serving=0
trap stop_gateway EXIT
# Ctrl-C while the console is being served is how the demo is meant to end: a clean exit.
trap 'if [[ $serving == 1 ]]; then exit 0; else exit 130; fi' INT
trap 'exit 143' TERM

# The data and run directories each a filesystem of their own, so that a sandbox's mountinfo shows
# nothing of the host (README, Security); the gateway refuses to start otherwise.
mkdir -p "$work/data" "$work/run"
for dir in "$work/data" "$work/run"; do
  mount -t tmpfs -o size=1g,mode=0755 tmpfs "$dir" \
    || { echo "demo: cannot mount a tmpfs on $dir (the demo runs as root)" >&2; exit 1; }
done

quarry() {
  "$java" -jar "$jar" "$@" --url "$url"
}

step() {
  printf '\n\033[1m== %s\033[0m\n' "$*"
}

step "Starting the gateway"
export QUARRY_ADMIN_TOKEN="${QUARRY_ADMIN_TOKEN:-demo-$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')}"
QUARRY_DATA_DIR="${QUARRY_DATA_DIR:-$work/data}" QUARRY_SANDBOX_RUN_DIR="${QUARRY_SANDBOX_RUN_DIR:-$work/run}" \
  QUARRY_SANDBOX_MOUNT_PRIVACY="${QUARRY_SANDBOX_MOUNT_PRIVACY:-require}" \
  QUARRY_METRICS_PORT="${QUARRY_METRICS_PORT:-0}" \
  "$java" -jar "$jar" serve --port "${QUARRY_DEMO_PORT:-0}" >"$log" 2>&1 &
gateway_pid=$!

# The gateway prints its URL once it listens (it migrates the database first); then /readyz must
# answer. Both waits are bounded.
url=""
deadline=$((SECONDS + START_TIMEOUT_S))
while [[ -z "$url" ]]; do
  url="$(grep -o 'listening on http://[^ ]*' "$log" 2>/dev/null | head -n 1 | cut -d' ' -f3 || true)"
  if ! kill -0 "$gateway_pid" 2>/dev/null; then
    echo "demo: the gateway exited during start-up" >&2
    exit 1
  fi
  if (( SECONDS > deadline )); then
    echo "demo: the gateway did not start within ${START_TIMEOUT_S}s" >&2
    exit 1
  fi
  [[ -n "$url" ]] || sleep 0.5
done
until curl -fsS "$url/readyz" >/dev/null 2>&1; do
  if (( SECONDS > deadline )); then
    echo "demo: $url/readyz did not answer within ${START_TIMEOUT_S}s" >&2
    exit 1
  fi
  sleep 0.5
done
echo "gateway ready at $url"

step "An API key for the default tenant (quarry admin keys create)"
QUARRY_API_KEY="$(quarry admin keys create --name demo --key-only 00000000-0000-0000-0000-000000000001)"
export QUARRY_API_KEY
echo "key ${QUARRY_API_KEY:0:15}… (every other command sends it as Authorization: Bearer)"

step "Ingesting the example corpus: $(ls "$corpus" | tr '\n' ' ')"
quarry ingest "$corpus"

step "The knowledge base"
quarry documents

step "A table question: the answer sits in a table on page 1 of a PDF"
quarry search --limit 2 "How many passengers did the Skerry Point route carry in the third quarter of 2024?"

step "A section question: the hit expands to the whole section of a Word document"
quarry search --limit 2 "What should the crew do about a fire on the car deck?"

step "A paraphrase: the question is not worded the way the service notice that answers it is"
quarry search --limit 2 "Can I take my car over to Skerry Point in February?"

step "Across formats: the fleet table in the Markdown handbook"
quarry search --limit 2 "Which is the oldest ship and how many cars does she carry?"

report_id="$(quarry documents --json \
  | grep -o '"id":"[^"]*","title":"[^"]*","uri":"[^"]*annual-report-2024.pdf"' | cut -d'"' -f4 || true)"
if [[ -n "$report_id" ]]; then
  step "The annual report's section tree (toc.json)"
  quarry toc "$report_id"
  step "Its first items (items.jsonl), with labels and pages"
  quarry items --limit 8 "$report_id"
fi

step "Code in a sandbox (quarry exec): a program searches, counts and reads /documents"
cat > "$work/program.py" <<'PY'
import json
from pathlib import Path

docs = await list_documents()
print(len(docs), "documents:", sorted(d["title"] for d in docs))
hits = await search("fire on the car deck", limit=3)
for h in hits:
    print(round(h["score"], 4), h["document_title"], "|", " > ".join(h["headings"]))
first = docs[0]["id"]
items = [json.loads(line) for line in Path("/documents/" + first + "/items.jsonl").read_text().splitlines()]
{"items": len(items), "labels": sorted(set(i["label"] for i in items))}
PY
quarry exec "$work/program.py"

step "The web console"
echo "open      $url/"
echo "sign in   $QUARRY_API_KEY"
echo "(the key of the default tenant, made for this demo; the console keeps it in the tab's session only)"
if [[ -t 1 ]]; then
  echo
  echo "The gateway stays up for the console; press Ctrl-C to stop it."
  serving=1
  # Background jobs of a script ignore SIGINT, so Ctrl-C reaches this shell's trap, which stops the gateway.
  wait "$gateway_pid" || true
  serving=0
  echo "demo: the gateway exited" >&2
  exit 1
fi

step "Done: stopping the gateway"
