#!/usr/bin/env bash
# The gateway's container image (gateway/Dockerfile): build it, and with --check run it the way
# k8s/base/deployment.yaml runs it and drive it through its public API.
#
#   scripts/gateway-image.sh           build quarry-gateway:0.1.0 (QUARRY_GATEWAY_IMAGE)
#   scripts/gateway-image.sh --check   build, then run it as uid 10002 with a read-only root, every
#                                      capability dropped and no new privileges, against this host's
#                                      PostgreSQL (a throwaway database) and Docker engine, and check
#                                      /healthz, /readyz, an ingest, a program in a sandbox that
#                                      searches, and a SIGTERM that exits 0 and leaves no sandbox.
#
# The base is eclipse-temurin:21-jre (QUARRY_JRE_IMAGE) when the engine has it or can pull it. Where
# no registry is reachable (this project's build machines), a stand-in is made: a jlink'd runtime of
# the JDK that setup found, on the Debian base image that setup builds for the sandboxes.
# Assumes setup and build were done (./quarry image does both).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
jar="$root/gateway/target/quarry-gateway-0.1.0-SNAPSHOT.jar"
image="${QUARRY_GATEWAY_IMAGE:-quarry-gateway:0.1.0}"
jre_image="${QUARRY_JRE_IMAGE:-eclipse-temurin:21-jre}"
standin_image="quarry-jre:local"
# What jdeps finds in the shaded jar (jdeps --print-module-deps --ignore-missing-deps
# --multi-release 21), plus java.logging and jdk.crypto.ec that libraries reach by reflection, and
# jdk.incubator.vector, which Lucene uses for the vector copies' distances when it is added (Dockerfile).
jre_modules="java.base,java.compiler,java.desktop,java.logging,java.naming,java.net.http,java.security.jgss,java.sql,java.xml.crypto,jdk.crypto.ec,jdk.incubator.vector,jdk.jfr,jdk.management,jdk.unsupported"
readonly START_TIMEOUT_S=180

die() { echo "gateway-image: $*" >&2; exit 1; }
say() { echo "gateway-image: $*"; }

# Runs a command with its output kept back, and shown only if it fails.
quiet() {
  local out
  out="$("$@" 2>&1)" || { echo "$out" >&2; die "failed: $*"; }
}

[[ -f "$jar" ]] || die "$jar is missing; build first (./quarry build)"

base_image() {
  if docker image inspect "$jre_image" >/dev/null 2>&1 \
      || timeout 30 docker pull -q "$jre_image" >/dev/null 2>&1; then
    echo "$jre_image"
    return
  fi
  local java_home
  java_home="$("$root/scripts/setup.sh" --print-java-home)"
  local version
  version="$("$java_home/bin/java" -version 2>&1 | head -n 1 | tr -dc 'A-Za-z0-9._+ -')"
  if [[ "$(docker image inspect -f '{{index .Config.Labels "quarry.jre"}}' "$standin_image" 2>/dev/null)" \
      != "$version $jre_modules" ]]; then
    local work
    work="$(mktemp -d)"
    # shellcheck disable=SC2064
    trap "rm -rf '$work'" RETURN
    "$java_home/bin/jlink" --add-modules "$jre_modules" --strip-debug --no-man-pages \
      --no-header-files --output "$work/jre" >&2
    cat >"$work/Dockerfile" <<EOF
FROM $(bash "$root/sandbox-image/build-base.sh" --print-image)
COPY jre /opt/java/openjdk
ENV JAVA_HOME=/opt/java/openjdk PATH=/opt/java/openjdk/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
LABEL quarry.jre="$version $jre_modules"
EOF
    quiet docker build -q -t "$standin_image" "$work"
    echo "gateway-image: $jre_image is not reachable; made $standin_image ($version, jlink)" >&2
  fi
  echo "$standin_image"
}

build() {
  local base previous
  base="$(base_image)"
  previous="$(docker image inspect -f '{{.Id}}' "$image" 2>/dev/null || true)"
  quiet docker build -q --build-arg JRE_IMAGE="$base" -t "$image" "$root/gateway"
  # Each new jar is a new layer of a few hundred MB: the image it replaces goes, not to fill the disk.
  if [[ -n "$previous" && "$previous" != "$(docker image inspect -f '{{.Id}}' "$image")" ]]; then
    docker rmi "$previous" >/dev/null 2>&1 || true
  fi
  say "built $image on $base"
}

# The check's names are globals: the EXIT trap that removes what they name runs after check() returns.
name="quarry-gateway-check-$$"
gateway_id="image-check-$$"
db="quarry_image_check_$$"
work=""
psql=(env PGPASSWORD="${QUARRY_PG_PASSWORD:-quarry}" psql -q -v ON_ERROR_STOP=1
      -h "${QUARRY_PG_HOST:-127.0.0.1}" -p "${QUARRY_PG_PORT:-5432}" -U "${QUARRY_PG_USER:-quarry}" -d postgres)

