"""Transcripts to judge: real sessions played in memory to a chosen place, then a message
made by hand (``seal``, ``sign``) or bytes damaged, as a verifier may meet them.

Shared by the tests of ``verify`` (test_verify_forfeits, test_verify_bugs) and by
``scripts/make_verdict_vectors.py``, which writes the builders' files below as
protocol/vectors/verdicts/ (session.md §5). Everything is seeded: the seats' keys and the
sessions' secrets come from one ``random.Random`` (``open_table``), each bot has its own,
and Ed25519 signing is deterministic, so a builder gives the same bytes every time.

``mismatches`` is how a vector's verdict is compared with ``p2pwhist verify --json``.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Sequence
from typing import Any
from unittest import mock

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pwhist.bodies import Accept, Dispute, Player, Table
from p2pwhist.deck import Deck, ShufflePass
from p2pwhist.deck._curve import encode_card
from p2pwhist.games.bots import RandomBot
from p2pwhist.games.boxwhist.engine import BoxWhist
from p2pwhist.games.match import MatchLength
from p2pwhist.inprocess import open_table, run
from p2pwhist.session import GENESIS_PREV, Aborted, Need, RemoteError, Session, start_message
from p2pwhist.signed import Kind, SignedMessage, public_bytes, seal, sign
from p2pwhist.transcript import MAGIC
from p2pwhist.wire import LENGTH, MAX_FRAME, frame

NAMES = ("alice", "bob", "carol")
ALICE, BOB, CAROL = range(3)
AWAY = "bob lost connection and did not return within 5:00"
SLOW = "bob took longer than 10:00 over one message"


# -- playing to a place ------------------------------------------------------------------------


def seated(players: int, seed: int = 1, hands: int = 2) -> tuple[list[Session], list[RandomBot]]:
    """A Box Whist table of ``players`` (alice hosts), and a random bot for each seat."""
    sessions = open_table(BoxWhist(players), MatchLength(hands=hands), random.Random(seed), NAMES[:players])
    return sessions, [RandomBot(random.Random(seat)) for seat in range(players)]


def deliver(message: SignedMessage, sessions: Sequence[Session]) -> None:
    """``message`` to every other seat of ``sessions``, on its sender's connection."""
    for session in sessions:
        if session.seat != message.seat:
            session.receive(message.raw, message.seat)


def play_until(sessions: list[Session], bots: list[RandomBot], done: Callable[[Session], bool]) -> None:
    """Play honestly until ``done`` holds of the host's session."""
    while not done(sessions[ALICE]):
        actor = next(s for s in sessions if s.need not in (Need.PEER, Need.DONE))
        value = bots[actor.seat].choose(actor.view()) if actor.need is Need.MOVE else False
        deliver(actor.produce(value), sessions)


def bob_to_move(host: Session) -> bool:
    return host.waiting_for == BOB and host.expected_kind is Kind.PLAY


def declared_absent(players: int, when: Callable[[Session], bool] = bob_to_move) -> list[Session]:
    """bob is to move (and ``when`` holds) and stays away: alice declares his forfeit, the
    other seats co-sign it, and all but bob sign FINAL. bob never hears of it."""
    sessions, bots = seated(players)
    play_until(sessions, bots, lambda host: bob_to_move(host) and when(host))
    remaining = [s for s in sessions if s.seat != BOB]
    deliver(sessions[ALICE].forfeit(BOB, AWAY), remaining)
    run(remaining, bots)
    return sessions


def bob_to_play() -> list[Session]:
    """A 2-player table where bob is to move in the first hand: each seat's session."""
    sessions, bots = seated(2)
    play_until(sessions, bots, bob_to_move)
    return sessions


def bobs_move(sessions: list[Session]) -> SignedMessage:
    """bob's move, made by his session and never delivered."""
    bob = sessions[BOB]
    return bob.produce(bob.view().legal_moves[0])


def forked_histories() -> tuple[list[SignedMessage], list[SignedMessage], int]:
    """bob moves, but his PLAY never reaches alice, who declares him absent at that very
    place and signs FINAL. bob keeps her FORFEIT after his own messages, as evidence. Returns
    alice's log, bob's transcript's messages, and the place where they part."""
    sessions, bots = seated(2)
    play_until(sessions, bots, bob_to_move)
    bob = sessions[BOB]
    own = bob.produce(bots[BOB].choose(bob.view()))
    while bob.need is Need.SEND:  # what bob sends on at once, without waiting
        bob.produce()
    notice = sessions[ALICE].forfeit(BOB, SLOW)
    sessions[ALICE].produce()  # FINAL: the match is over for alice
    assert notice.seq == own.seq and notice.prev == own.prev
    return sessions[ALICE].log, [*bob.log, notice], own.seq


# -- bytes ---------------------------------------------------------------------------------------


def raws(messages: list[SignedMessage]) -> list[bytes]:
    return [message.raw for message in messages]


def transcript(payloads: list[bytes]) -> bytes:
    """A transcript file holding ``payloads`` as they are, each in a frame (wire.md §4)."""
    return MAGIC + b"".join(frame(payload) for payload in payloads)


