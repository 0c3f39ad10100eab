"""The import graph of ``p2pwhist/`` (issue 21: a game is a folder), read with ``ast``.

The rules, which keep every arrow pointing down:
- a game's folder (``games/<game>/``) is imported by nobody outside it: the registry finds the
  folders by name (``registry.FOLDERS``), so a game is added without editing what runs games;
- a game's folder imports, of the rest of ``games/``, only the shared modules (``base``, the
  interface; ``match``; ``bots``, the search machinery every game's bots use; ``doubledummy``,
  the endgame solver of the two-seat whist games, and ``jointsearch``, its search over several
  deals at once), never another game's folder or the registry;
- ``games/`` imports nothing of the program above it: outside ``games/`` only the leaf modules
  ``cards``, ``text`` and ``wire`` (no bots outside ``games/``, session, net, table, ui, cli).
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "p2pwhist"
GAMES = PACKAGE / "games"
GAME_FOLDERS = sorted(p.name for p in GAMES.iterdir() if (p / "__init__.py").exists())
SHARED = {"p2pwhist.games.base", "p2pwhist.games.match", "p2pwhist.games.bots", "p2pwhist.games.doubledummy",
          "p2pwhist.games.jointsearch"}
BELOW_GAMES = {"p2pwhist.cards", "p2pwhist.text", "p2pwhist.wire"}


def _module(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """The p2pwhist modules ``path`` imports (``from a import b`` counts as a.b when b is a module)."""
    names: set[str] = set()
    package = _module(path) if path.name == "__init__.py" else _module(path).rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the module's own package up
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names
                         if (PACKAGE.parent / f"{base}.{alias.name}".replace(".", "/")).is_dir()
                         or (PACKAGE.parent / (f"{base}.{alias.name}".replace(".", "/") + ".py")).exists())
    return {name for name in names if name == "p2pwhist" or name.startswith("p2pwhist.")}


def _graph() -> dict[str, set[str]]:
    return {_module(path): _imports(path) for path in sorted(PACKAGE.rglob("*.py"))}


def _within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def test_there_are_game_folders() -> None:
    assert GAME_FOLDERS, "no game folder found under p2pwhist/games/"
    assert not (PACKAGE / "bots").exists(), "bots live in their game's folder, the shared machinery in games/bots.py"


def test_nobody_outside_a_game_folder_imports_it() -> None:
    arrows = [(module, name) for module, names in _graph().items() for name in sorted(names)
              for game in GAME_FOLDERS
              if _within(name, f"p2pwhist.games.{game}") and not _within(module, f"p2pwhist.games.{game}")]
    assert arrows == []


def test_a_game_folder_imports_only_the_shared_games_modules() -> None:
    arrows = []
    for module, names in _graph().items():
        for game in GAME_FOLDERS:
            if _within(module, f"p2pwhist.games.{game}"):
                arrows += [(module, name) for name in sorted(names) if _within(name, "p2pwhist.games")
                           and name not in SHARED | {"p2pwhist.games"} and not _within(name, f"p2pwhist.games.{game}")]
    assert arrows == []


def test_games_import_nothing_above_them() -> None:
    arrows = [(module, name) for module, names in _graph().items() if _within(module, "p2pwhist.games")
              for name in sorted(names)
              if not _within(name, "p2pwhist.games") and name not in BELOW_GAMES | {"p2pwhist"}]
    assert arrows == []
