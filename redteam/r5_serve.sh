#!/usr/bin/env bash
# Round 5's red-team gateway: round_serve.sh 5 (port 18580 unless RT_PORT, database quarry_redteam5,
# redteam/var5). Env as round_serve.sh says.
exec "$(dirname "$0")/round_serve.sh" 5 "$@"
