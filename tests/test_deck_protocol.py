"""The deck protocol between in-memory seats: honest hands, ordering, and every cheat of the
issue caught live where it can be and attributed by the audit, with 2, 3 and 4 seats.

Messages travel in wire form (``to_wire`` → ``receive_wire``), as they would over msgpack.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from p2pwhist.cards import Card, deck_without
from p2pwhist.deck import (
    AuditResult,
    Claim,
    Commitment,
    Deck,
    DeckError,
    DeckParams,
    LocalDeckError,
    LockPass,
    Phase,
    PositionKey,
    PositionKeys,
    RemoteDeckError,
    Revealed,
    SecretReveal,
    ShufflePass,
    Step,
    UnattributedDeckError,
    audit,
)
from p2pwhist.deck._curve import N, P, multiply, point, scalar
from p2pwhist.deck._keys import SeatKeys, commitment

GAME = b"p2pwhist tests"
SMALL = (0, 5, 13, 22, 30, 38, 44, 51)
SEATS = [2, 3, 4]
OFF_CURVE_X = next(
    x for x in (i.to_bytes(32, "big") for i in itertools.count(1)) if point(x) is None
)

Tamper = Callable[[Step, int, list[Any]], list[Any]]


def secret_of(seat: int, salt: str = "") -> bytes:
    return hashlib.sha256(f"secret {seat} {salt}".encode()).digest()


class Table:
    """Seats dealing one hand in memory; every message goes to every other seat."""

    def __init__(
        self, seats: int, cards: tuple[int, ...] = SMALL, secrets: list[bytes] | None = None
    ):
        self.params = DeckParams(GAME, 1, cards, seats)
        self.secrets = secrets or [secret_of(seat) for seat in range(seats)]
        self.decks = [Deck(self.params, seat, self.secrets[seat]) for seat in range(seats)]

    def outcomes(self, sender: int, message: Any) -> dict[int, tuple[Revealed, ...] | DeckError]:
        """Deliver to every other seat; each gets back what it revealed or the error it raised."""
        wire = message.to_wire() if hasattr(message, "to_wire") else message
        results: dict[int, tuple[Revealed, ...] | DeckError] = {}
        for deck in self.decks:
            if deck.seat != sender:
                try:
                    results[deck.seat] = deck.receive_wire(sender, wire)
                except DeckError as error:
                    results[deck.seat] = error
        return results

    def send(self, sender: int, message: Any) -> dict[int, tuple[Revealed, ...]]:
        """Deliver to every other seat, then raise the first error any of them raised."""
        results = self.outcomes(sender, message)
        for result in results.values():
            if isinstance(result, DeckError):
                raise result
        return results  # type: ignore[return-value]

    def deal(self, tamper: Tamper | None = None) -> dict[int, Any] | None:
        """Commit and make every pass. ``tamper(step, seat, wire)`` may rewrite what a seat
        sends; the outcomes of the first message any seat refused are returned (else None)."""
        actions = [
            (Step.COMMITMENT, Deck.commit),
            (Step.SHUFFLE_PASS, Deck.shuffle_pass),
            (Step.LOCK_PASS, Deck.lock_pass),
        ]
        for step, act in actions:
            for deck in self.decks:
                wire = act(deck).to_wire()
                if tamper is not None:
                    wire = tamper(step, deck.seat, wire)
                results = self.outcomes(deck.seat, wire)
                if any(isinstance(r, DeckError) for r in results.values()):
                    return results
        return None

    def reveal_to(self, seat: int, positions: list[int]) -> tuple[Revealed, ...]:
        """Every other seat publishes its keys for ``positions``; what ``seat`` learnt."""
        learnt: list[Revealed] = []
        for deck in self.decks:
            if deck.seat != seat:
                learnt += self.send(deck.seat, deck.keys_for(positions))[seat]
        return tuple(learnt)

    def reveal_to_all(self, positions: list[int]) -> None:
        for deck in self.decks:
            self.send(deck.seat, deck.keys_for(positions))

    def open_secrets(self) -> None:
        """Every seat reveals its secret to all (decks that stopped at an error take them too)."""
        for deck in self.decks:
            if deck.record.secrets[deck.seat] is None:
                self.outcomes(deck.seat, deck.reveal_secret())

    def audit(self, seat: int) -> AuditResult:
        return audit(self.params, self.decks[seat].record)


def points_tamper(step: Step, cheater: int, change: Callable[[list[bytes]], list[bytes]]) -> Tamper:
    def tamper(at_step: Step, seat: int, wire: list[Any]) -> list[Any]:
        if (at_step, seat) == (step, cheater):
            return [wire[0], change(list(wire[1]))]
        return wire

    return tamper


def replaced(points: list[bytes], position: int, x: bytes) -> list[bytes]:
    points[position] = x
    return points


def doubled(x: bytes) -> bytes:
    """2·P: a valid point, but no longer a card under the keys everyone will use."""
    return multiply(scalar(2), point(x))


def blames(result: Any, seat: int, step: Step) -> bool:
    return isinstance(result, RemoteDeckError) and result.seat == seat and result.step is step


def assert_deviation(
    result: AuditResult, seat: int, step: Step, position: int | None = None
) -> None:
    assert result.deviation is not None, "the audit found nothing"
    assert (result.deviation.seat, result.deviation.step) == (seat, step), str(result.deviation)
    if position is not None:
        assert result.deviation.position == position, str(result.deviation)


# Honest hands


@settings(max_examples=50, deadline=None)
@given(
    seats=st.integers(2, 4),
    cards=st.lists(st.integers(0, 51), unique=True, min_size=1, max_size=6),
    data=st.data(),
)
def test_honest_hands_deal_a_permutation_and_each_seat_learns_exactly_its_cards(seats, cards, data):
    secrets = data.draw(
        st.lists(st.binary(min_size=32, max_size=32), min_size=seats, max_size=seats)
    )
    table = Table(seats, tuple(cards), secrets)
    assert table.deal() is None
    assert all(deck.phase is Phase.REVEALING for deck in table.decks)

    # Each position goes to one seat, to everyone, or stays hidden; some private ones are played.
    plan = data.draw(
        st.lists(
            st.sampled_from([None, "all", *range(seats)]), min_size=len(cards), max_size=len(cards)
        )
    )
    claims = data.draw(st.lists(st.booleans(), min_size=len(cards), max_size=len(cards)))
    learnt: dict[int, set[Revealed]] = {seat: set() for seat in range(seats)}
    for seat in range(seats):
        mine = [j for j, to in enumerate(plan) if to == seat]
        if mine:
            learnt[seat] |= set(table.reveal_to(seat, mine))
    public = [j for j, to in enumerate(plan) if to == "all"]
    if public:
        for deck in table.decks:
            for receiver, revealed in table.send(deck.seat, deck.keys_for(public)).items():
                learnt[receiver] |= set(revealed)
    knows = {seat: {j for j, to in enumerate(plan) if to in (seat, "all")} for seat in range(seats)}
    for j, to in enumerate(plan):
        if isinstance(to, int) and claims[j]:
            for receiver, revealed in table.send(to, table.decks[to].claim(j)).items():
                learnt[receiver] |= set(revealed)
                knows[receiver].add(j)

    table.open_secrets()
    result = table.audit(0)
    assert result.clean and sorted(result.cards) == sorted(table.params.cards)
    for deck in table.decks:
        assert deck.phase is Phase.DONE
        assert table.audit(deck.seat) == result
        assert deck.known_cards == {j: result.cards[j] for j in knows[deck.seat]}
        assert learnt[deck.seat] == {Revealed(j, result.cards[j]) for j in knows[deck.seat]}
        for j in set(range(len(cards))) - knows[deck.seat]:
            assert deck.known_card(j) is None


@pytest.mark.parametrize(
    "seats, cards", [(2, tuple(range(52))), (3, deck_without(Card.parse("2C")))]
)
def test_a_full_deck_is_dealt_and_played_out(seats, cards):
    table = Table(seats, cards)
    table.deal()
    size = table.params.size
    for seat in range(seats):
        table.reveal_to(seat, [j for j in range(size) if j % seats == seat])
    for j in range(size):
        table.send(j % seats, table.decks[j % seats].claim(j))
    table.open_secrets()
    result = table.audit(1)
    assert result.clean and sorted(result.cards) == sorted(cards)
    assert all(deck.known_cards == dict(enumerate(result.cards)) for deck in table.decks)


def test_the_same_secrets_deal_the_same_deck_and_others_do_not():
    first, second, other = (
        Table(3),
        Table(3),
        Table(3, secrets=[secret_of(s, "other") for s in range(3)]),
    )
    for table in (first, second, other):
        table.deal()
    assert first.decks[0].final_deck == second.decks[2].final_deck != other.decks[0].final_deck


def test_phase_and_turn_follow_the_hand():
    table = Table(3)
    deck = table.decks[1]
    assert (deck.phase, deck.turn, deck.final_deck) == (Phase.COMMITTING, None, None)
    for d in table.decks:
        table.send(d.seat, d.commit())
    assert (deck.phase, deck.turn) == (Phase.SHUFFLING, 0)
    table.send(0, table.decks[0].shuffle_pass())
    assert deck.turn == 1
    table.send(1, deck.shuffle_pass())
    table.send(2, table.decks[2].shuffle_pass())
    assert (deck.phase, deck.turn) == (Phase.LOCKING, 0)
    for d in table.decks:
        table.send(d.seat, d.lock_pass())
    assert (deck.phase, deck.turn) == (Phase.REVEALING, None)
    assert deck.final_deck == table.decks[0].final_deck and len(deck.final_deck) == len(SMALL)
    table.send(0, table.decks[0].reveal_secret())
    assert deck.phase is Phase.OPENING
    table.send(1, deck.reveal_secret())
    table.send(2, table.decks[2].reveal_secret())
    assert deck.phase is Phase.DONE


# Ordering and local misuse


def committed_table(seats: int = 3) -> Table:
    table = Table(seats)
    for deck in table.decks:
        table.send(deck.seat, deck.commit())
    return table


def test_a_pass_before_every_commitment_is_out_of_order():
    table = Table(3)
    table.send(0, table.decks[0].commit())
    with pytest.raises(RemoteDeckError) as caught:
        table.decks[1].receive(
            0, ShufflePass(table.decks[2].record.shuffle_passes or (OFF_CURVE_X,))
        )
    assert (caught.value.seat, caught.value.step) == (0, Step.SHUFFLE_PASS)
    assert table.decks[1].phase is Phase.ERROR


def test_a_pass_out_of_turn_and_a_lock_pass_while_shuffling_are_refused():
    table = committed_table()
    points = ShufflePass(tuple(doubled(x) for x in table.decks[0]._encodings.xs))
    assert blames(table.outcomes(1, points)[0], 1, Step.SHUFFLE_PASS)
    table = committed_table()
    assert blames(table.outcomes(0, LockPass(points.points))[2], 0, Step.LOCK_PASS)


def test_keys_and_claims_before_the_final_deck_are_out_of_order():
    table = committed_table()
    assert blames(table.outcomes(2, PositionKeys((PositionKey(0, 5),)))[0], 2, Step.POSITION_KEY)
    table = committed_table()
    assert blames(table.outcomes(2, Claim(0, Card(0), 5))[1], 2, Step.CLAIM)


def test_commitments_and_secrets_are_taken_once_and_in_order():
    table = committed_table()
    assert blames(table.outcomes(1, Commitment(bytes(32)))[0], 1, Step.COMMITMENT)
    table = Table(3)
    assert blames(table.outcomes(1, SecretReveal(table.secrets[1]))[0], 1, Step.SECRET)
    table = committed_table()
    secret = table.decks[1].reveal_secret()
    table.send(1, secret)
    assert blames(table.outcomes(1, secret)[0], 1, Step.SECRET)


def test_after_an_error_only_secrets_are_taken():
    table = committed_table()
    deck = table.decks[0]
    assert blames(table.outcomes(1, Commitment(bytes(32)))[0], 1, Step.COMMITMENT)
    assert deck.phase is Phase.ERROR
    with pytest.raises(LocalDeckError):
        deck.receive(2, ShufflePass((OFF_CURVE_X,)))
    with pytest.raises(LocalDeckError):
        deck.shuffle_pass()
    deck.receive(1, SecretReveal(table.secrets[1]))
    assert deck.reveal_secret() == SecretReveal(table.secrets[0])
    assert deck.phase is Phase.ERROR and deck.record.secrets[:2] == tuple(table.secrets[:2])


def test_a_revealed_secret_ends_the_hand():
    table = Table(2)
    table.deal()
    table.send(0, table.decks[0].reveal_secret())
    with pytest.raises(LocalDeckError):
        table.decks[1].keys_for([0])
    assert blames(table.outcomes(0, PositionKeys((PositionKey(0, 5),)))[1], 0, Step.POSITION_KEY)


def test_local_misuse_raises_the_local_error():
    table = committed_table()
    deck = table.decks[1]
    for misuse in (
        deck.commit,
        deck.shuffle_pass,
        deck.lock_pass,
        lambda: deck.keys_for([0]),
        lambda: deck.claim(0),
        lambda: deck.receive(1, Commitment(bytes(32))),
        lambda: deck.receive(0, "not a message"),
        lambda: deck.receive(3, Commitment(bytes(32))),
    ):
        with pytest.raises(LocalDeckError):
            misuse()
    with pytest.raises(LocalDeckError):
        Deck(table.params, 3, bytes(32))
    with pytest.raises(LocalDeckError):
        Deck(table.params, 0, bytes(31))
    with pytest.raises(LocalDeckError):
        Table(2).decks[0].reveal_secret()  # nothing committed yet


def test_keys_and_claims_are_checked_locally_too():
    table = Table(2)
    table.deal()
    deck = table.decks[0]
    for positions in ([], [len(SMALL)], [True], [-1]):
        with pytest.raises(LocalDeckError):
            deck.keys_for(positions)
    with pytest.raises(LocalDeckError):
        deck.claim(0)  # not revealed to seat 0
    assert deck.keys_for([3, 1, 3]).positions == (1, 3)


def test_republishing_a_key_must_repeat_it():
    table = Table(3)
    table.deal()
    keys = table.decks[2].keys_for([4])
    table.send(2, keys)
    table.send(2, keys)  # the same key again is fine
    wrong = PositionKeys((PositionKey(4, keys.keys[0].key % (N - 1) + 1),))
    assert all(blames(r, 2, Step.POSITION_KEY) for r in table.outcomes(2, wrong).values())


def test_a_claim_needs_every_other_key_published():
    table = Table(3)
    table.deal()
    table.send(0, table.decks[0].keys_for([2]))
    forged = Claim(2, Card(SMALL[0]), SeatKeys(table.params, 1, table.secrets[1]).position_keys[2])
    assert blames(table.outcomes(1, forged)[0], 1, Step.CLAIM)


@pytest.mark.parametrize("seats", SEATS)
def test_a_claim_of_a_card_revealed_to_another_seat_is_refused(seats):
    """Seat 1 names the right card at a position revealed to seat 0 only: a lucky guess, since
    seat 0 never published its key, so every seat refuses it."""
    table = Table(seats)
    table.deal()
    (revealed,) = table.reveal_to(0, [6])
    own_key = SeatKeys(table.params, 1, table.secrets[1]).position_keys[6]
    outcomes = table.outcomes(1, Claim(6, revealed.card, own_key))
    assert all(blames(r, 1, Step.CLAIM) for r in outcomes.values())


def test_a_claim_of_a_card_outside_the_deck_is_refused():
    table = Table(2)
    table.deal()
    table.reveal_to(1, [0])
    key = SeatKeys(table.params, 1, table.secrets[1]).position_keys[0]
    assert blames(table.outcomes(1, Claim(0, Card(1), key))[0], 1, Step.CLAIM)


# Cheats: caught live where possible, always attributed by the audit


@pytest.mark.parametrize("seats", SEATS)
@pytest.mark.parametrize("step", [Step.SHUFFLE_PASS, Step.LOCK_PASS])
def test_a_pass_that_drops_a_card_is_refused_and_blamed(seats, step):
    cheater = seats - 1
    table = Table(seats)
    outcomes = table.deal(points_tamper(step, cheater, lambda points: points[:-1]))
    assert all(blames(r, cheater, step) for r in outcomes.values())
    table.open_secrets()
    assert_deviation(table.audit(0), cheater, step)


@pytest.mark.parametrize("seats", SEATS)
@pytest.mark.parametrize("step", [Step.SHUFFLE_PASS, Step.LOCK_PASS])
@pytest.mark.parametrize(
    "bad_x",
    [P.to_bytes(32, "big"), (P + 5).to_bytes(32, "big"), bytes(31), bytes(33), "duplicate"],
    ids=["x=p", "x>p", "31 bytes", "33 bytes", "duplicate"],
)
def test_a_malformed_point_is_refused_by_everyone(seats, step, bad_x):
    cheater = 1
    table = Table(seats)

    def change(points: list[bytes]) -> list[bytes]:
        return replaced(points, 2, points[5] if bad_x == "duplicate" else bad_x)

    outcomes = table.deal(points_tamper(step, cheater, change))
    assert all(blames(r, cheater, step) for r in outcomes.values())


@pytest.mark.parametrize("seats", SEATS)
def test_an_off_curve_point_in_a_shuffle_pass_is_caught_by_the_next_seat(seats):
    cheater = seats - 1  # the last shuffle pass goes to seat 0, which locks next
    table = Table(seats)
    outcomes = table.deal(
        points_tamper(Step.SHUFFLE_PASS, cheater, lambda p: replaced(p, 3, OFF_CURVE_X))
    )
    assert blames(outcomes[0], cheater, Step.SHUFFLE_PASS)
    assert all(r == () for seat, r in outcomes.items() if seat != 0)  # the others don't use it
    table.open_secrets()
    for seat in range(seats - 1):  # every honest seat's record convicts it
        assert_deviation(table.audit(seat), cheater, Step.SHUFFLE_PASS, 3)


@pytest.mark.parametrize("seats", SEATS)
def test_an_off_curve_point_in_the_final_deck_is_caught_by_every_seat_on_receipt(seats):
    """Every other seat (and an observer: a verifier) validates the whole final deck when the
    last lock pass arrives, so all blame the last locker at that message (deck.md §6)."""
    last = seats - 1
    table = Table(seats)
    outcomes = table.deal(points_tamper(Step.LOCK_PASS, last, lambda p: replaced(p, 6, OFF_CURVE_X)))
    assert all(blames(outcomes[seat], last, Step.LOCK_PASS) for seat in range(seats) if seat != last)
    table.open_secrets()
    assert_deviation(table.audit(0), last, Step.LOCK_PASS, 6)


@pytest.mark.parametrize("seats", SEATS)
@pytest.mark.parametrize("step", [Step.SHUFFLE_PASS, Step.LOCK_PASS])
@pytest.mark.parametrize("cheater", [0, -1], ids=["first seat", "last seat"])
def test_a_pass_that_substitutes_a_card_is_caught_at_reveal_and_blamed(seats, step, cheater):
    cheater %= seats
    victim = (cheater + 1) % seats
    table = Table(seats)
    assert table.deal(points_tamper(step, cheater, lambda p: replaced(p, 4, doubled(p[4])))) is None
    with pytest.raises(UnattributedDeckError) as caught:
        table.reveal_to(victim, list(range(len(SMALL))))
    assert cheater in caught.value.suspects and victim not in caught.value.suspects
    assert "decrypts to no card" in str(caught.value) and "audit" in str(caught.value)
    table.open_secrets()
    assert_deviation(table.audit(victim), cheater, step, 4)


@pytest.mark.parametrize("seats", SEATS)
def test_a_disguised_duplicate_is_caught_at_reveal_and_blamed(seats):
    """Seat 0 locks first, so it can re-encrypt another card under position 0's keys: positions
    0 and 1 then hold the same card with keys no one can tell apart from honest ones."""
    table = Table(seats)
    cheater_keys = SeatKeys(table.params, 0, table.secrets[0])

    def duplicate(points: list[bytes]) -> list[bytes]:
        before = table.decks[1].record.shuffle_passes[-1]
        mask = cheater_keys.position_keys[0] * pow(cheater_keys.deck_key, -1, N) % N
        return replaced(points, 0, multiply(scalar(mask), point(before[1])))

    assert table.deal(points_tamper(Step.LOCK_PASS, 0, duplicate)) is None
    with pytest.raises(UnattributedDeckError) as caught:
        table.reveal_to(1, list(range(len(SMALL))))
    assert "already seen at position 0" in str(caught.value) and 0 in caught.value.suspects
    table.open_secrets()
    assert_deviation(table.audit(1), 0, Step.LOCK_PASS, 0)


@pytest.mark.parametrize("seats", SEATS)
def test_a_pass_from_another_secret_is_blamed_by_the_audit(seats):
    """A well-made pass from an uncommitted secret passes every live check: only the audit
    sees it."""
    cheater = 1
    table = Table(seats)
    table.decks[cheater] = Deck(table.params, cheater, secret_of(cheater, "uncommitted"))
    committed = Commitment(commitment(table.params, cheater, table.secrets[cheater])).to_wire()
    table.deal(
        lambda step, seat, wire: committed if (step, seat) == (Step.COMMITMENT, cheater) else wire
    )
    table.reveal_to_all(list(range(len(SMALL))))
    for deck in table.decks:
        assert sorted(deck.known_cards.values()) == sorted(SMALL)
    for deck in table.decks:  # the cheater reveals the secret it committed to
        table.send(
            deck.seat,
            SecretReveal(table.secrets[cheater]) if deck.seat == cheater else deck.reveal_secret(),
        )
    assert_deviation(table.audit(0), cheater, Step.SHUFFLE_PASS)


@pytest.mark.parametrize("seats", SEATS)
def test_a_secret_that_does_not_open_its_commitment_is_refused_and_blamed(seats):
    cheater = seats - 1
    table = Table(seats)
    table.deal()
    table.decks[cheater].reveal_secret()
    outcomes = table.outcomes(cheater, SecretReveal(secret_of(cheater, "other")))
    assert all(blames(r, cheater, Step.SECRET) for r in outcomes.values())
    table.open_secrets()
    assert_deviation(table.audit(0), cheater, Step.SECRET)


@pytest.mark.parametrize("seats", SEATS)
def test_a_wrong_position_key_is_caught_at_reveal_and_blamed(seats):
    cheater, victim = 0, seats - 1
    table = Table(seats)
    table.deal()
    for deck in table.decks:
        if deck.seat not in (cheater, victim):
            table.send(deck.seat, deck.keys_for([3]))
    honest = table.decks[cheater].keys_for([3]).keys[0].key
    with pytest.raises(UnattributedDeckError) as caught:
        table.send(cheater, PositionKeys((PositionKey(3, honest % (N - 1) + 1),)))
    assert caught.value.suspects == tuple(s for s in range(seats) if s != victim)
    assert caught.value.position == 3 and caught.value.step is Step.REVEAL
    table.open_secrets()
    assert_deviation(table.audit(victim), cheater, Step.POSITION_KEY, 3)


@pytest.mark.parametrize("seats", SEATS)
def test_a_false_claim_is_refused_and_blamed(seats):
    cheater = seats - 1
    table = Table(seats)
    table.deal()
    (revealed,) = table.reveal_to(cheater, [2])
    other = next(card for card in SMALL if card != revealed.card)
    own_key = table.decks[cheater].keys_for([2]).keys[0].key
    outcomes = table.outcomes(cheater, Claim(2, Card(other), own_key))
    assert all(blames(r, cheater, Step.CLAIM) and r.position == 2 for r in outcomes.values())
    table.open_secrets()
    assert_deviation(table.audit(0), cheater, Step.CLAIM, 2)


@pytest.mark.parametrize("seats", SEATS)
def test_a_true_claim_with_a_wrong_key_is_refused_and_blamed(seats):
    cheater = 0
    table = Table(seats)
    table.deal()
    (revealed,) = table.reveal_to(cheater, [5])
    outcomes = table.outcomes(cheater, Claim(5, revealed.card, 12345))
    assert all(blames(r, cheater, Step.CLAIM) for r in outcomes.values())
    table.open_secrets()
    assert_deviation(table.audit(1), cheater, Step.POSITION_KEY, 5)


def test_a_claim_of_a_publicly_known_position_must_name_its_card():
    table = Table(3)
    table.deal()
    table.reveal_to_all([1])
    card = table.decks[0].known_card(1)
    key = table.decks[2].keys_for([1]).keys[0].key
    assert table.outcomes(2, Claim(1, card, key)) == {0: (), 1: ()}
    other = next(c for c in SMALL if c != card)
    assert all(
        blames(r, 2, Step.CLAIM) for r in table.outcomes(2, Claim(1, Card(other), key)).values()
    )


# The audit on its own


def test_the_audit_blames_the_seat_that_stopped_the_hand():
    table = Table(3)
    for deck in table.decks:
        table.send(deck.seat, deck.commit())
    table.send(0, table.decks[0].shuffle_pass())
    table.send(1, table.decks[1].shuffle_pass())
    table.open_secrets()
    assert_deviation(table.audit(0), 2, Step.SHUFFLE_PASS)
    assert table.audit(0).cards is None


def test_the_audit_blames_missing_commitments_and_secrets():
    table = Table(2)
    table.send(0, table.decks[0].commit())
    assert_deviation(table.audit(1), 1, Step.COMMITMENT)
    table = Table(2)
    table.deal()
    table.send(0, table.decks[0].reveal_secret())
    assert_deviation(table.audit(0), 1, Step.SECRET)


def test_the_audit_maps_every_position_even_past_a_deviation():
    table = Table(2)
    table.deal()
    (revealed,) = table.reveal_to(1, [0])
    table.outcomes(1, Claim(0, Card(next(c for c in SMALL if c != revealed.card)), 12345))
    table.open_secrets()
    result = table.audit(0)
    assert_deviation(result, 1, Step.POSITION_KEY, 0)
    assert result.cards[0] == revealed.card


def test_the_audit_refuses_a_record_for_another_seat_count():
    table = Table(2)
    record = table.decks[0].record
    with pytest.raises(LocalDeckError):
        audit(DeckParams(GAME, 1, SMALL, 3), record)
