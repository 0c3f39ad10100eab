"""One scenario per rule of protocol/rules-box.md, and per pagat difference, on fixed deck orders.

Deals use dealer N−1, so seat 0 opens the first round (rule 4)."""

from __future__ import annotations

import pytest

from p2pwhist.cards import CARDS, Card, CardError
from p2pwhist.games.base import (
    PLAYS,
    ConfigError,
    EngineMisuse,
    HonourPolicy,
    IllegalMove,
    audit,
)
from p2pwhist.games.box.engine import (
    Box,
    BoxHand,
    BoxIllegal,
    Draw,
    Lay,
    Layout,
    Phase,
    Variant,
    Violation,
)

RECORD = HonourPolicy.RECORD


def cards(text: str) -> list[Card]:
    return [Card.parse(word) for word in text.split()]


def make_deck(
    players: int, dealer: int, boxes: dict[int, str] | None = None, hands: dict[int, str] | None = None, pile: str = ""
) -> list[Card]:
    """A deck in position order with the named cards where the layout deals them (boxes in slot
    order). Unnamed positions get the remaining cards in code order (2♥, 3♥, …)."""
    layout = Layout.of(players, dealer)
    deck: list[Card | None] = [None] * 52
    for placement, chosen in ((layout.boxes, boxes or {}), (layout.hands, hands or {})):
        for seat, text in chosen.items():
            for position, card in zip(placement[seat], cards(text), strict=True):
                deck[position] = card
    for position, card in zip(layout.pile, cards(pile), strict=False):
        deck[position] = card
    placed = [c for c in deck if c is not None]
    assert len(set(placed)) == len(placed), "a scenario names a card twice"
    rest = iter(c for c in CARDS if c not in placed)
    return [c if c is not None else next(rest) for c in deck]


def deal(players: int = 2, variant: str = "seed", policy: HonourPolicy = HonourPolicy.REFUSE, **where) -> BoxHand:
    dealer = players - 1
    return Box(players, variant).new_hand(dealer, (), make_deck(players, dealer, **where), policy)


def play(hand: BoxHand, *moves: str) -> None:
    """Apply moves typed as a person would, each by the seat to act."""
    for text in moves:
        hand.apply(hand.view(hand.turn).parse_move(text))


def pos(hand: BoxHand, text: str) -> int:
    return hand.cards.index(Card.parse(text))


def moves(hand: BoxHand, text: str) -> list:
    """The moves that lay the named cards, sorted as ``legal_moves`` sorts them."""
    return [PLAYS[p] for p in sorted(pos(hand, word) for word in text.split())]


def refused(hand: BoxHand, text: str) -> BoxIllegal:
    with pytest.raises(IllegalMove) as error:
        play(hand, text)
    return error.value.reason


def finish(hand: BoxHand, moves: list | None = None) -> None:
    """Play the game out with the first legal move each time."""
    while not hand.is_over:
        move = hand.legal_moves()[0]
        hand.apply(move)
        if moves is not None:
            moves.append(move)


# Seat 1 never holds a card low enough, so it takes a box card every round, too high each time,
# and runs out of box cards after four rounds (rules 6, 7, 10). The last box card is 4♣ (too
# high) or 2♣ (it stands).
def runs_out(last_box_card: str = "4C", variant: str = "seed", policy: HonourPolicy = HonourPolicy.REFUSE) -> BoxHand:
    return deal(
        2, variant, policy,
        boxes={0: "5S 5H 5D 5C", 1: f"4S 4H 4D {last_box_card}"},
        hands={0: "3S 3H 3D 3C", 1: "AS AH AD AC"},
        pile="KS KH KD KC QS",
    )


RUNS_OUT = ("3S", "box 1", "AS", "3H", "box 2", "AH", "3D", "box 3", "AD", "3C", "box 4")


# Rule 1: the pack.
def test_rule1_one_pack_of_52_ace_high():
    assert Box().deck() == CARDS and len(Box(6).deck()) == 52
    hand = deal(hands={0: "KS 5C 4C 3C", 1: "AS KH 2D 3D"})
    play(hand, "KS")
    assert refused(hand, "AS") is BoxIllegal.TOO_HIGH  # the ace is above the king


