"""Resuming a seat from its transcript and secrets, and forfeits, between real sessions in one
process (no sockets; tests/test_resume_processes.py kills and restarts real peers)."""

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from p2pwhist.bodies import Forfeit
from p2pwhist.games.bots import RandomBot
from p2pwhist.games.boxwhist.engine import BoxWhist
from p2pwhist.games.match import MatchLength
from p2pwhist.games.registry import GAMES
from p2pwhist.inprocess import open_table, run
from p2pwhist.session import Aborted, LocalError, Need, RemoteError, Session
from p2pwhist.signed import Kind, seal
from p2pwhist.ui.scoresheet import scoresheet
from p2pwhist.verify import verify


def _recording_table(game, hands: int, seed: int):
    """A table whose seats' secret sources also record what they give (the secrets file)."""
    rng = random.Random(seed)
    sessions = open_table(game, MatchLength(hands=hands), rng)
    drawn: list[list[bytes]] = [[] for _ in sessions]
    for session in sessions:
        source = session._new_secret

        def recorded(source=source, kept=drawn[session.seat]):
            secret = source()
            kept.append(secret)
            return secret

        session._new_secret = recorded
    return sessions, drawn, rng


def _play_messages(sessions, bots, count: int) -> None:
    """Play honestly until ``count`` messages have been sent, or the match is over."""
    for _ in range(count):
        actors = [s for s in sessions if s.need not in (Need.PEER, Need.DONE)]
        if not actors:
            return
        actor = actors[0]
        value = bots[actor.seat].choose(actor.view()) if actor.need is Need.MOVE else actor.need is Need.WISH
        message = actor.produce(value)
        for other in sessions:
            if other is not actor:
                other.receive(message.raw, actor.seat)


def _until_play_turn(sessions, bots, seat: int) -> None:
    """Play honestly until ``seat`` is to move."""
    while not (sessions[seat].need is Need.MOVE):
        _play_messages(sessions, bots, 1)


def _rebuilt_from(log, session: Session, saved: list[bytes], rng: random.Random) -> Session:
    secrets = iter(list(saved))
    return Session.resume(log, session.seat, session._key, lambda: next(secrets, None) or rng.randbytes(32))


# Every registered game at its usual table, and Box Whist at 3 (a table where the deal rotates).
REBUILT = [pytest.param(entry.make(entry.default_players), id=name) for name, entry in GAMES.items()] + \
    [pytest.param(BoxWhist(3), id="boxwhist-3")]


@pytest.mark.parametrize("game", REBUILT)
@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 10**6), stop=st.integers(1, 250), seat=st.integers(0, 5))
def test_a_seat_rebuilt_from_its_log_and_secrets_makes_the_same_messages_and_the_match_ends_alike(game, seed, stop,
                                                                                                 seat):
    sessions, drawn, rng = _recording_table(game, hands=1, seed=seed)
    bots = [RandomBot(random.Random(seed + s)) for s in range(game.players)]
    _play_messages(sessions, bots, stop)
    seat %= game.players
    crashed = sessions[seat]
    sessions[seat] = back = _rebuilt_from(list(crashed.log), crashed, drawn[seat], rng)
    assert [m.raw for m in back.log] == [m.raw for m in crashed.log]
    assert back.need == crashed.need
    run(sessions, bots)
    assert len({tuple(m.raw for m in s.log) for s in sessions}) == 1
    assert sessions[0].log[-1].kind is Kind.FINAL


@pytest.mark.parametrize("players", [2, 3])
def test_a_seat_rebuilt_between_its_secret_and_its_commitment_to_the_next_deck_makes_the_same_commitment(players):
    """The next hand's secret is drawn, and saved, before the SECRET that its COMMIT follows
    (session.md §7.1): a seat that stops between the two sends, once rebuilt, the COMMIT it
    would have sent."""
    sessions, drawn, rng = _recording_table(BoxWhist(players), hands=2, seed=players)
    bots = [RandomBot(random.Random(s)) for s in range(players)]
    seat = players - 1
    while not (sessions[seat].need is Need.SEND and sessions[seat].expected_kind is Kind.COMMIT
               and sessions[seat].hand is not None):
        _play_messages(sessions, bots, 1)
    crashed = sessions[seat]
    assert crashed.log[-1].kind is Kind.SECRET and crashed.log[-1].seat == seat
    assert len(drawn[seat]) == 3  # the cut's, hand 1's, and hand 2's, which the COMMIT binds
    sessions[seat] = back = _rebuilt_from(list(crashed.log), crashed, drawn[seat], rng)
    assert crashed.produce().raw == back.produce().raw
    sessions[seat] = crashed
    for other in sessions:
        if other is not crashed:
            other.receive(crashed.log[-1].raw, seat)
    run(sessions, bots)
    assert len({tuple(m.raw for m in s.log) for s in sessions}) == 1


def test_a_transcript_whose_own_deck_message_was_changed_does_not_rebuild():
    """Our own SHUFFLE replaced by another (the other seat's pass, signed with our key): the
    rebuilt seat makes the one its secret gives, so the transcript is refused rather than
    resumed from, which could make us sign two different messages at one place."""
    sessions, drawn, rng = _recording_table(BoxWhist(2), hands=1, seed=3)
    bots = [RandomBot(random.Random(s)) for s in range(2)]
    _until_play_turn(sessions, bots, 1)
    log = list(sessions[1].log)
    ours = next(i for i, m in enumerate(log) if m.kind is Kind.SHUFFLE and m.seat == 1)
    theirs = next(m for m in log if m.kind is Kind.SHUFFLE and m.seat == 0)
    log[ours] = seal(sessions[1]._key, log[ours].seq, log[ours].prev, 1, theirs.body)
    with pytest.raises(LocalError, match="changed"):
        _rebuilt_from(log, sessions[1], drawn[1], rng)


