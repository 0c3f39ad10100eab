"""Inference for the search bot: how likely a sampled deal is, given how the other seats played.

A deal sampled uniformly from what a seat knows (``search.Knowledge``) respects the cards seen
and the voids shown, and nothing else. But how a seat played says more: a player who ducked a
trick it could have won cheaply probably held no cheap winner. Each sampled deal is weighed
by the chance that the other seats, holding what the deal gives them, would have made the
moves they made, under a *model* of their play (policy-based inference, as Skat programs weigh
their samples: Buro, Long, Furtak and Sturtevant, "Improving State Evaluation, Inference, and
Search in Trick-Based Card Games", IJCAI 2009).

The model is the heuristic bot (``heuristic.HeuristicBot.weigh``), softened: a seat plays the
move the heuristic scores best most often, others by how close they come, and any move
sometimes, since no model is the seat's real mind (``games.bots.PlayModel``, which German
Whist's search shares):

    P(move) = (1 - noise) * softmax(score / temperature)[move] + noise / (moves)

To ask the model, the hand is replayed with the real engine (``BoxWhistHand``), once per
decision without the cards the seat cannot see, and each sampled deal's cards are filled in at
the asked moves: each seat's view at each of its past decisions is exactly what it saw then
(the moves, trick winners and draws are the same on every deal). Only its last ``recent``
decisions with a choice are asked (each costs one heuristic decision, about 0.06 ms), which
bounds the cost per deal; blind box plays say nothing.

What it knows, measured (``scripts/inference_accuracy.py --hands 40 --seed 11``, the heuristic
in every seat, 64 deals weighed at each of seat 0's decisions after the first trick): the share
of the other seats' unseen hand cards that the weighted deals put in the right hand, uniform
deals' and each model's gain on them, with 95% intervals by hand. "Sharp" is temperature and
noise 0.001: the heuristic's own play, so against the heuristic (which plays its best score
every time), asked about every choice, its weights are the true posterior, up to sampling:

    players  uniform  shipped (0.1/0.1), last 8   sharp, last 8          sharp, every choice
    2        0.443    +0.051 (0.037-0.064)        +0.115 (0.092-0.137)   +0.152 (0.121-0.183)
    3        0.300    +0.033 (0.024-0.042)        +0.089 (0.072-0.106)   +0.100 (0.085-0.115)
    4        0.258    +0.034 (0.026-0.042)        +0.088 (0.070-0.105)   +0.124 (0.107-0.141)

So even knowing exactly how the others play, a seat's play says little about which cards it
holds: at 4 players the true posterior places 0.381 of the unseen hand cards right, a sixth of
the way from uniform (0.258) to knowing them. Knowing them is worth much more: PIMC told the
other hands and the boxes (``scripts/boxwhist_ceiling.py --modes hands``, normal's budget, the
same deals as the shipped bot, no clock) took 0.667 of 111 points at 3 players against 0.486, a
difference of +0.180 (0.100 to 0.260) over 44 deals (seed 803), and 0.541 of 133 at 4 against
0.346, +0.196 (0.111 to 0.280) over 44 (seed 804). In play the sharp model gained nothing
measurable: asking every choice, 16 candidates a deal, at 4 players 0.353 against 0.346, +0.008
(-0.066 to +0.082) over those 44 deals, 0.55 s a move against 0.19; asking the last 8, 16
candidates, at 3 players 0.486 of 107 points against 0.486 of 111, -0.001 (-0.088 to +0.087),
over those 44 deals, 0.43 s a move against 0.26; at 2 players (ISMCTS, every choice asked, seed
901, 100 deal pairs) 0.621 of 174 decided hands against 0.669 of 178. Nor did more candidates
with the shipped model (16: -0.035, -0.104 to +0.034; with the last 24 choices asked: -0.017).
With the other seats playing a random move 30% of the time (4 players, every choice asked) the
sharp model's gain is -0.002 (-0.005 to +0.003), the shipped one's +0.004. The shipped model
stays. (Asked about every choice, the shipped model places fewer cards right than asked about
the last 8, +0.021 at 2 players: ``RULED_OUT`` is absolute, so over many questions every deal
falls below it and the earlier questions go unasked.)

Against a searching player the heuristic is a poor model, and no model of this kind found much
in its play (issue 25's learned model, ``scripts/play_model.py``). A conditional logit over 15
features of a move (the heuristic's score and whether it is its best, the card's rank, trump or
not, box or hand, whether it takes the trick so far, and a few of how it leads, follows and
ducks) was fitted by maximum likelihood to 26 hands of the 2-player search bot against itself
(``record --hands 52 --seed 2101``: normal's budget, no clock) and judged on the other 26
(``measure --samples 64``), 1,147 decisions:

    model                          log-likelihood   likeliest move   cards placed right, gain on uniform
    uniform                        -1.74            0.219            0.415
    shipped (heuristic, 0.1/0.1)   -1.97            0.409            0.412, -0.003 (-0.009 to +0.003)
    learned                        -1.49            0.449            0.422, +0.006 (+0.003 to +0.010)

(log-likelihood: a decision's mean on the held-out hands; likeliest move: the share of
decisions whose likeliest move by the model was the one made, a tie shared; cards placed right:
the other seat's unseen hand cards, 64 deals weighed at each of 930 decisions after the first
trick, the interval by hand). The heuristic predicts a searching player worse than no model at
all, and its inference places that player's cards no better than uniform deals. The learned
model predicts the moves much better, yet places only +0.006 more, an eighth of what the
shipped model finds in the heuristic's own play (+0.051, above). What a searching player's
moves say of its cards, under a model of this form, is too little to move the head-to-head
goals, so the learned model was not played. The shipped model stays: it is the exact model of
the heuristic.

Pure: the deal comes in, a weight goes out.
"""

