"""The end of a match in words, and the early stop of a match whose winner is settled
(issue 23, item 5; session.md §2): every seat is told who declined or that everyone agreed,
and a match of set length stops before its last hand only if every seat signs that it wishes
to, which ``verify`` accepts as complete and refuses without every seat's agreement."""

from __future__ import annotations

import json
import os
import random

import pytest
import trio
import verdicts

from p2pwhist import cli
from p2pwhist.bodies import MatchSigned, NextHand, Table
from p2pwhist.games.base import HandResult
from p2pwhist.games.bots import RandomBot
from p2pwhist.games.boxwhist.engine import BoxWhist
from p2pwhist.games.match import Match, MatchLength
from p2pwhist.games.registry import GAMES
from p2pwhist.inprocess import open_table
from p2pwhist.session import Need, RemoteError, Session, start_message
from p2pwhist.session_events import MatchOver, Outcome, Seated, Settled, Why
from p2pwhist.signed import Kind, seal

SETTLED_SEED = 1  # two players, three hands: bob wins the first two


def _step(sessions: list[Session], bots: list[RandomBot], answer) -> Session:
    """One message made by the first seat that can, and delivered: a bot's move, or
    ``answer(session)`` to any question (by default false: play on, and no clock)."""
    actor = next(s for s in sessions if s.need not in (Need.PEER, Need.DONE))
    value = bots[actor.seat].choose(actor.view()) if actor.need is Need.MOVE else answer(actor)
    message = actor.produce(value)
    for other in sessions:
        if other is not actor:
            other.receive(message.raw, actor.seat)
    return actor


def _play(sessions: list[Session], stop: dict[int, bool], events: list | None = None) -> list[tuple[int, int]]:
    """Play to the end with random bots; ``stop[seat]`` answers "stop now?" (default: play
    on). Returns who was asked, after how many hands."""
    bots = _bots(len(sessions))
    asked = []

    def answer(actor: Session) -> bool:
        if actor.need is Need.STOP:
            asked.append((len(actor.match.results), actor.seat))
            return stop.get(actor.seat, False)
        return False

    while not all(s.need is Need.DONE for s in sessions):
        _step(sessions, bots, answer)
        if events is not None:
            events += sessions[0].take_events()
    return asked


def _bots(players: int) -> list[RandomBot]:
    return [RandomBot(random.Random(seat)) for seat in range(players)]


def _until_alice_is_asked(sessions: list[Session]) -> None:
    bots = _bots(len(sessions))
    while sessions[0].need is not Need.STOP:
        _step(sessions, bots, lambda actor: False)


def _settled_table(version: int | None = None) -> list[Session]:
    rng = random.Random(SETTLED_SEED)
    sessions = open_table(BoxWhist(2), MatchLength(hands=3), rng)
    if version is None:
        return sessions
    # The same table in an older log version: START made again with it.
    first = sessions[0]
    table = Table(first.table.game, first.table.length, first.table.players, first.table.nonce,
                  first.table.date, first.table.times, version)
    start = start_message(first._key, table)
    secrets = random.Random(99)
    return [Session(start, s.seat, s._key, lambda: secrets.randbytes(32)) for s in sessions]


def _file(tmp_path, messages) -> str:
    path = tmp_path / "game.p2pw"
    path.write_bytes(verdicts.transcript([m.raw for m in messages]))
    return str(path)


def _verify(path: str, capsys) -> tuple[int, dict]:
    code = cli.main(["verify", "--json", path])
    return code, json.loads(capsys.readouterr().out)


def _match(points_per_hand: list[tuple[int, ...]], hands: int | None) -> Match:
    game = BoxWhist(len(points_per_hand[0]))
    match = Match(game, MatchLength(hands=hands), 0)
    for points in points_per_hand:
        match.start_hand(list(game.deck()))
        match.record(HandResult((0,) * len(points), frozenset(), points))
    return match


def test_a_match_is_settled_once_no_seat_can_catch_up_with_the_hands_left():
    assert _match([(1, 0), (1, 0)], hands=3).settled == 0  # 2-0 with one left
    assert _match([(1, 0)], hands=3).settled is None  # 1-0 with two left: 1-2 may follow
    assert _match([(1, 0), (0, 0)], hands=3).settled is None  # 1-0 with one left: a draw may follow
    assert _match([(0, 1), (0, 1), (0, 1)], hands=5).settled == 1
    assert _match([(1, 0), (1, 0)], hands=2).settled is None  # no hand left: nothing to stop
    assert _match([(1, 0), (1, 0)], hands=None).settled is None  # an open match has no foreseen end


@pytest.mark.parametrize("name", sorted(GAMES))
def test_every_game_says_the_most_points_one_hand_gives_a_seat(name):
    entry = GAMES[name]
    game = entry.make(entry.default_players)
    sessions = open_table(game, MatchLength(hands=2), random.Random(3))
    _play(sessions, {})
    assert game.most_hand_points >= 1
    assert max(max(result.points) for result in sessions[0].outcome.hands) <= game.most_hand_points


