"""The bots: legal moves everywhere, only public knowledge, and the heuristic's card sense.

Two-player scenarios use dealer 0, so seat 1 leads and the heuristic, in seat 0, plays second
(last). Seeded loops keep every test deterministic.
"""

from __future__ import annotations

import random

import pytest
from helpers import PublicView, deal, play

from p2pwhist.cards import Card, Suit
from p2pwhist.games.base import PLAYS, HonourPolicy, Play
from p2pwhist.games.bots import RandomBot
from p2pwhist.games.boxwhist.engine import TURN_UP, BoxWhist, BoxWhistHand
from p2pwhist.games.boxwhist.heuristic import _BOX_PLAIN_FACTOR, HeuristicBot, _Knowledge, _value
from p2pwhist.games.registry import GAMES
from p2pwhist.local import play_hand, shuffled_deck

TWO = BoxWhist(2)


def heuristic_move(hand: BoxWhistHand, seed: int = 0) -> Play:
    view = hand.view(hand.turn)
    move = HeuristicBot(random.Random(seed)).choose(PublicView(view))
    assert view.refusal(move) is None
    return move


def choice_of(hand: BoxWhistHand) -> Card:
    """The heuristic's card, which must not depend on its rng (it sees every card it may play)."""
    moves = {heuristic_move(hand, seed) for seed in range(4)}
    assert len(moves) == 1, "the choice depends on the rng"
    return hand.cards[moves.pop().position]


# -- legality and knowledge --------------------------------------------------------------


@pytest.mark.parametrize("players,hands", [(2, 120), (3, 100), (4, 100)])
def test_heuristic_plays_a_legal_move_in_every_position(players, hands):
    """Every decision of many random hands, against random bots and against itself; the bot
    sees only a public snapshot, and the live view gives the same choice."""
    game = BoxWhist(players)
    rng = random.Random(players)
    decisions = 0
    for number in range(hands):
        hand = game.new_hand(number % players, (), cards=shuffled_deck(game, rng))
        heuristic_seats = {seat for seat in range(players) if rng.random() < 0.6} or {0}
        seed = rng.randrange(1 << 30)
        while (seat := hand.turn) is not None:
            view = hand.view(seat)
            if seat in heuristic_seats:
                move = HeuristicBot(random.Random(seed)).choose(PublicView(view))
                assert move in view.legal_moves
                assert move == HeuristicBot(random.Random(seed)).choose(view)
                decisions += 1
            else:
                move = RandomBot(rng).choose(view)
            hand.apply(move)
        assert sum(hand.result().scores) == {2: 26, 3: 17, 4: 13}[players]
    assert decisions > hands * 10


