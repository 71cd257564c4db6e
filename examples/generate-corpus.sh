#!/usr/bin/env bash
# Regenerates the binary documents of the example corpus (annual-report-2024.pdf,
# safety-procedures.docx) from examples/generator/GenerateCorpus.java, using the gateway's own
# PDFBox and POI. Needs a prior `mvn install` (the dependencies in the local Maven repository).
set -euo pipefail
cd "$(dirname "$0")/.."
cp_file=$(mktemp)
trap 'rm -f "$cp_file"' EXIT
mvn -B -q -o dependency:build-classpath -pl gateway -Dmdep.outputFile="$cp_file" >/dev/null
java -cp "$(cat "$cp_file")" examples/generator/GenerateCorpus.java examples/corpus
