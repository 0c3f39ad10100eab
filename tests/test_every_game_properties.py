"""The rules engine's properties that hold for every game in the registry, written once over it
(issue 21) through the game interface alone (``games/base.py``): a game added to the registry
gets them by registering. Each game's own invariants (where every card lies, its rules one by
one) stay in its own test files.

- Refusals: a move not in ``legal_moves`` is refused by ``check``, ``apply`` and the view, for
  the seat to act, and leaves the hand as it was; no other seat may move.
- Every card in one place, as far as the interface tells: the cards the seats hold (their
  ``GameText.cells``) are held by one seat, once. Where every card lies in full (stack, pile,
  tricks) is each game's own test, which reads its engine.
- Views never leak: a peer that holds only the cards the rules reveal to its seat follows the
  same game, and its seat's screens are the full state's, character for character; no screen
  names a card outside what the seat may see.
- The audit catches each injected honour breach: a move the seat's own view refuses for a rule
  played on honour (``GameEntry.on_honour``) is accepted by a peer checking it, and the audit
  with every card known makes its seat the hand's one offender, who earns nothing.
"""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from test_every_game import CONFIGS

from p2pwhist.cards import Card
from p2pwhist.games.base import PLAYS, HonourPolicy, IllegalMove, audit
from p2pwhist.games.registry import game_entry
from p2pwhist.text import Style, seat_names
from p2pwhist.ui.terminal import help_text

PLAIN = Style(False)
CARD = re.compile(r"(?:10|[2-9JQKA])[♠♥♦♣]")  # a card as the games' words write it (Style(False) keeps symbols)
seeds = st.integers(0, 2**32)
# A few random hands for each configuration, each played out move by move: 13 configurations.
EXAMPLES = settings(max_examples=6, deadline=None)


def random_hand(game, seed: int, honour: HonourPolicy = HonourPolicy.REFUSE):
    rng = random.Random(seed)
    deck = list(game.deck())
    rng.shuffle(deck)
    return game.new_hand(rng.randrange(game.players), (), deck, honour), deck, rng


def snapshot(hand) -> tuple:
    """What the interface shows of a hand: whose turn, the legal moves, what each seat sees."""
    return (hand.current_seat, hand.legal_moves(), tuple(hand.visible_to(s) for s in range(hand.players)),
            tuple(repr(hand.view(s).legal_moves) for s in range(hand.players)))


def screens(entry, view, names) -> list[str]:
    """Every screen a seat's person reads from its view."""
    text = entry.text
    shown = [text.header(view, names, PLAIN, 1), text.table(view, names, PLAIN, 1, [0] * view.players),
             help_text(text, view, PLAIN), *text.finished_lines(view, 0, names, PLAIN), *text.notices(view)]
    if view.legal_moves:
        shown.append(text.legal(view, PLAIN))
    shown.append(repr([(c.move, c.card, c.label, c.typed, c.group, c.legal) for c in text.cells(view)]))
    return shown


@pytest.mark.parametrize("game", CONFIGS)
@EXAMPLES
@given(seed=seeds)
def test_a_move_not_legal_is_refused_by_everyone_and_changes_nothing_and_no_card_is_held_twice(game, seed):
    hand, _, rng = random_hand(game, seed)
    size, text = len(game.deck()), game_entry(game).text
    while not hand.is_over:
        seat = hand.current_seat
        legal = hand.legal_moves()
        assert legal and len(set(legal)) == len(legal)
        views = [hand.view(s) for s in range(game.players)]
        for s, view in enumerate(views):
            assert view.turn == seat and view.legal_moves == (legal if s == seat else [])
        held = [cell.move.position for view in views for cell in text.cells(view)]
        assert len(held) == len(set(held)), "a card held by two seats, or twice by one"
        for move in PLAYS[:size]:
            for s, view in enumerate(views):
                assert (view.refusal(move) is None) == (s == seat and move in legal), (s, move)
            if move in legal:
                hand.check(move)
                continue
            before = snapshot(hand)
            for attempt in hand.check, hand.apply:
                with pytest.raises(IllegalMove) as refused:
                    attempt(move)
                assert refused.value.seat == seat and refused.value.rule
            assert snapshot(hand) == before
        hand.apply(rng.choice(legal))
    for move in PLAYS[:size]:
        with pytest.raises(IllegalMove):
            hand.apply(move)
    assert all(hand.view(s).legal_moves == [] and hand.view(s).turn is None for s in range(game.players))


