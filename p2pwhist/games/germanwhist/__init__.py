"""German Whist, the two-player ancestor of Box Whist, all of it: its rules engine (``engine``),
its words (``text``), its bots (a card-counting player, ``heuristic``, and a search over sampled
deals with the heuristic's playouts, ``search``), and ``ENTRY``, which is all the rest of the
program knows of it: the registry (``p2pwhist.games.registry``) finds it by this folder's name,
and nothing outside the folder imports it. The rules every peer enforces are
``protocol/rules-germanwhist.md``.
"""

from p2pwhist.games.base import GameEntry, GameOption
from p2pwhist.games.bots import RandomBot
from p2pwhist.games.germanwhist.engine import PLAYERS, GermanWhist, Illegal, Scoring
from p2pwhist.games.germanwhist.heuristic import GermanWhistHeuristicBot
from p2pwhist.games.germanwhist.search import GermanWhistSearchBot
from p2pwhist.games.germanwhist.text import GermanWhistText

ENTRY = GameEntry(
    name=GermanWhist.name,
    make=GermanWhist,
    from_wire=GermanWhist.from_wire,
    players=(PLAYERS,),
    default_players=PLAYERS,
    options=(
        GameOption("variant", str, tuple(scoring.value for scoring in Scoring), Scoring.LAST13.value,
                   "which tricks score (rule 9): last13, the 13 after the stack is gone, or all26"),
    ),
    bots={"random": RandomBot, "heuristic": GermanWhistHeuristicBot, "search": GermanWhistSearchBot},
    # At its normal level search wins 0.70 of the decided hands against the heuristic (400
    # deal pairs), 0.21 s a move on average (search.py, scripts/duplicate.py --game germanwhist).
    default_bot="search",
    text=GermanWhistText(),
    on_honour=frozenset({Illegal.MUST_FOLLOW_SUIT}),  # rule 6: a revoke, found by the audit
)
