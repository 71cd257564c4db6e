"""Round 5's client helpers: round_rt's, for round 5 (port 18580 unless RT_PORT, var dir redteam/var5)."""
import round_rt

round_rt.configure(5)
from round_rt import *  # noqa: E402,F401,F403 (the scripts use rt.PORT, rt.key(), ...)
