"""Round 7's client helpers: round_rt's, for round 7 (port 18780 unless RT_PORT, var dir redteam/var7)."""
import round_rt

round_rt.configure(7)
from round_rt import *  # noqa: E402,F401,F403 (the scripts use rt.PORT, rt.key(), ...)