cleanup() {
  local status=$?
  if [[ $status -ne 0 ]] && docker inspect "$name" >/dev/null 2>&1; then
    echo "--- last lines of the gateway container's log ---" >&2
    docker logs --tail 30 "$name" >&2 2>&1 || true
  fi
  docker rm -f "$name" >/dev/null 2>&1 || true
  docker ps -aq --filter "label=quarry.gateway=$gateway_id" | xargs -r docker rm -f >/dev/null 2>&1 || true
  "${psql[@]}" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 || true
  if [[ -n "$work" ]]; then
    umount -l "$work/data" "$work/run" 2>/dev/null || true
    rm -rf "$work"
  fi
  exit $status
}

check() {
  local port mport url token key
  trap cleanup EXIT
  work="$(mktemp -d)"
  port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
  mport="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
  url="http://127.0.0.1:$port"
  token="check-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"
  local java
  java="$("$root/scripts/setup.sh" --print-java-home)/bin/java"
  "${psql[@]}" -c "CREATE DATABASE $db"
  # The pod's emptyDirs: owned by the gateway's user, at the same path for the gateway and the engine,
  # each a filesystem of its own (medium: Memory), so that sandboxes' mountinfo shows no host path
  # and the gateway, held to that (require), starts.
  mkdir -p "$work/data" "$work/run"
  mount -t tmpfs -o size=512m,mode=0755,uid=10002,gid=10002 tmpfs "$work/data"
  mount -t tmpfs -o size=16m,mode=0755,uid=10002,gid=10002 tmpfs "$work/run"
  chmod 0755 "$work"

  docker run -d --name "$name" --network host \
    --user 10002:10002 --group-add "$(stat -c %g /var/run/docker.sock)" \
    --read-only --tmpfs /tmp:rw,exec,size=512m \
    --cap-drop ALL --security-opt no-new-privileges \
    -v /var/run/docker.sock:/var/run/docker.sock \
    -v "$work/data:$work/data" -v "$work/run:$work/run" \
    -e QUARRY_HTTP_PORT="$port" -e QUARRY_METRICS_PORT="$mport" -e QUARRY_PG_DATABASE="$db" \
    -e QUARRY_DATA_DIR="$work/data" -e QUARRY_SANDBOX_RUN_DIR="$work/run" -e QUARRY_SANDBOX_MOUNT_PRIVACY=require \
    -e QUARRY_GATEWAY_ID="$gateway_id" -e QUARRY_ADMIN_TOKEN="$token" \
    -e QUARRY_SANDBOX_POOL_PER_TENANT=0 -e QUARRY_DRAIN_GRACE_SECONDS=10 \
    "$image" serve >/dev/null

  local deadline=$((SECONDS + START_TIMEOUT_S))
  until curl -fsS "$url/readyz" >/dev/null 2>&1; do
    [[ "$(docker inspect -f '{{.State.Running}}' "$name")" == true ]] || die "the gateway container exited during start-up"
    (( SECONDS < deadline )) || die "$url/readyz did not answer within ${START_TIMEOUT_S}s"
    sleep 0.5
  done
  curl -fsS "$url/healthz" >/dev/null || die "/healthz failed"
  say "ready: /healthz and /readyz answer"
  # Read whole, then matched: piped into grep -q, curl fails (23) when grep stops reading at the first
  # match and the body is larger than the pipe holds, which pipefail turns into a failed check.
  local scraped
  scraped=$(curl -fsS "http://127.0.0.1:$mport/metrics") && grep -q '^quarry_' <<<"$scraped" \
    || die "/metrics on the metrics port ($mport) failed"
  [[ "$(curl -s -o /dev/null -w '%{http_code}' "$url/metrics")" == 404 ]] || die "the API's port serves /metrics"
  say "/metrics on its own port, not on the API's"

  key="$("$java" -jar "$jar" admin keys create --name image-check --key-only \
    00000000-0000-0000-0000-000000000001 --url "$url" --admin-token "$token")" \
    || die "creating an API key failed"
  "$java" -jar "$jar" ingest "$root/examples/corpus/fleet-handbook.md" --url "$url" --api-key "$key" >/dev/null \
    || die "ingest through the image failed"
  cat >"$work/program.py" <<'PY'
hits = await search("oldest ship", limit=1)
docs = await list_documents()
print("documents", len(docs), "hits", len(hits), "first", hits[0]["document_title"])
PY
  local out
  out="$("$java" -jar "$jar" exec "$work/program.py" --url "$url" --api-key "$key")" \
    || die "a program in a sandbox through the image failed: $out"
  [[ "$out" == *"documents 1 hits 1"* ]] || die "unexpected program output: $out"
  say "ingest, search and a sandboxed program work through the image ($out)"

  docker stop -t 60 "$name" >/dev/null
  local code
  code="$(docker inspect -f '{{.State.ExitCode}}' "$name")"
  [[ "$code" == 0 ]] || die "the gateway exited with $code on SIGTERM (expected 0)"
  local left
  left="$(docker ps -aq --filter "label=quarry.gateway=$gateway_id" | wc -l)"
  [[ "$left" == 0 ]] || die "$left sandbox container(s) left after the gateway stopped"
  say "SIGTERM: exit 0, no sandbox left"
}

case "${1:-}" in
  "") build ;;
  --check) build; check ;;
  *) die "unknown argument '$1' (usage: $0 [--check])" ;;
esac
