"""One scenario per rule of protocol/rules-boxwhist.md, on fixed deck orders.

Two-player deals use dealer 0, so seat 1 leads the first trick (rule 5)."""

import pytest
from helpers import cards, deal, make_deck, play

from p2pwhist.cards import Card, Suit
from p2pwhist.games.base import PLAYS, ConfigError, EngineMisuse, HonourPolicy, IllegalMove, audit, best_score
from p2pwhist.games.boxwhist.engine import DEFAULT_TRUMP_SEQUENCE, TURN_UP, BoxWhist, Illegal, Layout

TWO = BoxWhist(2)
# Seat 1 leads 2♠ and seat 0 wins with A♠, so seat 0 may look at its box; seat 0 holds only
# clubs besides, and seat 1 hearts: the next tricks turn on who is void in what.
OPENS_SEAT0_BOX = dict(
    hands={1: "2S 5H 6H 7H 8H 9H 10H JH QH KH 2D", 0: "AS 3C 4C 5C 6C 7C 8C 9C 10C JC QC"},
    stack="KD QD JD 10D 9D 8D",
)


def refused(hand, text: str) -> Illegal:
    with pytest.raises(IllegalMove) as error:
        play(hand, text)
    return error.value.reason


# Rule 1: the pack.
def test_rule1_three_handed_pack_drops_two_of_clubs():
    assert len(BoxWhist(3).deck()) == 51 and Card.parse("2C") not in BoxWhist(3).deck()
    assert len(BoxWhist(2).deck()) == len(BoxWhist(4).deck()) == 52


def test_rule1_ace_is_high():
    hand = deal(TWO, trump=Suit.CLUBS, hands={1: "KH", 0: "AH"})
    play(hand, "KH", "AH")
    assert hand.tricks[0].winner == 0


# Rule 2: the deal.
@pytest.mark.parametrize("players,hand_size,box_size,stack_size", [(2, 11, 4, 22), (3, 8, 3, 18), (4, 6, 2, 20)])
def test_rule2_deal_sizes_and_boxes_not_consecutive(players, hand_size, box_size, stack_size):
    game = BoxWhist(players)
    for dealer in range(players):
        layout = Layout.of(players, dealer, len(game.deck()))
        assert all(len(h) == hand_size for h in layout.hands)
        assert all(len(b) == box_size for b in layout.boxes)
        assert len(layout.stack) == stack_size
        every = sorted(p for group in layout.hands + layout.boxes for p in group) + list(layout.stack)
        assert every == list(range(len(game.deck())))
        for box in layout.boxes:
            assert all(b - a > players for a, b in zip(box, box[1:]))  # never two rounds running
        assert 0 in layout.hands[(dealer + 1) % players]  # the deal starts left of the dealer
        assert layout.trump_card == (hand_size + box_size) * players - 1  # the dealer gets the last card


def test_rule2_exposed_card_is_the_top_of_the_stack_and_public():
    hand = deal(TWO, stack="QD 2C")
    assert hand.view(0).exposed == hand.view(1).exposed == Card.parse("QD")
    assert hand.exposed in hand.visible_to(0) & hand.visible_to(1)
    assert hand.layout.stack[1] not in hand.visible_to(0) | hand.visible_to(1)


# Rule 3: the first dealer.
@pytest.mark.parametrize(
    "cut,dealer",
    [("AS 2H", 0), ("2H AS", 1), ("KD 5C 9H", 1), ("5S 5H", 1), ("7C 7D 7S 9H", 1), ("AH AD AC AS", 0)],
)
def test_rule3_lowest_cut_deals_ace_low_hearts_lowest(cut, dealer):
    assert BoxWhist(len(cut.split())).first_dealer(cards(cut)) == dealer


def test_rule3_cut_needs_one_distinct_card_per_seat():
    with pytest.raises(EngineMisuse):
        TWO.first_dealer(cards("AS AS"))
    with pytest.raises(EngineMisuse):
        TWO.first_dealer(cards("AS"))


