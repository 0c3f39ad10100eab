"""scripts/duplicate.py: a head to head of the search bot against itself says both sides'
budgets. A searching opponent plays at the measured bot's budget unless ``--opponent-level``
gives it a level's (playouts, cap when there is a clock, switches), and every result records
the budget it played at, so that no reader takes a run at one budget for a run against
another. A run in deal pairs records each pair, so that ``scripts/paired.py`` can compare two
runs pair by pair."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))

import duplicate
import paired

from p2pwhist.games.boxwhist.search import SearchBot


def run(capsys, *argv: str) -> list[dict]:
    duplicate.main(["--pairs", "1", "--seed", "3", *argv])
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])["results"]


def test_a_searching_opponent_gets_the_subjects_budget_unless_given_a_level(capsys):
    same, heuristic = run(capsys, "--playouts", "20", "--time-limit", "0", "--opponents", "search,heuristic")
    # The budget is the playouts and the level's further counts (Box Whist's PIMC playouts).
    counts = "search(pimc_playouts={})".format(dict(SearchBot.budgets["normal"].counts)["pimc_playouts"])
    assert same["pairing"] == f"{counts} vs {counts}" and same["opponent_playouts"] == same["playouts"] == 20
    assert heuristic["opponent_playouts"] is None  # it does not search

    easy = SearchBot.budgets["easy"]
    (levelled,) = run(capsys, "--playouts", "20", "--time-limit", "0", "--opponents", "search",
                      "--opponent-level", "easy")
    assert levelled["playouts"] == 20 and levelled["opponent_playouts"] == easy.playouts
    pimc = dict(easy.counts)["pimc_playouts"]
    assert levelled["pairing"] == f"{counts} vs search(playouts={easy.playouts},pimc_playouts={pimc},inference=off)"

    (own,) = run(capsys, "--playouts", "20", "--opponents", "search(playouts=30)", "--opponent-level", "easy",
                 "--mode", "rotations", "--players", "3")
    assert own["opponent_playouts"] == 30  # the spec's own word wins
    assert f"time_limit={easy.seconds}" in own["pairing"]  # with a clock, the level's cap


def test_a_pairs_run_records_each_pair_so_paired_can_compare_two(capsys, tmp_path):
    argv = ["--pairs", "3", "--seed", "5", "--time-limit", "0", "--opponents", "heuristic"]
    texts = []
    for playouts in ("20", "40"):
        duplicate.main([*argv, "--playouts", playouts])
        texts.append(capsys.readouterr().out)
    (result,) = json.loads(texts[0].strip().splitlines()[-1])["results"]
    assert len(result["per_deal"]) == result["pairs"] == 3
    assert sum(won for won, _ in result["per_deal"]) == result["search_won"]
    assert sum(decided for _, decided in result["per_deal"]) == result["hands_decided"]
    assert all(0 <= won <= decided <= 2 for won, decided in result["per_deal"])  # two hands a pair

    (tmp_path / "a").write_text(texts[0])
    (tmp_path / "b").write_text(texts[1])
    paired.main([str(tmp_path / "a"), str(tmp_path / "b")])
    compared = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    shares = []
    for text in texts:
        per_pair = json.loads(text.strip().splitlines()[-1])["results"][0]["per_deal"]
        shares.append(sum(won for won, _ in per_pair) / sum(decided for _, decided in per_pair))
    assert compared["deals"] == 3 and compared["difference"] == round(shares[1] - shares[0], 4)
