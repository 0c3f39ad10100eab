"""The terminal interface: a seat played by a person, and a spectator of bots.

``render`` turns views and states into text (pure functions); ``terminal`` is the loop that
writes that text and reads the person's plays.
"""

from p2pwhist.ui.terminal import InputClosed, TerminalPlayer, Watcher

__all__ = ["InputClosed", "TerminalPlayer", "Watcher"]
