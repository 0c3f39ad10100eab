"""Tables found on a LAN, with real multicast DNS between real processes: hosts on one Linux
bridge, each in a network namespace the test builds (``netns.lan``). ``join`` with no address
finds the table and plays it to the end; ``tables`` lists every table announced, with its
game and seats as they change; a full table leaves the list while its game goes on; nothing
heard is one line, and several tables are never guessed for a bot."""

from __future__ import annotations

import re
from pathlib import Path

from netns import Network, lan, require, stop
from netutil import Peer

from p2pwhist.transcript import read_transcript
from p2pwhist.verify import verify

ANNOUNCED = "Announced on this network"
FINGERPRINT = re.compile(r"your key fingerprint is ([0-9a-f-]{39})")


def listed(peer: Peer) -> list[str]:
    """The tables ``p2pwhist tables`` printed, one line each: what, and whose key (its join
    line left out)."""
    done = peer.finish()
    assert done.code == 0 and "Traceback" not in done.err, done.err
    lines = done.out.splitlines()
    return [f"{line.strip()}; {lines[at + 1].strip()}" for at, line in enumerate(lines) if " seats taken, " in line]


def valid_and_complete(transcript: Path) -> None:
    verdict = verify(read_transcript(transcript))
    assert verdict.valid and verdict.complete, verdict.error


def test_join_with_no_address_finds_the_table_and_tables_lists_every_table_as_it_stands(tmp_path: Path) -> None:
    require()
    with Network(tmp_path) as network:
        one, two, three, four = lan(network, 4).namespaces
        nothing = one.p2pwhist("early", "join", "--bot", "random").finish()
        assert nothing.code == 1 and nothing.error_line() == (
            "p2pwhist: no table heard on this network within 2 s: ask the host for the join line it printed "
            "(p2pwhist join HOST[:PORT] --expect FINGERPRINT)")

        # The two hosts start at once, and the two listeners at once (each in a namespace of its
        # own), as neither changes what the other hears.
        alice = one.p2pwhist("alice", "host", "--name", "alice", "--bot", "random", "--hands", "1000", "--no-map")
        carol = two.p2pwhist("carol", "host", "--name", "carol", "--game", "box", "--players", "3", "--bot", "random",
                             "--hands", "1", "--no-map")
        alice_fp = alice.wait_for(FINGERPRINT)[1]
        alice.wait_for(ANNOUNCED)
        carol_fp = carol.wait_for(FINGERPRINT)[1]
        carol.wait_for(ANNOUNCED)
        look1 = three.p2pwhist("look1", "tables")
        unsure = four.p2pwhist("unsure", "join", "--bot", "random")
        both = listed(look1)
        assert both == [
            f"alice: Box Whist for 2, 1 of 2 seats taken, at 10.77.0.1:7878; key {alice_fp} (a new key)",
            f"carol: Box for 3, variant seed, 1 of 3 seats taken, at 10.77.0.2:7878; key {carol_fp} (a new key)",
        ]
        several = unsure.finish()
        assert several.code == 1 and "several tables heard on this network" in several.err

        bob = three.p2pwhist("bob", "join", "--name", "bob", "--bot", "random", "--expect", alice_fp)
        bob.wait_for(f"Joining alice's table at 10.77.0.1:7878 \\(key {alice_fp}\\)")
        bob.wait_for("Seated as bob")
        assert listed(four.p2pwhist("look2", "tables")) == [both[1]]  # alice's table is full
        assert alice.running  # and playing, not gone
        assert stop(alice) == 130  # Ctrl-C mid-match; its game, two bots flat out, would slow what follows
        dave = four.p2pwhist("dave", "join", "--name", "dave", "--bot", "random")  # the one table left: at once
        dave.wait_for("2 of 3 seats taken")
        assert listed(three.p2pwhist("look3", "tables")) == [both[1].replace("1 of 3 seats", "2 of 3 seats")]
        erin = one.p2pwhist("erin", "join", "--name", "erin", "--bot", "random", "--expect", carol_fp)
        played = [erin.finish(), dave.finish(), carol.finish()]
        for done in played:
            assert done.code == 0 and "Traceback" not in done.err, done.err
            valid_and_complete(Path(re.findall(r"Transcript: (\S+)", done.out)[-1]))
