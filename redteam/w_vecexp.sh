#!/usr/bin/env bash
# R4-1 and memory at the unit level: VectorIndex (package-private) driven directly, from the built
# gateway jar (build first). Modes:
#   w_vecexp.sh dup DUPS DISTINCT   DUPS copies of one random vector beside DISTINCT random ones:
#                                   how many distinct ones their own vector finds (top 100, top 1)
#   w_vecexp.sh groups G C          G vectors, C identical copies of each
#   w_vecexp.sh clustered           3,000 clustered vectors, 200 far queries: recall@10 and a hash
#                                   of the results (the same before and after R4-1's fix)
#   w_vecexp.sh mem N               build time, estimate, reported bytes and retained heap at N chunks
#   RT_HISTO=N w_vecexp.sh          a copy of N chunks kept 15 s: class histogram (byte[] vs bytes())
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
jar="$here/../gateway/target/quarry-gateway-0.1.0-SNAPSHOT.jar"
jh="$("$here/../scripts/setup.sh" --print-java-home)"
out=/tmp/rt4-vecexp; mkdir -p "$out"
"$jh/bin/javac" -d "$out" -cp "$jar" "$here/w_vecexp/VecExp.java"
if [[ -n ${RT_HISTO:-} ]]; then
  "$jh/bin/java" -Xmx2g -cp "$out:$jar" dev.quarry.search.VecHisto "$RT_HISTO" 15000 >"$out/histo.out" 2>&1 &
  sleep 10; for i in $(seq 60); do grep -q built "$out/histo.out" && break; sleep 1; done
  grep built "$out/histo.out"; "$jh/bin/jcmd" "$(grep -o 'pid [0-9]*' "$out/histo.out" | cut -d' ' -f2)" GC.class_histogram | head -6
  wait; exit 0
fi
"$jh/bin/java" -Xmx2g -cp "$out:$jar" dev.quarry.search.VecExp "$@" 2>&1 | grep -v "WARN\|Vectorization\|INFO\|^Dec\|lookup"