def peer_of(game, full, cards, seat: int):
    """A state for ``seat`` holding only the cards it may see, checking others on honour."""
    known = full.visible_to(seat)
    return game.new_hand(full.dealer, (), [c if p in known else None for p, c in enumerate(cards)],
                              HonourPolicy.RECORD)


@pytest.mark.parametrize("game", CONFIGS)
@EXAMPLES
@given(seed=seeds, seat=st.integers(0, 5))
def test_a_peer_that_learns_only_what_it_may_see_follows_the_game_and_shows_its_seat_the_same(game, seed, seat):
    """The deck protocol's reveals (session.md §4): a card its player may see is claimed
    (learned, then checked and applied); one it may not (a closed box card) is played blind
    (checked, then revealed to all, then applied); after every move the keys round reveals
    what became visible to ``seat``. The line interface prints a finished trick or round once:
    what ``finished`` counts as told right after a move reads the same once the keys round
    has revealed that move's cards, the count never falls, and after the keys round every
    finished one is told (so a person asked to move has read them all)."""
    seat %= game.players
    entry = game_entry(game)
    full, cards, rng = random_hand(game, seed)
    peer = peer_of(game, full, cards, seat)
    names = seat_names(game.players, seat)
    known = full.visible_to(seat)
    told = 0
    while True:
        assert peer.current_seat == full.current_seat
        for s in range(game.players):
            assert peer.visible_to(s) == full.visible_to(s)
        assert known <= full.visible_to(seat)  # what a seat has seen stays seen
        known = full.visible_to(seat)
        visible = {cards[p] for p in known}
        mine, theirs = full.view(seat), peer.view(seat)
        assert theirs.legal_moves == mine.legal_moves
        for screen, same in zip(screens(entry, mine, names), screens(entry, theirs, names), strict=True):
            assert screen == same
            shown = {Card.parse(word) for word in CARD.findall(screen)}
            assert shown <= visible, f"seat {seat} is shown {sorted(map(str, shown - visible))}:\n{screen}"
        if full.is_over:
            break
        mover = full.current_seat
        move = rng.choice(full.legal_moves())
        if move.position in peer.visible_to(mover):  # a claim
            peer.learn(move.position, cards[move.position])
            peer.check(move)
        else:  # blind: legal before the card is known
            peer.check(move)
            peer.learn(move.position, cards[move.position])
        full.apply(move)
        peer.apply(move)
        assert entry.text.finished(peer.view(seat)) >= told
        told = entry.text.finished(peer.view(seat))
        before = entry.text.finished_lines(peer.view(seat), 0, names, PLAIN)[:told]
        for p in sorted(peer.visible_to(seat) - known):
            peer.learn(p, cards[p])
        lines = entry.text.finished_lines(peer.view(seat), 0, names, PLAIN)
        assert lines[:told] == before
        assert entry.text.finished(peer.view(seat)) == len(lines)  # at the next turn, every one is told
    assert peer.result() == full.result() and full.result().offenders == frozenset()
    assert peer.tags() == full.tags()


def breaches(game, hand, rule) -> list:
    """The moves by which the seat to act would break ``rule``, one played on honour, as its
    own view tells."""
    view = hand.view(hand.current_seat)
    return [move for move in PLAYS[:len(game.deck())]
            if (refused := view.refusal(move)) is not None and refused.reason is rule]


