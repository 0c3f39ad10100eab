"""The deck audit with what it may skip, against protocol/deck.md §8 done step by step.

``audit`` compares the final deck with the one the secrets give, recomputed from the card
encodings and the scalars, leaving out the final positions where the auditor found the card
live (``known``), and walks the passes one by one only when it differs. Each must give the
reference's verdict: honest hands, and a pass or a key tampered with by any seat, at any step,
audited by every seat and by an observer. The hands are dealt by tests/test_deck_protocol.py's
``Table``.
"""

from __future__ import annotations

from typing import Any

import pytest
from test_deck_protocol import SMALL, Table, doubled, points_tamper, replaced, secret_of

from p2pwhist.deck import (
    AuditResult,
    Commitment,
    Deck,
    DeckError,
    DeckRecord,
    PositionKey,
    PositionKeys,
    SecretReveal,
    Step,
    audit,
)
from p2pwhist.deck._audit import _check_published, _found, _opened
from p2pwhist.deck._curve import CardEncodings, N, encode_card, multiply, point, scalar
from p2pwhist.deck._keys import SeatKeys, commitment
from p2pwhist.deck._params import DeckParams
from p2pwhist.deck._passes import lock_pass, shuffle_pass


def reference(params: DeckParams, record: DeckRecord) -> AuditResult:
    """deck.md §8 as written: if every pass was sent and every secret opens its commitment,
    the final deck from replaying every pass honestly on the encodings decides; only if it
    differs (or something is missing) are the passes walked one by one."""
    for seat, digest in enumerate(record.commitments):
        if digest is None:
            return _found(seat, Step.COMMITMENT, None, "never committed to a secret")
    opened = [_opened(params, record, seat) for seat in range(params.seats)]
    if all(len(passes) == params.seats for passes in (record.shuffle_passes, record.lock_passes)) \
            and not any(isinstance(keys, AuditResult) for keys in opened):
        deck, final = CardEncodings.of(params).points, []
        for replay in shuffle_pass, lock_pass:
            for keys in opened:
                final = replay(deck, keys)  # type: ignore[arg-type]
                deck = [point(x) for x in final]
        if tuple(final) == tuple(record.lock_passes[-1]):
            return checked_reveals(params, record, opened)  # type: ignore[arg-type]
    return walk(params, record)


def walk(params: DeckParams, record: DeckRecord) -> AuditResult:
    """§8 step 2 pass by pass: each pass recomputed from the published deck before it."""
    keys: list[SeatKeys] = []
    deck = CardEncodings.of(params).points
    for step, replay, passes in ((Step.SHUFFLE_PASS, shuffle_pass, record.shuffle_passes),
                                 (Step.LOCK_PASS, lock_pass, record.lock_passes)):
        for seat in range(params.seats):
            if seat >= len(passes):
                return _found(seat, step, None, "never sent its pass")
            if step is Step.SHUFFLE_PASS:
                opened = _opened(params, record, seat)  # the audit's own: what is tested is the passes
                if isinstance(opened, AuditResult):
                    return opened
                keys.append(opened)
            expected = replay(deck, keys[seat])
            if passes[seat] != expected:
                first = next((j for j, (a, b) in enumerate(zip(expected, passes[seat])) if a != b),
                             min(len(expected), len(passes[seat])))
                return _found(seat, step, first, "does not follow from its committed secret and the deck before it")
            deck = [point(x) for x in passes[seat]]
    return checked_reveals(params, record, keys)


def checked_reveals(params: DeckParams, record: DeckRecord, keys: list[SeatKeys]) -> AuditResult:
    """§8 step 3: every published key and claim, once the passes are right."""
    cards = []
    for position in range(params.size):  # c_j = cards[π_0[π_1[… π_{seats−1}[j] …]]]
        for seat_keys in reversed(keys):
            position = seat_keys.permutation[position]
        cards.append(params.cards[position])
    for entry in record.published:
        deviation = _check_published(entry, keys[entry.seat], tuple(cards))
        if deviation is not None:
            return AuditResult(deviation, tuple(cards))
    return AuditResult(None, tuple(cards))


