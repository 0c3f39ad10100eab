"""A match of every game in the registry through the shared machinery (the session, the deck,
``inprocess``, ``verify``, the memory network), written once over it (issue 21) with the game
interface alone: a game added to the registry gets these tests by registering.

- An honest match gives every peer the same log and outcome, and ``verify`` of its transcript,
  written to a file and read back byte for byte, agrees.
- A match played by host and joiners over the memory network ends alike on every seat and
  verifies.
- A breach of a rule played on honour (``GameEntry.on_honour``), made over the network by a
  peer whose own session lets it through, is found by every peer's end-of-hand audit: its seat
  is the hand's offender and earns nothing, and the match goes on; ``verify`` says the same.
"""

from __future__ import annotations

import random

import memnet
import pytest
from test_cheats import CHEATER, only_for, play_table
from test_every_game import CONFIGS

from p2pwhist import net
from p2pwhist.bodies import CardPlay
from p2pwhist.games.base import PLAYS
from p2pwhist.games.bots import RandomBot
from p2pwhist.games.registry import game_entry
from p2pwhist.inprocess import random_match
from p2pwhist.session import Need, Outcome, Session
from p2pwhist.signed import Kind
from p2pwhist.transcript import TranscriptWriter, read_transcript
from p2pwhist.verify import verify


def written(tmp_path, log) -> list:
    """``log`` through a transcript file and back."""
    path = tmp_path / "match.p2pw"
    writer = TranscriptWriter(path)
    for message in log:
        writer.append(message)
    writer.close()
    return list(read_transcript(path))


def assert_verified(log, outcome: Outcome, hands: int) -> None:
    verdict = verify(log)
    assert verdict.valid and verdict.complete and verdict.error is None, verdict.to_json()
    assert len(verdict.hands) == hands
    assert [h.points for h in verdict.hands] == [r.points for r in outcome.hands]
    assert [h.scores for h in verdict.hands] == [r.scores for r in outcome.hands]
    assert [set(h.offenders) for h in verdict.hands] == [set(r.offenders) for r in outcome.hands]
    json = verdict.to_json()
    assert json["match"]["points"] == list(outcome.points) and json["match"]["winner"] == outcome.winner


@pytest.mark.parametrize("game", CONFIGS)
def test_an_honest_match_is_alike_on_every_peer_and_its_transcript_verifies(game, tmp_path):
    sessions = random_match(game, hands=2, seed=game.players)
    assert len({tuple(m.raw for m in s.log) for s in sessions}) == 1
    (outcome,) = {s.outcome for s in sessions}
    assert len(outcome.hands) == 2 and all(h.offenders == frozenset() for h in outcome.hands)
    assert outcome.points == tuple(map(sum, zip(*(h.points for h in outcome.hands), strict=True)))
    assert sessions[0].log[-1].kind is Kind.FINAL and all(s.need is Need.DONE for s in sessions)
    log = written(tmp_path, sessions[0].log)
    assert [m.raw for m in log] == [m.raw for m in sessions[0].log]
    assert log[0].body.game == game
    assert_verified(log, outcome, 2)


class HonourBreaker(RandomBot):
    """Breaks a rule played on honour once, at its first chance: a move its own view refuses
    for one of the game's reasons on honour (``GameEntry.on_honour``)."""

    def __init__(self, rng: random.Random, game) -> None:
        super().__init__(rng)
        self.size, self.on_honour = len(game.deck()), game_entry(game).on_honour
        self.broken: list[int] = []  # the dealer of the hand it broke

    def choose(self, view):
        if not self.broken:
            breaches = [move for move in PLAYS[:self.size]
                        if (refused := view.refusal(move)) is not None and refused.reason in self.on_honour]
            if breaches:
                self.broken.append(view.dealer)
                return breaches[0]
        return super().choose(view)


def unchecked_play(session, deck, hand, move) -> CardPlay:
    """``Session._make_play`` without its check of our own move: a breach goes to the other
    peers, who cannot see it for what it is."""
    if deck.known_card(move.position) is not None:
        return CardPlay(deck.claim(move.position))
    return CardPlay(deck.keys_for([move.position]))  # a closed card, played blind


# The deal over the network is random (each peer's secrets come from the OS), so the breaker
# breaks whichever rule on honour comes its way first, which every game offers within two hands;
# each rule on its own is test_every_game_properties.py's, on seeded deals.
@pytest.mark.parametrize("game", CONFIGS)
async def test_a_breach_on_honour_over_the_network_loses_the_hand_and_the_match_goes_on(game, tmp_path, monkeypatch,
                                                                                       autojump_clock):
    hands = 2
    breaker = HonourBreaker(random.Random(1), game)
    monkeypatch.setattr(Session, "_make_play", only_for(CHEATER, unchecked_play, Session._make_play))
    table = await play_table(tmp_path, hands=hands, game=game, bots={CHEATER: breaker})
    assert breaker.broken, "the cheater never had the chance"
    outcomes = table.results
    assert all(isinstance(o, Outcome) for o in outcomes), outcomes  # nobody stopped: the match went on
    (outcome,) = set(outcomes)
    ((dealer,),) = [breaker.broken]
    (broken,) = [i for i, h in enumerate(outcome.hands) if h.offenders]
    assert outcome.hands[broken].offenders == {CHEATER} and outcome.hands[broken].points[CHEATER] == 0
    assert len({path.read_bytes() for path in table.transcripts}) == 1
    verdict = table.verdict_of(0)
    assert verdict.hands[broken].dealer == dealer
    assert_verified(list(read_transcript(table.transcripts[0])), outcome, hands)


@pytest.mark.parametrize("game", CONFIGS)
async def test_a_match_over_the_network_ends_alike_on_every_seat_and_verifies(game, tmp_path, autojump_clock):
    played = await memnet.table(tmp_path, game=game, hands=1)
    records = played.records
    assert all(isinstance(r, net.GameRecord) for r in records), records
    assert len({r.outcome for r in records}) == 1 and records[0].table.game == game
    assert len({r.transcript.read_bytes() for r in records}) == 1
    assert_verified(list(read_transcript(records[0].transcript)), records[0].outcome, 1)