# Rule 4: trumps.
def test_rule4_first_trump_is_the_dealers_last_hand_card_known_to_all():
    hand = deal(TWO, dealer=0, hands={0: "2C 3C 4C 5C 6C 7C 8C 9C 10C JC QS"})
    assert hand.layout.trump_card == hand.layout.hands[0][-1]
    assert hand.trump is Suit.SPADES
    assert hand.layout.trump_card in hand.visible_to(1)
    assert hand.view(1).known_hand_cards(0) == (Card.parse("QS"),)


def test_rule4_later_hands_follow_the_sequence_from_the_first_trump():
    first = deal(TWO, dealer=0, hands={0: "2C 3C 4C 5C 6C 7C 8C 9C 10C JC QD"})
    assert first.trump is Suit.DIAMONDS
    second = TWO.new_hand(1, [first], make_deck(TWO, 1))
    third = TWO.new_hand(0, [first, second], make_deck(TWO, 0))
    assert (second.trump, third.trump) == (Suit.SPADES, Suit.HEARTS)  # ♦ → ♠ → ♥ by default
    assert DEFAULT_TRUMP_SEQUENCE == (Suit.HEARTS, Suit.CLUBS, Suit.DIAMONDS, Suit.SPADES)
    assert second.layout.trump_card not in second.visible_to(0)  # no turn-up after the first hand


def test_rule4_optional_sequence_with_a_no_trump_hand():
    game = BoxWhist(2, (Suit.SPADES, None, Suit.HEARTS, Suit.DIAMONDS, Suit.CLUBS))
    assert game.trump_after(Suit.SPADES) is None and game.trump_after(None) is Suit.HEARTS
    assert game.trump_after(Suit.CLUBS) is Suit.SPADES
    with pytest.raises(ConfigError):
        BoxWhist(2, (Suit.SPADES, Suit.HEARTS))
    with pytest.raises(ConfigError):
        BoxWhist(2, (Suit.SPADES, None, Suit.HEARTS, None, Suit.DIAMONDS, Suit.CLUBS))


def test_rule4_no_trump_hand_goes_to_the_highest_of_the_suit_led():
    hand = deal(TWO, trump=None, hands={1: "3D", 0: "AS 2C 3C 4C 5C 6C 7C 8C 9C 10C JC"})
    play(hand, "3D", "AS")  # seat 0 is void in diamonds; the ace of spades is no trump here
    assert hand.tricks[0].winner == 1


# Rule 5: the first lead.
@pytest.mark.parametrize("players", [2, 3, 4])
def test_rule5_left_of_dealer_leads_then_the_trick_winner(players):
    game = BoxWhist(players)
    dealer = players - 1
    hand = game.new_hand(dealer, (), make_deck(game, dealer))
    assert hand.turn == 0
    for _ in range(players):
        assert not hand.tricks
        hand.apply(hand.legal_moves()[0])
    assert hand.turn == hand.tricks[0].winner == hand.leader


# Rule 6: following suit.
def test_rule6_must_follow_suit_from_the_hand():
    hand = deal(TWO, trump=Suit.CLUBS, hands={1: "5H", 0: "2H 3S"})
    play(hand, "5H")
    assert refused(hand, "3S") is Illegal.MUST_FOLLOW_SUIT
    assert hand.view(0).refusal(hand.view(0).parse_move("3S")).reason is Illegal.MUST_FOLLOW_SUIT
    assert all(hand.cards[m.position].suit is Suit.HEARTS for m in hand.legal_moves())
    play(hand, "2H")


def test_rule6_void_player_may_play_any_hand_card_but_not_a_closed_box():
    hand = deal(TWO, trump=Suit.HEARTS, hands={1: "AS 5H", 0: "2S 3C 4C 5C 6C 7C 8C 9C 10C JC QC"}, stack="KD QD")
    play(hand, "AS", "2S", "5H")  # seat 1 won; seat 0, void in hearts, has not
    assert {m.position for m in hand.legal_moves()} == set(hand.hands[0])
    assert refused(hand, "box 1") is Illegal.BOX_CLOSED  # rule 7 too: no blind box with hand cards
    play(hand, "QD")
    assert hand.tricks[1].winner == 1


