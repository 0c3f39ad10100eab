"""The cheat catalogue: networked games in which one test-only peer deviates at one point.

Every peer is a real ``p2pwhist.net`` host or joiner on a memory network (``memnet``), run
as trio tasks of this test under the mock clock (a forfeit's minutes pass at once); the
cheater is the same code with one method patched, for its seat only. Each test checks when
the cheat is caught (at once, or by the audit), that every honest peer names the cheater,
that the honest peers stop or play on as the rules say, and that ``verify`` on an honest
peer's transcript reaches the same verdict. What proves nothing against anyone (a forged
signature, a replayed message) costs the connection that carried it, not the game.
"""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass
from pathlib import Path

import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from memnet import MemoryNetwork

from p2pwhist import net
from p2pwhist.bodies import Body, CardPlay
from p2pwhist.deck import Commitment, Deck, PositionKey, PositionKeys, ShufflePass
from p2pwhist.deck._curve import encode_card
from p2pwhist.games.base import Game
from p2pwhist.games.bots import RandomBot
from p2pwhist.games.boxwhist.engine import BoxWhist
from p2pwhist.games.match import MatchLength
from p2pwhist.session import HOST, Need, Outcome, Session, SessionError
from p2pwhist.signed import Kind, parse, seal
from p2pwhist.table import Send
from p2pwhist.table._peer import Peer
from p2pwhist.table._relay import Relay
from p2pwhist.transcript import read_transcript
from p2pwhist.verify import Verdict, first_partings, verify

NAMES = ["alice", "bob", "carol", "dave", "erin", "frank"]
CHEATER = 1  # bob, a joiner (except where the host cheats)


@dataclass
class Played:
    """What each seat ended with, and its transcript."""

    results: list[Outcome | net.NetError]
    transcripts: list[Path]
    host_lines: list[str]  # what the host told its person

    def verdict_of(self, seat: int) -> Verdict:
        return verify(read_transcript(self.transcripts[seat]))

    def honest(self, cheater: int) -> list[int]:
        return [seat for seat in range(len(self.results)) if seat != cheater]


async def play_table(tmp_path: Path, players: int = 2, hands: int = 1, timeout: float = 10.0,
                     bots: dict[int, object] | None = None, keys: list | None = None,
                     quitter: int | None = None, game: Game | None = None) -> Played:
    """Host and joiners as tasks on a memory network; each seat's result or error is kept. A
    ``quitter`` never finishes by itself: it is cancelled once every other seat has. ``game``
    is the table's game (default: Box Whist for ``players``); its own number of players wins."""
    game = game or BoxWhist(players)
    players = game.players
    keys = keys or [Ed25519PrivateKey.generate() for _ in range(players)]
    transcripts = [tmp_path / f"{name}.p2pw" for name in NAMES[:players]]
    results: list[Outcome | net.NetError] = [net.NetError("did not finish")] * players
    joined = []
    finished: set[int] = set()

    def options(seat: int) -> net.PeerOptions:
        bot = (bots or {}).get(seat) or RandomBot(random.Random(seat))
        report = joined.append if seat == 0 else (lambda line: None)
        return net.PeerOptions(NAMES[seat], keys[seat], net.Agent(bot.choose, False), transcripts[seat],
                               timeout=timeout, wait=timeout, report=report)

    async def seat_task(seat: int, play) -> None:
        try:
            record = await play()
            results[seat] = record.outcome
        except (net.NetError, SessionError) as error:  # a cheater's own session may fail oddly
            results[seat] = error
        finished.add(seat)
        if quitter is not None and finished >= set(range(players)) - {quitter}:
            nursery.cancel_scope.cancel()

    network = MemoryNetwork()
    with trio.fail_after(3600):  # of the mock clock: a match, with a forfeit's waits, takes minutes
        async with trio.open_nursery() as nursery:
            table = net.HostOptions(game, MatchLength(hands=hands))
            listener = network.listen()
            nursery.start_soon(seat_task, 0, lambda: net.host(options(0), table, [listener]))
            for seat in range(1, players):
                nursery.start_soon(seat_task, seat, lambda s=seat: net.join(
                    options(s), "alice.lan", 7878, connect=network.connector(f"10.0.0.{s}")))
                while not any(f"{seat + 1}/{players} seated" in line for line in joined):  # seats by arrival
                    await trio.sleep(0.01)
    return Played(results, transcripts, joined)