class Watched(Table):
    """A ``Table`` whose every message also reaches an observer, as a transcript's verifier."""

    def __init__(self, seats: int) -> None:
        super().__init__(seats, SMALL)
        self.observer = Deck.observer(self.params)

    def outcomes(self, sender: int, message: Any):
        results = super().outcomes(sender, message)
        try:
            self.observer.receive_wire(sender, message.to_wire() if hasattr(message, "to_wire") else message)
        except DeckError:
            pass
        return results


def play_out(table: Watched, tamper=None) -> None:
    """Deal (with ``tamper``), reveal every position to all as far as the seats let it, and
    open every secret."""
    if table.deal(tamper) is None:
        for position in range(len(SMALL)):
            for deck in table.decks:
                try:
                    table.outcomes(deck.seat, deck.keys_for([position]))
                except DeckError:
                    pass
    table.open_secrets()


def assert_same_audits(table: Watched, liar: int | None = None) -> AuditResult:
    """Every way the audit runs, by every seat and by the observer: the reference's result.
    A ``liar``'s own record says what it did, not what it told the others: left out."""
    result = reference(table.params, table.observer.record)
    for deck in [*table.decks, table.observer]:
        if deck.seat == liar and liar is not None:
            continue
        record = deck.record
        assert reference(table.params, record) == result
        assert audit(table.params, record) == result
        assert audit(table.params, record, known=deck.known_cards) == result
        assert deck.audit() == result  # the final positions where it knows the card, left out
    return result


@pytest.mark.parametrize("seats", [2, 3])
def test_an_honest_hand_audits_alike_every_way(seats):
    table = Watched(seats)
    play_out(table)
    assert len(table.observer.known_cards) == len(SMALL)  # its whole final deck is left out
    assert assert_same_audits(table).clean


@pytest.mark.parametrize("seats", [2, 3])
@pytest.mark.parametrize("step", [Step.SHUFFLE_PASS, Step.LOCK_PASS])
@pytest.mark.parametrize("change", ["swap", "double", "stranger"])
def test_a_tampered_pass_audits_alike_every_way(seats, step, change):
    changes = {
        "swap": lambda points: [points[1], points[0], *points[2:]],
        "double": lambda points: replaced(points, 2, doubled(points[2])),
        "stranger": lambda points: replaced(points, 3, encode_card(b"elsewhere", 0)[0]),
    }
    for cheater in range(seats):
        table = Watched(seats)
        play_out(table, points_tamper(step, cheater, changes[change]))
        result = assert_same_audits(table, liar=cheater)
        assert result.deviation is not None and result.deviation.seat == cheater


@pytest.mark.parametrize("seats", [2, 3])
def test_a_hand_dealt_from_an_uncommitted_secret_audits_alike_every_way(seats):
    """Every live check passes (test_deck_protocol.py): only the recomputed passes see it."""
    cheater = seats - 1
    table = Watched(seats)
    table.decks[cheater] = Deck(table.params, cheater, secret_of(cheater, "uncommitted"))
    committed = Commitment(commitment(table.params, cheater, table.secrets[cheater])).to_wire()
    table.deal(lambda step, seat, wire: committed if (step, seat) == (Step.COMMITMENT, cheater) else wire)
    table.reveal_to_all(list(range(len(SMALL))))
    for deck in table.decks:  # the cheater reveals the secret it committed to
        table.send(deck.seat, SecretReveal(table.secrets[cheater]) if deck.seat == cheater else deck.reveal_secret())
    result = assert_same_audits(table, liar=cheater)
    assert (result.deviation.seat, result.deviation.step) == (cheater, Step.SHUFFLE_PASS)


def card_at(table: Table, position: int) -> int:
    """The card the secrets put at ``position`` of the final deck."""
    for seat in reversed(range(table.params.seats)):
        position = SeatKeys(table.params, seat, table.secrets[seat]).permutation[position]
    return table.params.cards[position]


