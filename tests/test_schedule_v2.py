"""The version-2 schedule (protocol/session.md §2, §4): keys come only where a mover needs
them, yet no seat decides with less than the rules let it see, and no key comes before some
other seat may see its position. Random matches between real sessions in one process."""

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from p2pwhist.games.bots import RandomBot
from p2pwhist.games.boxwhist.engine import BoxWhist
from p2pwhist.games.match import MatchLength
from p2pwhist.games.registry import GAMES as REGISTRY
from p2pwhist.games.registry import game_entry
from p2pwhist.inprocess import open_table
from p2pwhist.session import Need
from p2pwhist.signed import Kind
from p2pwhist.text import Style

# Every game, at every table size up to 4 (larger tables add time, not cases).
GAMES = [entry.make(players) for entry in REGISTRY.values() for players in entry.players if players <= 4]
PLAIN = Style(False)


def sees_all(session) -> bool:
    """Whether the seat holds the card at every position the rules let it see now."""
    return all(session.deck.known_card(p) is not None for p in session.hand.visible_to(session.seat))


def _play_checking(game, seed: int) -> list[Kind]:
    """Play a one-hand match honestly, checking before every message what it may publish and
    what its sender knows, and after it, while a PLAY is due, what every seat is shown;
    returns the kinds of the log."""
    rng = random.Random(seed)
    sessions = open_table(game, MatchLength(hands=1), rng)
    bots = [RandomBot(random.Random(seed + seat)) for seat in range(game.players)]
    words, names = game_entry(game).text, [f"seat{seat}" for seat in range(game.players)]
    blind: set[int] = set()  # positions played blind: shown to all before the move applies
    while not all(s.need is Need.DONE for s in sessions):
        actor = next(s for s in sessions if s.need not in (Need.PEER, Need.DONE))
        hand, seat = actor.hand, actor.seat
        if actor.need is Need.MOVE:
            # Before a decision: the mover holds every card the rules let it see.
            assert sees_all(actor), f"seat {seat} moves without seeing every card it may"
        message = actor.produce(bots[seat].choose(actor.view()) if actor.need is Need.MOVE else False)
        if message.kind is Kind.PLAY and message.body.blind:
            blind.add(message.body.position)
        if message.kind is Kind.KEYS:
            # No key before another seat may see its position (never earlier than version 1).
            seen_by_others = set().union(*(hand.visible_to(s) for s in range(game.players) if s != seat))
            early = set(message.body.positions) - seen_by_others - blind
            assert not early, f"seat {seat} published keys for {sorted(early)}, which no other seat may see yet"
        for other in sessions:
            if other is not actor:
                other.receive(message.raw, seat)
        if sessions[0].expected_kind is Kind.PLAY:  # every seat's table is drawn while a seat thinks
            for session in sessions:
                view = session.hand.view(session.seat)
                words.table(view, names, PLAIN, 1, None)
                words.cells(view)
                # Box Whist shows a card to one seat only at the deal and to a trick's winner,
                # who moves next: every seat then holds all it may see (§4.1, invariant 3).
                assert sees_all(session) or not isinstance(game, BoxWhist)
    assert len({tuple(m.raw for m in s.log) for s in sessions}) == 1
    return [m.kind for m in sessions[0].log]


@settings(max_examples=8, deadline=None)
@given(game=st.sampled_from(GAMES), seed=st.integers(0, 10**6))
def test_every_mover_sees_all_it_may_and_no_key_comes_early(game, seed):
    _play_checking(game, seed)


def test_each_seat_commits_to_the_next_deck_right_after_its_secret_and_no_result_is_signed():
    kinds = _play_checking(BoxWhist(3), seed=1)
    hand = kinds.index(Kind.HAND)
    assert Kind.COMMIT not in kinds[hand : kinds.index(Kind.SECRET, hand)]  # committed to before its HAND
    secrets = [i for i, kind in enumerate(kinds) if kind is Kind.SECRET]
    assert len(secrets) == 2 * 3  # the cut's and the hand's
    assert [kinds[i + 1] for i in secrets] == [Kind.COMMIT] * 6  # hand 1's, then the unused hand 2's
    assert "result" not in {kind.value for kind in Kind}
    # The cut: its cards are shown by its secrets, with no keys.
    assert Kind.KEYS not in kinds[: kinds.index(Kind.HAND)]
