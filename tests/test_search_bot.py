"""The search bot (PIMC with the heuristic's playouts, or ISMCTS): sampled deals never contradict
the seat's view, its playout engine keeps the rules, it plays only legal moves, it reads no
hidden state, it is repeatable from a seed, what it says it weighed (``last_weighed``) is what it
played, the moves it votes on stand for every legal one, inference weighs a deal as replaying
the whole hand on it would, and soft playouts play the other seats as the model says.

No strength assertions here: strength is measured by ``scripts/duplicate.py``.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest
from helpers import PublicView, check_one_move_per_run

from p2pwhist.games import doubledummy
from p2pwhist.games.base import PLAYS, HonourPolicy
from p2pwhist.games.bots import MIN_SAMPLES, MODEL, PlayModel, RandomBot, Weighed
from p2pwhist.games.boxwhist import search as boxwhist_search
from p2pwhist.games.boxwhist.engine import TURN_UP, BoxWhist, BoxWhistHand
from p2pwhist.games.boxwhist.heuristic import HeuristicBot
from p2pwhist.games.boxwhist.inference import RULED_OUT, Replay
from p2pwhist.games.boxwhist.search import (
    ENDGAME_TRICKS,
    JOINT_DEALS,
    JOINT_TRICKS,
    PLAYOUT_COST,
    RECENT,
    SOLVE_COST,
    UCT,
    Knowledge,
    SearchBot,
    _distinct,
    _Sim,
    search_part,
)
from p2pwhist.local import shuffled_deck


def random_positions(players: int, hands: int, seed: int, every: float = 0.2):
    """Yield (hand, seat) at random moments of hands played by heuristic and random bots."""
    game = BoxWhist(players)
    rng = random.Random(seed)
    for number in range(hands):
        hand = game.new_hand(number % players, (), cards=shuffled_deck(game, rng))
        bots = [HeuristicBot(random.Random(s)) if rng.random() < 0.5 else RandomBot(random.Random(s))
                for s in range(players)]
        while (seat := hand.turn) is not None:
            if rng.random() < every:
                yield hand, seat
            hand.apply(bots[seat].choose(hand.view(seat)))


def shown_voids(hand: BoxWhistHand) -> list[set[int]]:
    """Suits each seat showed void in (in its hand), recomputed from the engine's record."""
    voids: list[set[int]] = [set() for _ in range(hand.players)]
    for plays in [t.plays for t in hand.tricks] + [hand.trick]:
        if plays:
            led = plays[0].card.suit
            for play in plays[1:]:
                if play.from_box or play.card.suit != led:
                    voids[play.seat].add(int(led))
    return voids