def test_rule1_equal_rank_counts_as_lower_and_suits_do_not_matter():
    hand = deal(hands={0: "KS 5C 4C 3C", 1: "AS KH 2D 3D"})
    play(hand, "KS")
    assert hand.legal_moves() == moves(hand, "KH 2D 3D")
    play(hand, "KH")  # another suit, same rank: it stands
    assert hand.to_beat == Card.parse("KH") and hand.turn == 0


# Rule 2: the table and the dealer.
def test_rule2_two_to_six_players_default_four():
    assert Box().players == 4 and Box().variant is Variant.SEED
    for n in range(2, 7):
        assert Box(n).players == n
    for bad in (1, 7, True, "4", 4.0, None):
        with pytest.raises(ConfigError):
            Box(bad)  # type: ignore[arg-type]
    with pytest.raises(ConfigError):
        Box(4, "Pagat")  # type: ignore[arg-type]
    assert Box(4, "pagat").variant is Variant.PAGAT


@pytest.mark.parametrize("cut,dealer", [("AS 2H 5D KC", 0), ("5S 5H 9C 10D", 1), ("QS JH 10D 9C", 3)])
def test_rule2_first_dealer_by_lot_lowest_cut_ace_low(cut, dealer):
    assert Box(4).first_dealer(cards(cut)) == dealer


def test_rule2_cut_needs_one_distinct_card_per_seat():
    with pytest.raises(EngineMisuse):
        Box(3).first_dealer(cards("2S 2S 3H"))
    with pytest.raises(EngineMisuse):
        Box(3).first_dealer(cards("2S 3H"))


def test_rule2_configuration_round_trip_and_strict_parse():
    for game in (Box(), Box(2, "pagat"), Box(6)):
        wire = game.to_wire()
        assert wire == {"game": "box", "players": game.players, "variant": game.variant.value}
        assert Box.from_wire(wire) == game
    hostile = [
        None, [], "box", {"game": "box", "players": 4},
        {"game": "box", "players": 4, "variant": "seed", "extra": 1},
        {"game": "boxwhist", "players": 4, "variant": "seed"},
        {"game": "box", "players": "4", "variant": "seed"},
        {"game": "box", "players": 9, "variant": "seed"},
        {"game": "box", "players": 4, "variant": "x" * 100_000},
        {"game": "box", "players": 4, "variant": ["seed"]},
        {"game": "box", "players": [[[]]] * 1000, "variant": "seed"},
    ]
    for obj in hostile:
        with pytest.raises(ConfigError) as error:
            Box.from_wire(obj)
        assert len(str(error.value)) < 120


# Rule 3: the deal.
@pytest.mark.parametrize("players", range(2, 7))
def test_rule3_boxes_first_then_hands_then_the_pile(players):
    for dealer in range(players):
        layout = Layout.of(players, dealer)
        assert all(len(b) == 4 for b in layout.boxes) and all(len(h) == 4 for h in layout.hands)
        assert len(layout.pile) == 52 - 8 * players
        every = sorted(p for group in layout.boxes + layout.hands for p in group) + list(layout.pile)
        assert every == list(range(52))
        assert max(p for b in layout.boxes for p in b) < 4 * players  # the first four rounds
        assert 0 in layout.boxes[(dealer + 1) % players]  # the deal starts left of the dealer
        assert layout.pile[0] == 8 * players


def test_rule3_nobody_sees_a_box_and_each_sees_only_its_own_hand():
    hand = Box(4).new_hand(3, (), list(CARDS))
    layout = hand.layout
    for seat in range(4):
        assert hand.visible_to(seat) == frozenset(layout.hands[seat])
        view = hand.view(seat)
        assert set(view.hand) == set(layout.hands[seat])
        assert [c for _, _, c in view.box] == [None] * 4  # the owner included
        assert all(view.card(p) is None for p in layout.pile)
        assert view.hand_sizes == (4, 4, 4, 4) and view.box_sizes == (4, 4, 4, 4) and view.pile_size == 20