def test_a_settled_match_stops_when_every_seat_agrees_and_verify_and_show_accept_it(tmp_path, capsys):
    sessions = _settled_table()
    events: list = []
    asked = _play(sessions, {0: True, 1: True}, events)
    assert asked == [(2, 0), (2, 1)]
    (settled,) = [event for event in events if isinstance(event, Settled)]
    assert settled.line(["alice", "bob"]) == "bob has won the match: the last hand cannot change it"
    outcome = sessions[1].outcome
    assert outcome.stopped and len(outcome.hands) == 2 and outcome.points == (0, 2) and outcome.winner == 1
    assert outcome.line(["alice", "bob"]) == ("Everyone agreed to stop: the match is over. "
                                              "Final points: alice 0, bob 2; bob wins the match.")
    stops = [m for m in sessions[0].log if m.kind is Kind.HAND and m.body == NextHand(False)]
    assert [m.seat for m in stops] == [0, 1]  # each seat signed its agreement
    path = _file(tmp_path, sessions[0].log)
    code, report = _verify(path, capsys)
    assert code == 0 and report["valid"] and report["complete"] and len(report["hands"]) == 2
    assert cli.main(["show", path]) == 0
    assert "Final points: seat0 0, seat1 2; seat1 wins the match." in capsys.readouterr().out


def test_one_seat_that_plays_on_plays_the_last_hand():
    sessions = _settled_table()
    asked = _play(sessions, {0: True})
    assert asked == [(2, 0), (2, 1)]
    assert not sessions[0].outcome.stopped and len(sessions[0].outcome.hands) == 3


def test_a_stop_without_every_seats_agreement_is_refused_by_a_peer_and_by_verify(tmp_path, capsys):
    sessions = _settled_table()
    alice, bob = sessions
    _until_alice_is_asked(sessions)
    wish = alice.produce(True)  # alice would stop
    bob.receive(wish.raw, 0)
    # bob never signs his agreement: alice signs the stopped match's result as if he had
    final = seal(alice._key, len(alice.log), alice.head, 0, MatchSigned((0, 2), 1))
    with pytest.raises(RemoteError) as error:
        bob.receive(final.raw, 0)
    assert error.value.seat == 0 and "out of turn" in error.value.reason
    code, report = _verify(_file(tmp_path, [*alice.log, final]), capsys)
    assert code != 0 and not report["valid"] and report["error"]["seat"] == 0


def test_a_log_of_version_3_never_asks_and_plays_every_hand():
    """Before log version 4 there is no question: the host's HAND starts every hand."""
    sessions = _settled_table(version=3)
    assert _play(sessions, {}) == []
    assert len(sessions[0].outcome.hands) == 3


def test_an_open_match_says_who_declined():
    sessions = open_table(BoxWhist(2), MatchLength(), random.Random(14))
    bots = _bots(2)
    events = []
    while not all(s.need is Need.DONE for s in sessions):
        _step(sessions, bots, lambda actor: actor.seat != 1)  # bob would rather stop
        events += sessions[0].take_events()
    (over,) = [event for event in events if isinstance(event, MatchOver)]
    assert over.outcome.declined == 1
    points = over.outcome.points
    line = over.outcome.line(["alice", "bob"])
    assert line.startswith("bob would rather stop: the match is over. Final points: ")
    assert f"alice {points[0]}, bob {points[1]}" in line


def test_the_end_of_a_match_in_words():
    names = ["You", "bob"]
    assert Outcome((), (2, 1), 0, declined=0).line(names) == \
        "You would rather stop: the match is over. Final points: You 2, bob 1; you win the match."
    assert Outcome((), (2, 1), 0).line(names) == "The match is over. Final points: You 2, bob 1; you win the match."
    assert Settled(0, 2).line(names) == "You have won the match: the last 2 hands cannot change it"
    assert Why.STOP.is_choice


async def test_both_interfaces_say_at_once_who_declined_and_the_result(capsys, tmp_path):
    from p2pwhist.cli_play import _Display
    from p2pwhist.net import GameRecord
    from p2pwhist.ui.fullscreen import FullScreenPlayer

    table = open_table(BoxWhist(2), MatchLength(), random.Random(1))[0].table  # seat0, seat1
    outcome = Outcome((), (2, 1), 0, declined=1)
    full = FullScreenPlayer(color=False)
    full.on_event(Seated(table, 0))
    full.on_event(MatchOver(outcome))
    assert [popup.body for popup in full.model.popups] == [
        "seat1 would rather stop: the match is over. Final points: You 2, seat1 1; you win the match."]
    plain = _Display("random")
    plain.on_event(Seated(table, 0))
    plain.on_event(Settled(0, 1))
    plain.finish(GameRecord(outcome, tmp_path / "game.p2pw", table))
    assert capsys.readouterr().out.splitlines()[:3] == [
        "seat0 has won the match: the last hand cannot change it.", "seat1 would rather stop.",
        "Match over. Final points: seat0 2, seat1 1; seat0 wins the match."]


