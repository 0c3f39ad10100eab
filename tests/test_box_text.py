"""Box's screens and registry entry (p2pwhist/games/box/text.py): each screen on fixed deals,
secrecy and typed moves under random play, and a working game from the registry."""

from __future__ import annotations

import random
import re

import pytest

from p2pwhist.cards import CARDS, Card
from p2pwhist.games.base import PLAYS, HonourPolicy, IllegalMove
from p2pwhist.games.box import ENTRY as BOX
from p2pwhist.games.box.engine import Box, BoxHand, BoxView, Layout, Phase, Variant
from p2pwhist.games.box.text import WIDTH
from p2pwhist.games.registry import GAMES
from p2pwhist.text import Style, seat_names
from p2pwhist.ui.terminal import help_text

TEXT = BOX.text
PLAIN = Style()
CARD = re.compile(r"(?:10|[2-9JQKA])[♠♥♦♣]")


def deal(players: int, variant: str = "seed", policy: HonourPolicy = HonourPolicy.REFUSE,
         boxes: dict[int, str] | None = None, hands: dict[int, str] | None = None, pile: str = "") -> BoxHand:
    """A game with the named cards where the deal puts them (dealer N−1, so seat 0 opens);
    the other positions get the remaining cards in code order (2♥, 3♥, …)."""
    dealer = players - 1
    layout = Layout.of(players, dealer)
    deck: list[Card | None] = [None] * 52
    for placement, chosen in ((layout.boxes, boxes or {}), (layout.hands, hands or {})):
        for seat, text in chosen.items():
            for position, word in zip(placement[seat], text.split(), strict=True):
                deck[position] = Card.parse(word)
    for position, word in zip(layout.pile, pile.split(), strict=False):
        deck[position] = Card.parse(word)
    rest = iter(c for c in CARDS if c not in deck)
    return Box(players, variant).new_hand(dealer, (), [c if c is not None else next(rest) for c in deck], policy)


def play(hand: BoxHand, *moves: str) -> None:
    for text in moves:
        hand.apply(hand.view(hand.turn).parse_move(text))


def names(players: int, seat: int) -> tuple[str, ...]:
    return seat_names(players, seat)


# Seat 0 leads K♠, West lays 9♥, North holds only higher cards and takes 5♣ from its box (it
# stands), East lays 3♠; seat 0 lays 2♥, West turns A♣ too high. Draws from seat 0: 7♠ 6♥ to
# seat 0, 5♠ to West, 4♠ to East (North laid no hand card).
FOUR = {
    "boxes": {1: "AC 10C 10H 10D", 2: "5C JS JH JD"},
    "hands": {0: "KS 9C 4D 2H", 1: "9H 8C 7D 6S", 2: "AS AH AD QC", 3: "3S 3H JC QD"},
    "pile": "7S 6H 5S 4S",
}


def test_the_table_shows_the_card_to_beat_the_round_the_counts_and_the_hand():
    hand = deal(4, **FOUR)
    play(hand, "KS", "9H", "box 1", "3S")
    assert TEXT.table(hand.view(0), names(4, 0), PLAIN, 1, [1, 0, 2, 1]) == """\
-- Hand 1, Round 1 --
To follow:  3♠ (laid by East): lay a 3 or lower, else take a box card
Laid:       You K♠, West 9♥, North 5♣ (box), East 3♠
West:       3 cards in hand, 4 box cards
North:      4 cards in hand, 3 box cards
East:       3 cards in hand, 4 box cards
Pile:       20 cards
Turn:       You
Points:     You 1, West 0, North 2, East 1
Your hand:  9♣ 4♦ 2♥
Your box:   4 closed cards (box 1, box 2, box 3, box 4)"""
    assert TEXT.legal(hand.view(0), PLAIN) == "You may lay: 2♥"
    assert TEXT.legal(hand.view(1), PLAIN) == "It is not your turn."


