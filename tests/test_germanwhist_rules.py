"""German Whist's rules (protocol/rules-germanwhist.md), one test per rule, then whole matches:
in one process through real sessions, and over the in-memory network, each transcript verified."""

from __future__ import annotations

import random

import pytest
from memnet import table

from p2pwhist import net
from p2pwhist.cards import CARDS, Card, CardError
from p2pwhist.games.base import PLAYS, ConfigError, EngineMisuse, HonourPolicy, IllegalMove, audit
from p2pwhist.games.bots import RandomBot
from p2pwhist.games.germanwhist.engine import (
    STACK,
    TRUMP_CARD,
    GermanWhist,
    GermanWhistHand,
    Illegal,
    Scoring,
    dealt_hand,
)
from p2pwhist.games.registry import GAMES, chosen, game_from_wire
from p2pwhist.inprocess import random_match
from p2pwhist.local import play_hand, shuffled_deck
from p2pwhist.text import Style
from p2pwhist.transcript import read_transcript
from p2pwhist.verify import verify

GAME = GermanWhist()


def dealt(non_dealer: str, dealer: str, stack: str = "") -> list[Card]:
    """A deck for dealer 1: seat 0's 13 cards at the even positions, seat 1's at the odd ones,
    the stack from ``stack`` (top first) then the other cards in order."""
    hands = [[Card.parse(t) for t in words.split()] for words in (non_dealer, dealer)]
    top = [Card.parse(t) for t in stack.split()]
    cards = [hands[p % 2][p // 2] for p in range(26)] + top
    return cards + [c for c in CARDS if c not in cards]


def play(hand: GermanWhistHand, *cards: str) -> None:
    for text in cards:
        card = Card.parse(text)
        hand.apply(PLAYS[hand.cards.index(card)])


def test_the_configuration_round_trips_and_refuses_what_is_not_german_whist():
    for variant in ("last13", "all26"):
        game = GermanWhist(2, variant)
        assert game_from_wire(game.to_wire()) == game and game.variant is Scoring(variant)
    assert GermanWhist().to_wire() == {"game": "germanwhist", "players": 2, "variant": "last13"}
    with pytest.raises(ConfigError, match="for 2 players"):
        GermanWhist(3)
    with pytest.raises(ConfigError, match="scoring is all26 or last13"):
        GermanWhist(2, "best-of-three")
    with pytest.raises(ConfigError):
        GermanWhist.from_wire({"game": "germanwhist", "players": 2})
    entry, game = chosen("germanwhist", None, {"variant": "all26"})
    assert entry is GAMES["germanwhist"] and game == GermanWhist(2, Scoring.ALL26)
    assert [(o.name, o.default) for o in entry.options] == [("variant", "last13")] and entry.players == (2,)


def test_rule_2_thirteen_cards_each_dealt_alternately_the_rest_a_stack_with_its_top_turned():
    for dealer in (0, 1):
        hand = GAME.new_hand(dealer, (), list(CARDS))
        non_dealer = 1 - dealer
        assert hand.hands[non_dealer] == list(range(0, 26, 2)) and hand.hands[dealer] == list(range(1, 26, 2))
        assert hand.stack == list(range(26, 52)) == list(STACK)
        assert hand.turned == TRUMP_CARD == 26 and hand.public == {26}
        assert hand.turn == non_dealer  # rule 4: the non-dealer leads
        for seat in (0, 1):
            assert hand.visible_to(seat) == frozenset(dealt_hand(seat, dealer)) | {26}


def test_rule_3_trumps_are_the_first_turned_cards_suit_for_the_whole_hand():
    hand = GAME.new_hand(1, (), RULE_5_DEAL)
    assert hand.trump.name == "CLUBS" and hand.cards[hand.turned] == Card.parse("5C")
    play(hand, "KH", "AH")
    assert hand.cards[hand.turned] == Card.parse("6C") and hand.trump.name == "CLUBS"
    assert hand.tags() == {"trumps": "clubs", "scoring": "last13"}
    assert GAME.new_hand(0).tags() == {"trumps": "?"}  # nobody learnt the turned card


# Seat 0 leads (dealer 1); clubs are trumps; the stack gives seat 0, losing, 2♣ then 3♣.
RULE_5_DEAL = dealt("KH 2S 2D 3D 4D 5D 6D 7D 8D 9D TD JD QD", "AH 3H 4C 3S 4S 5S 6S 7S 8S 9S TS JS QS",
                    "5C 2C 6C 3C 7C KD")


def test_rules_5_and_6_follow_suit_else_anything_and_the_highest_trump_or_card_of_the_suit_led_wins():
    hand = GAME.new_hand(1, (), RULE_5_DEAL)
    play(hand, "KH")
    four_clubs = PLAYS[RULE_5_DEAL.index(Card.parse("4C"))]
    refused = hand.refusal(four_clubs)
    assert refused is not None and refused.reason is Illegal.MUST_FOLLOW_SUIT
    with pytest.raises(IllegalMove, match="must follow suit"):
        hand.apply(four_clubs)
    assert [hand.cards[m.position] for m in hand.legal_moves()] == [Card.parse("AH"), Card.parse("3H")]
    play(hand, "AH")
    assert hand.tricks[-1].winner == 1 and hand.turn == 1  # the winner leads
    play(hand, "3H", "2S")  # a discard never wins
    assert hand.tricks[-1].winner == 1
    play(hand, "4C")  # seat 0 drew 2♣ and 3♣: it must follow trumps
    assert {hand.cards[m.position] for m in hand.legal_moves()} == {Card.parse("2C"), Card.parse("3C")}
    play(hand, "3C")
    assert hand.tricks[-1].winner == 1
    play(hand, "3S", "2C")  # void in spades, seat 0 trumps and wins
    assert hand.tricks[-1].winner == 0


def test_rule_7_the_winner_takes_the_turned_card_the_loser_the_next_unseen_then_the_next_is_turned():
    hand = GAME.new_hand(1, (), shuffled_deck(GAME, random.Random(3)))
    for trick in range(13):
        assert len(hand.hands[0]) == len(hand.hands[1]) == 13
        prize, face_down = hand.stack[0], hand.stack[1]
        hand.apply(hand.legal_moves()[0])
        hand.apply(hand.legal_moves()[0])
        done = hand.tricks[-1]
        winner, loser = done.winner, 1 - done.winner
        assert (done.won, done.drawn) == (prize, face_down)
        assert prize in hand.hands[winner] and face_down in hand.hands[loser]
        assert prize in hand.visible_to(winner) and prize in hand.visible_to(loser)
        assert face_down in hand.visible_to(loser) and face_down not in hand.visible_to(winner)
        if hand.stack:
            assert hand.stack[0] in hand.visible_to(0) and hand.stack[0] in hand.visible_to(1)
            assert not (hand.visible_to(0) | hand.visible_to(1)) & set(hand.stack[1:])
        view = hand.view(winner)
        assert view.card(face_down) is None and Card(hand.cards[face_down]) not in view.hand.values()
        assert Card(hand.cards[prize]) in hand.view(loser).known_hand_cards(winner)
    assert hand.stack == [] and hand.turned is None


def test_rules_8_and_9_the_last_13_tricks_score_or_all_26_under_the_variant():
    for variant in Scoring:
        game = GermanWhist(2, variant)
        hand = game.new_hand(0, (), shuffled_deck(game, random.Random(5)))
        result = play_hand(hand, [RandomBot(random.Random(1)), RandomBot(random.Random(2))])
        assert len(hand.tricks) == 26 and [t.scoring for t in hand.tricks] == [False] * 13 + [True] * 13
        last = [sum(t.winner == seat for t in hand.tricks[13:]) for seat in (0, 1)]
        every = [sum(t.winner == seat for t in hand.tricks) for seat in (0, 1)]
        assert result.scores == tuple(last if variant is Scoring.LAST13 else every)
        top = max(result.scores)
        assert result.points == tuple(int(s == top and result.scores.count(top) == 1) for s in result.scores)
    assert sum(result.scores) == 26 and result.offenders == frozenset()


def test_rule_10_a_revoke_on_honour_is_recorded_and_loses_the_hand():
    moves = [PLAYS[RULE_5_DEAL.index(Card.parse(t))] for t in ("KH", "4C")]  # seat 1 holds A♥
    seen = {m.position for m in moves} | {TRUMP_CARD}
    peer = GAME.new_hand(1, (), [c if p in seen else None for p, c in enumerate(RULE_5_DEAL)], HonourPolicy.RECORD)
    for move in moves:
        peer.apply(move)  # the peer cannot see seat 1's hand: on honour
    assert peer.revokes == []
    full = GAME.new_hand(1, (), RULE_5_DEAL, HonourPolicy.RECORD)
    for move in moves:
        full.apply(move)
    assert [(r.seat, r.trick) for r in full.revokes] == [(1, 0)]
    result = play_hand(full, [RandomBot(random.Random(0))] * 2)
    assert result.offenders == {1} and result.points == (1, 0)
    with pytest.raises(EngineMisuse, match="before the hand is over"):
        audit(GAME, 1, (), RULE_5_DEAL, moves)


def test_a_person_types_cards_and_the_words_never_name_a_card_the_seat_may_not_see():
    entry = GAMES["germanwhist"]
    hand = GAME.new_hand(0, (), shuffled_deck(GAME, random.Random(7)))
    style, names = Style(), ("You", "North")
    while not hand.is_over:
        for seat in (0, 1):
            view = hand.view(seat)
            shown = "\n".join([entry.text.table(view, names, style, 1), entry.text.legal(view, style),
                               *entry.text.finished_lines(view, 0, names, style), *entry.text.notices(view)])
            hidden = set(range(52)) - hand.visible_to(seat)
            assert not [hand.cards[p] for p in hidden if style.card(hand.cards[p]) in shown]
            assert all(cell.card in view.hand.values() for cell in entry.text.cells(view))
        view = hand.view(hand.turn)
        move = view.legal_moves[-1]
        assert view.parse_move(view.describe_move(move)) == move
        hand.apply(move)
    with pytest.raises(CardError):
        GAME.new_hand(1, (), list(CARDS)).view(1).parse_move("2H")  # at position 0: seat 0's card
    assert entry.text.record(hand, hand.result(), names)[-1].startswith("Result: tricks of the last 13")


def test_a_random_match_through_real_sessions_verifies():
    sessions = random_match(GermanWhist(2, "all26"), hands=2, seed=4)
    verdict = verify(sessions[0].log)
    report = verdict.to_json()
    assert report["valid"] and report["complete"] and report["game"] == "germanwhist", report
    assert [tuple(h["scores"]) for h in report["hands"]] == [r.scores for r in sessions[0].outcome.hands]
    assert all(sum(h["scores"]) == 26 for h in report["hands"])


async def test_a_networked_match_in_memory_ends_alike_everywhere_and_verifies(tmp_path, autojump_clock):
    played = await table(tmp_path, game=GermanWhist())
    records = played.records
    assert all(isinstance(r, net.GameRecord) for r in records), records
    assert len({r.outcome.points for r in records}) == 1
    assert len({r.transcript.read_bytes() for r in records}) == 1
    verdict = verify(read_transcript(records[0].transcript))
    assert verdict.valid and verdict.complete
    assert all(sum(r.outcome.hands[0].scores) == 13 for r in records)


def test_a_hand_cut_short_by_a_forfeit_is_scored_as_it_stands_and_recorded_with_unknown_cards():
    full = GAME.new_hand(0, (), shuffled_deck(GAME, random.Random(9)))
    while len(full.tricks) < 15:
        full.apply(full.legal_moves()[0])
    seen = full.visible_to(0)
    peer = GAME.new_hand(0, (), [c if p in seen else None for p, c in enumerate(full.cards)], HonourPolicy.RECORD)
    for trick in full.tricks:
        for played in trick.plays:
            peer.learn(played.position, played.card)
            peer.apply(PLAYS[played.position])
    result = peer.result(left=frozenset({1}))
    assert result.left == {1} and not result.offenders
    assert result.points == (1, 0) and result.scores == tuple(full.scoring_won)
    lines = GAMES["germanwhist"].text.record(peer, result, ("alice", "bob"))
    assert lines[-1] == "Forfeit: bob left the match, which loses the hand but proves no breach"
    caught = GAMES["germanwhist"].text.record(peer, peer.result(frozenset({1})), ("alice", "bob"))
    assert caught[-1] == "Breach: bob was caught breaking the deck protocol"
    assert GAMES["germanwhist"].text.record(peer, None, ("alice", "bob"))[-1].startswith("15. ")
