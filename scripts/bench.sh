#!/usr/bin/env bash
# Runs the benchmarks (dev.quarry.bench.BenchMain) and lets each rewrite its section of
# BENCHMARKS.md. Called by ./quarry bench after setup and build; usage: bench.sh [retrieval|models|latency|ingest|tenants|all]
set -euo pipefail
cd "$(dirname "$0")/.."
JAVA_HOME=${JAVA_HOME:-$(scripts/setup.sh --print-java-home)}
export JAVA_HOME PATH="$JAVA_HOME/bin:$PATH"
[[ -f bench/target/classpath.txt ]] || mvn -B -q package -DskipTests
which=("${@:-all}")
exec java --enable-native-access=ALL-UNNAMED -Xmx6g \
  -Dbench.command="./quarry bench ${which[*]}" \
  -cp "bench/target/classes:$(cat bench/target/classpath.txt)" \
  dev.quarry.bench.BenchMain "${which[@]}"
