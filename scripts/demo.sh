#!/usr/bin/env bash
# The Quarry demo: start a gateway, ingest the example corpus (a fictional ferry operator's
# documents in five formats) into a tenant of its own, show what search returns (a table, a whole
# section, a paraphrase, a document's section tree and items, a program run in a sandbox), then ask
# two questions that need code (quarry demo questions): each analysis streams as `quarry ask` shows
# it, then its answer, citations and program, then the program is replayed twice and the demo says
# whether the output matches. It ends with how to ask your own question (CLI, console, OpenAI-
# compatible clients, MCP) with the key it made; on a terminal the gateway then stays up until
# Ctrl-C, otherwise it stops at once. Everything it started is stopped on every exit path.
#
# The model: the one configured as for the gateway (OPENAI_BASE_URL or QUARRY_MODEL_BASE_URL,
# OPENAI_API_KEY, QUARRY_MODEL; also from $QUARRY_CONFIG_FILE), or --model URL. Without one the
# gateway is pointed at the recorded model (quarry demo recorded-model), which answers with the
# turns recorded in examples/demo/recording.json; everything after the model is real, and the demo
# says so before the questions and at the end.
#
# Assumes setup and build were done (PostgreSQL running, gateway/target/*.jar built).
# Environment: JAVA_HOME (optional); QUARRY_DEMO_PORT to pin the port (default: any free port);
# the gateway's own QUARRY_* settings (database etc.) are passed through. The demo works as the
# tenant named quarry-demo, which it makes afresh each run (deleting the previous demo's), with the
# API key that comes with it, through the admin API (QUARRY_ADMIN_TOKEN, a random one unless set).
set -euo pipefail

usage() {
  cat <<'USAGE'
usage: ./quarry demo [--model URL]

  --model URL   ask the demo's questions of this OpenAI-compatible endpoint (e.g. https://api.openai.com/v1;
                OPENAI_API_KEY is its key, QUARRY_MODEL the model's name). Without it, the model
                configured for the gateway (OPENAI_BASE_URL, QUARRY_MODEL_BASE_URL) is used, and
                without one a recording of a model's turns is played through the real gateway.
USAGE
}

model_arg=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --model)
      if [[ $# -lt 2 || -z "$2" ]]; then
        echo "demo: --model needs the URL of an OpenAI-compatible endpoint, e.g. https://api.openai.com/v1" >&2
        exit 2
      fi
      model_arg="$2"
      shift 2 ;;
    --model=*)
      model_arg="${1#--model=}"
      shift ;;
    -h|--help)
      usage
      exit 0 ;;
    *)
      echo "demo: unknown argument '$1'" >&2
      usage >&2
      exit 2 ;;
  esac