def test_the_opener_is_told_to_lay_the_highest_card():
    hand = deal(4, **FOUR)
    view = hand.view(0)
    table = TEXT.table(view, names(4, 0), PLAIN)
    assert "To follow:  you open: lay your highest card" in table and "Points" not in table
    assert "Your hand:  K♠ 9♣ 4♦ 2♥" in table  # by rank, high to low: suits do not matter
    assert "To follow:  East opens with the highest card of the hand" in TEXT.table(hand.view(1), names(4, 1), PLAIN)
    assert TEXT.legal(view, PLAIN) == "You may lay: K♠ (you open with your highest card)"
    assert TEXT.header(view, names(4, 0), PLAIN, 3) == "== Hand 3: East deals, You open; an empty box loses =="
    assert "the last box left wins" in TEXT.header(deal(4, "pagat").view(0), names(4, 0), PLAIN, 1)


def test_with_nothing_to_lay_the_player_is_told_to_take_a_box_card():
    hand = deal(4, **FOUR)
    play(hand, "KS", "9H")
    assert TEXT.legal(hand.view(2), PLAIN) == "You have nothing to lay: take a box card: box 1, box 2, box 3, box 4"
    play(hand, "box 1", "3S", "2H")
    assert TEXT.legal(hand.view(1), PLAIN) == "You have nothing to lay: take a box card: box 1, box 2, box 3, box 4"


def test_a_finished_round_names_the_too_high_card_and_only_the_seats_own_draws():
    hand = deal(4, **FOUR)
    play(hand, "KS", "9H", "box 1", "3S", "2H", "box 1")
    view = hand.view(0)
    assert TEXT.finished(view) == 1
    assert TEXT.finished_lines(view, 0, names(4, 0), PLAIN) == [
        ("Round 1: You K♠, West 9♥, North 5♣ (box), East 3♠, You 2♥,\n  West A♣ (box) too high.\n"
         "  Draws: You 2 (7♠ 6♥), West 1, East 1. West opens round 2.")
    ]
    assert TEXT.finished_lines(view, 1, names(4, 0), PLAIN) == []
    [west] = TEXT.finished_lines(hand.view(1), 0, names(4, 1), PLAIN)
    assert west.endswith("Draws: East 2, You 1 (5♠), North 1. You open round 2.")
    assert TEXT.legal(hand.view(1), PLAIN) == "You may lay: 8♣ (you open with your highest card)"


def test_a_refused_move_is_explained_in_one_line():
    hand = deal(4, **FOUR)
    play(hand, "KS")
    refused = hand.view(1).refusal(PLAYS[hand.cards.index(Card.parse("9H"))])
    assert refused is None
    hand.apply(PLAYS[hand.cards.index(Card.parse("9H"))])
    with pytest.raises(IllegalMove) as error:
        play(hand, "AS")
    assert TEXT.refusal(error.value) == ("Not allowed: a hand card must be equal to or lower than the "
                                         "card to beat (A♠ on 9♥). Type ? to list your moves.")


# Pagat: seat 0 takes 5♠ (it stands), seat 1 turns 9♠ too high: seat 0's extra card. Next round
# seat 0 takes 2♦, which stands, and puts 9♠ into box 2; seat 1 turns 10♠ too high.
PAGAT = {"boxes": {0: "5S 2D 5D 5C", 1: "9S 10S 10H 10D"}, "hands": {0: "KS KH KD KC", 1: "QS QH QD QC"},
         "pile": "2S 2H"}