def check_sample(hand: BoxWhistHand, seat: int, sample) -> None:
    hands, boxes, stack, my_box = sample
    view = hand.view(seat)
    n = hand.players
    cards = hand.cards
    played = [int(t.card) for tr in hand.tricks for t in tr.plays] + [int(t.card) for t in hand.trick]
    everything = played + [c for h in hands for c in h] + [c for b in boxes for c in b] + stack
    assert sorted(everything) == sorted(int(c) for c in view.deck), "each card exactly once"
    # Counts per place.
    assert [len(h) for h in hands] == list(view.hand_sizes)
    assert [len(b) for b in boxes] == list(view.box_sizes)
    assert len(stack) == view.stack_size
    # Every card the seat knows is where it knows it.
    assert sorted(hands[seat]) == sorted(int(c) for c in view.hand.values())
    assert sorted(my_box) == sorted(p for _, p, _ in view.box)
    assert sorted(boxes[seat]) == sorted(my_box.values())
    for _, p, c in view.box:
        if c is not None:
            assert my_box[p] == c
    if stack:
        assert stack[0] == view.exposed
    voids = shown_voids(hand)
    for other in range(n):
        if other == seat:
            continue
        known = [int(c) for c in view.known_hand_cards(other)]
        assert set(known) <= set(hands[other])
        unknown = set(hands[other]) - set(known)
        assert not any(c // 13 in voids[other] for c in unknown), "a sampled hand holds a suit shown void"
    # The true deal passes the same void check (so the check is about real knowledge).
    for other in range(n):
        hidden = [int(cards[p]) for p in hand.hands[other] if p not in hand.public]
        assert not any(c // 13 in voids[other] for c in hidden)


@pytest.mark.parametrize("players,hands", [(2, 40), (3, 25), (4, 25)])
def test_no_sampled_deal_contradicts_the_view(players, hands):
    rng = random.Random(7)
    positions = 0
    for hand, seat in random_positions(players, hands, seed=players):
        knowledge = Knowledge(PublicView(hand.view(seat)))
        for _ in range(5):
            check_sample(hand, seat, knowledge.sample(rng))
        positions += 1
    assert positions > hands * 5


def test_samples_also_judge_positions_off_turn():
    """Knowledge works for a seat that is not to act (e.g. a hint while waiting)."""
    rng = random.Random(3)
    for hand, seat in random_positions(2, 10, seed=11):
        other = 1 - seat
        knowledge = Knowledge(PublicView(hand.view(other)))
        check_sample(hand, other, knowledge.sample(rng))


@pytest.mark.parametrize("players", [2, 3, 4])
def test_playout_engine_keeps_the_rules(players):
    """``_Sim`` against ``BoxWhistHand``: the same legal cards and tricks, move by move."""
    game = BoxWhist(players)
    rng = random.Random(50 + players)
    for number in range(30):
        deck = shuffled_deck(game, rng)
        hand = game.new_hand(number % players, (), cards=deck)
        code = {p: int(c) for p, c in enumerate(deck)}
        sim = _Sim(players, int(hand.trump), [[code[p] for p in h] for h in hand.hands],
                   [[code[p] for p in b] for b in hand.boxes], list(hand.may_look),
                   [code[p] for p in hand.stack], [], hand.turn, [0] * players)
        while hand.turn is not None:
            assert sim.turn == hand.turn
            legal = sorted(code[m.position] for m in hand.legal_moves())
            assert sorted(sim.legal()[0]) == legal
            move = rng.choice(hand.legal_moves())
            hand.apply(move)
            sim.apply(code[move.position])
            assert sim.won == hand.tricks_won
        assert sim.turn is None


def peer_hand(game: BoxWhist, true: BoxWhistHand, seat: int, moves: list[int]) -> BoxWhistHand:
    """The hand as a peer in ``seat`` holds it: None at every position it may not see,
    each card learnt only when revealed to it (as the deck protocol would)."""
    peer = BoxWhistHand(game, true.dealer, true.trump_rule, None, HonourPolicy.RECORD)

    def reveal() -> None:
        for p in peer.visible_to(seat):
            if peer.cards[p] is None:
                peer.learn(p, true.cards[p])

    reveal()
    for position in moves:
        if peer.cards[position] is None:
            peer.learn(position, true.cards[position])  # a card is revealed as it is played
        peer.apply(PLAYS[position])
        reveal()
    return peer


@pytest.mark.parametrize("players", [2, 3])
def test_bot_reads_no_hidden_state_and_plays_legal_moves(players):
    """On a peer's state (hidden positions None) through a public snapshot, the bot returns a
    legal move, the same one as on the full state with the same seed."""
    game = BoxWhist(players)
    rng = random.Random(90 + players)
    checked = 0
    for number in range(6 if players == 2 else 3):
        hand = game.new_hand(number % players, (), cards=shuffled_deck(game, rng))
        moves: list[int] = []
        while (seat := hand.turn) is not None:
            view = hand.view(seat)
            seed = rng.randrange(1 << 30)
            move = SearchBot(random.Random(seed), playouts=24).choose(view)
            assert view.refusal(move) is None
            if rng.random() < 0.3:
                peer = peer_hand(game, hand, seat, moves)
                assert any(c is None for c in peer.cards) or not peer.stack
                hidden_move = SearchBot(random.Random(seed), playouts=24).choose(PublicView(peer.view(seat)))
                assert hidden_move == move
                checked += 1
            moves.append(move.position)
            hand.apply(move)
    assert checked > 5


@pytest.mark.parametrize("pimc", [True, False])
def test_deterministic_for_a_seed(pimc):
    game = BoxWhist(2)
    deck = shuffled_deck(game, random.Random(5))

    def play(seed: int) -> list:
        hand = game.new_hand(0, (), cards=deck)
        bots = [SearchBot(random.Random(seed), playouts=30, pimc=pimc),
                SearchBot(random.Random(seed + 1), playouts=30, pimc=pimc)]
        record = []
        while (seat := hand.turn) is not None:
            move = bots[seat].choose(hand.view(seat))
            record.append((move.position, bots[seat].last_weighed))
            hand.apply(move)
        return record

    assert play(1) == play(1)
    assert play(1) != play(2)  # the seed matters (else the first assertion says nothing)


def test_ismcts_weighs_every_move_and_plays_the_most_visited():
    """``last_weighed`` of ISMCTS: the root's children, most visited first, the first the move
    played; every iteration visits one of them; nothing when there was no choice."""
    searched = 0
    for hand, seat in random_positions(2, 12, seed=21, every=0.5):
        view = hand.view(seat)
        bot = SearchBot(random.Random(seat), playouts=60, endgame=False, inference=False, pimc=False)
        bot.last_weighed = (Weighed(view.legal_moves[0], 0.0, 1),)  # left from an earlier decision
        move = bot.choose(view)
        weighed = bot.last_weighed
        if len(view.legal_moves) == 1 or not view.hand and not view.may_look[seat]:
            assert weighed == () and bot.last_samples == 0  # forced, or a closed box played blind
            continue
        searched += 1
        assert weighed[0].move == move
        # 60 iterations try every move
        assert sorted(w.move.position for w in weighed) == sorted(m.position for m in view.legal_moves)
        visits = [w.deals for w in weighed]
        assert visits == sorted(visits, reverse=True) and sum(visits) == bot.last_samples == 60
        # A hand won or lost, and 0.02 a trick of margin (26 tricks at 2 players)
        assert all(abs(w.mean) <= 1 + 0.02 * 26 for w in weighed)
    assert searched > 20


@pytest.mark.parametrize("pimc", [True, False])
def test_time_cap_uses_the_clock_passed_in(pimc):
    """With a clock that advances one second per read and a 0.5 s cap, one iteration is run
    (ISMCTS: one move weighed), or one deal played out with every move (PIMC)."""
    ticks = iter(range(1000))
    bot = SearchBot(random.Random(0), playouts=10_000, clock=lambda: float(next(ticks)), time_limit=0.5, pimc=pimc)
    hand = BoxWhist(2).new_hand(0, (), cards=shuffled_deck(BoxWhist(2), random.Random(1)))
    view = hand.view(hand.turn)
    assert view.refusal(bot.choose(view)) is None
    assert bot.last_samples == 1
    assert len(bot.last_weighed) == (len(_distinct(view, view.legal_moves)) if pimc else 1)


class LoggedView:
    """A view that logs each attribute read into ``log``."""

    def __init__(self, view, log: list[str]) -> None:
        self._view = view
        self._log = log

    def __getattr__(self, name: str):
        self._log.append(name)
        return getattr(self._view, name)


def test_the_cap_runs_from_the_call_before_the_view_is_read():
    """The deadline is set before the bot reads anything of the view, so digesting the view
    counts against the cap."""
    hand = BoxWhist(3).new_hand(0, (), cards=shuffled_deck(BoxWhist(3), random.Random(2)))
    log: list[str] = []

    def clock() -> float:
        log.append("clock")
        return 0.0

    view = LoggedView(PublicView(hand.view(hand.turn)), log)
    bot = SearchBot(random.Random(0), playouts=5, clock=clock, time_limit=1.0, pimc=False)
    assert hand.view(hand.turn).refusal(bot.choose(view)) is None
    # The deadline, then before each iteration but the first.
    assert log[0] == "clock" and "legal_moves" in log and log.count("clock") == 5


def test_rejects_a_bad_budget():
    with pytest.raises(ValueError, match="playouts must be a positive int"):
        SearchBot(random.Random(0), playouts=0)
    for bad in (0, 2.5, True):
        with pytest.raises(ValueError, match="pimc_playouts must be a positive int"):
            SearchBot(random.Random(0), pimc_playouts=bad)


def test_voids_no_deal_can_meet_are_dropped_not_fatal():
    """A dishonest seat can show a void it does not have (following suit is on honour): if no
    deal meets every void, the bot samples without them instead of failing mid-game."""
    for hand, seat in random_positions(2, 20, seed=5):
        knowledge = Knowledge(PublicView(hand.view(seat)))
        other = 1 - seat
        if knowledge.unknown_hand[other]:
            break
    knowledge.void[other] = [True] * 4  # "void" in every suit, yet holding unknown cards
    hands = knowledge.sample(random.Random(1))[0]
    assert [len(h) for h in hands] == list(hand.view(seat).hand_sizes)
    part = search_part(knowledge, None, 8, 2, UCT, None, None)
    assert part.samples == 8 and sum(visits for visits, _ in part.values()) == 8


def _endgame_views(tricks_left: int, seed: int):
    """2-player views to move once the stack is gone, with at most ``tricks_left`` tricks left."""
    for hand, seat in random_positions(2, 6, seed=seed, every=1.0):
        view = hand.view(seat)
        if not view.stack_size and 26 - sum(view.tricks_won) <= tricks_left and len(view.legal_moves) > 1 \
                and (view.hand or view.may_look[seat]):
            yield view


def test_the_end_is_solved_deal_by_deal_every_move_valued_on_every_deal():
    """Once the stack is gone, each sampled deal is solved: every legal move is valued on every
    deal (a level's iterations over ``SOLVE_COST`` deals, within the positions the iterations
    buy), a value a hand's outcome (-1, 0, 1)."""
    solved = 0
    for view in _endgame_views(ENDGAME_TRICKS, seed=8):
        bot = SearchBot(random.Random(1), playouts=10 * SOLVE_COST)
        move = bot.choose(view)
        assert view.refusal(move) is None and bot.last_weighed[0].move == move
        assert sorted(w.move.position for w in bot.last_weighed) == sorted(m.position for m in view.legal_moves)
        # Ten deals, fewer once the positions the budget buys are spent.
        assert 0 < bot.last_samples <= 10
        assert all(w.deals == bot.last_samples and abs(w.mean) <= 1 + 1e-9 for w in bot.last_weighed)
        solved += bot.last_samples == 10
        if solved == 8:
            break
    assert solved == 8


def test_a_deal_too_hard_to_solve_within_its_budget_is_searched_instead(monkeypatch):
    monkeypatch.setattr(boxwhist_search, "NODES_PER_ITERATION", 0)  # no position affordable
    monkeypatch.setattr(doubledummy, "_STOP_EVERY", 1)
    view = next(_endgame_views(ENDGAME_TRICKS, seed=8))
    bot = SearchBot(random.Random(1), playouts=64, pimc=False)
    assert view.refusal(bot.choose(view)) is None
    assert bot.last_samples == 64  # ISMCTS's iterations, not solved deals


@pytest.mark.parametrize("pimc", [True, False])
def test_without_the_endgame_the_end_is_searched(pimc):
    view = next(_endgame_views(ENDGAME_TRICKS, seed=8))
    bot = SearchBot(random.Random(1), playouts=640, endgame=False, pimc=pimc)
    bot.choose(view)
    distinct = len(_distinct(view, view.legal_moves))
    # PIMC: its playouts (a fifth of the iterations) over the moves that differ; ISMCTS: its iterations.
    assert bot.last_samples == (max(MIN_SAMPLES, 640 // PLAYOUT_COST // distinct) if pimc else 640)


def _joint_views():
    """Views in the last ``JOINT_TRICKS`` tricks whose seat knows its own box."""
    for view in _endgame_views(JOINT_TRICKS, seed=9):
        if all(card is not None for _, _, card in view.box):
            yield view


def test_the_last_tricks_are_searched_over_the_sampled_deals_together():
    """Near the end the sampled deals are searched together (``jointsearch``): every legal
    move valued over all ``JOINT_DEALS`` of them, not deal by deal."""
    searched = 0
    for view in _joint_views():  # a view reads its hand as it stands: use each at once
        bot = SearchBot(random.Random(1), playouts=10 * SOLVE_COST, joint=True)
        move = bot.choose(view)
        assert view.refusal(move) is None and bot.last_weighed[0].move == move
        assert sorted(w.move.position for w in bot.last_weighed) == sorted(m.position for m in view.legal_moves)
        assert bot.last_samples == JOINT_DEALS
        assert all(w.deals == JOINT_DEALS and abs(w.mean) <= 1 + 1e-9 for w in bot.last_weighed)
        searched += 1
        if searched == 6:
            break
    assert searched == 6


def test_a_joint_search_out_of_budget_leaves_the_end_to_the_solver(monkeypatch):
    def out_of_time(*args, **kwargs):
        raise doubledummy.OutOfTime

    monkeypatch.setattr(boxwhist_search, "joint_values", out_of_time)
    view = next(_joint_views())
    bot = SearchBot(random.Random(1), playouts=10 * SOLVE_COST, joint=True)
    assert view.refusal(bot.choose(view)) is None
    assert bot.last_samples == 10  # the solver's deals, deal by deal


def _equivalent(view, a, b) -> bool:
    """Two cards from the same place (hand or box) of one suit, every card between them among
    the moves from that place or played in a finished trick."""
    low, high = sorted((int(view.card(a.position)), int(view.card(b.position))))
    box = {p for _, p, _ in view.box}
    ours = {int(view.card(move.position)) for move in view.legal_moves if (move.position in box) == (a.position in box)}
    played = {int(play.card) for trick in view.tricks for play in trick.plays}
    return ((a.position in box) == (b.position in box) and low // 13 == high // 13
            and all(card in ours or card in played for card in range(low + 1, high)))


@pytest.mark.parametrize("players", [2, 4])
def test_the_vote_weighs_one_move_for_each_run_of_equivalent_cards(players):
    """At every decision of random hands: each legal move is equivalent to exactly one move
    voted on, the lowest card of its run; a card still out between two of ours, or one in the
    hand and one in the box, keeps them apart."""
    rng = random.Random(8)
    game = BoxWhist(players)
    merged = apart = 0
    for number in range(20):
        hand = game.new_hand(number % players, (), cards=shuffled_deck(game, rng))
        while (seat := hand.turn) is not None:
            view = hand.view(seat)
            if not view.hand and not view.may_look[seat]:  # a closed box, played blind: no choice
                hand.apply(rng.choice(view.legal_moves))
                continue
            more_merged, more_apart = check_one_move_per_run(view, _distinct(view, view.legal_moves), _equivalent)
            merged, apart = merged + more_merged, apart + more_apart
            hand.apply(rng.choice(view.legal_moves))
    assert merged > 100 and apart > 100  # both cases came up often


def _replayed_in_full(view, cards, asked, model):
    """The hand so far replayed on the whole deck ``cards`` with the real engine, and ``model``'s
    chance of every asked move (an independent reckoning of ``Replay``'s)."""
    hand = BoxWhistHand(view.game, view.dealer, TURN_UP if view.trump_turned else view.trump, cards,
                        HonourPolicy.RECORD)
    heuristic = HeuristicBot(random.Random(0))
    moves = [play.position for trick in view.tricks for play in trick.plays] + [p.position for p in view.trick]
    weight = 1.0
    for i, position in enumerate(moves):
        if i in asked:
            weighed = heuristic.weigh(hand.view(hand.turn))
            if len(weighed) > 1:
                made = next((j for j, (move, _) in enumerate(weighed) if move.position == position), None)
                weight *= model.chance([score for _, score in weighed], made)
        hand.apply(PLAYS[position])
    return hand, weight


@pytest.mark.parametrize("model", [MODEL, PlayModel(temperature=0.001, noise=0.001)], ids=["shipped", "sharp"])
def test_inference_weighs_a_sampled_deal_as_replaying_the_whole_hand_on_it_would(model):
    """``Replay`` replays the hand once without the unseen cards and fills in each sampled
    deal's: the hand it gives to play on is the one the whole deal replayed gives, and each
    weight is its model's chance of the asked moves (or, once below ``RULED_OUT``, at most that),
    the shipped model unless it is given another (``scripts/inference_accuracy.py`` does)."""
    rng = random.Random(31)
    weighed = ruled_out = 0
    for hand, seat in random_positions(2, 8, seed=32, every=0.3):
        view = hand.view(seat)
        replay = Replay(view, RECENT) if model is MODEL else Replay(view, RECENT, model)
        k = Knowledge(view)
        for _ in range(3):
            cards = replay.deck(*k.sample(rng), k.known)
            full, expected = _replayed_in_full(view, cards, replay.asked, model)
            mine = replay.replayed(cards)
            assert mine.cards == full.cards and mine.hands == full.hands and mine.boxes == full.boxes
            assert (mine.stack, mine.trick, mine.turn, mine.tricks_won) == (full.stack, full.trick, full.turn,
                                                                            full.tricks_won)
            weight = replay.weight(cards)
            if weight >= RULED_OUT:
                assert weight == pytest.approx(expected)
            else:
                assert expected <= weight * (1 + 1e-9)
                ruled_out += 1
            weighed += expected < 0.5
    assert weighed > 20 and ruled_out > 5  # the model told deals apart, and ruled some out


def test_a_soft_playout_plays_the_others_by_the_model_and_its_own_seat_by_the_heuristic():
    """With ``soft``, a playout's other seats play as inference models them: each move about as
    often as ``MODEL.odds`` gives it, the heuristic's best at the highest odds; the searching
    seat still plays the heuristic's best."""
    rng = random.Random(41)
    checked = 0
    for hand, seat in random_positions(3, 6, seed=42, every=0.15):
        view = hand.view(seat)
        heuristic = HeuristicBot(random.Random(0))
        weighed = heuristic.weigh(view)
        if len(weighed) < 2:
            continue
        odds = MODEL.odds([score for _, score in weighed])
        expected = {move: odd / sum(odds) for (move, _), odd in zip(weighed, odds, strict=True)}
        modelled = boxwhist_search._Modelled(heuristic, rng)
        drawn = Counter(modelled.choose(view) for _ in range(400))
        assert set(drawn) <= set(expected)
        for move, share in expected.items():
            assert drawn[move] / 400 == pytest.approx(share, abs=0.1)
        assert expected[heuristic.choose(view)] == max(expected.values())
        checked += 1

        chosen: dict[str, set[int]] = {"policy": set(), "others": set()}

        class Recording:
            def __init__(self, name: str, bot) -> None:
                self.name, self.bot = name, bot

            def choose(self, view):
                chosen[self.name].add(view.seat)
                return self.bot.choose(view)

        for move in view.legal_moves:
            boxwhist_search.heuristic_playout(hand, move, Recording("policy", heuristic), seat,
                                              Recording("others", modelled))
        assert chosen["policy"] <= {seat} and seat not in chosen["others"] and chosen["others"]
    assert checked > 10


@pytest.mark.parametrize("soft", [True, False])
def test_the_soft_switch_reaches_the_playouts(monkeypatch, soft):
    """``SearchBot(soft=True)`` plays its PIMC playouts' other seats by the model; without it,
    by the heuristic's best."""
    modelled = Counter()

    class Counted(boxwhist_search._Modelled):
        def choose(self, view):
            modelled[view.seat] += 1
            return super().choose(view)

    monkeypatch.setattr(boxwhist_search, "_Modelled", Counted)
    game = BoxWhist(3)
    hand = game.new_hand(0, (), cards=shuffled_deck(game, random.Random(6)))
    bot = SearchBot(random.Random(7), playouts=100, soft=soft)
    while (seat := hand.turn) is not None:
        view = hand.view(seat)
        hand.apply(bot.choose(view) if seat == 0 else HeuristicBot(random.Random(seat)).choose(view))
    assert (sum(modelled.values()) > 0) is soft and 0 not in modelled