def test_rule6_void_player_with_an_open_box_may_play_it_without_following_suit():
    hand = deal(TWO, trump=Suit.HEARTS, boxes={0: "6S"}, **OPENS_SEAT0_BOX)
    play(hand, "2S", "AS")  # seat 0 wins the first trick: its box opens
    play(hand, "3C", "5H")  # seat 1, void in clubs, trumps and leads
    play(hand, "6H")
    assert hand.view(0).parse_move("box 1") in hand.legal_moves()
    play(hand, "box 1")  # a spade from the box on a heart lead
    assert hand.tricks[2].plays[1].from_box and hand.tricks[2].winner == 1


def test_rule6_a_lead_comes_from_the_hand():
    hand = deal(TWO, trump=Suit.HEARTS, boxes={0: "6S"}, **OPENS_SEAT0_BOX)
    play(hand, "2S", "AS")
    assert refused(hand, "box 1") is Illegal.LEAD_FROM_HAND


def test_rule6_a_box_play_while_holding_the_suit_led_is_a_revoke():
    where = dict(OPENS_SEAT0_BOX, hands={**OPENS_SEAT0_BOX["hands"], 0: "AS 2H 4C 5C 6C 7C 8C 9C 10C JC QC"})
    for policy in HonourPolicy:
        hand = deal(TWO, trump=Suit.HEARTS, policy=policy, boxes={0: "6S"}, **where)
        play(hand, "2S", "AS", "4C", "5H", "6H")  # seat 0 may look, and holds the 2♥
        if policy is HonourPolicy.REFUSE:
            assert refused(hand, "box 1") is Illegal.MUST_FOLLOW_SUIT
        else:
            play(hand, "box 1")
            assert [(r.seat, r.trick) for r in hand.revokes] == [(0, 2)]


# Rule 7: the box.
def test_rule7_closed_box_is_hidden_then_opens_after_a_won_trick():
    hand = deal(TWO, trump=Suit.CLUBS, hands={1: "2S", 0: "AS"}, boxes={0: "KD QD JD 10D"})
    box_positions = set(hand.layout.boxes[0])
    assert not box_positions & hand.visible_to(0)
    assert all(card is None for _, _, card in hand.view(0).box)
    play(hand, "2S", "AS")
    assert box_positions <= hand.visible_to(0)
    assert [card for _, _, card in hand.view(0).box] == cards("KD QD JD 10D")
    assert not box_positions & hand.visible_to(1)


def test_rule7_a_player_who_never_won_plays_the_box_blind_once_the_hand_is_empty():
    # Seat 1 holds every high spade (trumps) and takes the exposed hearts; seat 0 never wins.
    hand = deal(
        TWO,
        trump=Suit.SPADES,
        hands={1: "AS KS QS JS 10S 9S 8S 7S 6S 5S 4S", 0: "2H 3H 2D 3D 4D 5D 6D 7D 8D 9D 10D"},
        boxes={1: "3S 2S KD AD", 0: "KC AC JD QD"},
        stack=" ".join(f"{h} {c}" for h, c in zip("AH KH QH JH 10H 9H 8H 7H 6H 5H 4H".split(),
                                                    "2C 3C 4C 5C 6C 7C 8C 9C 10C JC QC".split())),
    )
    while hand.hands[0] or hand.turn != 0:
        moves = hand.legal_moves()
        rank = lambda m: hand.cards[m.position].rank  # noqa: E731
        hand.apply(max(moves, key=rank) if hand.turn == 1 else min(moves, key=rank))
        assert not hand.may_look[0]
    assert len(hand.tricks) == 22 and not hand.hands[0]
    assert sorted(m.position for m in hand.legal_moves()) == sorted(hand.boxes[0])
    assert all(card is None for _, _, card in hand.view(0).box)  # blind: still unseen
    assert not set(hand.layout.boxes[0]) & hand.visible_to(0)
    play(hand, "box 2")
    assert hand.tricks[-1].plays[1].card == Card.parse("AC") and hand.tricks[-1].plays[1].from_box