# Rule 4: opening a round.
def test_rule4_left_of_the_dealer_opens_with_the_highest_card_any_of_equal_highest():
    hand = Box(4).new_hand(1, (), make_deck(4, 1, hands={2: "QS QD 5C 2H"}))
    assert hand.turn == hand.opener == 2 and hand.to_beat is None
    assert hand.legal_moves() == moves(hand, "QS QD")
    assert refused(hand, "5C") is BoxIllegal.LEAD_HIGHEST
    assert refused(hand, "box 1") is BoxIllegal.OPEN_FROM_HAND
    play(hand, "QD")
    assert hand.turn == 3 and hand.to_beat == Card.parse("QD")


def test_rule4_an_opener_with_cards_may_not_open_from_the_box_even_on_honour():
    hand = deal(policy=RECORD, hands={0: "KS 5C 4C 3C"})
    assert refused(hand, "box 1") is BoxIllegal.OPEN_FROM_HAND  # hand sizes are public


# Six players: 4 pile cards. Round 1 lays all 24 hand cards, ranks falling; seat 0, its hand
# empty, takes a box card that stands (2♣), seat 1 one too high (5♣). Seat 0 draws the whole
# pile, so seat 1 opens round 2 with an empty hand.
SIX_ROUND = "AS AH AD AC KS KH KD KC QS QH QD QC JS JH JD JC 10S 10H 10D 10C 9S 9H 9D 9C".split()


def six_empty_hands(variant: str = "seed") -> BoxHand:
    hands = {seat: " ".join(SIX_ROUND[seat::6]) for seat in range(6)}
    hand = deal(6, variant, boxes={0: "2C 3C 4C 6C", 1: "5C 8S 7S 6S"}, hands=hands, pile="2S 3S 4S 5S")
    play(hand, *SIX_ROUND)
    return hand


def test_rule4_an_empty_handed_opener_opens_from_the_box_and_it_always_stands():
    hand = six_empty_hands()
    assert hand.view(0).hand_sizes == (0,) * 6
    play(hand, "box 1", "box 1")  # 2♣ stands on 9♣; 5♣ is too high
    assert hand.opener == hand.turn == 1 and hand.to_beat is None and hand.view(1).hand == {}
    assert hand.legal_moves() == [PLAYS[p] for p in hand.box(1)]
    play(hand, "box 2")  # 8♠ opens: nothing to beat yet
    assert hand.to_beat == Card.parse("8S") and hand.lays[0].from_box and hand.turn == 2


# Rule 5: laying equal or lower.
def test_rule5_going_left_each_lays_an_equal_or_lower_hand_card_any_such_card():
    hand = deal(3, hands={0: "KS 5C 4C 3C", 1: "QH 5H AH 3H", 2: "2S 2H 2D 2C"})
    play(hand, "KS")
    assert hand.turn == 1
    assert hand.legal_moves() == moves(hand, "QH 5H 3H")
    assert refused(hand, "AH") is BoxIllegal.TOO_HIGH
    assert refused(hand, "box 1") is BoxIllegal.MUST_LAY
    play(hand, "5H")  # not the highest it could: any equal or lower card will do
    assert hand.turn == 2 and hand.to_beat == Card.parse("5H")


def test_rule5_a_higher_hand_card_is_refused_on_honour_too_once_claimed():
    hand = deal(3, policy=RECORD, hands={0: "KS 5C 4C 3C", 1: "QH 5H AH 3H"})
    play(hand, "KS")
    assert refused(hand, "AH") is BoxIllegal.TOO_HIGH


# Rule 6: taking from the box.
def test_rule6_without_a_lower_card_take_a_box_card_blind_it_stands_if_equal_or_lower():
    hand = deal(3, boxes={1: "KD 9S 9H 9D"}, hands={0: "KS 5C 4C 3C", 1: "AS AH AD AC"})
    play(hand, "KS")
    box = hand.box(1)
    assert hand.legal_moves() == [PLAYS[p] for p in box]
    assert all(box[0] not in hand.visible_to(s) for s in range(3))  # closed, to its owner too
    assert hand.view(1).describe_move(PLAYS[box[0]]) == "box 1"
    play(hand, "box 1")  # K♦ on K♠: equal counts as lower
    assert all(box[0] in hand.visible_to(s) for s in range(3))  # turned face up for all
    assert hand.turn == 2 and hand.to_beat == Card.parse("KD") and hand.lays[-1].from_box
    assert hand.view(1).box_sizes[1] == 3 and [s for s, _, _ in hand.view(1).box] == [2, 3, 4]