def only_for(seat: int, cheat, honest):
    """A method that cheats for one seat's object and behaves for every other."""

    def method(self, *args, **kwargs):
        return (cheat if getattr(self, "seat", None) == seat else honest)(self, *args, **kwargs)

    return method


def assert_caught(table: Played, cheater: int, words: str, when: str) -> None:
    """Every honest peer stopped naming the cheater, and verify agrees with them: a peer that
    holds the evidence gets an invalid verdict against the cheater; one that only got another
    peer's ABORT gets a fair but unfinished game, stopped with the same blame.

    ``when`` is "at once" (the transcript ends with the refused message and the ABORT that
    answers it), "by the audit" (a DISPUTE, then every seat's secret, ends it) or "by the
    cut's audit" (the cut's secrets, each with its seat's commitment to hand 1, end it)."""
    for seat in table.honest(cheater):
        result = table.results[seat]
        assert isinstance(result, net.NetError), f"seat {seat} finished: {result}"
        assert result.seat == cheater and NAMES[cheater] in str(result), str(result)
        assert words in str(result), str(result)
        verdict = table.verdict_of(seat)
        if verdict.valid:
            assert not verdict.complete and NAMES[cheater] in verdict.stopped and words in verdict.stopped
            continue
        assert verdict.error.seat == cheater and words in verdict.error.reason, verdict.error
        kinds = [m.kind for m in read_transcript(table.transcripts[seat])]
        if when == "at once":
            assert kinds[-1] is Kind.ABORT and Kind.DISPUTE not in kinds
        elif when == "by the cut's audit":
            players = len(table.results)
            assert Kind.HAND not in kinds and kinds[-2 * players:] == [Kind.SECRET, Kind.COMMIT] * players, kinds
        else:
            players = len(table.results)
            assert kinds[-players - 1] is Kind.DISPUTE and kinds[-players:] == [Kind.SECRET] * players, kinds[-6:]


# -- caught by the audit ---------------------------------------------------------------------


def substitute_a_card(monkeypatch, in_the_cut: bool) -> None:
    """The cheater's shuffle pass puts a point that is no card's at position 0, in the cut's
    deck or in the first hand's: in a 2-player hand, position 0 is a dealt card, revealed
    to its owner at once."""
    honest = Deck.shuffle_pass

    def substitute(self):
        message = honest(self)
        if (self.params.hand == 0) != in_the_cut:
            return message
        stranger = encode_card(b"not a card of this game", 0)[0]  # a valid point, no card's
        return ShufflePass((stranger, *message.points[1:]))

    monkeypatch.setattr(Deck, "shuffle_pass", only_for(CHEATER, substitute, honest))


async def test_a_card_substituted_in_a_shuffle_pass_is_disputed_and_pinned_by_the_audit(tmp_path, monkeypatch,
                                                                                        autojump_clock):
    substitute_a_card(monkeypatch, in_the_cut=False)
    table = await play_table(tmp_path)
    assert_caught(table, CHEATER, "shuffle pass", "by the audit")


async def test_a_card_substituted_in_the_cut_is_pinned_by_the_cuts_audit(tmp_path, monkeypatch, autojump_clock):
    """The cut shows its cards by its secrets alone: the audit that follows them convicts."""
    substitute_a_card(monkeypatch, in_the_cut=True)
    table = await play_table(tmp_path)
    assert_caught(table, CHEATER, "shuffle pass", "by the cut's audit")


async def test_a_wrong_position_key_is_disputed_and_pinned_by_the_audit(tmp_path, monkeypatch, autojump_clock):
    honest = Deck.keys_for
    done = []

    def wrong_key(self, positions):
        message = honest(self, positions)
        if done or self.params.hand == 0:  # cheat once, in the first real hand's deal
            return message
        done.append(True)
        first = message.keys[0]
        return PositionKeys((PositionKey(first.position, first.key % 1000 + 2), *message.keys[1:]))

    monkeypatch.setattr(Deck, "keys_for", only_for(CHEATER, wrong_key, honest))
    table = await play_table(tmp_path)
    assert_caught(table, CHEATER, "position key", "by the audit")


