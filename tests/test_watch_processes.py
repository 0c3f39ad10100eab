"""Spectators as users run them: ``p2pwhist watch`` processes over loopback TCP, beside a real
host and a hand-written joiner (bob) who pauses at his first move, so that a second spectator
arrives mid-hand. Both spectators' transcripts equal the host's and verify; while bob holds
his cards, none of them is on a spectator's screen, nor known to the session a spectator runs
(its transcript so far, replayed into ``Session.observe``, is exactly what that session saw).
At a terminal (a pseudo-terminal, read with pyte) ``watch`` draws the table from no seat and
``q`` stops it, keeping a transcript that verifies. Every wait has a deadline
(``netutil.DEADLINE``)."""

from __future__ import annotations

import time

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from netutil import DEADLINE, POLL, FakePeer, Peers, play, seat_at

from p2pwhist.home import secrets_path
from p2pwhist.session import Session
from p2pwhist.transcript import read_transcript


def _observed(path, count: int) -> Session:
    """The session a spectator ran, rebuilt from its transcript once that holds ``count``
    messages (it writes each as it checks it)."""
    deadline = time.monotonic() + DEADLINE
    while len(messages := list(read_transcript(path))) < count:
        assert time.monotonic() < deadline, f"{path} holds {len(messages)} messages, not {count}"
        time.sleep(POLL)
    observer = Session.observe(messages[0])
    for message in messages[1:]:
        observer.receive_parsed(message, message.seat)
    return observer


def test_spectators_before_the_start_and_mid_hand_keep_the_log_and_see_no_private_card(tmp_path):
    paths = {name: tmp_path / f"{name}.p2pw" for name in ("alice", "early", "late")}
    with Peers(tmp_path) as peers:
        host = peers.host("alice", "--transcript", str(paths["alice"]))
        early = peers.start("early", "watch", host.address, "--transcript", str(paths["early"]))
        host.peer.wait_for(r"is watching \(1 of 4\)")
        key = Ed25519PrivateKey.generate()
        bob = FakePeer.connect(host.port)
        bob.sit("bob", key)
        session = seat_at(bob, key)
        play(bob, session)  # up to bob's first move: the cards are dealt, and the table waits for him
        late = peers.start("late", "watch", host.address, "--transcript", str(paths["late"]))
        late.wait_for("Watching alice, bob")
        hand = session.hand
        held = {hand.cards[position] for position in hand.hands[1]} - set(hand.view(1).known_hand_cards(1))
        assert held
        for name, spectator in (("early", early), ("late", late)):
            observer = _observed(paths[name], len(session.log))  # every message there is so far
            assert not held & {card for card in observer.hand.cards if card is not None}
            screen = spectator.out.read_text()
            assert not [card for card in held if f" {card}" in screen or f" {card.ascii}" in screen], screen
        play(bob, session, bot="random")
        done = [peer.finish() for peer in (host.peer, early, late)]
        verified = peers.start("verifier", "verify", str(paths["late"])).finish()
    assert [d.code for d in done] == [0, 0, 0], [d.err for d in done]
    log = paths["alice"].read_bytes()
    assert paths["early"].read_bytes() == log and paths["late"].read_bytes() == log
    assert any(line.startswith("valid, complete") for line in verified.out.splitlines()), verified.out
    assert {d.result_line() for d in done} == {done[0].result_line()}
    assert not list(tmp_path.glob("*.secrets"))


def test_watch_at_a_terminal_shows_the_table_from_no_seat_and_q_stops_it_keeping_the_transcript(tmp_path):
    """``p2pwhist watch`` in an 80x25 pseudo-terminal, while bob holds his cards: the
    full-screen table names both seats with their counts, shows none of bob's cards, and q
    ends it (exit 0) with a transcript that verifies, unfinished; the table plays on."""
    from test_fullscreen import Terminal  # pexpect and pyte: skipped where they are not installed

    path = tmp_path / "watcher.p2pw"
    with Peers(tmp_path) as peers:
        host = peers.host("alice")
        key = Ed25519PrivateKey.generate()
        bob = FakePeer.connect(host.port)
        bob.sit("bob", key)
        session = seat_at(bob, key)
        play(bob, session)  # up to bob's first move: the table waits for him
        hand = session.hand
        held = {hand.cards[position] for position in hand.hands[1]} - set(hand.view(1).known_hand_cards(1))
        watcher = Terminal(["watch", host.address, "--transcript", str(path)], tmp_path / "watcher", rows=25)
        try:
            screen = watcher.wait_for(lambda s: "Waiting for bob" in s and "you hold no seat" in s, "the table")
            assert "(watching)" in screen
            rows = [line.strip() for line in screen.split("\n")]
            for name in ("alice", "bob"):
                assert any(row.startswith(f"{name}:") and "in hand" in row for row in rows), screen
            assert not [card for card in held if f" {card}" in screen or f" {card.ascii}" in screen], screen
            watcher.send("q")
            assert watcher.finish() == 0
        finally:
            watcher.kill()
        assert f"You stopped watching. The log so far, each message checked, is in {path}" in watcher.output
        assert not secrets_path(path).exists()
        play(bob, session, bot="random")
        assert host.peer.finish().code == 0
        verified = peers.start("verifier", "verify", str(path)).finish()
    assert verified.out.startswith("valid, unfinished"), verified.out