from __future__ import annotations

from collections.abc import Callable

from p2pwhist.cards import Card
from p2pwhist.games.base import PLAYS, HonourPolicy, Play
from p2pwhist.games.bots import MODEL, PlayModel
from p2pwhist.games.boxwhist.engine import TURN_UP, BoxWhistHand, BoxWhistView, Layout
from p2pwhist.games.boxwhist.heuristic import HeuristicBot

__all__ = ["Replay", "Scorer"]

# A model's judgement of a seat's moves: each move it can judge with its score, higher better
# (``HeuristicBot.weigh``'s form).
Scorer = Callable[[BoxWhistView], list[tuple[Play, float]]]

# A deal whose weight falls below this (two moves the model would not have made, each about
# 0.03, when it plays what it would about 0.9 a move) is as good as ruled out: its remaining
# questions are not asked (each is one heuristic decision, most of a deal's cost).
RULED_OUT = 1e-3


class Replay:
    """The hand so far as one seat saw it (its view), ready to be replayed on sampled deals:
    ``deck`` places a sample's cards at the positions the seat cannot see, ``weight`` replays
    the hand on that deck and asks ``model`` about the other seats' last ``recent`` choices,
    the moves scored by ``scorer`` (a view's judged moves with their scores; the heuristic's
    ``weigh`` unless another model of play is measured, ``scripts/play_model.py``)."""

    def __init__(self, view, recent: int, model: PlayModel = MODEL, scorer: Scorer | None = None) -> None:
        self.seat = seat = view.seat
        self.game = game = view.game
        self.dealer = view.dealer
        self.trump = TURN_UP if view.trump_turned else view.trump
        size = len(game.deck())
        self.known: list[Card | None] = [view.card(p) for p in range(size)]
        layout = Layout.of(view.players, view.dealer, size)
        unseen = [p for p in range(size) if self.known[p] is None]
        hands = [set(h) for h in layout.hands]
        boxes = [set(b) for b in layout.boxes]
        # Where the sample's cards go, place by place (every card that enters a hand after the
        # deal is shown, rule 9: the unseen hand cards are dealt ones).
        self.hand_slots = [[p for p in unseen if p in hands[j]] for j in range(view.players)]
        self.box_slots = [[p for p in unseen if p in boxes[j]] for j in range(view.players)]
        self.stack_slots = [p for p in layout.stack if self.known[p] is None]
        self.moves = [play.position for trick in view.tricks for play in trick.plays]
        self.moves += [play.position for play in view.trick]
        # The moves the model is asked about: the other seats' last ``recent``.
        seats = [play.seat for trick in view.tricks for play in trick.plays] + [play.seat for play in view.trick]
        theirs = [i for i, s in enumerate(seats) if s != seat]
        self.asked = frozenset(theirs[-recent:]) if recent else frozenset()
        self.scorer = scorer or HeuristicBot(None).weigh  # type: ignore[arg-type]  # weigh draws no randomness
        self.model = model
        # The hand replayed once without the cards we cannot see: a copy at each asked move
        # (the model's question there) and one now (a sample's playouts start from it). A
        # sampled deal then only fills in those cards (``_fill``): the moves, the trick winners
        # and the draws are the same on every deal.
        self.unseen = unseen
        hand = BoxWhistHand(game, self.dealer, self.trump, self.known, HonourPolicy.RECORD)
        self.questions: list[tuple[BoxWhistHand, int]] = []
        for i, position in enumerate(self.moves):
            if i in self.asked:
                self.questions.append((hand.clone(), position))
            hand.apply(PLAYS[position])
        self.now = hand

    def deck(self, hands: list[list[int]], boxes: list[list[int]], stack: list[int], my_box: dict[int, int],
             known_in_hand: list[list[int]]) -> list[Card | None]:
        """The full deck of a sample (``search.Knowledge.sample``'s hands, boxes, stack and our
        box by position; ``known_in_hand``, the cards each seat is known to hold, which lead
        each sampled hand)."""
        cards = list(self.known)
        for j, slots in enumerate(self.hand_slots):
            if j != self.seat:
                for p, c in zip(slots, hands[j][len(known_in_hand[j]):], strict=True):
                    cards[p] = Card(c)
        for j, slots in enumerate(self.box_slots):
            if j == self.seat:
                for p in slots:
                    cards[p] = Card(my_box[p])
            else:
                for p, c in zip(slots, boxes[j], strict=True):
                    cards[p] = Card(c)
        for p, c in zip(self.stack_slots, stack[1:], strict=True):
            cards[p] = Card(c)
        return cards

    def _fill(self, hand: BoxWhistHand, cards: list[Card | None]) -> BoxWhistHand:
        """``hand`` (one of ours, replayed without the unseen cards) with ``cards``'s there."""
        known = hand.cards
        for p in self.unseen:
            known[p] = cards[p]
        return hand

    def weight(self, cards: list[Card | None]) -> float:
        """How likely the other seats' asked moves are, had they held what ``cards`` gives them
        (once below ``RULED_OUT``, no more is asked: then at most what it returns)."""
        weight = 1.0
        for question, position in reversed(self.questions):  # the latest first
            if weight < RULED_OUT:
                break
            view = self._fill(question, cards).view(question.turn)
            if len(view.legal_moves) > 1:  # a forced move says nothing (a third of them: skip the model)
                weighed = self.scorer(view)
                if len(weighed) > 1:
                    made = next((i for i, (move, _) in enumerate(weighed) if move.position == position), None)
                    weight *= self.model.chance([score for _, score in weighed], made)
        return weight

    def replayed(self, cards: list[Card | None]) -> BoxWhistHand:
        """The hand so far on ``cards``, to play on: a copy of our own."""
        return self._fill(self.now.clone(), cards)
