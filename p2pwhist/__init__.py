"""p2pwhist: card games between peers who share no server and need not trust each other.

Layers, each depending only on those before it:
cards → games (the interface, and one folder per game: its rules engine, words and bots) →
deck (mental poker) → session → net → cli/ui. Which games there are, the registry says
(``p2pwhist.games.registry.GAMES``).
"""

__version__ = "0.1.0"
