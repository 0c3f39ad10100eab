"""Whole matches between separate p2pwhist processes over loopback TCP, as users run them."""

from __future__ import annotations

import re

import pytest
from netutil import Peers

from p2pwhist.signed import Kind
from p2pwhist.transcript import read_transcript


@pytest.mark.parametrize("players", [2, 3, 4])
def test_a_match_between_processes_ends_alike_on_every_peer(tmp_path, players):
    with Peers(tmp_path) as peers:
        done, transcripts, verified = peers.match(players)

    assert [d.code for d in done] == [0] * players, [d.err for d in done]
    assert verified.code == 0, verified.err
    assert len({d.result_line() for d in done}) == 1
    assert all(f"Transcript: {path}" in d.out for d, path in zip(done, transcripts))
    contents = {path.read_bytes() for path in transcripts}
    assert len(contents) == 1
    assert not list(tmp_path.glob("*.secrets"))  # every secret is in the finished transcript
    messages = list(read_transcript(transcripts[0]))
    assert messages[0].kind is Kind.START
    assert [m.kind for m in messages[-players:]] == [Kind.FINAL] * players
    assert Kind.PLAY in {m.kind for m in messages}


def test_play_watch_runs_bots_as_networked_peers_named_by_kind_and_seat(tmp_path):
    with Peers(tmp_path) as peers:
        done = peers.start("watcher", "play", "--watch", "--hands", "1", "--bot", "random", "--players", "4",
                           "--game", "box", "--plain").finish()
    assert done.code == 0, done.err
    assert "Traceback" not in done.err
    assert re.search(r"^Match over\. Points: random-0 \d, random-1 \d, random-2 \d, random-3 \d;", done.out, re.M)


def test_a_joiner_expecting_another_host_key_leaves_in_one_line_and_the_table_waits_on(tmp_path):
    wrong = "0000-1111-2222-3333-4444-5555-6666-7777"
    with Peers(tmp_path) as peers:
        host = peers.host("alice")
        joiner = peers.join("bob", host, "--expect", wrong).finish()
        # bob checked the host's key before sitting down: the host lost no seat and waits on
        host.peer.wait_for("Dropped a connection during its handshake: bob disconnected")
        carol = peers.join("carol", host, "--expect", host.fingerprint).finish()
        hosted = host.peer.finish()
    assert joiner.code == 1
    line = joiner.error_line()
    assert host.fingerprint in line and wrong in line and "does not sit down" in line
    assert carol.code == 0 and hosted.code == 0, (carol.err, hosted.err)
    assert "bob" not in hosted.out.split("All seats taken")[1]


def test_a_known_name_with_a_new_key_is_accepted_by_a_bot_host_with_a_warning(tmp_path):
    """Identity is the key, the name a label: bob comes back with a new key (or someone else
    calls himself bob). A bot host, with nobody to ask, plays with him, but says plainly that
    this is not the key it played with as bob before; then it knows both keys."""
    with Peers(tmp_path) as peers:
        host = peers.host("alice")
        bob = peers.join("bob", host)
        first = bob.finish()
        assert first.code == 0 and host.peer.finish().code == 0
        old_fingerprint = first.out.split("Your key fingerprint is ")[1].split()[0]
        (bob.home / "identity.pem").unlink()  # bob's next run makes a new key

        host = peers.host("alice")
        second = peers.join("bob", host).finish()
        hosted = host.peer.finish()

    assert second.code == 0 and hosted.code == 0, (second.err, hosted.err)
    new_fingerprint = second.out.split("Your key fingerprint is ")[1].split()[0]
    assert new_fingerprint != old_fingerprint
    (warning,) = [line for line in hosted.out.splitlines() if "different key" in line]
    assert "'bob'" in warning and old_fingerprint in warning and new_fingerprint in warning
    known = (host.peer.home / "known_peers").read_text()
    assert f"{old_fingerprint} bob\n" in known and f"{new_fingerprint} bob\n" in known