def test_rule6_a_higher_box_card_ends_the_round():
    hand = deal(3, boxes={1: "KD 9S 9H 9D"}, hands={0: "QS 5C 4C 3C", 1: "AS AH AC KH"})
    play(hand, "QS", "box 1")  # K♦ on Q♠
    assert len(hand.rounds) == 1 and hand.rounds[0].too_high == Lay(1, pos(hand, "KD"), Card.parse("KD"), True)
    assert hand.lays == [] and hand.to_beat is None and hand.phase is Phase.LAY


def test_rule6_a_blind_take_is_checked_before_its_card_is_known_and_applied_after():
    full = deal(3, boxes={1: "KD 9S 9H 9D"}, hands={0: "KS 5C 4C 3C", 1: "AS AH AD AC"})
    peer = Box(3).new_hand(2, (), [c if p in full.visible_to(2) else None for p, c in enumerate(full.cards)], RECORD)
    ks = PLAYS[pos(full, "KS")]
    full.apply(ks)
    peer.learn(ks.position, full.cards[ks.position])  # a hand card is claimed
    peer.apply(ks)
    take = PLAYS[full.box(1)[0]]
    assert take.position not in peer.visible_to(1)  # so it is played blind
    peer.check(take)  # needs no card
    with pytest.raises(EngineMisuse):
        peer.apply(take)
    peer.learn(take.position, full.cards[take.position])  # the keys round reveals it to all
    peer.apply(take)
    assert peer.to_beat == Card.parse("KD") and peer.turn == 2


# Rule 7: the end of a round.
def test_rule7_seed_the_round_is_set_aside_and_the_turner_opens_the_next():
    hand = deal(3, boxes={2: "AD 9S 9H 9D"}, hands={0: "KS 5C 4C 3C", 1: "QH 5H 4H 3H", 2: "AS AH AC KH"})
    play(hand, "KS", "QH", "box 1")  # A♦ on Q♥: too high
    record = hand.rounds[0]
    assert [lay.card for lay in record.lays] == cards("KS QH")
    assert record.too_high.seat == 2 and record.too_high.card == Card.parse("AD") and record.extra_to is None
    assert sorted(hand.set_aside) == sorted(pos(hand, c) for c in ("KS", "QH", "AD"))
    assert hand.opener == hand.turn == 2 and hand.to_beat is None  # left of the last layer (seat 1)
    assert hand.extras == [[], [], []]


def test_rule7_pagat_the_too_high_card_goes_to_the_extra_pile_of_the_last_layer():
    hand = deal(3, "pagat", boxes={2: "AD 9S 9H 9D"}, hands={0: "KS 5C 4C 3C", 1: "QH 5H 4H 3H", 2: "AS AH AC KH"})
    play(hand, "KS", "QH", "box 1")
    assert hand.rounds[0].extra_to == 1 and hand.extras[1] == [pos(hand, "AD")]
    assert sorted(hand.set_aside) == sorted(pos(hand, c) for c in ("KS", "QH"))
    assert hand.view(0).extra_cards(1) == (Card.parse("AD"),)  # everyone saw it turned
    assert hand.opener == hand.turn == 2


# Pagat: seat 0 takes 5♠ (stands, no extras yet), seat 1 turns 9♠ too high: seat 0's extra.
# Next round seat 0 takes 2♦, which stands, and must put 9♠ into its box.
PAGAT_RESTOCK = dict(
    boxes={0: "5S 2D 5D 5C", 1: "9S 10S 10H 10D"},
    hands={0: "KS KH KD KC", 1: "QS QH QD QC"},
    pile="2S 2H",
)


