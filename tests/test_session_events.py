"""The events a session hands out (p2pwhist.session_events), between real sessions in one
process (no sockets): drained after every message, as the network layer drains them."""

import itertools
import random

from p2pwhist.games.base import Play
from p2pwhist.games.bots import RandomBot
from p2pwhist.games.boxwhist.engine import BoxWhist
from p2pwhist.games.match import MatchLength
from p2pwhist.games.registry import GAMES
from p2pwhist.inprocess import open_table
from p2pwhist.session import CUT_HAND, Need, Session
from p2pwhist.session_events import (
    Awaiting,
    Dealing,
    HandOver,
    MatchOver,
    Moved,
    Seated,
    TableChanged,
    Why,
)
from p2pwhist.signed import Kind, SignedMessage
from p2pwhist.text import Style


def _drain(session: Session, record: list) -> None:
    """The session's events, into ``record``. Whenever a table is told it can be drawn: its
    cards are known to the seat (no KEYS are still due)."""
    for event in session.take_events():
        if isinstance(event, TableChanged):
            assert session.expected_kind is not Kind.KEYS, "a table told while its cards are being revealed"
            assert event.hand is event.match.hands[-1]
            names = [player.name for player in session.table.players]
            GAMES["boxwhist"].text.table(event.hand.view(session.seat), names, Style(False, True), 1, None)
        record.append(event)


def _play(sessions: list[Session], until=lambda sessions: False, wish=True) -> list[list]:
    """Play honestly (random bots, every seat answering ``wish`` to "another hand?") until every
    seat is done or ``until(sessions)``. Returns what each seat saw: every message of the log
    and, after each, the events drained from its session."""
    bots = [RandomBot(random.Random(seat)) for seat in range(len(sessions))]
    records: list[list] = [[] for _ in sessions]
    for session in sessions:
        _drain(session, records[session.seat])
    while not until(sessions):
        actors = [s for s in sessions if s.need not in (Need.PEER, Need.DONE)]
        if not actors:
            break
        actor = actors[0]
        if actor.need is Need.MOVE:
            value = bots[actor.seat].choose(actor.view())
        else:
            value = wish if actor.need is Need.WISH else False
        message = actor.produce(value)
        for other in sessions:
            if other is not actor:
                other.receive(message.raw, actor.seat)
        for session in sessions:
            records[session.seat].append(message)
            _drain(session, records[session.seat])
    return records


def _only(record: list, *kinds: type) -> list:
    return [item for item in record if isinstance(item, kinds)]


def _moves_in(log: list[SignedMessage]) -> list[tuple[int, Play]]:
    return [(m.seat, Play.from_wire(m.body.position, 52)) for m in log if m.kind is Kind.PLAY]


def test_each_seat_is_told_the_match_in_the_order_of_the_log():
    sessions = open_table(BoxWhist(2), MatchLength(hands=2), random.Random(1))
    records = _play(sessions)
    for session, record in zip(sessions, records, strict=True):
        assert session.need is Need.DONE
        events = [item for item in record if not isinstance(item, SignedMessage)]
        assert events[0] == Seated(session.table, session.seat)
        assert _only(events, Seated) == [events[0]]
        assert [event.hand for event in _only(events, Dealing)] == [CUT_HAND, 1, 2]
        assert [(event.seat, event.move) for event in _only(events, Moved)] == _moves_in(session.log)
        # One result per hand, with the points the match holds once the hand is recorded.
        overs = _only(events, HandOver)
        outcome = session.outcome
        assert [over.number for over in overs] == [1, 2]
        assert [over.result for over in overs] == list(outcome.hands)
        assert [over.hand for over in overs] == session.match.hands
        assert [over.points for over in overs] == [outcome.hands[0].points, outcome.points]
        # A hand's moves are told between its deal and its result.
        for number, over in enumerate(overs, 1):
            during = events[events.index(Dealing(number)) : events.index(over)]
            assert _only(during, Moved) == [e for e in _only(events, Moved) if e.hand is over.hand] != []
        # The result is settled before the FINAL signatures: nothing but waiting for them follows.
        (end,) = _only(events, MatchOver)
        assert end.outcome == outcome
        after = events[events.index(end) + 1 :]
        assert after == [Awaiting(seat, Why.FINAL) for seat in range(2) if seat != session.seat]


