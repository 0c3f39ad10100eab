"""How people reach a table with no server: tables found on the local network, and a port
mapped by a home router so that friends across the internet can connect.

``_ads`` is pure (an announcement as a value, read back as one); ``lan`` and ``portmap`` are
the edge, and are never fatal to a game: what fails costs one line and the game goes on.
"""

from p2pwhist.reach._ads import MAX_TABLES, SERVICE_TYPE, BadAd, TableAd, read_ad, table_ad

__all__ = ["MAX_TABLES", "SERVICE_TYPE", "BadAd", "TableAd", "read_ad", "table_ad"]
