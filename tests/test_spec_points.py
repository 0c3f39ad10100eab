"""Points of issue 26 decided in protocol/ whose tests fit no one module's file: a blind card
that decrypts to no card, or to a card only some seats saw elsewhere (session.md §5), and how
a match a seat left reads (session.md §7.3)."""

from __future__ import annotations

import random

import pytest

from p2pwhist.deck import Deck, LockPass, ShufflePass, _passes
from p2pwhist.deck._curve import N, encode_card, multiply, scalar
from p2pwhist.games.bots import RandomBot
from p2pwhist.games.box.engine import Box
from p2pwhist.games.match import MatchLength
from p2pwhist.inprocess import open_table, run
from p2pwhist.session import Convicted, Session
from p2pwhist.signed import Kind, SignedMessage
from p2pwhist.text import match_line

PLAYERS = 3
CHEATER = PLAYERS - 1  # shuffles last, so its permutation fixes the final positions
COPY_KEY = 7  # the cheater's second deck key, for the copies


def _copied(box_position: int) -> int:
    """The hand position whose card the cheater copies to ``box_position``: a card dealt to
    the next seat's hand, whoever deals (a Box layout deals the boxes, then the hands, each
    one card a seat in turn)."""
    offset = box_position % PLAYERS
    return 4 * PLAYERS + box_position - offset + (offset + 1) % PLAYERS


def _cheat_at_the_boxes(monkeypatch, method: str, kind, encrypt, point_at) -> None:
    """From hand 1 on, the cheater's ``method`` pass (of ``kind``, made by ``encrypt``) is
    honest but at each closed box position, where it puts ``point_at(keys, deck, position)``."""
    honest = getattr(Deck, method)

    def cheat(deck: Deck):
        if deck.seat != CHEATER or deck.params.hand != 1:
            return honest(deck)
        before = deck._next_input
        points = list(encrypt(before, deck._keys))
        for position in range(4 * PLAYERS):
            points[position] = point_at(deck._keys, before, position)
        message = kind(tuple(points))
        deck._take_pass(message.points)
        return message

    monkeypatch.setattr(Deck, method, cheat)


@pytest.fixture
def box_cards_copied_from_hands(monkeypatch):
    """At each closed box position, a copy of a card in the next seat's hand: the shuffle pass
    encrypts it with a second deck key, which the lock pass strips. Every point stays distinct
    and every live check passes, so the copy shows only when the box card is played blind,
    and then only to the seat that holds the original, unless that card was laid already."""
    _cheat_at_the_boxes(monkeypatch, "shuffle_pass", ShufflePass, _passes.shuffle_pass,
                        lambda keys, before, j: multiply(scalar(COPY_KEY), before[keys.permutation[_copied(j)]]))
    _cheat_at_the_boxes(monkeypatch, "lock_pass", LockPass, _passes.lock_pass,
                        lambda keys, before, j: multiply(scalar(keys.position_keys[j] * pow(COPY_KEY, -1, N) % N),
                                                         before[j]))


@pytest.fixture
def box_cards_of_no_card(monkeypatch):
    """At each closed box position, a point that is no card's."""
    _cheat_at_the_boxes(monkeypatch, "shuffle_pass", ShufflePass, _passes.shuffle_pass,
                        lambda keys, before, j: encode_card(b"no card of this game", j)[0])


def _played_through(seed: int) -> list[SignedMessage]:
    """A game of Box played with random bots to its verdict, which every seat and an observer
    reach alike, convicting the cheater; its log."""
    sessions = open_table(Box(PLAYERS), MatchLength(hands=1), random.Random(seed))
    run(sessions, [RandomBot(random.Random(seat)) for seat in range(PLAYERS)])
    log = sessions[0].log
    assert len({tuple(m.raw for m in s.log) for s in sessions}) == 1
    observer = Session.observe(log[0])
    for message in log[1:]:
        observer.receive_parsed(message, message.seat)
    for session in (*sessions, observer):
        assert isinstance(session.error, Convicted) and session.error.seat == CHEATER
    return log


def test_a_blind_card_that_decrypts_to_no_card_opens_the_deck_at_once(box_cards_of_no_card):
    """session.md §5: every seat sees it from the log at the round's last KEYS, so no DISPUTE
    is sent, not even by the seat that, holding its own key, saw it before its KEYS (before,
    that seat disputed instead of sending them); the opening follows from that KEYS' sender,
    with no COMMITs, and the audit convicts the cheater."""
    log = _played_through(seed=0)
    assert Kind.DISPUTE not in [m.kind for m in log]
    played = max(i for i, m in enumerate(log) if m.kind is Kind.PLAY)
    opening = next(i for i in range(played, len(log)) if log[i].kind is Kind.SECRET)
    assert log[played].body.blind and {m.kind for m in log[played + 1 : opening]} == {Kind.KEYS}
    assert [m.kind for m in log[opening:]] == [Kind.SECRET] * PLAYERS and log[opening].seat == log[opening - 1].seat


def test_a_blind_card_only_some_seats_saw_elsewhere_is_played_on_and_disputed(box_cards_copied_from_hands):
    """session.md §5: the schedule must not depend on what one seat knows. The seat holding
    the original sees the copy in the blind card's keys round; it sends its keys and plays on
    with everyone (before, it alone opened the deck at once, and the others refused its SECRET
    as out of turn), disputes at its next turn after the round, and the audit convicts the
    cheater."""
    log = _played_through(seed=2)  # where the holder of the original is the last to publish keys
    dispute = next(i for i, m in enumerate(log) if m.kind is Kind.DISPUTE)
    played = max(i for i in range(dispute) if log[i].kind is Kind.PLAY)
    assert log[played].body.blind and {m.kind for m in log[played + 1 : dispute]} == {Kind.KEYS}
    assert log[dispute].body.position == log[played].body.position


def test_a_match_a_seat_left_is_never_drawn():
    """session.md §7.3: the leaver shares in no result; where the remaining seats share the
    most, nobody wins."""
    names = ["alice", "bob", "carol"]
    assert match_line(names, (1, 2, 1), None, left=1) == \
        "Final points: alice 1, bob 2, carol 1; bob left and forfeits, so nobody wins: alice and carol share the most"
    assert match_line(names, (2, 0, 1), 0, left=1).endswith("bob left and forfeits, so alice wins the match")
    assert match_line(names, (1, 0, 1), None).endswith("; a drawn match")  # nobody left: a draw