def test_rule7_pagat_a_standing_box_card_is_replaced_from_the_extra_pile():
    hand = deal(2, "pagat", **PAGAT_RESTOCK)
    play(hand, "KS", "QS", "box 1")  # 5♠ stands: seat 0 has no extra card yet, no restock
    assert hand.phase is Phase.LAY and hand.turn == 1
    play(hand, "box 1")  # 9♠ too high: to seat 0, who laid the last card
    assert hand.extras[0] == [pos(hand, "9S")]
    play(hand, "QH", "2S", "2H", "box 2")  # seat 1 opens; 2♦ on 2♥ stands
    assert hand.phase is Phase.RESTOCK and hand.turn == 0
    assert hand.legal_moves() == [PLAYS[pos(hand, "9S")]]
    assert refused(hand, "KH") is BoxIllegal.RESTOCK_FIRST
    view = hand.view(0)
    assert view.describe_move(PLAYS[pos(hand, "9S")]) == "put 9♠"
    assert view.parse_move("put 9s") == PLAYS[pos(hand, "9S")]
    play(hand, "9S")
    assert hand.slots[0][1] == pos(hand, "9S") and hand.extras[0] == [] and len(hand.box(0)) == 3
    assert hand.turn == 1 and hand.phase is Phase.LAY and hand.to_beat == Card.parse("2D")
    assert hand.view(0).box[0] == (2, pos(hand, "9S"), Card.parse("9S"))  # a known card, for all
    assert pos(hand, "9S") in hand.visible_to(1)
    assert hand.lays[-1].card == Card.parse("2D")  # the restock lays nothing
    play(hand, "box 2")  # seat 1: 10♠ too high on 2♦
    assert hand.rounds[-1].restocks[0].card == Card.parse("9S") and hand.rounds[-1].extra_to == 0


def test_rule7_seed_has_no_extra_pile_and_no_restock():
    hand = deal(2, "seed", **PAGAT_RESTOCK)
    play(hand, "KS", "QS", "box 1", "box 1", "QH", "2S", "2H", "box 2")
    assert hand.phase is Phase.LAY and hand.turn == 1 and hand.extras == [[], []]


# Rule 8: drawing.
def test_rule8_from_the_opener_going_left_each_draws_back_to_four_seen_by_the_drawer_only():
    hand = deal(3, boxes={0: "AD 9S 9H 9D"}, hands={0: "KS 5C 4C 3C", 1: "QH 5H 4H 3H", 2: "JH 2S 2H 2D"},
                pile="6S 6H 6D 7S 7H")
    play(hand, "KS", "QH", "JH", "5C", "5H", "2S")
    play(hand, "box 1")  # seat 0 holds 4♣ 3♣, both above 2♠: it turns A♦, too high
    draws = hand.rounds[0].draws
    assert draws == (
        Draw(0, tuple(hand.layout.pile[0:2])),  # the opener first: 2 cards
        Draw(1, tuple(hand.layout.pile[2:4])),
        Draw(2, tuple(hand.layout.pile[4:6])),
    )
    assert [len(h) for h in hand.hands] == [4, 4, 4]
    for draw in draws:
        for seat in range(3):
            assert (set(draw.positions) <= hand.visible_to(seat)) == (seat == draw.seat)
    assert hand.view(0).pile_size == 28 - 6 and hand.opener == 0


def test_rule8_when_the_pile_runs_out_play_goes_on_with_what_everyone_holds():
    hand = six_empty_hands()
    play(hand, "box 1", "box 1")
    assert hand.rounds[0].draws == (Draw(0, tuple(hand.layout.pile)),)  # seat 0 first; nothing for the rest
    assert hand.pile == [] and [len(h) for h in hand.hands] == [4, 0, 0, 0, 0, 0]
    play(hand, "box 2", "box 1")  # 8♠ opens; seat 2's first box card (2♥, unnamed) stands
    assert not hand.is_over and len(hand.rounds) == 1 and hand.turn == 3


# Rule 9: honour.
def test_rule9_not_leading_the_highest_is_recorded_and_the_audit_finds_it():
    deck = make_deck(2, 1, hands={0: "KS 5H 4D 3C", 1: "QS QH QD QC"})
    live = Box(2).new_hand(1, (), deck, RECORD)
    lead = PLAYS[pos(live, "5H")]
    live.apply(lead)  # not the highest: accepted on honour, recorded
    assert live.violations == [Violation(0, 0, lead.position, BoxIllegal.LEAD_HIGHEST)]
    moves = [lead]
    finish(live, moves)
    audited = audit(Box(2), 1, (), deck, moves)
    assert audited.violations == live.violations
    result = audited.result()
    assert result.offenders == {0} and result.points == (0, 1)