def stretched(message: SignedMessage) -> bytes:
    """``message`` with bin32 headers where msgpack's shortest form has bin8 or bin16: the
    same values, not in the one encoding (wire.md §3)."""
    return (b"\x92\xc6" + len(message.signed).to_bytes(4, "big") + message.signed
            + b"\xc6" + (64).to_bytes(4, "big") + message.signature)


def fixed_key(label: str) -> Ed25519PrivateKey:
    """A key for a hand-made table or a stranger, the same every time."""
    return Ed25519PrivateKey.from_private_bytes(hashlib.sha256(f"p2pwhist verdicts: {label}".encode()).digest())


# -- the vectors' transcripts (protocol/vectors/verdicts/) ---------------------------------------


def honest_match() -> bytes:
    """Two players, two hands, played to FINAL."""
    sessions, bots = seated(2)
    run(sessions, bots)
    return transcript(raws(sessions[ALICE].log))


def forfeit_before_the_trump_card() -> bytes:
    """Three players, frozen after the first deal's passes, before any KEYS: carol, due to
    publish hers first (the last to lock), stays away; alice declares it, bob co-signs, both
    sign FINAL. alice's transcript."""
    sessions, bots = seated(3)
    play_until(sessions, bots, lambda host: host.hand is not None and host.expected_kind is Kind.KEYS)
    assert sessions[ALICE].waiting_for == CAROL
    honest = sessions[:CAROL]
    deliver(sessions[ALICE].forfeit(CAROL, "carol took longer than 10:00 over one message"), honest)
    run(honest, bots)
    return transcript(raws(sessions[ALICE].log))


def abort_blaming_another() -> bytes:
    """bob, to move, leaves with an ABORT that blames alice. alice's transcript."""
    sessions = bob_to_play()
    quit_ = sessions[BOB].abort("alice cheated, believe me", culprit=ALICE)
    try:
        sessions[ALICE].receive(quit_.raw, BOB)
    except Aborted:
        pass
    return transcript(raws(sessions[ALICE].log))


def abort_then_damage() -> bytes:
    """``abort_blaming_another``'s file with a frame that is no message after the ABORT."""
    return abort_blaming_another() + frame(b"\xc1 not msgpack")


def two_player_forfeit() -> bytes:
    """bob, to move, stays away; alice alone declares it and signs FINAL."""
    return transcript(raws(declared_absent(2)[ALICE].log))


def witnessed_forfeit() -> bytes:
    """bob stays away with alice and carol on different tricks: one of them wins the hand,
    and so the match, and the other co-signs with nothing to gain. alice's transcript."""
    sessions = declared_absent(3, lambda host: host.hand.tricks_won[ALICE] != host.hand.tricks_won[CAROL])
    return transcript(raws(sessions[ALICE].log))


def bad_signature() -> bytes:
    """bob's move with its signature's last byte changed, and nothing after it."""
    sessions = bob_to_play()
    move = bytearray(bobs_move(sessions).raw)
    move[-1] ^= 1
    return transcript([*raws(sessions[ALICE].log), bytes(move)])


def replayed() -> bytes:
    """alice's log with its last message again after it, and nothing after that."""
    log = bob_to_play()[ALICE].log
    return transcript(raws([*log, log[-1]]))


def malformed_then_abort() -> bytes:
    """bob's move in a wider msgpack encoding than the shortest, then alice's ABORT at its
    place, naming bob, whose connection carried it (session.md §5)."""
    sessions = bob_to_play()
    alice, kept = sessions[ALICE], raws(sessions[ALICE].log)
    move = bobs_move(sessions)
    notice = alice.abort("bob sent a message not in msgpack's shortest encoding", culprit=BOB)
    return transcript([*kept, stretched(move), notice.raw])


def oversize_frame() -> bytes:
    """alice's log, then a frame announcing one byte more than the limit (and 100 bytes)."""
    return transcript(raws(bob_to_play()[ALICE].log)) + LENGTH.pack(MAX_FRAME + 1) + bytes(100)


def torn_final_frame() -> bytes:
    """alice's log, then bob's move's frame without its last 10 bytes: a crash while it was
    written."""
    sessions = bob_to_play()
    return transcript(raws(sessions[ALICE].log)) + frame(bobs_move(sessions).raw)[:-10]


def refused_then_abort() -> bytes:
    """bob, to move, sends a second ACCEPT: validly signed and next in the log, but out of
    turn. alice records it, refuses it and sends her ABORT after it, naming bob."""
    sessions = bob_to_play()
    alice, bob = sessions
    wrong = seal(bob._key, len(bob.log), bob.head, BOB, Accept())
    try:
        alice.receive(wrong.raw, BOB)
    except RemoteError:
        pass
    alice.abort("bob sent accept out of turn", culprit=BOB)
    return transcript(raws(alice.log))