def test_pagat_the_extra_pile_and_a_card_put_back_are_shown_to_all():
    hand = deal(2, "pagat", **PAGAT)
    play(hand, "KS", "QS", "box 1", "box 1", "QH", "2S", "2H", "box 2")
    me, other = hand.view(0), hand.view(1)
    assert hand.phase is Phase.RESTOCK
    assert TEXT.legal(me, PLAIN) == "Put one of your extra cards into your box: 9♠"
    assert "Your box:   2 closed cards (box 3, box 4); extra pile 9♠" in TEXT.table(me, names(2, 0), PLAIN)
    assert "Turn:       You put an extra card into the box" in TEXT.table(me, names(2, 0), PLAIN)
    assert "North:      3 cards in hand, 2 box cards, extra pile 9♠" in TEXT.table(other, names(2, 1), PLAIN)
    play(hand, "9S")
    assert "Your box:   2 closed cards (box 3, box 4); box 2 = 9♠" in TEXT.table(hand.view(0), names(2, 0), PLAIN)
    assert "(box 2 = 9♠)" in TEXT.table(hand.view(1), names(2, 1), PLAIN)
    assert TEXT.legal(hand.view(1), PLAIN) == "You have nothing to lay: take a box card: box 2, box 3, box 4"
    play(hand, "box 2")
    lines = TEXT.finished_lines(hand.view(0), 1, names(2, 0), PLAIN)
    assert lines == [("Round 2: North Q♥, You 2♠, North 2♥, You 2♦ (box; put 9♠ into box 2),\n"
                      "  North 10♠ (box) too high.\n"
                      "  10♠ goes to your extra pile. Draws: North 2, You 1 (5♥). North opens round 3.")]


def test_the_hand_result_says_who_lost_or_won_the_breaches_and_the_points():
    hand = deal(3, boxes={1: "AS AH AD AC"}, hands={1: "KS KH KD KC"})
    while not hand.is_over:
        hand.apply(hand.legal_moves()[0])
    result = hand.result()
    loser = hand.loser
    text = TEXT.hand_result(hand, result, names(3, 0), PLAIN, 2)
    assert text.splitlines()[0] == "== Hand 2 over =="
    assert f"{names(3, 0)[loser]} run" in text and "out of box cards." in text
    assert "A point each: " in text and TEXT.result_line(result, names(3, 0)).endswith(f"lost by {names(3, 0)[loser]}")

    breach = deal(2, policy=HonourPolicy.RECORD, hands={0: "KS 5H 4D 3C", 1: "QS QH QD QC"})
    breach.apply(PLAYS[breach.cards.index(Card.parse("5H"))])  # not the highest: recorded, on honour
    while not breach.is_over:
        breach.apply(breach.legal_moves()[0])
    result = breach.result()
    text = TEXT.hand_result(breach, result, names(2, 1), PLAIN)
    assert "North broke the rules: did not lead the highest card (round 1), and so North loses." in text
    assert text.endswith("A point each: You.")
    record = TEXT.record(breach, result, ["alice", "bob"])
    assert "Breach: alice did not lead the highest card in round 1 (5♥)" in record


def test_pagat_the_result_names_the_last_with_box_cards():
    hand = deal(2, "pagat", **PAGAT)
    while not hand.is_over:
        hand.apply(hand.legal_moves()[0])
    result = hand.result()
    winner = names(2, 0)[hand.winner]
    text = TEXT.hand_result(hand, result, names(2, 0), PLAIN)
    assert "Out, in order: " in text and text.splitlines()[-1].startswith(f"{winner} keep")
    assert TEXT.result_line(result, names(2, 0)).endswith(f"won by {winner}")


def test_the_record_has_the_deal_a_line_per_round_and_the_result():
    hand = deal(4, **FOUR)
    play(hand, "KS", "9H", "box 1", "3S", "2H", "box 1")
    while not hand.is_over:
        hand.apply(hand.legal_moves()[0])
    record = TEXT.record(hand, hand.result(), ["a", "b", "c", "d"])
    assert record[0] == "a: K♠ 9♣ 4♦ 2♥ | box " + " ".join(str(hand.cards[p]) for p in hand.layout.boxes[0])
    assert record[1].startswith("b: 9♥ 8♣ 7♦ 6♠ | box A♣ 10♣ 10♥ 10♦")
    assert record[4].startswith("Pile: 7♠ 6♥ 5♠ 4♠ ")
    assert record[5] == " 1. a K♠, b 9♥, c 5♣ (box), d 3♠, a 2♥, b A♣ (box) too high; draw a 7♠ 6♥, b 5♠, d 4♠"
    assert len(record) == 5 + len(hand.rounds) + 1 and record[-1].startswith("Result: box cards left a ")


