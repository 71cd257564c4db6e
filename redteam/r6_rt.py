"""Round 6's client helpers: round_rt's, for round 6 (port 18680 unless RT_PORT, var dir redteam/var6)."""
import round_rt

round_rt.configure(6)
from round_rt import *  # noqa: E402,F401,F403 (the scripts use rt.PORT, rt.key(), ...)
