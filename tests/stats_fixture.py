"""A folder of transcripts whose stats are worked out by hand (tests/test_stats.py): alice,
bob and carol, each with the same key at every table, play Box Whist matches with known
results, a forfeit each way, a breach, a draw; and files that must not count.

Every game is seeded, so each file is the same every time; each builder checks the result
it was chosen for, so that a change in the engine or the bots fails here, not as a wrong
count."""

from __future__ import annotations

import random
from pathlib import Path
from unittest import mock

from test_cheats import only_for
from test_every_game_session import HonourBreaker, unchecked_play
from verdicts import ALICE, AWAY, BOB, CAROL, NAMES, bob_to_move, deliver, fixed_key, play_until, raws, transcript

from p2pwhist.games.bots import RandomBot
from p2pwhist.games.boxwhist.engine import BoxWhist
from p2pwhist.games.match import MatchLength
from p2pwhist.inprocess import open_table, run
from p2pwhist.session import Aborted, Session

KEYS = [fixed_key(name) for name in NAMES]


def table(players: int, seed: int, hands: int = 2) -> tuple[list[Session], list[RandomBot]]:
    sessions = open_table(BoxWhist(players), MatchLength(hands=hands), random.Random(seed), NAMES[:players],
                          KEYS[:players])
    return sessions, [RandomBot(random.Random(seed * 10 + seat)) for seat in range(players)]


def played(seed: int) -> list[Session]:
    """alice and bob play two hands to the end."""
    sessions, bots = table(2, seed)
    run(sessions, bots)
    return sessions


def bob_declared_absent(players: int, seed: int) -> list[Session]:
    """bob, to move in the first hand, stays away; alice declares it, the others co-sign. At
    a table of three, once alice and carol have won different numbers of tricks: one of them
    wins the hand, and so the match, and the other signs with nothing to gain (a witness)."""
    sessions, bots = table(players, seed)
    apart = (lambda hand: True) if players == 2 else (lambda hand: hand.tricks_won[ALICE] != hand.tricks_won[CAROL])
    play_until(sessions, bots, lambda host: bob_to_move(host) and apart(host.hand))
    remaining = [s for s in sessions if s.seat != BOB]
    deliver(sessions[ALICE].forfeit(BOB, AWAY), remaining)
    run(remaining, bots)
    return sessions


def alice_leaves(seed: int) -> list[Session]:
    """bob to move in the first hand; alice leaves with her own ABORT. bob's session has it."""
    sessions, bots = table(2, seed)
    play_until(sessions, bots, bob_to_move)
    notice = sessions[ALICE].abort("alice had to go")
    try:
        sessions[BOB].receive(notice.raw, ALICE)
    except Aborted:
        pass
    return sessions


def bob_revokes(seed: int) -> list[Session]:
    """Two hands; bob breaks a rule on honour once, which the audit catches: he loses that hand."""
    with mock.patch.object(Session, "_make_play", only_for(BOB, unchecked_play, Session._make_play)):
        sessions, bots = table(2, seed)
        breaker = HonourBreaker(random.Random(1), BoxWhist(2))
        run(sessions, [bots[ALICE], breaker])
    assert breaker.broken, "bob never had the chance"
    return sessions


def write(folder: Path, name: str, sessions: list[Session], seat: int = ALICE) -> Path:
    path = folder / name
    path.write_bytes(transcript(raws(sessions[seat].log)))
    return path


def points(sessions: list[Session], seat: int = ALICE) -> tuple[tuple[int, ...], list[tuple[int, ...]]]:
    outcome = sessions[seat].outcome
    return outcome.points, [hand.points for hand in outcome.hands]


def fixture(folder: Path) -> Path:
    """The folder, with its files named in the order the games were played (see test_stats.py
    for the results worked out by hand)."""
    folder.mkdir(parents=True, exist_ok=True)
    bob_wins = played(0)
    assert points(bob_wins) == ((0, 2), [(0, 1), (0, 1)])
    write(folder, "01-bob-wins.p2pw", bob_wins)
    write(folder, "02-bob-wins-bobs-copy.p2pw", bob_wins, BOB)
    draw = played(1)
    assert points(draw) == ((1, 1), [(1, 0), (0, 1)])
    write(folder, "03-draw.p2pw", draw)
    alice_wins = played(3)
    assert points(alice_wins) == ((1, 0), [(1, 0), (0, 0)])
    write(folder, "04-alice-wins.p2pw", alice_wins)
    three = bob_declared_absent(3, 2)
    write(folder, "05-bob-absent-of-three.p2pw", three)
    write(folder, "06-alice-left.p2pw", alice_leaves(4), BOB)
    revoked = bob_revokes(5)
    write(folder, "07-bob-revokes.p2pw", revoked)
    write(folder, "08-bob-absent-of-two.p2pw", bob_declared_absent(2, 6))
    forged = bytearray(transcript(raws(played(4)[ALICE].log)))  # alice won it, but one byte is changed
    forged[-1] ^= 1
    (folder / "09-forged.p2pw").write_bytes(bytes(forged))
    unfinished, bots = table(2, 7)
    play_until(unfinished, bots, bob_to_move)
    write(folder, "10-unfinished.p2pw", unfinished)
    (folder / "11-garbage.p2pw").write_bytes(random.Random(0).randbytes(500))
    (folder / "12-empty.p2pw").write_bytes(b"")
    (folder / "notes.txt").write_text("not a transcript, and not named like one\n")
    return folder


if __name__ == "__main__":  # print what each game gave, to work the expected stats out by hand
    for name, sessions, seat in [("05", bob_declared_absent(3, 2), ALICE), ("06", alice_leaves(4), BOB),
                                 ("07", bob_revokes(5), ALICE), ("08", bob_declared_absent(2, 6), ALICE),
                                 ("09", played(4), ALICE)]:
        outcome = sessions[seat].outcome
        print(name, outcome.points, outcome.winner, outcome.forfeited,
              [(h.points, sorted(h.offenders), sorted(h.left)) for h in outcome.hands])
