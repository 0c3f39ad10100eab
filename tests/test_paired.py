"""scripts/paired.py: two duplicate runs on the same deals compared deal by deal; the difference
in share is the two shares' difference, its interval narrower than either run's own where the
deals' luck is shared. Runs of different deals, and files that are not duplicate.py's (garbage,
deep nesting, impossible points), are refused saying why: never compared, never a traceback."""

from __future__ import annotations

import json
import math
import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))

import paired
from duplicate import ratio_ci


def runs(deals: int, seed: int) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """Two runs' (search points, all points) by deal, B a little better than A, both mostly
    deal luck: the deal's points and a shared strength of the seat on it."""
    rng = random.Random(seed)
    a, b = [], []
    for _ in range(deals):
        points = rng.randint(2, 4)
        luck = rng.randint(0, points)
        a.append((luck, points))
        b.append((min(points, luck + (rng.random() < 0.3)), points))
    return a, b


def test_the_difference_is_the_two_shares_difference_and_pairing_narrows_it():
    a, b = runs(300, 1)
    difference, low, high = paired.share_difference(a, b)
    share = [sum(w for w, _ in run) / sum(d for _, d in run) for run in (a, b)]
    assert difference == pytest.approx(share[1] - share[0])
    assert low < difference < high
    unpaired = math.hypot(*((h - lo) / 2 for lo, h in (ratio_ci(a), ratio_ci(b))))
    assert (high - low) / 2 < unpaired / 2  # the shared luck cancels


def test_a_run_against_itself_differs_by_nothing():
    a, _ = runs(50, 2)
    assert paired.share_difference(a, a) == (0.0, 0.0, 0.0)


def test_only_the_deals_both_runs_finished_count():
    a, b = runs(40, 3)
    assert paired.share_difference(a, b[:25]) == paired.share_difference(a[:25], b[:25])


def output(path: Path, seed: int, per_deal: list[tuple[int, int]], pairing: str = "search vs heuristic") -> Path:
    result = {"game": "boxwhist", "variant": None, "players": 4, "seed": seed, "pairing": pairing,
              "per_deal": per_deal}
    path.write_text("progress lines\n" + json.dumps({"level": "normal", "results": [result]}) + "\n")
    return path


def test_the_script_prints_the_difference_last_as_json(tmp_path, capsys):
    a, b = runs(30, 4)
    paired.main([str(output(tmp_path / "a", 7, a)), str(output(tmp_path / "b", 7, b))])
    last = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert last["deals"] == 30
    assert last["difference"] == round(paired.share_difference(a, b)[0], 4)


@pytest.mark.parametrize("change, words", [
    ({"seed": 8}, "differ in seed"),
    ({"pairing": "search vs random"}, "differ in pairing_opponent"),
    ({"text": ""}, "empty"),
    ({"text": "{not json\n"}, "not a duplicate.py result"),
    ({"text": json.dumps({"results": [{"pairing": "x vs y"}]})}, "no per-deal points"),
    # Garbage in a file: deep nesting, wrong types, impossible points, bytes that are not text.
    ({"text": "[" * 100_000 + "]" * 100_000}, "not a duplicate.py result"),
    ({"text": json.dumps({"results": [{"pairing": 7, "per_deal": [[1, 2]]}]})}, "are not a duplicate.py run's"),
    ({"text": json.dumps({"results": [{"pairing": "x vs y", "per_deal": [["1", 2]]}]})}, "are not"),
    ({"text": json.dumps({"results": [{"pairing": "x vs y", "per_deal": [[3, 2]]}]})}, "are not"),
    ({"text": json.dumps({"results": [{"pairing": "x vs y", "per_deal": {"a": 1}}]})}, "are not"),
    ({"text": json.dumps({"results": [{"pairing": "x vs y", "per_deal": [[1, 2, 3]] * 10**5}]})}, "are not"),
    ({"text": json.dumps({"results": []})}, "not a duplicate.py result"),
    ({"bytes": b"\xff\xfe\x00{\n"}, "not a duplicate.py result"),
])
def test_runs_of_other_deals_or_no_runs_are_refused_saying_why(tmp_path, capsys, change, words):
    a, b = runs(10, 5)
    first = output(tmp_path / "a", 7, a)
    second = output(tmp_path / "b", change.get("seed", 7), b, change.get("pairing", "search vs heuristic"))
    if "text" in change:
        second.write_text(change["text"])
    if "bytes" in change:
        second.write_bytes(change["bytes"])
    with pytest.raises(SystemExit) as exit_:
        paired.main([str(first), str(second)])
    assert words in str(exit_.value)


def test_a_pairs_run_is_not_compared_with_a_rotations_run(tmp_path):
    a, b = runs(10, 6)
    rotations = output(tmp_path / "a", 7, a)
    pairs = output(tmp_path / "b", 7, b)
    result = json.loads(pairs.read_text().splitlines()[-1])
    result["results"][0]["pairs"] = 10  # duplicate.py's pairs mode
    pairs.write_text(json.dumps(result))
    with pytest.raises(SystemExit) as exit_:
        paired.main([str(rotations), str(pairs)])
    assert "differ in mode" in str(exit_.value)
