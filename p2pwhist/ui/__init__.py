"""The terminal interface: a seat played by a person, and a spectator of bots.

Each game's screens are its own (``GameText``, in the game registry); ``terminal`` is the loop
that writes them and reads the person's plays, for any game.
"""

from p2pwhist.ui.terminal import InputClosed, TerminalPlayer, Watcher

__all__ = ["InputClosed", "TerminalPlayer", "Watcher"]
