"""scripts/play_model.py: a model of play learned from recorded hands. The fit finds the
weights that made synthetic choices; a recorded hand replays as it was played; the features
say which move the heuristic scores best, so a hand the heuristic played is the one its best
moves make; a model in the learned form plugs into inference as the heuristic does."""

from __future__ import annotations

import math
import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))

import play_model

from p2pwhist.games.bots import MODEL
from p2pwhist.games.boxwhist.heuristic import HeuristicBot
from p2pwhist.games.boxwhist.inference import Replay
from p2pwhist.games.boxwhist.search import RECENT, Knowledge


def test_the_fit_finds_the_weights_that_made_the_choices():
    rng = random.Random(7)
    n = len(play_model.FEATURES)
    true = [rng.uniform(-2, 2) for _ in range(n)]
    data = []
    for _ in range(800):
        moves = [[rng.random() for _ in range(n)] for _ in range(rng.randint(2, 6))]
        odds = [math.exp(sum(w * x for w, x in zip(true, f))) for f in moves]
        data.append((moves, rng.choices(range(len(moves)), odds)[0]))
    fitted = play_model.fit(data)
    assert max(abs(a - b) for a, b in zip(fitted, true)) < 0.8
    assert play_model.log_likelihood(fitted, data) > play_model.log_likelihood(true, data)  # the maximum
    assert play_model.log_likelihood(fitted, data) > play_model.log_likelihood([0.0] * n, data) + 100


def test_solve_solves():
    a = [[4.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 2.0]]
    x = play_model.solve(a, [1.0, 2.0, 3.0])
    assert [sum(r * v for r, v in zip(row, x)) for row in a] == pytest.approx([1.0, 2.0, 3.0])


def test_a_recorded_hand_replays_as_played_and_the_heuristic_made_its_best_moves():
    line = play_model.record_hand((1, 11), maker=HeuristicBot)
    replayed = []
    for hand, turn, position in play_model.replayed(line):
        assert play_model.PLAYS[position] in hand.view(turn).legal_moves
        replayed.append(position)
    assert replayed == line["moves"] and hand.turn is None  # the last move ended the hand
    data = play_model.decisions([line])
    assert len(data) > 20
    assert all(moves[made][play_model.FEATURES.index("heuristic's best")] == 1.0 for moves, made in data)


def test_the_shipped_model_learned_form_weighs_deals_as_inference_does():
    """Inference asks the scorer it is given: the heuristic's score over the shipped
    temperature, as a learned model's one weight, weighs every deal as the shipped model does."""
    line = play_model.record_hand((0, 3), maker=HeuristicBot)
    shipped = play_model.Learned(play_model.shipped_weights(), MODEL.noise)
    rng = random.Random(5)
    told_apart = 0
    for hand, turn, _ in play_model.replayed(line):
        view = hand.view(turn)
        k = Knowledge(view)
        if not view.tricks or not any(k.unknown_hand):
            continue
        heuristic, learned = Replay(view, RECENT), Replay(view, RECENT, shipped.model, shipped.scores)
        weights = []
        for _ in range(8):
            deal = k.sample(rng)
            weights.append(heuristic.weight(heuristic.deck(*deal, k.known)))
            assert learned.weight(learned.deck(*deal, k.known)) == pytest.approx(weights[-1])
        told_apart += len(set(weights)) > 1
    assert told_apart > 5