# Rule 8: winning a trick.
def test_rule8_trump_beats_the_suit_led_and_a_discard_never_wins():
    hand = deal(TWO, trump=Suit.CLUBS, hands={1: "AH", 0: "2C 3D 4D 5D 6D 7D 8D 9D 10D JD QD"})
    play(hand, "AH", "2C")
    assert hand.tricks[0].winner == 0
    hand = deal(TWO, trump=Suit.SPADES, hands={1: "5H", 0: "AD 3C 4C 5C 6C 7C 8C 9C 10C JC QC"})
    play(hand, "5H", "AD")
    assert hand.tricks[0].winner == 1


def test_rule8_a_box_card_counts_like_any_other_card():
    hand = deal(TWO, trump=Suit.HEARTS, boxes={0: "AH"}, **dict(OPENS_SEAT0_BOX, hands={
        1: "2S 5H 6H 7H 8H 9H 10H JH QH KH 2D", 0: "AS 3C 4C 5C 6C 7C 8C 9C 10C JC QC"}))
    play(hand, "2S", "AS", "3C", "5H", "6H", "box 1")  # the A♥ from the box trumps
    assert hand.tricks[2].winner == 0


def test_rule8_four_players_highest_trump_wins():
    hand = deal(BoxWhist(4), dealer=3, trump=Suit.DIAMONDS,
                hands={0: "KH", 1: "AH", 2: "2D 3C 4C 5C 6C 7C", 3: "3D 8C 9C 10C JC QC"})
    play(hand, "KH", "AH", "2D", "3D")
    assert hand.tricks[0].winner == 3


# Rule 9: the stack.
def test_rule9_winner_takes_exposed_card_others_take_shown_face_down_cards():
    hand = deal(BoxWhist(3), dealer=2, trump=Suit.CLUBS, hands={0: "2H", 1: "AH", 2: "3H"}, stack="KS QS JS 10S")
    sizes = [len(h) for h in hand.hands]
    play(hand, "2H", "AH", "3H")
    draws = [(d.seat, hand.view(0).card(d.position)) for d in hand.tricks[0].draws]
    assert draws == [(1, Card.parse("KS")), (2, Card.parse("QS")), (0, Card.parse("JS"))]
    assert [len(h) for h in hand.hands] == sizes
    assert hand.view(0).exposed == Card.parse("10S")
    assert {d.position for d in hand.tricks[0].draws} <= hand.visible_to(2)
    assert hand.view(0).known_hand_cards(1) == (Card.parse("KS"),)


def test_rule9_a_box_play_in_the_stack_phase_grows_the_hand():
    hand = deal(TWO, trump=Suit.HEARTS, boxes={0: "6S"}, **OPENS_SEAT0_BOX)
    play(hand, "2S", "AS", "3C", "5H", "6H")
    before = len(hand.hands[0])
    play(hand, "box 1")
    assert len(hand.hands[0]) == before + 1 and len(hand.hands[1]) == 11


# Rule 10: playing out.
@pytest.mark.parametrize("players,tricks", [(2, 26), (3, 17), (4, 13)])
def test_rule10_hands_and_boxes_are_played_out(players, tricks):
    game = BoxWhist(players)
    hand = game.new_hand(0, (), make_deck(game, 0))
    while not hand.is_over:
        hand.apply(hand.legal_moves()[-1])
    assert len(hand.tricks) == tricks and sum(hand.tricks_won) == tricks
    assert not any(hand.hands) and not any(hand.boxes) and not hand.stack
    assert hand.legal_moves() == []
    with pytest.raises(IllegalMove) as error:
        hand.apply(PLAYS[0])
    assert error.value.reason is Illegal.HAND_OVER


