"""The game registry: every game by its name, with everything about it (``base.GameEntry``).

Each game is a folder of this package whose ``__init__`` defines its ``ENTRY``; ``FOLDERS`` names
them, and is the only line that changes when a game is added. Code that runs games (the session,
verify, the CLI, the UI, the score sheet) looks a game up here and imports no game's folder: the
folders are imported by name below, so no other module holds an arrow into one
(``tests/test_import_graph.py``).
"""

import importlib

from p2pwhist.games.base import ConfigError, Game, GameEntry
from p2pwhist.wire import describe

# The games' folders, one a line; the first is the default game.
FOLDERS = (
    "boxwhist",
    "box",
)

GAMES: dict[str, GameEntry] = {
    entry.name: entry for entry in (importlib.import_module(f"p2pwhist.games.{folder}").ENTRY for folder in FOLDERS)
}


def chosen(name: str, players: int | None, variant: str | None) -> tuple[GameEntry, Game]:
    """The game a person asked for by name, number of players and variant (None: the game's
    defaults), or a ``ConfigError`` naming what the game allows."""
    entry = GAMES[name]
    players = entry.default_players if players is None else players
    if players not in entry.players:
        raise ConfigError(f"{name} is for {', '.join(map(str, entry.players))} players, not {players}")
    options = {}
    if variant is not None:
        variants = entry.options.get("variant")
        if variants is None:
            raise ConfigError(f"{name} has no variants")
        if variant not in variants:
            raise ConfigError(f"{name}'s variants are {', '.join(variants)}, not {variant!r}")
        options["variant"] = variant
    return entry, entry.make(players, **options)


def game_entry(game: Game) -> GameEntry:
    """The registry's entry for a game configuration."""
    return GAMES[game.name]


class UnknownGame(ConfigError):
    """A game this version does not know: its rules, and so any judgement of it, are not here."""


def game_from_wire(obj: object) -> Game:
    """Parse a game configuration received from a peer or read from a file."""
    name = obj.get("game") if isinstance(obj, dict) else None
    if type(name) is not str or name not in GAMES:
        raise UnknownGame(f"unknown game {describe(name)}; this version knows {', '.join(GAMES)}")
    return GAMES[name].from_wire(obj)
