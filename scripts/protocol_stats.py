"""Count the messages and bytes the protocol exchanges, by kind, for one hand.

Plays matches between random bots through real sessions in one process and splits the
log into the match's preamble (START, ACCEPT, the cut), its hands and its end. The last line
is one JSON object keyed by seat count: per-hand message counts and bytes, by kind. Bytes
include each frame's 4-byte length prefix.
"""

from __future__ import annotations

import argparse
import collections
import json
import statistics

from p2pwhist.games.boxwhist.engine import BoxWhist
from p2pwhist.inprocess import random_match
from p2pwhist.signed import Kind


def hand_stats(players: int, hands: int, seed: int) -> dict:
    log = random_match(BoxWhist(players), hands=hands, seed=seed)[0].log
    starts = [i for i, m in enumerate(log) if m.kind is Kind.HAND]  # the last one ends the match
    per_hand = [log[a:b] for a, b in zip(starts, starts[1:])]
    counts = collections.Counter(m.kind.value for hand in per_hand for m in hand)
    sizes = collections.Counter()
    for hand in per_hand:
        for m in hand:
            sizes[m.kind.value] += len(m.raw) + 4  # with the frame's length prefix
    return {
        "messages_per_hand": round(statistics.mean(len(h) for h in per_hand), 1),
        "bytes_per_hand": round(statistics.mean(sum(len(m.raw) + 4 for m in h) for h in per_hand)),
        "by_kind": {k: {"messages": round(counts[k] / hands, 1), "bytes": round(sizes[k] / hands)} for k in sorted(counts)},
        "preamble_messages": starts[0],
        "preamble_bytes": sum(len(m.raw) + 4 for m in log[: starts[0]]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--hands", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    result = {}
    for players in (2, 3, 4):
        stats = hand_stats(players, args.hands, args.seed)
        result[str(players)] = stats
        print(f"{players} players: {stats['messages_per_hand']} messages, {stats['bytes_per_hand']} bytes per hand; "
              f"preamble {stats['preamble_messages']} messages, {stats['preamble_bytes']} bytes")
        for kind, row in stats["by_kind"].items():
            print(f"    {kind:8} {row['messages']:6} messages {row['bytes']:8} bytes")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