def test_a_wait_is_told_once_per_change_never_for_our_own_seat_and_before_each_new_mover():
    sessions = open_table(BoxWhist(3), MatchLength(hands=1), random.Random(2))
    records = _play(sessions)
    for session, record in zip(sessions, records, strict=True):
        waits = _only(record, Awaiting, SignedMessage)
        told = [item for item in waits if isinstance(item, Awaiting) or item.seat == session.seat]
        assert all(item.seat != session.seat for item in told if isinstance(item, Awaiting))
        for before, after in itertools.pairwise(told):  # unless a message of ours came in between
            assert not (isinstance(before, Awaiting) and before == after), "the same wait told twice in a row"
        # "Waiting for bob...": each time another seat is to move after a different seat moved.
        since: list = []
        last_mover = None
        for item in record:
            if isinstance(item, SignedMessage) and item.kind is Kind.PLAY:
                if item.seat not in (session.seat, last_mover):
                    assert Awaiting(item.seat, Why.MOVE) in since
                last_mover, since = item.seat, []
            elif isinstance(item, Awaiting):
                since.append(item)


def test_an_open_match_says_whose_wish_it_waits_for():
    sessions = open_table(BoxWhist(2), MatchLength(), random.Random(3))  # neither hands nor minutes
    records = _play(sessions, until=lambda sessions: sessions[1].need is Need.WISH)
    # The first hand is over; seat 0 wished to play on, and seat 1 is asked.
    assert len(sessions[0].match.results) == 1 and sessions[0].need is Need.PEER
    assert _only(records[0], Awaiting)[-1] == Awaiting(1, Why.WISH)
    assert _only(records[1], Awaiting)[-1] == Awaiting(0, Why.WISH)
    assert Why.WISH.line("bob") == "bob is asked whether to play another hand..."
    assert Why.MOVE.line("bob") == "Waiting for bob..."
    assert Why.WISH.is_choice and Why.MOVE.is_choice and not Why.KEYS.is_choice


def test_an_observer_fed_a_transcript_is_told_the_same_moves_and_results():
    sessions = open_table(BoxWhist(2), MatchLength(hands=2), random.Random(4))
    seat_record = _play(sessions)[0]
    log = sessions[0].log
    observer = Session.observe(log[0])
    record = observer.take_events()
    for message in log[1:]:
        observer.receive(message.raw, message.seat)
        record += observer.take_events()
    assert record[0] == Seated(sessions[0].table, None)

    def story(events: list) -> list:
        return [(e.seat, e.move) if isinstance(e, Moved) else (e.number, e.result, e.points)
                for e in _only(events, Moved, HandOver)]

    assert story(record) == story(seat_record) and len(_only(record, HandOver)) == 2
    assert _only(record, MatchOver) == _only(seat_record, MatchOver)
    assert {e.seat for e in _only(record, Awaiting)} == {0, 1}  # the observer holds no seat


def test_a_resumed_seat_is_told_where_the_game_stands_not_its_history():
    rng = random.Random(5)
    sessions = open_table(BoxWhist(2), MatchLength(hands=1), rng)
    drawn: list[bytes] = []

    def recorded() -> bytes:  # the secrets file
        drawn.append(rng.randbytes(32))
        return drawn[-1]

    sessions[1]._new_secret = recorded

    def moving(sessions: list[Session]) -> bool:
        plays = sum(m.kind is Kind.PLAY for m in sessions[0].log)
        return plays >= 5 and any(s.need is Need.MOVE for s in sessions)

    _play(sessions, until=moving)
    crashed = sessions[1]
    saved = iter(drawn)
    back = Session.resume(list(crashed.log), 1, crashed._key, lambda: next(saved))
    events = back.take_events()
    assert events[0] == Seated(back.table, 1)
    assert _only(events, Moved, Dealing, HandOver, MatchOver) == []
    assert _only(events, TableChanged) == [TableChanged(back.match, back.hand)]
    mover = back.waiting_for
    assert _only(events, Awaiting) == ([] if mover == 1 else [Awaiting(mover, Why.MOVE)])
    assert back.take_events() == []


def test_a_forfeit_during_a_hand_settles_that_hand_and_the_match():
    sessions = open_table(BoxWhist(2), MatchLength(hands=2), random.Random(6))
    _play(sessions, until=lambda sessions: sessions[1].need is Need.MOVE)
    sessions[0].take_events()
    sessions[0].forfeit(1, "gone too long")
    hand_over, match_over = sessions[0].take_events()  # then only our own FINAL is due
    assert isinstance(hand_over, HandOver) and hand_over.number == 1
    assert hand_over.result.left == {1} and not hand_over.result.offenders  # absence proves no breach
    assert match_over == MatchOver(sessions[0].outcome) and match_over.outcome.forfeited.seat == 1