# Rule 11: the hand's winner.
def test_rule11_most_tricks_wins_and_equal_most_draws():
    assert best_score([14, 12]) == 0 and best_score([13, 13]) is None
    assert best_score([5, 6, 6]) is None and best_score([5, 6, 6], frozenset({1})) == 2
    assert best_score([9, 1], frozenset({0})) == 1 and best_score([9, 1], frozenset({0, 1})) is None
    hand = deal(TWO)
    with pytest.raises(EngineMisuse):
        hand.result()
    while not hand.is_over:
        hand.apply(hand.legal_moves()[0])
    assert hand.result().scores == tuple(hand.tricks_won)
    winner = best_score(hand.tricks_won)
    assert hand.result().points == tuple(int(seat == winner) for seat in (0, 1))
    assert hand.result(frozenset({0})).points == (0, 1)


def test_rule11_a_revoke_on_honour_is_found_by_the_audit_and_loses_the_hand():
    deck = make_deck(TWO, 0, hands={1: "5H AS KS QS JS 10S 9S 8S 7S 6S 5S", 0: "2H 3C 4C 5C 6C 7C 8C 9C 10C JC QC"})
    live = TWO.new_hand(0, (), deck)
    lead = live.view(1).parse_move("5H")
    live.apply(lead)
    revoke = live.view(0).parse_move("3C")  # seat 0 holds the 2♥ but plays a club
    with pytest.raises(IllegalMove):
        live.apply(revoke)
    # Seat 1's peer cannot see seat 0's hand: it accepts the play "on honour".
    peer = TWO.new_hand(0, (), [c if p in live.visible_to(1) else None for p, c in enumerate(deck)], HonourPolicy.RECORD)
    peer.apply(lead)
    peer.learn(revoke.position, deck[revoke.position])
    peer.apply(revoke)
    assert peer.revokes == []
    # The audit sees every card: it finds the revoke, and seat 0 loses however many tricks it took.
    replay = TWO.new_hand(0, (), deck, HonourPolicy.RECORD)
    moves = [lead, revoke]
    for move in moves:
        replay.apply(move)
    while not replay.is_over:
        moves.append(replay.legal_moves()[0])
        replay.apply(moves[-1])
    audited = audit(TWO, 0, (), deck, moves)
    assert [(r.seat, r.trick) for r in audited.revokes] == [(0, 0)]
    assert audited.result().offenders == {0} and audited.result().points == (0, 1)


def test_audit_refuses_moves_that_stop_before_the_end_or_break_a_visible_rule():
    deck = make_deck(TWO, 0)
    with pytest.raises(EngineMisuse):
        audit(TWO, 0, (), deck, [])
    hand = TWO.new_hand(0, (), deck)
    with pytest.raises(IllegalMove) as error:
        audit(TWO, 0, (), deck, [hand.view(1).parse_move("box 1")])
    assert error.value.reason is Illegal.LEAD_FROM_HAND


def test_learning_a_different_card_for_a_known_position_is_refused():
    hand = deal(TWO, trump=TURN_UP)
    with pytest.raises(EngineMisuse):
        hand.learn(0, Card((hand.cards[0] + 1) % 52))
    hand.learn(0, hand.cards[0])  # the same card again is fine


# Configuration on the wire.
def test_config_round_trip_and_hostile_input():
    game = BoxWhist(3, (Suit.SPADES, None, Suit.HEARTS, Suit.DIAMONDS, Suit.CLUBS))
    assert BoxWhist.from_wire(game.to_wire()) == game
    for bad in [
        None,
        {"game": "boxwhist"},
        {"game": "boxwhist", "players": 5, "trumps": [0, 1, 2, 3]},
        {"game": "boxwhist", "players": 2, "trumps": [0, 1, 2, 2]},
        {"game": "boxwhist", "players": True, "trumps": [0, 1, 2, 3]},
        {"game": "boxwhist", "players": 2, "trumps": [0] * 1000},
        {"game": "other", "players": 2, "trumps": [0, 1, 2, 3]},
    ]:
        with pytest.raises(ConfigError):
            BoxWhist.from_wire(bad)
