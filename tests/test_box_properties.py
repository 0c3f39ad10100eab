"""Invariants of the Box engine under random play, for 2, 4 and 6 players, both variants."""

from __future__ import annotations

import random

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from p2pwhist.cards import CARDS
from p2pwhist.games.base import PLAYS, HonourPolicy, IllegalMove, Play, audit
from p2pwhist.games.box.engine import (
    ON_HONOUR,
    Box,
    BoxHand,
    BoxIllegal,
    Phase,
    Variant,
    Violation,
)

games = st.sampled_from([Box(n, v) for n in (2, 4, 6) for v in Variant])
seeds = st.integers(0, 2**32)
# A game has at most 52 hand lays and, by the potential in box.py's header, 2 × 8 × players box
# takes and restocks: 52 + 16 × 6 = 148.
MOVE_BOUND = 148


def random_game(game: Box, seed: int, honour: HonourPolicy = HonourPolicy.REFUSE) -> tuple[BoxHand, random.Random]:
    rng = random.Random(seed)
    deck = list(CARDS)
    rng.shuffle(deck)
    return game.new_hand(rng.randrange(game.players), (), deck, honour), rng


def places(hand: BoxHand) -> list[int]:
    """Every position, once per place it is found."""
    found = [p for group in hand.hands + hand.extras for p in group] + hand.pile + hand.set_aside
    found += [p for slots in hand.slots for p in slots if p is not None]
    found += [lay.position for lay in hand.lays]
    return found


class Entitlement:
    """What each seat may know, tracked from the rules text, independently of the engine:
    its dealt hand (rule 3), its draws (rule 8), and every card laid, turned or put into an
    extra pile (rules 4-7): never a box card before it is taken, nor the pile."""

    def __init__(self, hand: BoxHand) -> None:
        self.public: set[int] = set()
        self.private = [set(h) for h in hand.layout.hands]

    def before(self, hand: BoxHand) -> None:
        self._hands = [set(h) for h in hand.hands]
        self._pile = list(hand.pile)

    def after(self, hand: BoxHand, move: Play) -> None:
        self.public.add(move.position)
        drawn = [set(h) - self._hands[s] - {move.position} for s, h in enumerate(hand.hands)]
        taken = set().union(*drawn)
        assert taken == set(self._pile[: len(taken)]), "draws come from the top of the pile"
        for seat, cards in enumerate(drawn):
            self.private[seat] |= cards

    def of(self, seat: int) -> set[int]:
        return self.public | self.private[seat]


def check_view(hand: BoxHand, seat: int, allowed: set[int]) -> None:
    view = hand.view(seat)
    assert set(view.known) <= allowed, f"seat {seat} sees {set(view.known) - allowed}"
    assert all(hand.cards[p] == c for p, c in view.known.items())
    assert set(view.hand) == set(hand.hands[seat])  # a seat always knows its own hand
    for _, p, card in view.box:
        assert card is None or p in hand.public  # a box card is known only if everyone saw it
    round_cards = [lay.card for lay in view.round]
    assert round_cards == [lay.card for lay in hand.lays] and all(lay.position in allowed for lay in view.round)
    for record in view.rounds:
        assert all(lay.position in allowed for lay in record.lays)
        assert record.too_high is None or record.too_high.position in allowed
    assert view.hand_sizes == tuple(map(len, hand.hands))
    assert view.box_sizes == tuple(len(hand.box(s)) for s in range(hand.players))


@settings(max_examples=60, deadline=None)
@given(game=games, seed=seeds)
def test_random_legal_play_ends_and_keeps_every_invariant(game, seed):
    hand, rng = random_game(game, seed)
    entitled = Entitlement(hand)
    steps = 0
    while not hand.is_over:
        steps += 1
        assert steps <= MOVE_BOUND, "the game must end"
        seat = hand.turn
        assert sorted(places(hand)) == list(range(52))  # every card in exactly one place
        for s in range(game.players):
            assert hand.visible_to(s) <= entitled.of(s)
            check_view(hand, s, entitled.of(s))
        legal = hand.legal_moves()
        assert legal and legal == sorted(set(legal), key=lambda m: m.position)
        view = hand.view(seat)
        assert view.legal_moves == legal
        for move in PLAYS:
            assert (view.refusal(move) is None) == (move in legal)
            if move not in legal:
                before = (places(hand), hand.phase, hand.turn)
                try:
                    hand.apply(move)
                except IllegalMove as refused:
                    assert refused.seat == seat
                else:
                    raise AssertionError(f"{move} was applied but is not legal")
                assert (places(hand), hand.phase, hand.turn) == before
            else:
                assert hand.refusal(move) is None
        move = rng.choice(legal)
        entitled.before(hand)
        hand.apply(move)
        entitled.after(hand, move)
        for s in range(game.players):  # hands never exceed four; the pile refills them
            assert len(hand.hands[s]) <= 4
    assert sorted(places(hand)) == list(range(52))
    result = hand.result()
    assert result.scores == tuple(len(hand.box(s)) for s in range(game.players))
    if game.variant is Variant.SEED:
        assert result.scores[hand.loser] == 0
        assert result.points == tuple(int(s != hand.loser) for s in range(game.players))
    else:
        assert len(hand.out) == game.players - 1 and result.points[hand.winner] == 1 and sum(result.points) == 1
    assert result.offenders == frozenset()


