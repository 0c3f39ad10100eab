"""Games behind one interface (``base.Game``); the registry maps wire names to games."""

from p2pwhist.games.base import ConfigError, Game
from p2pwhist.games.boxwhist import BoxWhist
from p2pwhist.wire import describe

GAMES: dict[str, type] = {BoxWhist.name: BoxWhist}


def game_from_wire(obj: object) -> Game:
    """Parse a game configuration received from a peer or read from a file."""
    name = obj.get("game") if isinstance(obj, dict) else None
    if type(name) is not str or name not in GAMES:
        raise ConfigError(f"unknown game {describe(name)}; this version knows {', '.join(GAMES)}")
    return GAMES[name].from_wire(obj)