def _forfeit_at_a_move(players: int, seed: int = 5):
    """Seat 1 is to move and stays away: the host declares its forfeit, the others co-sign
    and everyone but seat 1 signs FINAL."""
    sessions, _, _ = _recording_table(BoxWhist(players), hands=2, seed=seed)
    bots = [RandomBot(random.Random(s)) for s in range(players)]
    _until_play_turn(sessions, bots, 1)
    _play_messages(sessions, bots, 0)
    notice = sessions[0].forfeit(1, "bob lost connection and did not return within 5:00")
    for other in sessions[2:]:  # bob, away, never hears of it; were he here, he would refuse it
        other.receive(notice.raw, 0)
    with pytest.raises(RemoteError, match="never signs its own forfeit"):
        sessions[1].receive(notice.raw, 0)
    remaining = [s for s in sessions if s.seat != 1]
    run(remaining, bots)  # the seat that left sends nothing more
    return sessions


@pytest.mark.parametrize("players", [2, 3])
def test_a_seat_that_stays_away_forfeits_the_match_by_a_log_every_other_seat_signs(players):
    sessions = _forfeit_at_a_move(players)
    host = sessions[0]
    outcome = host.outcome
    assert outcome is not None and outcome.forfeited is not None and outcome.forfeited.seat == 1
    assert outcome.winner != 1
    if players == 2:
        assert outcome.winner == 0  # the one who stayed wins
    kinds = [m.kind for m in host.log[-2 * (players - 1):]]
    assert kinds == [Kind.FORFEIT] * (players - 1) + [Kind.FINAL] * (players - 1)
    assert len({tuple(m.raw for m in s.log) for s in sessions if s.seat != 1}) == 1

    verdict = verify(host.log)
    assert verdict.valid and verdict.complete
    assert verdict.to_json()["forfeit"]["seat"] == 1
    sheet = scoresheet(verdict)
    assert "seat1 left and forfeits, so" in sheet and "cut short" in sheet
    assert "a drawn match" not in sheet.splitlines()[-2] or players > 2


def test_a_forfeit_may_name_only_the_seat_due_or_the_host():
    sessions, _, _ = _recording_table(BoxWhist(3), hands=1, seed=7)
    bots = [RandomBot(random.Random(s)) for s in range(3)]
    _until_play_turn(sessions, bots, 1)
    with pytest.raises(LocalError, match="only the seat whose message is due"):
        sessions[0].forfeit(2, "carol is slow")  # carol is not due: bob is
    with pytest.raises(LocalError, match="its own forfeit"):
        sessions[2].forfeit(2, "I give up")
    wrong = seal(sessions[0]._key, len(sessions[0].log), sessions[0].head, 0, Forfeit(2, "carol is slow"))
    with pytest.raises(RemoteError, match="may not") as refused:
        sessions[1].receive(wrong.raw, 0)
    assert refused.value.seat == 0
    notice = sessions[2].forfeit(0, "the host lost connection")  # the relay itself may always be named
    assert notice.kind is Kind.FORFEIT and sessions[2].outcome.forfeited.seat == 0


def test_no_forfeit_before_every_seat_has_accepted():
    sessions, _, _ = _recording_table(BoxWhist(2), hands=1, seed=7)
    with pytest.raises(LocalError, match="after every seat has accepted"):
        sessions[0].forfeit(1, "bob never accepted")


def test_leaving_with_abort_after_every_seat_accepted_forfeits_but_not_before():
    sessions, _, _ = _recording_table(BoxWhist(2), hands=1, seed=9)
    early = sessions[1].abort("I changed my mind")  # before its ACCEPT: nothing to lose
    with pytest.raises(Aborted):
        sessions[0].receive(early.raw, 1)
    assert sessions[0].outcome is None

    sessions, _, _ = _recording_table(BoxWhist(2), hands=1, seed=9)
    bots = [RandomBot(random.Random(s)) for s in range(2)]
    _until_play_turn(sessions, bots, 1)
    quit_ = sessions[1].abort("I have to go")
    with pytest.raises(Aborted):
        sessions[0].receive(quit_.raw, 1)
    outcome = sessions[0].outcome
    assert outcome is not None and outcome.forfeited.seat == 1 and outcome.winner == 0
    verdict = verify(sessions[0].log)
    assert verdict.valid and not verdict.complete and verdict.to_json()["forfeit"]["seat"] == 1


def test_a_game_cut_short_is_shown_as_unfinished_with_its_tricks_not_as_a_draw():
    """Ten tricks into a hand the log stops (nobody forfeited yet): show gives the tricks
    played, cards never revealed as ?, and says the match was not finished."""
    sessions, _, _ = _recording_table(BoxWhist(2), hands=1, seed=11)
    bots = [RandomBot(random.Random(s)) for s in range(2)]
    while len(sessions[0].hand.tricks if sessions[0].hand else ()) < 10:
        _play_messages(sessions, bots, 1)
    verdict = verify(sessions[0].log)
    assert verdict.valid and not verdict.complete
    sheet = scoresheet(verdict)
    assert "cut short" in sheet and "\n10. " in sheet and "?" in sheet and "None" not in sheet
    assert "the match was not finished" in sheet and "drawn" not in sheet