def peer_replay(full: BoxHand, rng: random.Random, seat: int) -> BoxHand:
    """Play ``full`` out at random while a peer state for ``seat`` follows it knowing only what
    session.md §4 reveals to it: a card its player may see is claimed (learned, then checked
    and applied); a closed box card is played blind (checked, then revealed to all, then
    applied); after every move the keys round reveals what became visible to ``seat``."""
    known = full.visible_to(seat)
    cards = [c if p in known else None for p, c in enumerate(full.cards)]
    peer = full.game.new_hand(full.dealer, (), cards, HonourPolicy.RECORD)
    while not full.is_over:
        mover = full.turn
        assert peer.turn == mover
        if mover == seat:
            assert peer.legal_moves() == full.legal_moves() == peer.view(seat).legal_moves
        move = rng.choice(full.legal_moves())
        card = full.cards[move.position]
        if move.position in peer.visible_to(mover):  # a claim
            peer.learn(move.position, card)
            peer.check(move)
        else:  # blind: legal before the card is known
            assert peer.cards[move.position] is None
            peer.check(move)
            peer.learn(move.position, card)
        full.apply(move)
        peer.apply(move)
        for p in peer.visible_to(seat) - known:
            peer.learn(p, full.cards[p])
        known = peer.visible_to(seat)
        for s in range(full.players):
            assert peer.visible_to(s) == full.visible_to(s)
        assert all(peer.cards[p] is None for p in range(52) if p not in known)
    return peer


@settings(max_examples=40, deadline=None)
@given(game=games, seed=seeds, seat=st.integers(0, 5))
def test_a_peer_that_learns_only_what_it_may_see_follows_the_same_game(game, seed, seat):
    seat %= game.players
    full, rng = random_game(game, seed)
    peer = peer_replay(full, rng, seat)
    assert peer.violations == [] and peer.rounds == full.rounds and peer.out == full.out
    assert peer.result() == full.result()


def breach(hand: BoxHand) -> tuple[Play, BoxIllegal] | None:
    """A move that breaks a rule on honour (rule 9) for the seat to act, if it has one."""
    if hand.phase is not Phase.LAY:
        return None
    seat, to_beat = hand.turn, hand.to_beat
    held = {p: hand.cards[p] for p in hand.hands[seat]}
    if to_beat is None:
        top = max((c.rank for c in held.values()), default=None)
        lower = [p for p, c in held.items() if c.rank < top] if top is not None else []
        return (PLAYS[min(lower)], BoxIllegal.LEAD_HIGHEST) if lower else None
    if any(c.rank <= to_beat.rank for c in held.values()):
        return PLAYS[hand.box(seat)[0]], BoxIllegal.MUST_LAY
    return None


@settings(max_examples=40, deadline=None)
@given(game=games, seed=seeds, when=st.integers(0, 20), kind=st.sampled_from(sorted(ON_HONOUR, key=str)))
def test_the_audit_catches_an_injected_honour_breach_and_the_offender_loses(game, seed, when, kind):
    live, rng = random_game(game, seed, HonourPolicy.RECORD)
    cards = list(live.cards)
    moves: list[Play] = []
    injected: Violation | None = None
    while not live.is_over:
        found = breach(live) if injected is None and len(moves) >= when else None
        if found is not None and found[1] is kind:
            move = found[0]
            assert live.refusal(move).reason is kind  # a seat's own such move is refused
            injected = Violation(live.turn, len(live.rounds), move.position, kind)
        else:
            move = rng.choice(live.legal_moves())
        live.apply(move)
        moves.append(move)
    assume(injected is not None)
    audited = audit(game, live.dealer, (), cards, moves)
    assert audited.violations == [injected] == live.violations
    result = audited.result()
    assert result.offenders == {injected.seat} and result.points[injected.seat] == 0
    if game.variant is Variant.SEED:
        assert result.points == tuple(int(s != injected.seat) for s in range(game.players))
    else:
        assert sum(result.points) == 1