def test_rule9_taking_from_the_box_while_able_to_lay_is_recorded():
    deck = make_deck(2, 1, hands={0: "KS 5H 4D 3C", 1: "QS QH QD QC"})
    live = Box(2).new_hand(1, (), deck, RECORD)
    play(live, "KS", "box 1")  # seat 1 holds four queens, any of which it could lay
    assert [(v.seat, v.rule) for v in live.violations] == [(1, BoxIllegal.MUST_LAY)]
    with pytest.raises(IllegalMove):
        play(Box(2).new_hand(1, (), deck), "KS", "box 1")  # refused outright in local play


def test_rule9_a_peer_that_cannot_see_the_hand_accepts_the_breach_and_the_audit_catches_it():
    deck = make_deck(2, 1, hands={0: "KS 5H 4D 3C", 1: "QS QH QD QC"})
    peer = Box(2).new_hand(1, (), [c if p in Layout.of(2, 1).hands[1] else None for p, c in enumerate(deck)], RECORD)
    lead = PLAYS[deck.index(Card.parse("5H"))]
    peer.learn(lead.position, deck[lead.position])  # claimed
    peer.check(lead)
    peer.apply(lead)
    assert peer.violations == []  # on honour: nothing provable here
    full = Box(2).new_hand(1, (), deck, RECORD)
    full.apply(lead)
    moves = [lead]
    finish(full, moves)
    assert audit(Box(2), 1, (), deck, moves).result().offenders == {0}


def test_rule9_provable_breaches_are_refused_live_whatever_the_policy():
    hand = deal(2, policy=RECORD, hands={0: "KS 5H 4D 3C", 1: "QS QH AD QC"})
    other = PLAYS[pos(hand, "QS")]
    with pytest.raises(IllegalMove) as error:
        hand.apply(other)
    assert error.value.reason is BoxIllegal.NOT_YOUR_CARD and error.value.seat == 0
    assert hand.view(1).refusal(other).reason is BoxIllegal.NOT_YOUR_TURN
    play(hand, "KS")
    assert refused(hand, "AD") is BoxIllegal.TOO_HIGH
    finish(hand)
    assert hand.view(0).refusal(PLAYS[0]).reason is BoxIllegal.GAME_OVER
    with pytest.raises(IllegalMove):
        hand.apply(PLAYS[0])


def test_rule9_the_audit_refuses_a_replay_that_stops_early_or_breaks_a_visible_rule():
    deck = make_deck(2, 1, hands={0: "KS 5H 4D 3C", 1: "QS QH AD QC"})
    with pytest.raises(EngineMisuse):
        audit(Box(2), 1, (), deck, [PLAYS[deck.index(Card.parse("KS"))]])
    with pytest.raises(IllegalMove):
        audit(Box(2), 1, (), deck, [PLAYS[deck.index(Card.parse("KS"))], PLAYS[deck.index(Card.parse("AD"))]])


# Rule 10: the end of the game.
@pytest.mark.parametrize("last", ["4C", "2C"])
def test_rule10_seed_the_game_ends_the_moment_a_box_is_empty(last):
    hand = runs_out(last)
    play(hand, *RUNS_OUT)  # the last box card is too high (4♣ on 3♣) or stands (2♣)
    assert hand.is_over and hand.current_seat is None and hand.loser == 1
    assert hand.view(0).legal_moves == [] and hand.legal_moves() == []
    final = hand.rounds[-1]
    if last == "2C":  # it stood: the game ends mid-round
        assert final.too_high is None and final.lays[-1].card == Card.parse("2C")
    else:
        assert final.too_high.card == Card.parse("4C")
    assert final.draws == () and hand.lays == [] and hand.box(1) == []


def test_rule10_pagat_an_empty_box_puts_the_player_out_and_the_last_one_left_wins():
    hand = runs_out(variant="pagat")
    play(hand, *RUNS_OUT)
    assert hand.is_over and hand.out == [1] and hand.winner == 0
    assert [len(e) for e in hand.extras] == [4, 0]  # every too-high card went to seat 0


