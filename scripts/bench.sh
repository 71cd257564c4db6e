#!/usr/bin/env bash
# Runs the benchmarks (dev.quarry.bench.BenchMain) and lets each rewrite its section of
# BENCHMARKS.md. Called by ./quarry bench after setup and build; usage: bench.sh [retrieval|long-queries|filings|conversion|conversion-filings|models|latency|ingest|documents|sandbox|tenants|analyses|surfaces|soak|cluster|cluster-events|cluster-takeover|all]
# (soak: ~5.5 min, QUARRY_SOAK_SECONDS; runs as root, it creates and restarts a PostgreSQL cluster of its own on
# port QUARRY_SOAK_PG_PORT, 5439)
# (cluster: ~12 min; three gateway processes behind HAProxy, as the tests' GatewayCluster runs them;
# -Dbench.cluster.baseline=JAR also runs an earlier gateway jar the same way, -Dquarry.cluster.ports=FROM-TO
# keeps their ports in a range; it ends with cluster-events, ~4 min, which runs alone too:
# -Dbench.cluster.events.analyses=N, -Dbench.cluster.events.inflight=N; and then cluster-takeover, ~6 min, alone
# too: analyses taken over after a replica's kill -9 and drain at the default 15 s lease, and follow-ups;
# -Dbench.cluster.takeover.analyses=N (a round), -Dbench.cluster.takeover.followups=N, -Dbench.cluster.takeover.lease=S)
# (tenants: about 10 min; runs as root, it mounts two tmpfs of its own for the gateway process it starts from
# this checkout's build; -Dbench.tenants.phaseSeconds=N, -Dbench.tenants.port=P (and P+1), -Dbench.tenants.heap=2304m,
# -Dbench.tenants.cases=memory,disk,... pick a subset)
# QUARRY_EMBEDDING_MODEL picks the in-process model the benchmarks embed with, as it does for the gateway.
# BENCH_JAVA_OPTS passes system properties, e.g. -Dbench.collections=cranfield-long (retrieval at chunk
# length), -Dbench.analyses.warmup=N, -Dbench.latency.warmup=N, -Dbench.latency.passes=N,
# -Dbench.latency.sizes=10000,100000,1000000 (latency keeps each size loaded in databases of its own,
# quarry_bench_latency_{q,l}<size>, reused while corpus, loader and schema match; -Dbench.reload=true reloads).
set -euo pipefail
cd "$(dirname "$0")/.."
JAVA_HOME=${JAVA_HOME:-$(scripts/setup.sh --print-java-home)}
export JAVA_HOME PATH="$JAVA_HOME/bin:$PATH"
[[ -f bench/target/classpath.txt ]] || mvn -B -q package -DskipTests
which=("${@:-all}")
# The sandbox benchmark measures the runner of this checkout: build it into an image of its own
# (Docker's layer cache makes this quick when nothing changed) unless one is named.
if [[ " ${which[*]} " =~ " sandbox " || " ${which[*]} " =~ " analyses " || " ${which[*]} " =~ " surfaces " || " ${which[*]} " =~ " tenants " || " ${which[*]} " =~ " soak " || " ${which[*]} " =~ " all " ]] && [[ -z "${QUARRY_SANDBOX_IMAGE:-}" ]]; then
  bash sandbox-image/build-base.sh >/dev/null
  docker build -q -f sandbox-image/Dockerfile --build-arg BASE_IMAGE="$(bash sandbox-image/build-base.sh --print-image)" \
    -t quarry-sandbox:bench . >/dev/null
  export QUARRY_SANDBOX_IMAGE=quarry-sandbox:bench
