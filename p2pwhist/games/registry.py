"""The game registry: every game by its name, with everything about it (``base.GameEntry``).

Each game is a folder of this package whose ``__init__`` defines its ``ENTRY``; ``FOLDERS`` names
them, and is the only line that changes when a game is added. Code that runs games (the session,
verify, the CLI, the UI, the score sheet) looks a game up here and imports no game's folder: the
folders are imported by name below, so no other module holds an arrow into one
(``tests/test_import_graph.py``).
"""

import importlib
from collections.abc import Mapping
from typing import Any

from p2pwhist.games.base import ConfigError, Game, GameEntry, GameOption
from p2pwhist.wire import describe

# The games' folders, one a line; the first is the default game.
FOLDERS = (
    "boxwhist",
    "box",
    "germanwhist",
)

# Each entry is typed with its game's own hands and views, which no code outside the game's folder
# names, so here they are Any: a caller finds a game's entry by the game's name, and so gives its
# words only that game's hands and views.
GAMES: dict[str, GameEntry[Any, Any]] = {
    entry.name: entry for entry in (importlib.import_module(f"p2pwhist.games.{folder}").ENTRY for folder in FOLDERS)
}


def chosen(name: str, players: int | None, options: Mapping[str, object]) -> tuple[GameEntry, Game]:
    """The game a person asked for by name, number of players and ``options`` (those given by
    name; None: the game's default), or a ``ConfigError`` naming what the game allows."""
    entry = GAMES[name]
    players = entry.default_players if players is None else players
    if players not in entry.players:
        raise ConfigError(f"{name} is for {', '.join(map(str, entry.players))} players, not {players}")
    known = {option.name: option for option in entry.options}
    for key, value in options.items():
        option = known.get(key)
        if option is None:
            raise ConfigError(f"{name} has no {key} option" + (f" (its options: {', '.join(known)})" if known else ""))
        if value not in option.choices:
            raise ConfigError(f"{name}'s {key} is one of {', '.join(map(str, option.choices))}, not {value!r}")
    return entry, entry.make(players, **options)


def options_offered() -> dict[str, GameOption]:
    """Every option some game has, by name, each once (the first game's, for its type)."""
    offered: dict[str, GameOption] = {}
    for entry in GAMES.values():
        for option in entry.options:
            offered.setdefault(option.name, option)
    return offered


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
