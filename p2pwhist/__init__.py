"""p2pwhist: Box Whist between peers who share no server and need not trust each other.

Layers, each depending only on those before it:
cards → games (rules engines, bots) → deck (mental poker) → session → net → cli/ui.
"""

__version__ = "0.1.0"
