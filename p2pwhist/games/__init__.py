"""The games: the interface every game implements (``base``), match play (``match``), the
search machinery every game's bots share (``bots``), one folder per game holding all of it
(engine, words, bots, its ``ENTRY``), and the registry that finds them (``registry.GAMES``)."""