def dispute_after_a_forfeit() -> bytes:
    """Three players: bob, to move, stays away and alice declares it; carol, due to co-sign,
    sends a DISPUTE instead. alice refuses it and aborts, naming carol."""
    sessions, bots = seated(3)
    play_until(sessions, bots, bob_to_move)
    alice, _, carol = sessions
    deliver(alice.forfeit(BOB, AWAY), [carol])
    dispute = seal(carol._key, len(carol.log), carol.head, CAROL, Dispute(0, "the card at position 0 is no card"))
    try:
        alice.receive(dispute.raw, CAROL)
    except RemoteError:
        pass
    alice.abort("carol disputed after the forfeit", culprit=CAROL)
    return transcript(raws(alice.log))


def unfounded_dispute() -> bytes:
    """bob, to move, disputes a reveal that was right; every seat reveals its secret, from
    bob, and the audit finds the deal correct: the verdict convicts bob. alice's transcript."""
    sessions, bots = seated(2)
    play_until(sessions, bots, bob_to_move)
    bob = sessions[BOB]
    dispute = seal(bob._key, len(bob.log), bob.head, BOB, Dispute(0, "the card at position 0 is no card"))
    bob.take(dispute)
    deliver(dispute, sessions)
    run(sessions, bots)
    return transcript(raws(sessions[ALICE].log))


def cheat_in_the_cut() -> bytes:
    """Two players; bob's shuffle pass of the cut puts a point that is no card's at position 0
    (as tests/test_cheats.py's ``substitute_a_card``). Every live check passes; the cut's
    audit, once its opening is complete, convicts bob. alice's transcript."""
    honest = Deck.shuffle_pass

    def substitute(deck: Deck) -> ShufflePass:
        message = honest(deck)
        if deck.seat != BOB or deck.params.hand != 0:
            return message
        return ShufflePass((encode_card(b"not a card of this game", 0)[0], *message.points[1:]))

    with mock.patch.object(Deck, "shuffle_pass", substitute):
        sessions, bots = seated(2)
        run(sessions, bots)
    return transcript(raws(sessions[ALICE].log))


def start_with_hands_and_minutes() -> bytes:
    """A START whose match length names 3 hands and 30 minutes, and bob's ACCEPT."""
    keys = [fixed_key(name) for name in NAMES[:2]]
    players = tuple(Player(name, public_bytes(key.public_key())) for name, key in zip(NAMES, keys))
    start = start_message(keys[0], Table(BoxWhist(2), MatchLength(hands=3, minutes=30), players, bytes(32)))
    return transcript([start.raw, seal(keys[1], 1, start.digest, BOB, Accept()).raw])


def start_of_version_99() -> bytes:
    """A START of protocol version 99, otherwise a well-formed one of version 3, and bob's
    ACCEPT."""
    keys = [fixed_key(name) for name in NAMES[:2]]
    players = tuple(Player(name, public_bytes(key.public_key())) for name, key in zip(NAMES, keys))
    table = Table(BoxWhist(2), MatchLength(hands=1), players, bytes(32))
    start = sign(keys[0], 0, GENESIS_PREV, ALICE, Kind.START.value, {**table.to_wire(), "version": 99})
    return transcript([start, sign(keys[1], 1, hashlib.sha256(start).digest(), BOB, Kind.ACCEPT.value, {})])


def stranger_at_seat_3() -> bytes:
    """A 3-player START, then an ACCEPT at seq 1 naming seat 3, which the table lacks, signed
    by a key the table does not hold."""
    start = seated(3)[0][ALICE].log[0]
    return transcript([start.raw, seal(fixed_key("stranger"), 1, start.digest, 3, Accept()).raw])


def fork() -> bytes:
    """bob's transcript in ``forked_histories``: his own PLAY, and alice's FORFEIT at its place."""
    return transcript(raws(forked_histories()[1]))


# -- comparing a verdict --------------------------------------------------------------------------


def mismatches(expected: dict[str, Any], report: dict[str, Any], where: str = "") -> list[str]:
    """How ``report`` (``verify --json``'s object) differs from ``expected`` (a vector's
    verdict): every key of ``expected`` must be in ``report`` with the same value, an object
    compared key by key in the same way; under ``words``, each field named (a dotted path,
    e.g. ``error.reason``) must contain each phrase listed. Empty if they agree."""
    found = []
    for key, value in expected.items():
        if key == "words" and not where:
            for path, phrases in value.items():
                said = _at(report, path)
                found += [f"{path}: {said!r} does not say {phrase!r}" for phrase in phrases
                          if not isinstance(said, str) or phrase not in said]
            continue
        name = f"{where}{key}"
        if key not in report:
            found.append(f"{name}: missing, expected {value!r}")
        elif isinstance(value, dict) and isinstance(report[key], dict):
            found += mismatches(value, report[key], f"{name}.")
        elif report[key] != value:
            found.append(f"{name}: {report[key]!r}, expected {value!r}")
    return found


def _at(report: dict[str, Any], path: str) -> Any:
    value: Any = report
    for key in path.split("."):
        value = value.get(key) if isinstance(value, dict) else None
    return value