# Every game, each of its configurations, with each of its rules played on honour.
BREACHES = [pytest.param(param.values[0], rule, id=f"{param.id}-{rule.name}")
            for param in CONFIGS for rule in sorted(game_entry(param.values[0]).on_honour, key=str)]


@pytest.mark.parametrize("game, rule", BREACHES)
@settings(max_examples=10, deadline=None)
@given(seed=seeds, when=st.integers(0, 30))
def test_the_audit_catches_an_injected_honour_breach_and_the_offender_earns_nothing(game, rule, seed, when):
    """A peer (``HonourPolicy.RECORD``, every card known here as the audit knows it) accepts
    the breach, as one that cannot see the hand must; the audit finds it."""
    live, cards, rng = random_hand(game, seed, HonourPolicy.RECORD)
    moves, offender = [], None
    while not live.is_over:
        found = breaches(game, live, rule) if offender is None and len(moves) >= when else []
        if found:
            offender, move = live.current_seat, rng.choice(found)
            live.check(move)  # not refused: nobody else could tell
        else:
            move = rng.choice(live.legal_moves())
        live.apply(move)
        moves.append(move)
    assume(offender is not None)
    audited = audit(game, live.dealer, (), cards, moves)
    result = audited.result()
    assert result == live.result()
    assert result.offenders == {offender} and result.points[offender] == 0


def watched(entry, view, names) -> list[str]:
    """Every screen a spectator reads from the public view (it has no moves: no help, no cells)."""
    text = entry.text
    return [text.header(view, names, PLAIN, 1), text.table(view, names, PLAIN, 1, [0] * view.players),
            *text.finished_lines(view, 0, names, PLAIN), *text.notices(view)]


@pytest.mark.parametrize("game", CONFIGS)
@EXAMPLES
@given(seed=seeds)
def test_the_public_view_holds_exactly_the_cards_every_seat_sees_and_a_spectator_reads_the_same_table(game, seed):
    """The public observer (``view(None)``), a spectator's: along random legal play its cards
    are exactly those at the positions every seat may see, it holds nothing to play and may
    play nothing; a spectator's state, which learns only those cards (``Session.observe``),
    shows the same screens, which name no other card and nobody as "you"."""
    entry = game_entry(game)
    full, cards, rng = random_hand(game, seed)
    observer = peer_of(game, full, cards, None)
    names = seat_names(game.players)
    size = len(cards)
    while True:
        public = frozenset.intersection(*(full.visible_to(s) for s in range(game.players)))
        assert full.visible_to(None) == public == observer.visible_to(None)
        view = full.view(None)
        assert view.seat is None and view.turn == full.current_seat
        assert {p: view.card(p) for p in range(size) if view.card(p) is not None} == {p: cards[p] for p in public}
        assert view.legal_moves == [] and entry.text.cells(view) == []
        assert all(view.refusal(move) is not None for move in PLAYS[:size])
        visible = {cards[p] for p in public}
        for screen, same in zip(watched(entry, view, names), watched(entry, observer.view(None), names),
                                strict=True):
            assert screen == same
            shown = {Card.parse(word) for word in CARD.findall(screen)}
            assert shown <= visible, f"a spectator is shown {sorted(map(str, shown - visible))}:\n{screen}"
            assert not re.search(r"\b[Yy]ou(r)?\b", screen), screen
        if full.is_over:
            break
        move = rng.choice(full.legal_moves())
        if move.position in observer.visible_to(full.current_seat):  # never for a spectator: it sees no hand
            observer.learn(move.position, cards[move.position])
        observer.check(move)  # played blind to the spectator: its card is revealed to all, then applied
        observer.learn(move.position, cards[move.position])
        full.apply(move)
        observer.apply(move)
        for p in sorted(observer.visible_to(None)):
            observer.learn(p, cards[p])
    assert observer.result() == full.result()