async def test_a_secret_that_is_never_revealed_forfeits_the_match_after_the_timeout(tmp_path, monkeypatch,
                                                                                    autojump_clock):
    """Withholding a secret at the audit (to hide a cheat, or to deny a loss) is not free: past
    the limit for one message the seat forfeits the match, which the others sign."""
    honest_busy, honest_work = Peer.busy, Peer.work

    # The cheater's peer has nothing to do once its secret for a hand is due: it makes nothing.
    def withholding(peer) -> bool:
        session = peer.session
        return session.seat == CHEATER and session.need is Need.SEND and session.expected_kind is Kind.SECRET \
            and session.hand is not None and peer._taking is None

    monkeypatch.setattr(Peer, "busy", property(lambda self: not withholding(self) and honest_busy.fget(self)))
    monkeypatch.setattr(Peer, "work", lambda self, now: [] if withholding(self) else honest_work(self, now))
    table = await play_table(tmp_path, quitter=CHEATER)
    for seat in table.honest(CHEATER):
        outcome = table.results[seat]
        assert isinstance(outcome, Outcome), outcome
        assert outcome.forfeited.seat == CHEATER and "took longer than 0:10" in outcome.forfeited.reason
        assert outcome.winner != CHEATER
        verdict = table.verdict_of(seat)
        assert verdict.valid and verdict.complete  # everything up to there was fair, and the forfeit is signed
        assert verdict.to_json()["forfeit"]["seat"] == CHEATER
        assert list(read_transcript(table.transcripts[seat]))[-2].kind is Kind.FORFEIT


# -- caught at once --------------------------------------------------------------------------


def cheat_once(monkeypatch, seat: int, kind: Kind, cheat) -> None:
    """The first time ``seat`` is to send a message of ``kind`` in a hand and
    ``cheat(session, value, honest_produce)`` gives a message (not None), it sends that
    message instead."""
    honest = Session.produce
    done = []

    def produce(self, value=None):
        if done or self.expected_kind is not kind or self.hand is None:
            return honest(self, value)
        message = cheat(self, value, honest)
        if message is None:
            return honest(self, value)
        done.append(True)
        return message

    monkeypatch.setattr(Session, "produce", only_for(seat, produce, honest))


def signed(session: Session, body: Body) -> object:
    return seal(session._key, len(session.log), session.head, session.seat, body)


async def test_claiming_a_card_not_held_is_caught_at_once(tmp_path, monkeypatch, autojump_clock):
    def claim_another_card(session, value, honest):
        position = session.view().legal_moves[0].position
        claim = session.deck.claim(position)
        other = next(c for c in BoxWhist(2).deck() if c not in session.view().hand.values())
        return signed(session, CardPlay(dataclasses.replace(claim, card=other)))

    cheat_once(monkeypatch, CHEATER, Kind.PLAY, claim_another_card)
    table = await play_table(tmp_path)
    assert_caught(table, CHEATER, "claim", "at once")


async def test_playing_out_of_turn_is_caught_at_once(tmp_path, monkeypatch, autojump_clock):
    def play_at_keys_turn(session, value, honest):  # at its turn to publish keys, it plays
        known = [p for p in session.view().hand if session.deck.known_card(p) is not None]
        return signed(session, CardPlay(session.deck.claim(known[0]))) if known else None  # once it sees a card

    cheat_once(monkeypatch, CHEATER, Kind.KEYS, play_at_keys_turn)
    table = await play_table(tmp_path)
    assert_caught(table, CHEATER, "out of turn", "at once")


async def test_a_closed_box_card_played_before_winning_a_trick_is_caught_at_once(tmp_path, monkeypatch, autojump_clock):
    def blind_box(session, value, honest):
        slot_position = session.view().box[0][1]
        return signed(session, CardPlay(session.deck.keys_for([slot_position])))

    cheat_once(monkeypatch, CHEATER, Kind.PLAY, blind_box)  # at its first move it cannot have won a trick
    table = await play_table(tmp_path)
    result = str(table.results[0])
    # Following, the closed box is refused; leading, a box card is refused whatever the box.
    assert_caught(table, CHEATER, "box may not be used" if "box may not" in result else "lead must come from the hand",
                  "at once")


