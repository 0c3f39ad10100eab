"""Bradley's Box, all of it: its rules engine (``engine``), its words (``text``), its bots (a
rule-of-thumb player, ``heuristic``, and a PIMC search over its fast simulator, ``search``), and
``ENTRY``, which is all the rest of the program knows of it: the registry
(``p2pwhist.games.registry``) finds it by this folder's name, and nothing outside the folder
imports it.
"""

from p2pwhist.games.base import GameEntry, GameOption
from p2pwhist.games.bots import RandomBot
from p2pwhist.games.box.engine import DEFAULT_PLAYERS, MAX_PLAYERS, MIN_PLAYERS, ON_HONOUR, Box, Variant
from p2pwhist.games.box.heuristic import BoxHeuristicBot
from p2pwhist.games.box.search import BoxSearchBot
from p2pwhist.games.box.text import BoxText

ENTRY = GameEntry(
    name=Box.name,
    make=Box,
    from_wire=Box.from_wire,
    players=tuple(range(MIN_PLAYERS, MAX_PLAYERS + 1)),
    default_players=DEFAULT_PLAYERS,
    options=(
        GameOption("variant", str, tuple(variant.value for variant in Variant), Variant.SEED.value,
                   "the rules as read: seed (an empty box loses) or pagat (pagat.com's: the last box left wins)"),
    ),
    bots={"random": RandomBot, "heuristic": BoxHeuristicBot, "search": BoxSearchBot},
    # Under the seed rules (the default) search only equals the heuristic head to head (0.251 of
    # the points, fair 0.25) and does worse against random players (loses 0.201 of its games
    # against the heuristic's 0.188); it is stronger under pagat's (0.278). scripts/duplicate.py.
    default_bot="heuristic",
    text=BoxText(),
    on_honour=ON_HONOUR,  # rule 9: lead the highest card, lay when able
)
