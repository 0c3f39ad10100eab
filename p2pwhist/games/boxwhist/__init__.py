"""Box Whist, all of it: its rules engine (``engine``), its words (``text``), its bots (a
card-counting player, ``heuristic``, and a search that plays sampled deals out by its rules,
``search``),
and ``ENTRY``, which is all the rest of the program knows of it: the registry
(``p2pwhist.games.registry``) finds it by this folder's name, and nothing outside the folder
imports it.
"""

from p2pwhist.games.base import GameEntry
from p2pwhist.games.bots import RandomBot
from p2pwhist.games.boxwhist.engine import DEAL_SIZES, BoxWhist, Illegal
from p2pwhist.games.boxwhist.heuristic import HeuristicBot
from p2pwhist.games.boxwhist.search import SearchBot
from p2pwhist.games.boxwhist.text import BoxWhistText

ENTRY = GameEntry(
    name=BoxWhist.name,
    make=BoxWhist,
    from_wire=BoxWhist.from_wire,
    players=tuple(sorted(DEAL_SIZES)),
    default_players=2,
    options=(),
    bots={"random": RandomBot, "heuristic": HeuristicBot, "search": SearchBot},
    # At its default level: about 0.2 s a move on average at 2 players, capped at 0.9 s (scripts/time_cap.py).
    default_bot="search",
    text=BoxWhistText(),
    on_honour=frozenset({Illegal.MUST_FOLLOW_SUIT}),  # rule 6: a revoke, found by the audit (rule 11)
)