def forge_last_lock(table: Watched, card: int, last_key: int) -> None:
    """Deal, with seat 1's point at position 0 of the final deck made so that seat 0's key and
    ``last_key`` decrypt it to ``card``; reveal position 0 to all, seat 1 publishing
    ``last_key``; open every secret."""
    keys = [SeatKeys(table.params, seat, table.secrets[seat]).position_keys[0] for seat in range(2)]
    forged = multiply(scalar(keys[0] * last_key % N), CardEncodings.of(table.params).point_of(card))
    table.deal(points_tamper(Step.LOCK_PASS, 1, lambda points: replaced(points, 0, forged)))
    table.outcomes(0, table.decks[0].keys_for([0]))
    table.outcomes(1, PositionKeys((PositionKey(0, last_key),)).to_wire())
    table.open_secrets()


def test_a_final_point_made_for_a_key_its_secret_does_not_derive_is_blamed_on_its_pass():
    """Found live under the forged key, the position is recomputed all the same (a key there
    is not the derived one), and the last pass is blamed there, as by the reference."""
    table = Watched(2)
    derived = SeatKeys(table.params, 1, table.secrets[1]).position_keys[0]
    forge_last_lock(table, card_at(table, 0), derived * 2 % N)
    assert table.observer.known_cards == {0: card_at(table, 0)}
    result = assert_same_audits(table, liar=1)
    assert (result.deviation.seat, result.deviation.step, result.deviation.position) == (1, Step.LOCK_PASS, 0)


def test_a_final_point_made_for_another_card_is_blamed_on_its_pass():
    """Found live as another card than the secrets put there: recomputed, and blamed."""
    table = Watched(2)
    other = next(card for card in table.params.cards if card != card_at(table, 0))
    forge_last_lock(table, other, SeatKeys(table.params, 1, table.secrets[1]).position_keys[0])
    assert table.observer.known_cards == {0: other}
    result = assert_same_audits(table, liar=1)
    assert (result.deviation.seat, result.deviation.step, result.deviation.position) == (1, Step.LOCK_PASS, 0)


def rescaled(factor: int) -> Any:
    """Every point of a pass multiplied by ``factor``."""
    key = scalar(factor)
    return lambda points: [multiply(key, point(x)) for x in points]


def test_a_shuffle_key_changed_and_undone_by_its_own_lock_pass_is_no_deviation():
    """Seat 0 shuffles with c·d instead of its committed d and takes c·d off again in its lock
    pass: every intermediate deck differs from its recomputation, but the final deck, every key
    and every card are the ones its secret gives, so nobody saw or got anything else. §8 judges
    the final deck (the walk alone would blame the shuffle pass): the hand is clean, alike
    every way."""
    c = 7
    table = Watched(2)
    shuffle, lock = points_tamper(Step.SHUFFLE_PASS, 0, rescaled(c)), points_tamper(Step.LOCK_PASS, 0, rescaled(pow(c, -1, N)))
    play_out(table, lambda step, seat, wire: lock(step, seat, shuffle(step, seat, wire)))
    assert len(table.observer.known_cards) == len(SMALL)
    assert all(card == card_at(table, j) for j, card in table.observer.known_cards.items())
    assert walk(table.params, table.observer.record).deviation.step is Step.SHUFFLE_PASS
    assert assert_same_audits(table, liar=0).clean


@pytest.mark.parametrize("seats", [2, 3])
def test_a_rescaled_pass_left_undone_is_blamed_on_it(seats):
    """The same change without its undoing reaches the final deck: the walk pins it."""
    for step in Step.SHUFFLE_PASS, Step.LOCK_PASS:
        table = Watched(seats)
        play_out(table, points_tamper(step, 0, rescaled(7)))
        result = assert_same_audits(table, liar=0)
        assert (result.deviation.seat, result.deviation.step, result.deviation.position) == (0, step, 0)