# Three players, pagat. Seat 2 holds the four aces and takes a box card every turn; each
# stands, so its box runs out in the first round and it is out, with no extra card to put back.
# Seats 0 and 1 play on: seat 0 turns 2♣ (stands), seat 1 7♣ (too high, to seat 0's extras).
THREE_OUT = ["KS", "KH", "box 1", "QH", "JS", "box 2", "10S", "10H", "box 3", "9H", "8S", "box 4"]


def three_out() -> BoxHand:
    return deal(
        3, "pagat",
        boxes={0: "2C 3C 4C 5C", 1: "7C 6C 6D 6H", 2: "QS JH 9S 8H"},
        hands={0: "KS QH 10S 9H", 1: "KH JS 10H 8S", 2: "AS AH AD AC"},
    )


def test_rule10_pagat_players_out_are_skipped_in_turns_and_draws():
    hand = three_out()
    play(hand, *THREE_OUT)
    assert hand.out == [2] and not hand.is_over and hand.box(2) == []
    assert hand.turn == 0 and len(hand.rounds) == 0  # the round goes on without seat 2
    play(hand, "box 1", "box 1")
    record = hand.rounds[0]
    assert record.extra_to == 0 and [d.seat for d in record.draws] == [0, 1]  # seat 2 draws nothing
    assert [len(h) for h in hand.hands] == [4, 4, 4]  # seat 2 keeps its aces, out of play
    assert hand.opener == hand.turn == 1
    play(hand, hand.view(1).describe_move(hand.legal_moves()[0]))
    assert hand.turn == 0  # left of seat 1, past seat 2
    finish(hand)
    assert hand.out[0] == 2 and len(hand.out) == 2 and hand.winner not in hand.out
    result = hand.result()
    assert result.points == tuple(int(s == hand.winner) for s in range(3))
    assert hand.result(frozenset({hand.winner})).points == tuple(int(s == hand.out[-1]) for s in range(3))


# Pagat: seat 0 takes three box cards that stand (J♠ 9♥ 7♠) and holds no extra card; then seat 1
# turns 9♠ too high, seat 0's extra. In round 2 seat 0 takes its last box card (2♣), which
# stands, and puts 9♠ back: its box is not empty, so it stays in.
LAST_BOX = dict(
    boxes={0: "JS 9H 7S 2C", 1: "9S 5D 5H 5C"},
    hands={0: "KS KH KD KC", 1: "QS 10S 8S AS"},
    pile="AH 2S 2H 2D",
)


def test_rule10_pagat_a_last_box_card_that_stands_is_replaced_and_the_player_stays_in():
    hand = deal(2, "pagat", **LAST_BOX)
    play(hand, "KS", "QS", "box 1", "10S", "box 2", "8S", "box 3", "box 1")
    assert hand.extras[0] == [pos(hand, "9S")] and hand.box(0) == [pos(hand, "2C")]
    play(hand, "AS", "AH", "2S", "box 4")  # seat 1 opens after the draws
    assert hand.phase is Phase.RESTOCK and hand.box(0) == [] and hand.out == []
    play(hand, "9S")
    assert hand.slots[0] == [None, None, None, pos(hand, "9S")] and hand.out == []
    assert not hand.is_over and hand.turn == 1


def test_rule10_seed_the_same_last_box_card_ends_the_game():
    hand = deal(2, "seed", **LAST_BOX)
    play(hand, "KS", "QS", "box 1", "10S", "box 2", "8S", "box 3", "box 1", "AS", "AH", "2S", "box 4")
    assert hand.is_over and hand.loser == 0 and hand.result().points == (0, 1)


# Rule 11: points.
def test_rule11_seed_each_player_who_did_not_lose_scores_one():
    hand = deal(3, boxes={0: "5S 5H 5D 5C", 1: "4S 4H 4D 4C", 2: "6S 6H 6D 6C"},
                hands={0: "3S 3H 3D 3C", 1: "AS AH AD AC", 2: "2S 2H 2D 2C"}, pile="KS KH KD KC QS QH")
    finish(hand)
    result = hand.result()
    assert result.points == tuple(0 if s == hand.loser else 1 for s in range(3))
    assert result.scores == tuple(len(hand.box(s)) for s in range(3)) and result.scores[hand.loser] == 0
    assert result.offenders == frozenset()


