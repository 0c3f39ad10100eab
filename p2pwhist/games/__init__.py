"""The games: the interface every game implements (``base``), match play (``match``), each
game's rules engine and words, and the registry that names them all (``registry.GAMES``)."""