done
if [[ -n "$model_arg" && ! "$model_arg" =~ ^https?://[^/[:space:]]+ ]]; then
  echo "demo: --model $model_arg is not an http:// or https:// URL (e.g. https://api.openai.com/v1)" >&2
  exit 2
fi

root="$(cd "$(dirname "$0")/.." && pwd)"
jar="$root/gateway/target/quarry-gateway-0.1.0-SNAPSHOT.jar"
corpus="$root/examples/corpus"
recording="$root/examples/demo/recording.json"
readonly TENANT=quarry-demo
java="${JAVA_HOME:+$JAVA_HOME/bin/}java"
readonly START_TIMEOUT_S=120

if [[ ! -f "$jar" ]]; then
  echo "demo: $jar is missing; build first (./quarry build)" >&2
  exit 1
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/quarry-demo.XXXXXX")"
log="$work/gateway.log"
gateway_pid=""
model_pid=""

stop_gateway() {
  local status=$?
  if [[ -n "$model_pid" ]] && kill -0 "$model_pid" 2>/dev/null; then
    kill -TERM "$model_pid" 2>/dev/null || true
    wait "$model_pid" 2>/dev/null || true
  fi
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

# Waits (bounded) for a process to print "listening on http://…" in its log, and prints that URL.
listening_url() {
  local pid=$1 file=$2 what=$3 found=""
  local deadline=$((SECONDS + START_TIMEOUT_S))
  while [[ -z "$found" ]]; do
    found="$(grep -o 'listening on http://[^ ]*' "$file" 2>/dev/null | head -n 1 | cut -d' ' -f3 || true)"
    if [[ -z "$found" ]] && ! kill -0 "$pid" 2>/dev/null; then
      echo "demo: $what exited during start-up:" >&2
      tail -n 20 "$file" >&2
      exit 1
    fi
    if (( SECONDS > deadline )); then
      echo "demo: $what did not start within ${START_TIMEOUT_S}s" >&2
      exit 1
    fi
    [[ -n "$found" ]] || sleep 0.5
  done
  echo "$found"
}

recorded_notice() {
  cat <<EOF
The model's turns in this demo are RECORDED: no model is configured, so the gateway's model is a
small OpenAI-compatible server (quarry demo recorded-model) that answers with the code a model wrote
for the demo's two questions (examples/demo/recording.json). Everything after the model is real:
the gateway, the sandboxes that run that code, search and the other callbacks, the citations, the
replays, and the console.
To have a real model answer instead:  ./quarry demo --model https://api.openai.com/v1
(with OPENAI_API_KEY set if it needs one, and QUARRY_MODEL naming the model; any OpenAI-compatible
endpoint will do: vLLM, Ollama, llama.cpp server, LiteLLM)
EOF
}

step() {
  printf '\n\033[1m== %s\033[0m\n' "$*"
}

step "The model"
# --model wins over the configured endpoint, as QUARRY_MODEL_BASE_URL wins over OPENAI_BASE_URL.
[[ -z "$model_arg" ]] || export QUARRY_MODEL_BASE_URL="$model_arg"
# Read as the gateway will read it (the environment over $QUARRY_CONFIG_FILE).
configured="$("$java" -jar "$jar" demo model)"
if [[ "$configured" == none ]]; then
  mode=recorded
  recorded_notice
  "$java" -jar "$jar" demo recorded-model --recording "$recording" >"$work/model.log" 2>&1 &
  model_pid=$!
  model_url="$(listening_url "$model_pid" "$work/model.log" "the recorded model")"
  # The gateway's model, for this run only; no key of the user's is sent to it.
  export QUARRY_MODEL_BASE_URL="$model_url" QUARRY_MODEL=recorded-demo-model QUARRY_MODEL_API_KEY=recorded-demo
  echo "recorded model at $model_url"
else
  mode=live
  echo "a live model: $configured"
fi

step "Starting the gateway"
export QUARRY_ADMIN_TOKEN="${QUARRY_ADMIN_TOKEN:-demo-$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')}"
QUARRY_DATA_DIR="${QUARRY_DATA_DIR:-$work/data}" QUARRY_SANDBOX_RUN_DIR="${QUARRY_SANDBOX_RUN_DIR:-$work/run}" \
  QUARRY_SANDBOX_MOUNT_PRIVACY="${QUARRY_SANDBOX_MOUNT_PRIVACY:-require}" \
  QUARRY_METRICS_PORT="${QUARRY_METRICS_PORT:-0}" \
  "$java" -jar "$jar" serve --port "${QUARRY_DEMO_PORT:-0}" >"$log" 2>&1 &
gateway_pid=$!

# The gateway prints its URL once it listens (it migrates the database first); then /readyz must
# answer. Both waits are bounded.
url="$(listening_url "$gateway_pid" "$log" "the gateway")"
deadline=$((SECONDS + START_TIMEOUT_S))
until curl -fsS "$url/readyz" >/dev/null 2>&1; do
  if (( SECONDS > deadline )); then
    echo "demo: $url/readyz did not answer within ${START_TIMEOUT_S}s" >&2
    exit 1
  fi
  sleep 0.5
done
echo "gateway ready at $url"

step "A tenant of the demo's own, and its API key (quarry admin tenants create $TENANT)"
# Made afresh each run, so that its knowledge base is exactly the example corpus (the recorded
# code's output depends on it) and its Analyses list holds this run's.
for old in $(quarry admin tenants list | awk -v name="$TENANT" '$3 == name {print $1}'); do
  quarry admin tenants delete "$old" >/dev/null
  echo "deleted the previous demo's tenant $old"
done
QUARRY_API_KEY="$(quarry admin tenants create --key-only "$TENANT")"
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

step "Questions that need code: the model writes Python that searches and reads, until it can answer"
if [[ $mode == recorded ]]; then
  echo "(recorded model turns, played through the real gateway: see above)"
fi
questions_ok=1
quarry demo questions --recording "$recording" || questions_ok=0
if [[ $questions_ok == 0 ]]; then
  if [[ $mode == recorded ]]; then
    echo "demo: the recorded analyses did not run as recorded (see above)" >&2
    exit 1
  fi
  echo "(the live model did not answer every question with a program that replays the same; see above)"
fi

step "Ask your own question"
cat <<EOF
The gateway at $url holds the example corpus in the tenant $TENANT,
and the demo's analyses under the console's Analyses. Everything below uses this key of that tenant:

  key      $QUARRY_API_KEY

  console  $url/   sign in with the key: Ask, and Analyses (the demo's, with their steps and replays)
  CLI      QUARRY_URL=$url QUARRY_API_KEY=$QUARRY_API_KEY \\
             ./quarry ask "Which vessel is the oldest, and how many cars does she carry?"
  OpenAI   any OpenAI client or chat front end: base URL $url/v1, API key the key above, model "quarry"
  MCP      QUARRY_URL=$url QUARRY_API_KEY=$QUARRY_API_KEY ./quarry mcp
             prints the mcpServers configuration (Streamable HTTP at $url/mcp) for an assistant

(The console keeps the key in the tab's session only. The tenant $TENANT and its key stay in the
database after the demo; the next ./quarry demo replaces them.)
EOF
if [[ $mode == recorded ]]; then
  echo
  recorded_notice
  echo "Until then the gateway's model knows only the demo's two questions: any other question ends"
  echo "without an answer, saying so."
fi
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