def test_rule11_seed_offenders_lose_and_everyone_else_scores_one():
    hand = runs_out()
    play(hand, *RUNS_OUT)  # seat 1 ran out of box cards
    assert hand.result().points == (1, 0)
    assert hand.result(frozenset({0})).points == (0, 1)  # the box-emptier scores: the offender lost
    assert hand.result(frozenset({0, 1})).points == (0, 0)
    assert hand.result(frozenset({1})).offenders == {1}


def test_rule11_pagat_the_winner_scores_one_and_an_offending_winner_passes_it_on():
    hand = runs_out(variant="pagat")
    play(hand, *RUNS_OUT)
    assert hand.result().points == (1, 0)
    assert hand.result(frozenset({0})).points == (0, 1)  # seat 1 lasted longest among the honest
    assert hand.result(frozenset({0, 1})).points == (0, 0)


def test_rule11_pagat_a_game_cut_short_goes_to_the_most_box_cards_left_and_a_tie_to_nobody():
    hand = three_out()
    play(hand, *THREE_OUT, "box 1", "box 1")  # seat 2 is out; seats 0 and 1 hold 3 box cards each
    assert hand.out == [2] and [len(hand.box(s)) for s in range(3)] == [3, 3, 0]
    assert hand.result(frozenset({2})).points == (0, 0, 0)  # not the host by its seat number
    play(hand, "7H", "2H", "2D", "box 2")
    assert [len(hand.box(s)) for s in range(3)] == [2, 3, 0] and not hand.is_over
    assert hand.result(frozenset({2})).points == (0, 1, 0)  # seat 1 is furthest from going out
    assert hand.result(frozenset({1})).points == (1, 0, 0)  # still in outlasts the seat out
    assert hand.result(frozenset({0, 1})).points == (0, 0, 1)  # then the last out


def test_rule11_result_needs_a_finished_game():
    with pytest.raises(EngineMisuse):
        deal().result()


# The view: what a UI and a bot read.
def test_view_reads_and_writes_moves_as_a_person_would():
    hand = deal(3, boxes={1: "KD 9S 9H 9D"}, hands={0: "KS 10C 4C 3C", 1: "AS AH AD AC"})
    view = hand.view(0)
    assert view.parse_move("ks") == view.parse_move("K♠") == PLAYS[pos(hand, "KS")]
    assert view.parse_move("10c") == PLAYS[pos(hand, "10C")]
    assert view.describe_move(PLAYS[pos(hand, "KS")]) == "K♠"
    assert hand.view(1).describe_move(PLAYS[pos(hand, "KS")]) == "a hand card"  # seat 1 cannot see it
    with pytest.raises(CardError):
        view.parse_move("AS")  # not in seat 0's hand
    with pytest.raises(CardError):
        view.parse_move("box 9")
    assert view.parse_move("box 2") == PLAYS[hand.layout.boxes[0][1]]
    play(hand, "KS")
    view = hand.view(2)
    assert view.round[0].card == Card.parse("KS") and view.to_beat == Card.parse("KS")
    assert view.turn == 1 and view.opener == 0 and view.legal_moves == []
    assert view.refusal(PLAYS[0]).reason is BoxIllegal.NOT_YOUR_TURN
    assert hand.view(1).legal_moves == hand.legal_moves() == [PLAYS[p] for p in hand.box(1)]
    with pytest.raises(IllegalMove):
        hand.view(1).check(PLAYS[pos(hand, "AS")])


def test_learning_a_different_card_for_a_known_position_is_refused():
    hand = deal()
    with pytest.raises(EngineMisuse):
        hand.learn(0, Card(int(hand.cards[0]) ^ 1))
    hand.learn(0, hand.cards[0])


def test_tags_name_the_variant():
    assert deal().tags() == {"variant": "seed"} and deal(variant="pagat").tags() == {"variant": "pagat"}
