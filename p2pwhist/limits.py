"""The defaults of a networked game, apart from ``p2pwhist.net``: the argument parser shows
them, and ``p2pwhist verify`` should not wait for trio to import to print its help."""

# The port ``host`` listens on and ``join`` connects to unless told otherwise.
DEFAULT_PORT = 7878
# Humans think: the most one seat may take over one message is generous; bots answer in
# milliseconds, so tests and benchmarks set it lower with --timeout.
DEFAULT_TIMEOUT = 600.0
# How long the table waits for a seat whose connection was lost (--wait).
DEFAULT_WAIT = 300.0
# The floors of the limits a table agrees in START (session.md §7.3): a person needs a few
# seconds for a move, a connection a few to come back, and every seat that co-signs a forfeit
# checks the time on its own clock, which a relayed message reaches seconds late at worst.
MIN_MOVE = 10
MIN_WAIT = 10
MAX_LIMIT = 2 * 86400
# Spectators watching a host's table at once (--spectators): a few friends; each costs the
# host one connection and a copy of the log sent, never a wait. --delay is at most a day.
DEFAULT_SPECTATORS = 4
MAX_SPECTATORS = 64
MAX_DELAY = 86400
