"""scripts/boxwhist_ceiling.py's ISMCTS that sees: every deal it searches is the true one (the
face-down stack shuffled when it knows only the hands), consistent with all its seat knows, and
the search module is left as it was, so that an opponent searching in the same process samples
honestly. A ceiling measured on a wrong deal would mislead whoever restates the strength goals."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))

import boxwhist_ceiling

from p2pwhist.games.boxwhist import search
from p2pwhist.games.boxwhist.engine import BoxWhist
from p2pwhist.games.boxwhist.heuristic import HeuristicBot
from p2pwhist.local import shuffled_deck


@pytest.mark.parametrize("knows", ["hands", "all"])
def test_the_seeing_search_samples_the_true_deal(monkeypatch, knows):
    sampled: list[tuple] = []

    def searched(bot, view):  # SearchBot.choose, as SeeingSearch calls it: what it would sample
        sampled.append((view, search.Knowledge(view).sample(random.Random(len(sampled)))))
        return view.legal_moves[0]

    monkeypatch.setattr(search.SearchBot, "choose", searched)
    game, rng = BoxWhist(2), random.Random(7)
    bot = boxwhist_ceiling.SeeingSearch(random.Random(1), knows=knows, playouts=10)
    for _ in range(3):
        hand = game.new_hand(0, (), cards=shuffled_deck(game, rng))
        heuristic = HeuristicBot(random.Random(2))
        while hand.turn is not None:
            view = hand.view(hand.turn)
            before = len(sampled)
            bot.choose(view)
            assert search.Knowledge is boxwhist_ceiling.Knowledge  # put back
            _, (hands, boxes, stack, my_box) = sampled[before]
            k = boxwhist_ceiling.Knowledge(view)
            assert hands == [[int(hand.cards[p]) for p in places] for places in hand.hands]
            assert [sorted(b) for b in boxes] == [sorted(int(hand.cards[p]) for p in places) for places in hand.boxes]
            assert my_box == {p: int(hand.cards[p]) for p, _ in k.box}  # its closed box too
            true_stack = [int(hand.cards[p]) for p in hand.stack]
            assert stack[:1] == true_stack[:1] and sorted(stack) == sorted(true_stack)
            if knows == "all":
                assert stack == true_stack
            # and everything the seat knows is where it knows it
            assert sorted(hands[view.seat]) == sorted(k.hand.values())
            assert all(set(k.known[j]) <= set(hands[j]) for j in range(2))
            assert all(my_box[p] == c for p, c in k.box if c is not None)
            hand.apply(heuristic.choose(view))
    assert len(sampled) > 100
