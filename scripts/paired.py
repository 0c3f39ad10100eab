#!/usr/bin/env python3
"""Two ``scripts/duplicate.py`` runs on the same deals, compared deal by deal: the difference
in the search seat's share of the points (in deal pairs, 2 players: of the decided hands), B's
less A's, with a 95% interval clustered by deal (by deal pair).

Both runs must be of the same game, table, options, seed and opponent, so that deal i is the
same deck and dealer in each (duplicate.py derives them from ``--seed`` in deal order); they
differ in the bot measured (``--search``, ``--playouts``, a version of the code). Pairing the
deals takes out their luck, which dominates a share's interval: a difference too small to show
between two separate intervals can show here. Over the deals both runs finished.

The interval is the delta method's for a difference of two ratio estimates, each
sum(search points) / sum(all points), with each deal's two runs as one cluster.

    python scripts/paired.py A.json B.json

Each file is a duplicate.py output (its last line, the JSON object, is read), with one result
or with ``--result N`` picking one by index (the same in both). The last line printed is one
JSON object.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from duplicate import cluster_half_width, mode_of, ratio_terms

# What must agree for deal i to be the same deal in both runs.
SAME = ("game", "variant", "players", "seed", "mode", "pairing_opponent")


def share_difference(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> tuple[float, float, float]:
    """(B's share - A's share, interval low, interval high) over the deals both have; deal i of
    ``a`` and of ``b`` (search points, all points) are the same deal."""
    k = min(len(a), len(b))
    a, b = a[:k], b[:k]
    if k < 2 or not sum(d for _, d in a) or not sum(d for _, d in b):
        raise ValueError("need at least 2 deals with points in each run")
    ra, terms_a = ratio_terms(a)
    rb, terms_b = ratio_terms(b)
    # A deal's two runs are one cluster: its term is the difference of the two shares' terms.
    half = cluster_half_width([tb - ta for ta, tb in zip(terms_a, terms_b, strict=True)])
    return rb - ra, rb - ra - half, rb - ra + half


def load(path: Path, index: int) -> dict:
    """Result ``index`` of the duplicate.py output in ``path``, checked: its per-deal points
    pairs of whole numbers, the search seat's within the deal's, and a pairing named."""
    lines = [line for line in path.read_text(errors="replace").splitlines() if line.strip()]
    if not lines:
        raise ValueError(f"{path}: empty")
    try:
        result = json.loads(lines[-1])["results"][index]
        pairing = result["pairing"]
    except (ValueError, KeyError, IndexError, TypeError, RecursionError):  # RecursionError: nesting too deep
        raise ValueError(f"{path}: its last line is not a duplicate.py result {index}") from None
    per_deal = result.get("per_deal")
    if per_deal is None:
        raise ValueError(f"{path}: result {index} has no per-deal points (a run of an older duplicate.py)")
    if not isinstance(pairing, str) or not isinstance(per_deal, list) or not all(
            isinstance(deal, list) and len(deal) == 2 and all(type(x) is int for x in deal) and 0 <= deal[0] <= deal[1]
            for deal in per_deal):
        raise ValueError(f"{path}: result {index}'s pairing or per-deal points are not a duplicate.py run's")
    result["pairing_opponent"] = pairing.split(" vs ")[-1]
    result["mode"] = mode_of(result)
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("a", type=Path, help="duplicate.py output: the run compared against")
    parser.add_argument("b", type=Path, help="duplicate.py output: the run measured")
    parser.add_argument("--result", type=int, default=0, help="which result of each (default: the first)")
    args = parser.parse_args(argv)
    try:
        a, b = load(args.a, args.result), load(args.b, args.result)
        differing = [key for key in SAME if a.get(key) != b.get(key)]
        if differing:
            raise ValueError(f"not the same deals: the runs differ in {', '.join(differing)}")
        difference, low, high = share_difference(a["per_deal"], b["per_deal"])
    except (OSError, ValueError) as error:
        sys.exit(f"paired.py: {error}")
    deals = min(len(a["per_deal"]), len(b["per_deal"]))
    unit = "deal pairs" if a["mode"] == "pairs" else "deals"
    print(f"{a['game']}, {a['players']} players, seed {a['seed']}, {deals} {unit}: B - A = {difference:+.4f} "
          f"(95% CI by deal {low:+.4f} to {high:+.4f}); A {a['pairing']}, B {b['pairing']}")
    print(json.dumps({"deals": deals, "difference": round(difference, 4), "ci95": [round(low, 4), round(high, 4)],
                      "a": a["pairing"], "b": b["pairing"]}))


if __name__ == "__main__":
    main()
