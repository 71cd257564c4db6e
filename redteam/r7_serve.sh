#!/usr/bin/env bash
# Round 7's red-team gateway: round_serve.sh 7 (port 18780 unless RT_PORT, database quarry_redteam7,
# redteam/var7). Env as round_serve.sh says.
exec "$(dirname "$0")/round_serve.sh" 7 "$@"