def test_the_spectator_sees_every_move_and_every_draw():
    hand = deal(4, **FOUR)
    spectator = seat_names(4)
    shown = [TEXT.deal(hand, spectator, PLAIN, 1)]
    assert shown[0].splitlines()[1].startswith("South:      hand K♠ 9♣ 4♦ 2♥ | box 1:")
    assert shown[0].splitlines()[2] == "West:       hand 9♥ 8♣ 7♦ 6♠ | box 1:A♣ 2:10♣ 3:10♥ 4:10♦"
    for text in ("KS", "9H", "box 1", "3S", "2H", "box 1"):
        seat = hand.turn
        move = hand.view(seat).parse_move(text)
        hand.apply(move)
        shown.append(TEXT.move(hand, seat, move, spectator, PLAIN))
    assert shown[1:] == [
        "Round 1:\n  South lays K♠", "  West lays 9♥", "  North takes box 1: 5♣, which stands", "  East lays 3♠",
        "  South lays 2♥",
        "  West takes box 1: A♣, too high\n  Draws: South 2 (7♠ 6♥), West 1 (5♠), East 1 (4♠). West opens round 2.",
    ]


def seen(text: str) -> set[Card]:
    return {Card.parse(word) for word in CARD.findall(text)}


def listed(view: BoxView, text: str) -> set:
    """The moves a ``legal`` line lists, read back as a person would type them."""
    words = re.findall(r"box \d+|(?:10|[2-9JQKA])[♠♥♦♣]", text.split(": ", 1)[1])
    return {view.parse_move(word) for word in words}


@pytest.mark.parametrize("variant", list(Variant))
@pytest.mark.parametrize("players", [2, 4, 6])
def test_the_legal_line_lists_exactly_the_legal_moves_and_the_table_reads_in_ascii(players, variant):
    """Box's own words; that no screen shows a card its seat may not see, and fits 80 columns,
    holds for every game (test_every_game_properties.py, test_every_game_text.py)."""
    game = Box(players, variant)
    for seed in range(6):
        rng = random.Random(seed)
        deck = list(CARDS)
        rng.shuffle(deck)
        hand = game.new_hand(seed % players, (), deck)
        while not hand.is_over:
            view = hand.view(hand.turn)
            legal = TEXT.legal(view, PLAIN)
            assert listed(view, legal) == set(view.legal_moves), legal
            hand.apply(rng.choice(hand.legal_moves()))
        assert TEXT.table(hand.view(0), names(players, 0), Style(symbols=False), 1).isascii()


@pytest.mark.parametrize("variant", BOX.options[0].choices)
@pytest.mark.parametrize("players", BOX.players)
def test_the_registry_entry_makes_a_working_game(players, variant):
    assert GAMES["box"] is BOX and BOX.default_players in BOX.players
    assert [(o.name, o.choices, o.default) for o in BOX.options] == [("variant", ("seed", "pagat"), "seed")]
    game = BOX.make(players, variant=variant)
    rng = random.Random(players)
    bots = [BOX.bots[name](rng) for name in ("random", "heuristic") for _ in range(players)][:players]
    deck = list(game.deck())
    rng.shuffle(deck)
    hand = game.new_hand(game.first_dealer(deck[:players]), (), deck)
    spectator = seat_names(players)
    shown = [TEXT.deal(hand, spectator, PLAIN, 1)]
    while not hand.is_over:
        seat = hand.turn
        move = bots[seat].choose(hand.view(seat))
        hand.apply(move)
        shown.append(TEXT.move(hand, seat, move, spectator, PLAIN))
    assert sum(text.startswith("Round ") for text in shown) == len(hand.rounds)
    assert shown[-1].endswith("The game is over.")
    result = hand.result()
    assert len(result.points) == players and sum(result.points) == (1 if variant == "pagat" else players - 1)
    assert TEXT.record(hand, result, [f"p{s}" for s in range(players)])


def test_the_rules_and_the_help_read_at_80_columns():
    assert TEXT.title == "Box" and "Pagat's rules" in TEXT.rules
    for text in (TEXT.rules, help_text(TEXT, deal(2).view(0), PLAIN)):
        assert all(len(line) <= WIDTH for line in text.splitlines())
    assert "box 2" in help_text(TEXT, deal(2).view(1), PLAIN)
