"""Faults between real processes (issue 11): a peer SIGKILLed mid-match and started again with
the same command (or ``p2pwhist resume``), and the match still finishes: every
peer exits 0, every transcript is byte-identical (the victim's still begins with what it held
at the fault) and ``verify`` calls it valid and complete, with nobody forfeiting.

A connection cut while both processes live is tested in memory (test_table_play's
``test_a_joiner_whose_connection_drops_comes_back_by_itself``); ``scripts/chaos.py`` still cuts
real connections through ``netutil.CutProxy``, whose own test is here.

Each test is a Box Whist match of one hand between ``python -m p2pwhist`` processes with random
bots, ``--timeout 60 --wait 30``, through ``netutil.play_with_fault``; the fault strikes once
the victim's transcript holds a chosen number of messages (read every 5 ms, so the fault lands
there or a few messages later); two tests wait from there for the victim to be choosing a card
(``Fault.choosing``). ``scripts/chaos.py`` runs the same with random faults, many times.

A 2-player match of one hand takes about 100 messages (the log of version 2, which protocol
version 3 keeps): START, ACCEPT, the cut's COMMIT, SHUFFLE and LOCK passes and its SECRETs, each
with the seat's COMMIT for the hand (to 11), HAND at 12, the deal's passes and keys, the first
PLAY at about 19, tricks (PLAY, KEYS) to about 92, the audit's SECRETs from about 93, HAND and
the FINALs; 3 players: about 107 messages, the audit's SECRETs from about 97 to 102.
"""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from netutil import DEADLINE, CutProxy, Fault, Peers, play_with_fault

HOST, BOB, CAROL = 0, 1, 2


def finishes(tmp_path: Path, players: int, fault: Fault) -> None:
    # A kill meant to find the victim choosing may land just after its card, and one near the
    # end may land once the match is over (the transcript is read every 5 ms): then again.
    for attempt in range(3):
        with Peers(tmp_path / str(attempt)) as peers:
            run = play_with_fault(peers, players, 1, fault, deadline=60)
        if run.choosing is not False and not run.late:
            break
    assert run.choosing is not False and not run.late, f"three kills missed {fault.describe()}: {run.root}"
    if run.problems():
        pytest.fail(run.report(), pytrace=False)


def test_a_joiner_killed_during_the_cut_comes_back_and_the_match_finishes(tmp_path: Path) -> None:
    finishes(tmp_path, 2, Fault(BOB, "kill", 5))


def test_the_host_killed_mid_hand_comes_back_and_the_match_finishes(tmp_path: Path) -> None:
    finishes(tmp_path, 2, Fault(HOST, "kill", 60))


def test_a_joiner_back_by_p2pwhist_resume_finishes_the_match(tmp_path: Path) -> None:
    """`p2pwhist resume TRANSCRIPT` runs the command saved beside it again."""
    finishes(tmp_path, 2, Fault(BOB, "kill", 30, by_resume=True))


def test_one_of_two_joiners_killed_at_the_hands_end_comes_back_and_the_match_finishes(tmp_path: Path) -> None:
    finishes(tmp_path, 3, Fault(CAROL, "kill", 98))


@pytest.mark.parametrize("victim", [HOST, BOB], ids=["host", "joiner"])
def test_a_peer_killed_while_choosing_its_card_comes_back_and_plays_it(tmp_path: Path, victim: int) -> None:
    # The victim is the search bot, which thinks a while: the kill finds it choosing, so the
    # restarted peer's first task is to choose a card (random bots answer at once: a kill at a
    # message almost never catches one choosing).
    finishes(tmp_path, 2, Fault(victim, "kill", 30, choosing=True))


def test_the_proxy_forwards_both_ways_and_a_cut_closes_both_sides_but_not_the_next_connection() -> None:
    upstream = socket.create_server(("127.0.0.1", 0))
    upstream.settimeout(DEADLINE)
    with upstream, CutProxy(upstream.getsockname()[1]) as proxy:
        for round_ in range(2):  # the second connection, after the cut, works as the first
            client = socket.create_connection(("127.0.0.1", proxy.port), timeout=DEADLINE)
            server, _ = upstream.accept()
            server.settimeout(DEADLINE)
            with client, server:
                client.sendall(b"ping")
                assert server.recv(16) == b"ping"
                server.sendall(b"pong")
                assert client.recv(16) == b"pong"
                assert proxy.cut(reset=round_ == 1) == 1
                for end in (client, server):  # each side sees the connection end: EOF or a reset
                    try:
                        assert end.recv(16) == b""
                    except ConnectionResetError:
                        pass
        assert len(proxy.accepted) == 2
