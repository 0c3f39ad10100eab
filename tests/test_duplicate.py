"""scripts/duplicate.py: a head to head of the search bot against itself says both sides'
budgets. A searching opponent plays at the measured bot's budget unless ``--opponent-level``
gives it a level's (playouts, cap when there is a clock, switches), and every result records
the budget it played at, so that no reader takes a run at one budget for a run against
another."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))

import duplicate

from p2pwhist.games.boxwhist.search import SearchBot


def run(capsys, *argv: str) -> list[dict]:
    duplicate.main(["--pairs", "1", "--seed", "3", *argv])
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])["results"]


def test_a_searching_opponent_gets_the_subjects_budget_unless_given_a_level(capsys):
    same, heuristic = run(capsys, "--playouts", "20", "--time-limit", "0", "--opponents", "search,heuristic")
    assert same["pairing"] == "search vs search" and same["opponent_playouts"] == same["playouts"] == 20
    assert heuristic["opponent_playouts"] is None  # it does not search

    easy = SearchBot.budgets["easy"]
    (levelled,) = run(capsys, "--playouts", "20", "--time-limit", "0", "--opponents", "search",
                      "--opponent-level", "easy")
    assert levelled["playouts"] == 20 and levelled["opponent_playouts"] == easy.playouts
    assert levelled["pairing"] == f"search vs search(playouts={easy.playouts},inference=off)"  # easy's switch

    (own,) = run(capsys, "--playouts", "20", "--opponents", "search(playouts=30)", "--opponent-level", "easy",
                 "--mode", "rotations", "--players", "3")
    assert own["opponent_playouts"] == 30  # the spec's own word wins
    assert f"time_limit={easy.seconds}" in own["pairing"]  # with a clock, the level's cap
