#!/usr/bin/env bash
# Runs the benchmarks (dev.quarry.bench.BenchMain) and lets each rewrite its section of
# BENCHMARKS.md. Called by ./quarry bench after setup and build; usage: bench.sh [retrieval|filings|models|latency|ingest|documents|sandbox|tenants|analyses|soak|all]
# (soak: ~5.5 min, QUARRY_SOAK_SECONDS; runs as root, it creates and restarts a PostgreSQL cluster of its own on
# port QUARRY_SOAK_PG_PORT, 5439)
# QUARRY_EMBEDDING_MODEL picks the in-process model the benchmarks embed with, as it does for the gateway.
# BENCH_JAVA_OPTS passes system properties, e.g. -Dbench.collections=cranfield-long (retrieval at chunk
# length), -Dbench.analyses.warmup=N, -Dbench.latency.warmup=N.
set -euo pipefail
cd "$(dirname "$0")/.."
JAVA_HOME=${JAVA_HOME:-$(scripts/setup.sh --print-java-home)}
export JAVA_HOME PATH="$JAVA_HOME/bin:$PATH"
[[ -f bench/target/classpath.txt ]] || mvn -B -q package -DskipTests
which=("${@:-all}")
# The sandbox benchmark measures the runner of this checkout: build it into an image of its own
# (Docker's layer cache makes this quick when nothing changed) unless one is named.
if [[ " ${which[*]} " =~ " sandbox " || " ${which[*]} " =~ " analyses " || " ${which[*]} " =~ " soak " || " ${which[*]} " =~ " all " ]] && [[ -z "${QUARRY_SANDBOX_IMAGE:-}" ]]; then
  docker image inspect quarry-sandbox-base:bookworm >/dev/null 2>&1 || bash sandbox-image/build-base.sh
  docker build -q -f sandbox-image/Dockerfile --build-arg BASE_IMAGE=quarry-sandbox-base:bookworm \
    -t quarry-sandbox:bench . >/dev/null
  export QUARRY_SANDBOX_IMAGE=quarry-sandbox:bench
fi
# This checkout's own modules, not the copies in ~/.m2: those are whatever the last `mvn install` of
# any checkout on the machine put there, and may be rewritten while the bench runs.
deps=$(tr ':' '\n' < bench/target/classpath.txt | grep -v '/dev/quarry/' | paste -sd: -)
exec java --enable-native-access=ALL-UNNAMED -Xmx6g ${BENCH_JAVA_OPTS:-} \
  -Dbench.command="./quarry bench ${which[*]}" \
  -cp "bench/target/classes:gateway/target/classes:proto/target/classes:$deps" \
  dev.quarry.bench.BenchMain "${which[@]}"
