"""scripts/inference_accuracy.py: how well a model of play places the cards a seat cannot see.
The true deal places every unseen card right; a model that is the other seats' real play (the
heuristic, sharpened) places them better than uniform deals, and better than when the seats do
not play by it. A model that could not weigh (no temperature, a noise outside 0 to 1) is
refused."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))

import inference_accuracy as accuracy

from p2pwhist.games.bots import PlayModel
from p2pwhist.games.boxwhist.heuristic import HeuristicBot
from p2pwhist.games.boxwhist.search import Knowledge
from p2pwhist.games.registry import GAMES
from p2pwhist.local import shuffled_deck

SHARP = PlayModel(temperature=0.001, noise=0.001)


def test_the_true_deal_places_every_unseen_card_right_and_a_sample_fewer():
    game = GAMES["boxwhist"].make(3)
    rng = random.Random(3)
    hand = game.new_hand(0, (), shuffled_deck(game, rng))
    bots = [HeuristicBot(random.Random(j)) for j in range(3)]
    while len(hand.view(0).tricks) < 2:
        hand.apply(bots[hand.turn].choose(hand.view(hand.turn)))
    k = Knowledge(hand.view(0))
    truth = [{int(c) for c in hand.view(j).hand.values()} for j in range(3)]
    true_hands = [[*k.known[j], *(c for c in truth[j] if c not in k.known[j])] for j in range(3)]
    assert accuracy.placed_right(k, (true_hands,), truth) == 1.0
    samples = [accuracy.placed_right(k, k.sample(rng), truth) for _ in range(20)]
    assert all(0 <= share <= 1 for share in samples) and min(samples) < 1


def test_a_model_of_the_real_play_places_cards_better_than_uniform_and_than_against_other_play():
    honest = accuracy.measure(2, 3, 16, 100, [SHARP], 0.0, seed=5)
    (row,) = honest["models"]
    assert row["accuracy"] > honest["uniform"] and row["gain_ci95"][0] > 0
    assert row["ess"] < 16  # the weights kept fewer deals than were sampled
    (random_play,) = accuracy.measure(2, 3, 16, 100, [SHARP], 1.0, seed=5)["models"]
    assert random_play["gain"] < row["gain"]


@pytest.mark.parametrize("temperature, noise", [(0.0, 0.1), (-1.0, 0.1), (float("nan"), 0.1), (0.1, 1.5), (0.1, -0.1)])
def test_a_model_that_could_not_weigh_is_refused(temperature, noise):
    with pytest.raises(ValueError, match="temperature above 0"):
        PlayModel(temperature, noise)
