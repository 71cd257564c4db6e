#!/usr/bin/env bash
# Round 6's red-team gateway: round_serve.sh 6 (port 18680 unless RT_PORT, database quarry_redteam6,
# redteam/var6). Env as round_serve.sh says.
exec "$(dirname "$0")/round_serve.sh" 6 "$@"