def test_the_stop_question_goes_to_the_person_or_bot_and_a_bot_agrees():
    from p2pwhist.net import Agent
    from p2pwhist.table import Limits, Wish
    from p2pwhist.table._peer import Peer

    sessions = _settled_table()
    _until_alice_is_asked(sessions)
    peer = Peer(sessions[0], None, 0.0, Limits())  # type: ignore[arg-type]  (nothing is sent before the answer)
    assert peer.work(0.0) == [Wish(1, stop=True)]
    choose = _bots(1)[0].choose
    assert trio.run(Agent(choose, False).stop) is True  # a bot agrees to stop
    assert trio.run(Agent(choose, False, stop=lambda: False).stop) is False  # a person may play on


def test_a_seat_resumed_at_the_stop_question_is_told_why_it_is_asked():
    sessions = _settled_table()
    alice, bob = sessions
    drawn: list[bytes] = []
    source = bob._new_secret

    def recorded() -> bytes:  # bob's secrets file
        drawn.append(source())
        return drawn[-1]

    bob._new_secret = recorded
    _until_alice_is_asked(sessions)
    bob.receive(alice.produce(True).raw, 0)  # alice would stop: bob is asked next
    saved = iter(drawn)
    rebuilt = Session.resume(bob.log, 1, bob._key, lambda: next(saved))
    assert rebuilt.need is Need.STOP
    assert Settled(1, 1) in rebuilt.take_events()


@pytest.mark.parametrize("key, stop", [(b"y", True), (b"\r", True), (b"n", False)])
async def test_the_full_screen_table_asks_whether_to_stop_once_the_settled_winner_is_seen(key, stop):
    from test_fullscreen import _keyboard, _until  # its in-process keyboard (skipped without pexpect, pyte)

    table = open_table(BoxWhist(2), MatchLength(hands=3), random.Random(1))[0].table
    with _keyboard() as (full, typing):
        full.on_event(Seated(table, 0))
        full.on_event(Settled(1, 1))
        answers: list[bool] = []

        async def person() -> None:
            answers.append(await full.stop_early())

        async with trio.open_nursery() as nursery:
            await nursery.start(full.open_screen)
            nursery.start_soon(person)
            assert [popup.body for popup in full.model.popups] == [
                "seat1 has won the match: the last hand cannot change it."]
            os.write(typing, b"\r")  # acknowledges the standing news, and answers nothing yet
            await _until(lambda: not full.model.popups, "the news acknowledged")
            assert not answers
            os.write(typing, key)
            await _until(lambda: answers, "the answer")
            nursery.cancel_scope.cancel()
    assert answers == [stop]


def test_a_stop_before_the_winner_is_settled_is_refused(tmp_path, capsys):
    sessions = open_table(BoxWhist(2), MatchLength(hands=3), random.Random(SETTLED_SEED))
    alice = sessions[0]
    bots = _bots(2)
    while not (alice.match and alice.match.results and alice.waiting_for == 0 and alice.expected_kind is Kind.HAND):
        _step(sessions, bots, lambda actor: False)
    assert alice.match.settled is None and alice.need is Need.DECISION  # one hand won of three
    stop = seal(alice._key, len(alice.log), alice.head, 0, NextHand(False))
    with pytest.raises(RemoteError) as error:
        sessions[1].receive(stop.raw, 0)
    assert error.value.seat == 0 and "match length" in error.value.reason
    code, report = _verify(_file(tmp_path, [*alice.log, stop]), capsys)
    assert code != 0 and not report["valid"] and report["error"]["seat"] == 0


def test_at_the_full_screen_table_an_open_match_ends_at_once_saying_who_declined(tmp_path):
    """A person hosts an open match at the full-screen table, a bot joins; after the first hand
    the person says no: their screen says so with the result at once, and so does the bot's seat."""
    import re

    from test_fullscreen import ENTER, Terminal, _play_out  # skipped without pexpect, pyte

    host = Terminal(["host", "--port", "0", "--name", "alice", "--bind", "127.0.0.1", "--no-announce", "--no-map"],
                    tmp_path / "alice")
    guest = None
    try:
        screen = host.wait_for(lambda s: "--expect" in s, "the join command")
        command = next(line for line in screen.split("\n") if "--expect" in line)
        address, expect = re.search(r"join (\S+)", command).group(1), re.search(r"--expect (\S+)", command).group(1)
        guest = Terminal(["join", address, "--expect", expect, "--name", "bob", "--bot", "random"], tmp_path / "bob")
        host.wait_for(lambda s: "Play with this key?" in s or "Trust it?" in s, "the question of bob's key",
                      others=(guest,))
        host.send("y" + ENTER)
        _play_out(host, "Hand 1 over")
        host.send(" ")
        host.wait_for(lambda s: "Another hand?" in s, "the question", others=(guest,))
        host.send("n")
        screen = host.wait_for(lambda s: "would rather stop" in s, "the match's end", others=(guest,))
        assert "You would rather stop: the match is over." in screen and "Final points: You " in screen
        host.send(" ")
        assert host.finish() == 0
        assert guest.finish() == 0
        assert "alice would rather stop." in guest.output and "Match over. Final points: alice " in guest.output
    finally:
        host.kill()
        if guest is not None:
            guest.kill()
