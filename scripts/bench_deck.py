"""Benchmark of the mental-poker deck (p2pwhist.deck) for 2, 3 and 4 seats on a 52-card deck.

All seats run in this one process and every message goes through its wire form to every other
seat, so each figure is the CPU time of the whole table (all seats' work added up):

- shuffle_ms: commitments, then every shuffle and lock pass, each received and checked by
  every other seat (seat 0 hashes the cards to the curve here, as it needs them first).
- deal_ms: the private reveals of a Box Whist deal (each seat's hand: 11 cards with 2 seats,
  8 with 3, 6 with 4: the other seats publish their keys, the owner decrypts), then two public
  reveals (the exposed stack card and one more public card). The seats that have not hashed
  the cards yet do so here, at their first decryption.
- audit_ms: ``audit`` of a played-out hand: every position revealed and claimed, every
  secret revealed.
- shuffle_bound_ms: the multiplications the passes need (2 · seats · 52) times the cost of
  one, measured here: a point travels as its x, so multiplying it by k is decompressing
  it and one ECDH ``exchange`` (protocol/deck.md §9; the exchange alone is printed too).

Each figure is the median of RUNS runs, CPU time from time.process_time. The machine may be
shared: compare figures of one run with each other, not across runs. The last line printed
is a JSON object keyed by seat count.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from p2pwhist.cards import FULL_DECK  # noqa: E402
from p2pwhist.deck import Deck, DeckParams, audit  # noqa: E402
from p2pwhist.deck._curve import CardEncodings, multiply, point, scalar  # noqa: E402

RUNS = 5
HAND_SIZE = {2: 11, 3: 8, 4: 6}  # Box Whist: cards dealt to each hand (boxes stay unseen)
PUBLIC_REVEALS = 2  # the exposed stack card, and one card shown to everyone
MULT_SAMPLES = 500

T = TypeVar("T")


def timed(action: Callable[..., T], *args: object) -> tuple[float, T]:
    """CPU milliseconds that ``action(*args)`` took, and its result."""
    start = time.process_time()
    result = action(*args)
    return (time.process_time() - start) * 1000, result


def secret(seat: int, run: int) -> bytes:
    return bytes([seat, run]) * 16


class Table:
    def __init__(self, seats: int, run: int) -> None:
        self.params = DeckParams(b"bench", run, FULL_DECK, seats)
        self.decks = [Deck(self.params, seat, secret(seat, run)) for seat in range(seats)]

    def send(self, sender: int, message) -> None:
        wire = message.to_wire()
        for deck in self.decks:
            if deck.seat != sender:
                deck.receive_wire(sender, wire)

    def shuffle(self) -> None:
        for act in (Deck.commit, Deck.shuffle_pass, Deck.lock_pass):
            for deck in self.decks:
                self.send(deck.seat, act(deck))

    def deal(self) -> None:
        seats = len(self.decks)
        hand = HAND_SIZE[seats]
        for owner in range(seats):
            positions = range(owner * hand, (owner + 1) * hand)
            for deck in self.decks:
                if deck.seat != owner:
                    self.send(deck.seat, deck.keys_for(positions))
        for position in range(seats * hand, seats * hand + PUBLIC_REVEALS):
            for deck in self.decks:
                self.send(deck.seat, deck.keys_for([position]))

    def play_out(self) -> None:
        """Reveal every position not yet known to some seat, let it claim all, reveal secrets."""
        seats = len(self.decks)
        for position in range(self.params.size):
            owner = position % seats
            if self.decks[owner].known_card(position) is None:
                for deck in self.decks:
                    if deck.seat != owner:
                        self.send(deck.seat, deck.keys_for([position]))
            self.send(owner, self.decks[owner].claim(position))
        for deck in self.decks:
            self.send(deck.seat, deck.reveal_secret())


def multiplication_us() -> tuple[float, float, float]:
    """Median µs of: one point multiplication (decompress + exchange), an exchange alone,
    and making a key object for a new scalar."""
    xs = CardEncodings.of(DeckParams(b"bench", 0, FULL_DECK, 2)).xs
    key = scalar(0x1234567890ABCDEF1234567890ABCDEF)
    points = [point(x) for x in xs]

    def per_op(action: Callable[[int], object]) -> float:
        samples = []
        for _ in range(RUNS):
            ms, _ = timed(lambda: [action(i) for i in range(MULT_SAMPLES)])
            samples.append(ms * 1000 / MULT_SAMPLES)
        return statistics.median(samples)

    mult = per_op(lambda i: multiply(key, point(xs[i % len(xs)])))
    exchange = per_op(lambda i: multiply(key, points[i % len(points)]))
    new_key = per_op(lambda i: scalar(i + 2))
    return mult, exchange, new_key


def bench(seats: int, mult_us: float) -> dict[str, float]:
    shuffle, deal, audit_times, seat_audit_times = [], [], [], []
    for run in range(RUNS):
        table = Table(seats, run)
        shuffle.append(timed(table.shuffle)[0])
        deal.append(timed(table.deal)[0])
        table.play_out()
        ms, result = timed(audit, table.params, table.decks[0].record)  # no card known: the whole final deck recomputed
        audit_times.append(ms)
        assert result.clean and sorted(result.cards) == list(FULL_DECK)
        ms, result = timed(table.decks[0].audit)  # a seat's: the final positions it found live are not
        seat_audit_times.append(ms)
        assert result.clean
    multiplications = 2 * seats * len(FULL_DECK)
    return {
        "shuffle_ms": round(statistics.median(shuffle), 2),
        "deal_ms": round(statistics.median(deal), 2),
        "audit_ms": round(statistics.median(audit_times), 2),
        "seat_audit_ms": round(statistics.median(seat_audit_times), 2),
        "shuffle_bound_ms": round(multiplications * mult_us / 1000, 2),
    }


def main() -> None:
    mult_us, exchange_us, key_us = multiplication_us()
    encode_ms = statistics.median(
        timed(CardEncodings.of, DeckParams(b"bench", run, FULL_DECK, 2))[0] for run in range(RUNS)
    )
    print(f"one point multiplication (decompress x + exchange): {mult_us:6.1f} µs")
    print(f"  of which the exchange alone:                      {exchange_us:6.1f} µs")
    print(f"a key object for a new scalar (includes k·G):        {key_us:6.1f} µs")
    print(f"hashing 52 cards to the curve:                       {encode_ms:6.2f} ms")
    results = {}
    for seats in (2, 3, 4):
        figures = bench(seats, mult_us)
        results[str(seats)] = figures
        exchange_bound = 2 * seats * len(FULL_DECK) * exchange_us / 1000
        print(
            f"{seats} seats: shuffle {figures['shuffle_ms']:6.2f} ms "
            f"(bound {figures['shuffle_bound_ms']:6.2f} ms, ratio "
            f"{figures['shuffle_ms'] / figures['shuffle_bound_ms']:.2f}; exchange-only bound "
            f"{exchange_bound:6.2f} ms, ratio {figures['shuffle_ms'] / exchange_bound:.2f}), "
            f"deal {figures['deal_ms']:6.2f} ms, audit {figures['audit_ms']:6.2f} ms "
            f"(by a seat, the cards it found known: {figures['seat_audit_ms']:6.2f} ms)"
        )
    print(json.dumps(results))


if __name__ == "__main__":
    main()