def assert_shrugged_off(table: Played, sender: int, words: str) -> None:
    """What proves nothing against anyone costs only the connection that carried it: the host
    drops it saying why. The sender, returning, sends what it recorded again, the same bytes,
    and is dropped again, until the table's limit for its message passes: it forfeits for
    time, as any seat that never delivers, and is convicted of nothing. The honest seats'
    transcripts are alike and valid."""
    dropped = f"Dropped {NAMES[sender]}'s connection: "
    assert any(line.startswith(dropped) and words in line for line in table.host_lines), table.host_lines
    honest = table.honest(sender)
    for seat in honest:
        result = table.results[seat]
        assert isinstance(result, Outcome) and result.forfeited.seat == sender, result
        assert "took longer than 0:10" in result.forfeited.reason
    first, *others = (table.transcripts[seat].read_bytes() for seat in honest)
    assert all(other == first for other in others)
    verdict = table.verdict_of(HOST)
    assert verdict.valid and verdict.complete  # the hand in progress is the leaver's loss, by the rules
    assert verdict.to_json()["forfeit"]["seat"] == sender


async def test_a_forged_signature_costs_the_connection_that_carried_it_and_convicts_nobody(tmp_path, monkeypatch,
                                                                                           autojump_clock):
    """Carol (seat 2) sends a message in bob's name; she cannot sign it as bob."""
    forger = 2

    def in_bobs_name(session, value, honest):
        real = honest(session, value)
        return seal(session._key, real.seq, real.prev, 1, real.body)  # claims to be bob

    cheat_once(monkeypatch, forger, Kind.PLAY, in_bobs_name)
    table = await play_table(tmp_path, players=3)
    assert_shrugged_off(table, forger, "signature")


async def test_a_replayed_message_costs_the_connection_that_carried_it_and_convicts_nobody(tmp_path, monkeypatch,
                                                                                           autojump_clock):
    def replay(session, value, honest):
        return next(m for m in session.log if m.seat == session.seat)  # its ACCEPT, again

    cheat_once(monkeypatch, CHEATER, Kind.PLAY, replay)
    table = await play_table(tmp_path)
    assert_shrugged_off(table, CHEATER, "does not follow")


async def test_a_relaying_host_that_forks_the_log_is_shown_by_the_two_transcripts(tmp_path, monkeypatch,
                                                                                  autojump_clock):
    """The host shows carol a different, validly signed version of one of its messages. What
    follows it does not follow carol's log; her return is refused (her log differs), and each
    side ends up declaring the other absent. Neither transcript alone proves the fork; the two
    together do: they part at the host's message, each holding one that the host signed after
    the same message, which no honest seat does."""
    keys = [Ed25519PrivateKey.generate() for _ in range(3)]
    honest = Relay.deliver
    forked = []

    def deliver(self, raws):  # the host's relay, for carol's connection (seat 2) alone
        out = honest(self, raws)
        carol = self.conn_of[2]
        for i, action in enumerate(out):
            if forked or not isinstance(action, Send) or action.conn != carol:
                continue
            message = parse(action.payload)
            if message.seat == 0 and message.kind is Kind.COMMIT:
                forked.append(message.seq)
                out[i] = Send(carol, seal(keys[0], message.seq, message.prev, 0, Commitment(bytes(32))).raw)
        return out

    monkeypatch.setattr(Relay, "deliver", deliver)
    table = await play_table(tmp_path, players=3, keys=keys)
    assert forked
    hosts, carols = table.results[0], table.results[2]
    assert isinstance(hosts, Outcome) and hosts.forfeited.seat == 2, hosts
    assert isinstance(carols, Outcome) and carols.forfeited.seat == 0, carols
    assert "refused our return for 0:10 (the last time: carol (seat 2)'s transcript differs" in carols.forfeited.reason
    [parting] = first_partings([read_transcript(path) for path in (table.transcripts[0], table.transcripts[2])])
    assert parting.place == forked[0] and [m.kind for m in parting.held] == [Kind.COMMIT, Kind.COMMIT]
    assert parting.signed_both == HOST
    assert "alice signed both, after the same message" in parting.line(["alice.p2pw", "carol.p2pw"])