fi
# QUARRY_SANDBOX_BASELINE_REF=<commit>: also measure the runner of that commit (built into
# quarry-sandbox:bench-baseline, on the base image it names) against this one, alternating, in the same run.
if [[ -n "${QUARRY_SANDBOX_BASELINE_REF:-}" && -z "${QUARRY_SANDBOX_BASELINE_IMAGE:-}" ]]; then
  baseline_tree=$(mktemp -d)
  git archive "$QUARRY_SANDBOX_BASELINE_REF" sandbox-image proto | tar -x -C "$baseline_tree"
  bash "$baseline_tree/sandbox-image/build-base.sh" >/dev/null
  baseline_base=$(bash "$baseline_tree/sandbox-image/build-base.sh" --print-image 2>/dev/null || echo quarry-sandbox-base:bookworm)
  [[ "$baseline_base" == quarry-sandbox-base:* ]] || baseline_base=quarry-sandbox-base:bookworm
  (cd "$baseline_tree" && docker build -q -f sandbox-image/Dockerfile --build-arg BASE_IMAGE="$baseline_base" \
    -t "${QUARRY_SANDBOX_IMAGE:-quarry-sandbox:bench}-baseline" . >/dev/null)
  rm -rf "$baseline_tree"
  export QUARRY_SANDBOX_BASELINE_IMAGE="${QUARRY_SANDBOX_IMAGE:-quarry-sandbox:bench}-baseline"
fi
# QUARRY_CONVERSION_BASELINE_REF=<commit>: conversion-filings also runs that commit's PDF converter (its ingest
# package compiled apart) against this one, filing by filing in turns, in the same run.
if [[ -n "${QUARRY_CONVERSION_BASELINE_REF:-}" && " ${which[*]} " =~ " conversion"(-filings)?" " ]]; then
  conversion_tree=$(mktemp -d)
  git archive "$QUARRY_CONVERSION_BASELINE_REF" gateway/src/main/java/dev/quarry/ingest | tar -x -C "$conversion_tree"
  javac -nowarn -Xprefer:source -d "$conversion_tree/classes" -cp "gateway/target/classes:$(cat bench/target/classpath.txt)" \
    -sourcepath "$conversion_tree/gateway/src/main/java" "$conversion_tree"/gateway/src/main/java/dev/quarry/ingest/Pdf*.java
  BENCH_JAVA_OPTS="${BENCH_JAVA_OPTS:-} -Dbench.conversion.baseline=$conversion_tree/classes -Dbench.conversion.baseline.ref=$QUARRY_CONVERSION_BASELINE_REF"
fi
# QUARRY_INGEST_MEMORY_BASELINE_REF=<commit>: ingest-memory also runs its probes against that commit's gateway
# (its main sources compiled apart), file by file in turns, in the same run.
if [[ -n "${QUARRY_INGEST_MEMORY_BASELINE_REF:-}" && ( " ${which[*]} " =~ " ingest-memory " || " ${which[*]} " =~ " all " ) ]]; then
  memory_tree=$(mktemp -d)
  git archive "$QUARRY_INGEST_MEMORY_BASELINE_REF" gateway/src/main | tar -x -C "$memory_tree"
  mkdir -p "$memory_tree/classes"
  find "$memory_tree/gateway/src/main/java" -name '*.java' > "$memory_tree/sources.txt"
  javac -nowarn -proc:none -d "$memory_tree/classes" \
    -cp "proto/target/classes:$(tr ':' '\n' < bench/target/classpath.txt | grep -v '/dev/quarry/' | paste -sd: -)" @"$memory_tree/sources.txt"
  cp -r "$memory_tree/gateway/src/main/resources/." "$memory_tree/classes/"
  BENCH_JAVA_OPTS="${BENCH_JAVA_OPTS:-} -Dbench.ingestmemory.baseline=$memory_tree/classes -Dbench.ingestmemory.baseline.ref=$QUARRY_INGEST_MEMORY_BASELINE_REF"
fi
# This checkout's own modules, not the copies in ~/.m2: those are whatever the last `mvn install` of
# any checkout on the machine put there, and may be rewritten while the bench runs.
deps=$(tr ':' '\n' < bench/target/classpath.txt | grep -v '/dev/quarry/' | paste -sd: -)
exec java --enable-native-access=ALL-UNNAMED --add-modules jdk.incubator.vector -Xmx6g ${BENCH_JAVA_OPTS:-} \
  -Dbench.command="./quarry bench ${which[*]}" \
  -cp "bench/target/classes:gateway/target/classes:gateway/target/test-classes:proto/target/classes:$deps" \
  dev.quarry.bench.BenchMain "${which[@]}"