@pytest.mark.parametrize("players", [2, 3, 4])
def test_heuristic_counts_the_cards_it_should(players):
    """The card counting (kept as bit masks for speed) against its definition, read off the
    engine at every decision of random hands: a card's future value counts the outstanding
    cards of its suit above it (not played, not the seat's own hand or open box), and a
    face-down draw's value averages over the cards the seat has not seen."""
    game = BoxWhist(players)
    rng = random.Random(200 + players)
    checked = 0
    for number in range(25):
        hand = game.new_hand(number % players, (), cards=shuffled_deck(game, rng))
        while (seat := hand.turn) is not None:
            view = hand.view(seat)
            hand_cards = {p: int(c) for p, c in view.hand.items()}
            box_open = {p: int(c) for _, p, c in view.box if c is not None}
            mine = set(hand_cards.values()) | set(box_open.values())
            played = {int(p.card) for t in view.tricks for p in t.plays} | {int(p.card) for p in view.trick}
            deck = {int(c) for c in view.deck}
            out = deck - played - mine
            seen = mine | played | {int(c) for j in range(players) if j != seat for c in view.known_hand_cards(j)}
            seen |= set() if view.exposed is None else {int(view.exposed)}
            unseen = sorted(deck - seen)
            trump = -1 if view.trump is None else int(view.trump)

            def value(card: int) -> float:
                return _value(sum(1 for c in out if c // 13 == card // 13 and c > card), card // 13 == trump)

            k = _Knowledge(view, hand_cards, box_open)
            for card in hand_cards.values():
                assert k.value(card) == value(card)
            for card in box_open.values():
                factor = 1.0 if card // 13 == trump else _BOX_PLAIN_FACTOR
                assert k.value(card, in_box=True) == value(card) * factor
            draws = [value(card) for card in unseen]
            assert k.average_draw_value() == pytest.approx(sum(draws) / len(draws) if draws else 0.0)
            checked += 1
            hand.apply(rng.choice(view.legal_moves))
    assert checked > 300


def _replay(game, hand: BoxWhistHand, deck, moves) -> BoxWhistHand:
    # RECORD: a permuted deal may make an earlier off-suit play a revoke; the view is the same.
    other = BoxWhistHand(game, hand.dealer, hand.trump_rule, deck, HonourPolicy.RECORD)
    for position in moves:
        other.apply(PLAYS[position])
    return other


@pytest.mark.parametrize("players", [2, 3, 4])
def test_heuristic_choice_does_not_depend_on_cards_it_may_not_see(players):
    """Shuffle every card the seat to act may not know (others' hands, boxes, the face-down
    stack, its own closed box): the choice stays the same."""
    game = BoxWhist(players)
    rng = random.Random(100 + players)
    checked = 0
    for number in range(30):
        deck = shuffled_deck(game, rng)
        hand = game.new_hand(number % players, (), cards=deck)
        moves: list[int] = []
        bots = [HeuristicBot(random.Random(seat)) for seat in range(players)]
        while (seat := hand.turn) is not None:
            if rng.random() < 0.25:
                hidden = sorted(set(range(len(deck))) - hand.visible_to(seat))
                shuffled = [deck[p] for p in hidden]
                rng.shuffle(shuffled)
                other_deck = list(deck)
                for position, card in zip(hidden, shuffled):
                    other_deck[position] = card
                other = _replay(game, hand, other_deck, moves)
                assert other.turn == seat
                for name in ("hand", "box", "exposed", "known_hand_cards", "legal_moves"):
                    mine, theirs = getattr(hand.view(seat), name), getattr(other.view(seat), name)
                    if callable(mine):
                        mine, theirs = [mine(s) for s in range(players)], [theirs(s) for s in range(players)]
                    assert mine == theirs, name
                # The same position: a blind box card differs between the two deals.
                assert heuristic_move(hand, seed=number) == heuristic_move(other, seed=number)
                checked += 1
            move = bots[seat].choose(hand.view(seat))
            moves.append(move.position)
            hand.apply(move)
    assert checked > 50


def test_heuristic_is_registered():
    bot = GAMES["boxwhist"].bots["heuristic"](random.Random(0))
    assert isinstance(bot, HeuristicBot)


# -- strength ------------------------------------------------------------------------------


def test_heuristic_beats_random_clearly_at_two_players():
    """300 seeded hands, each deck played with the heuristic in either seat, dealers alternating."""
    rng = random.Random(2024)
    heuristic, opponent = HeuristicBot(random.Random(1)), RandomBot(random.Random(2))
    wins = losses = 0
    for number in range(150):
        deck = shuffled_deck(TWO, rng)
        for seat in (0, 1):
            bots = [opponent, opponent]
            bots[seat] = heuristic
            result = play_hand(TWO.new_hand(number % 2, (), cards=list(deck)), bots)
            wins += result.points[seat]
            losses += result.points[1 - seat]
    assert wins / (wins + losses) >= 0.8


@pytest.mark.parametrize("players", [3, 4])
def test_heuristic_beats_its_fair_share_at_more_players(players):
    game = BoxWhist(players)
    rng = random.Random(players)
    heuristic, opponent = HeuristicBot(random.Random(1)), RandomBot(random.Random(2))
    wins = 0
    hands = 40 * players
    for number in range(hands):
        seat = number % players
        bots = [opponent] * players
        bots[seat] = heuristic
        result = play_hand(game.new_hand(number // players % players, (), cards=shuffled_deck(game, rng)), bots)
        wins += result.points[seat]
    assert wins / hands >= 1.3 / players


# -- card sense: small constructed deals -----------------------------------------------------

# Seat 1 leads a low heart; seat 0 holds the hearts named in each test plus clubs.
LEADER = "4H 5D 6D 7D 8D 9D 10D JD QD KD AD"


def heart_lead(seat0_hearts: str, exposed: str, trump: Suit = Suit.SPADES) -> BoxWhistHand:
    hearts = seat0_hearts.split()
    clubs = "2C 3C 4C 5C 6C 7C 8C 9C 10C JC QC".split()[: 11 - len(hearts)]
    hand = deal(TWO, dealer=0, trump=trump, hands={1: LEADER, 0: " ".join(hearts + clubs)}, stack=exposed)
    play(hand, "4H")
    return hand


def test_wins_a_valuable_exposed_card_with_the_cheapest_winner():
    assert choice_of(heart_lead("2H 6H AH", exposed="AS")) == Card.parse("6H")
    assert choice_of(heart_lead("2H 6H AH", exposed="KC")) == Card.parse("6H")


def test_spends_an_ace_for_a_valuable_exposed_card_but_not_for_a_worthless_one():
    assert choice_of(heart_lead("2H AH", exposed="AS")) == Card.parse("AH")  # the ace of trumps
    assert choice_of(heart_lead("2H AH", exposed="2D")) == Card.parse("2H")


def test_follows_low_when_it_cannot_win():
    hand = deal(
        TWO, dealer=0, trump=Suit.SPADES,
        hands={1: "AH " + LEADER[3:], 0: "3H 9H KH 2C 3C 4C 5C 6C 7C 8C 9C"}, stack="AS",
    )
    play(hand, "AH")
    assert choice_of(hand) == Card.parse("3H")


def test_void_ruffs_for_a_valuable_card_and_saves_its_trump_otherwise():
    assert choice_of(_void_in_hearts("AS")) == Card.parse("3S")
    assert choice_of(_void_in_hearts("2D")).suit is Suit.CLUBS


def _void_in_hearts(exposed: str) -> BoxWhistHand:
    hand = deal(
        TWO, dealer=0, trump=Suit.SPADES,
        hands={1: LEADER, 0: "3S 2C 3C 4C 5C 6C 7C 8C 9C 10C JC"}, stack=exposed,
    )
    play(hand, "4H")
    return hand


def _open_box_then_heart_lead(exposed: str) -> BoxWhistHand:
    """Seat 0 wins trick 1 (its box opens), loses trick 2, then seat 1 leads a heart: seat 0
    holds no heart nor trump in its hand, and a low trump in its box."""
    hand = deal(
        TWO, dealer=0, trump=Suit.SPADES,
        hands={1: "2S 3C 4H 5H 6H 7H 8H 9H 10H JH QH", 0: "AS 2C 4C 5C 6C 7C 8C 9C 10C JC QC"},
        boxes={0: "5S 7D 8D 9D"},
        stack="3D 4D 5D 6D " + exposed,
    )
    play(hand, "2S", "AS", "2C", "3C", "4H")
    assert hand.turn == 0 and hand.may_look[0] and hand.view(0).exposed == Card.parse(exposed)
    return hand


def test_open_box_trump_wins_a_valuable_card_and_is_kept_otherwise():
    assert choice_of(_open_box_then_heart_lead("KS")) == Card.parse("5S")  # from the box
    assert choice_of(_open_box_then_heart_lead("2D")).suit is not Suit.SPADES


def test_closed_box_is_played_blind_only_when_the_hand_is_empty():
    """A seat that never won a trick never picks a box card while it holds hand cards (they
    are not legal), and with its hand empty still returns a box move (four heuristic seats:
    at four players some seat often goes without a trick for the whole hand)."""
    game = BoxWhist(4)
    rng = random.Random(7)
    bot = HeuristicBot(random.Random(1))
    blind = 0
    for number in range(40):
        hand = game.new_hand(number % 4, (), cards=shuffled_deck(game, rng))
        while (seat := hand.turn) is not None:
            move = bot.choose(PublicView(hand.view(seat)))
            if not hand.may_look[seat]:
                from_box = move.position in hand.boxes[seat]
                assert from_box == (not hand.hands[seat])
                blind += from_box
            hand.apply(move)
    assert blind > 0


# Three players, dealer 0: seat 1 leads, seat 2 plays second, seat 0 third (last).
THREE = BoxWhist(3)


def test_second_hand_plays_low_when_a_later_seat_is_known_to_beat_its_high_card():
    # Hearts are trumps, turned up as the dealer's last hand card: everyone knows seat 0 holds A♥.
    hand = deal(
        THREE, dealer=0, trump=TURN_UP,
        hands={1: "5H 3D 4D 5D 6D 7D 8D 9D", 2: "3H KH 3C 4C 5C 6C 7C 8C", 0: "2S 3S 4S 5S 6S 7S 8S AH"},
        stack="KS",
    )
    assert hand.trump is Suit.HEARTS and Card.parse("AH") in hand.view(2).known_hand_cards(0)
    play(hand, "5H")
    assert choice_of(hand) == Card.parse("3H")


def test_third_hand_wins_cheaply_when_last():
    hand = deal(
        THREE, dealer=0, trump=Suit.SPADES,
        hands={1: "5H 3D 4D 5D 6D 7D 8D 9D", 2: "9H 3C 4C 5C 6C 7C 8C 9C", 0: "4H 10H AH 2S 3S 4S 5S 6S"},
        stack="AC",
    )
    play(hand, "5H", "9H")
    assert choice_of(hand) == Card.parse("10H")
