"""Round 8's client helpers: round_rt's, against r8_serve.sh's gateway (port 19300, var dir redteam/var8)."""
import os
import round_rt

round_rt.configure(8)
round_rt.PORT = int(os.environ.get("RT_PORT", "19300"))
from round_rt import *  # noqa: E402,F401,F403
