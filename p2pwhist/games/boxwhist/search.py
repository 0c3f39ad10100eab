"""A determinized search player for Box Whist: PIMC over sampled deals played out by the
heuristic's rules, the deals picked by inference, and at 2 players the end of the hand solved
exactly; or (``pimc=False``) single-observer ISMCTS with greedy playouts, what played before.

For each decision with a choice the bot reads what its seat knows from the public
``BoxWhistView`` API only (never ``view._state``), as ``Knowledge``, and then

- **at 2 players near the end** (the stack gone, at most ``ENDGAME_TRICKS`` tricks left) the
  unseen cards are only the split of the other seat's cards between its hand and box (and our
  own closed box): each sampled deal is solved exactly (``doubledummy.Solver``), every move
  valued by the hand's outcome under best play, the values weighed by inference, and the best
  total played (``solve_part``). A deal too hard to solve within the budget's positions or half
  the time (a few are) leaves the move to the search below;
- **otherwise, PIMC with the heuristic's playouts** (``heuristic_deal``, as German Whist's
  search plays): it samples deals consistent with the knowledge, replays the hand so far on
  each, plays every move that differs (``_distinct``: of a run of equivalent cards, in the hand
  or in the box, only the lowest) followed by the heuristic's play for every seat to the end,
  each seat reading its own view of the sampled deal, and plays the move with the best total
  score (``Searching.vote``: +1 a won hand, -1 a lost one, 0 a draw, plus a small trick-margin
  term that breaks ties). The heuristic is a fair model of a player who cannot see the other
  hands, so the playouts neither let our seat see through the deal later (the strategy fusion
  of a perfect-information playout) nor let the other seat play as if it saw ours;
- **or, with ``pimc=False``, SO-ISMCTS** (Cowling, Powley and Whitehouse, "Information Set
  Monte Carlo Tree Search", IEEE TCIAIG 4(2), 2012; ``search_part``) on one tree whose nodes are
  the moves made since the root, so that every sampled deal shares it. Each iteration samples a
  deal, descends the tree by UCB1 over the moves legal in that deal (a child counts the
  iterations its move was legal in, which stands in for the parent's visits: the other seats'
  legal moves change from deal to deal), adds one node, plays the hand out with a fast
  perfect-information greedy policy (``_policy``) and backs up to each node its mover's score.
  A closed box card played blind (rule 7) is one chance child, not a choice. It plays the
  root's most visited move.

Either way ``last_weighed`` holds the moves weighed (mean score, deals), best first.

- **Inference** (``inference.Replay``): a deal is weighed by how likely the other seats' last
  ``RECENT`` choices are had they held what it gives them, under the heuristic bot as a model of
  their play. PIMC plays each deal picked from ``CANDIDATES`` sampled ones by weight (sampling
  importance resampling: the vote counts every deal alike); ISMCTS draws its deals by weight
  from a pool of weighed ones (``_Pool``); the end's solved values are weighted means.
- **Every core**: a move runs as ``workers`` parts (``solve_part``, ``games.bots.vote_part`` or
  ``search_part``), each the level's whole budget with a seed of its own, on the runner passed
  in; their root values add up (``games.bots``).

One more was measured and is off (``joint=True`` turns it on): **less strategy fusion at the
end** (``joint_part``). Solving each deal alone lets the bot play each as if it saw every card;
in the last ``JOINT_TRICKS`` tricks (2 players, its own box known) ``jointsearch`` searches
``JOINT_DEALS`` deals together, its next ``JOINT_DEPTH`` decisions shared by all of them (vector
minimax, αμ's one-vector form). Head to head against the bot without it (normal level, no
clock, ``scripts/duplicate.py --search 'search(joint=on)' --opponents search --seed 401``) it
won 0.464 of 267 decided hands (0.406-0.524) over 150 deal pairs, pairs won/lost 28/36: no
better. (It took 0.59 s a move on average, with no clock and the machine loaded by other runs;
the bot without it was not timed in that run.)

What a sample respects (the seat's knowledge, derived from the view):

- its own hand, and its own box once open (rule 7); its closed box stays random;
- every card played (finished tricks and the trick in progress) and the exposed stack card
  (the top of the stack, face up), which are nowhere else;
- every card known to be in another seat's hand (``known_hand_cards``: shown stack draws and
  the turned-up trump, rule 9 and rule 4);
- the number of cards in every place: each hand, each box, the face-down stack;
- voids: a seat that did not follow the suit led from its hand (it played another suit, or a
  box card) held no card of that suit in its hand then (an honest seat, rule 6). Every card
  that enters a hand after the deal is shown (rule 9), so the unknown cards in a hand are all
  dealt cards, in it since the deal: a void once shown holds for all of them.

ISMCTS's state is built directly (``_Sim``: plain int codes, lists), not as a ``BoxWhistHand``
per sample: its greedy playout is then a few hundred list operations, and a ``BoxWhistHand``
would cost more to replay than the playout itself. ``tests/test_search_bot.py`` checks ``_Sim``
against ``BoxWhistHand`` move by move (legal moves, tricks won). PIMC's heuristic reads views, so
it plays on ``BoxWhistHand`` clones: the hand so far is replayed once per decision without the
unseen cards (``inference.Replay``), and each sampled deal only fills them in.

Pure: randomness comes in as the ``random.Random`` passed in, time (optional) as a clock
function and a limit. The budget is a number of ISMCTS iterations (PIMC plays a
``PLAYOUT_COST``-th as many playouts, each costing about that many iterations' time), so with
no clock, or when the cap does not bind, a run is repeatable from its seed. The cap runs from
the call of ``choose`` (so digesting the view counts); ISMCTS reads the clock before every
iteration but the first, PIMC before every playout once its first deal is played out with
every move, and at the deadline the search stops: it overruns by at most one iteration or
playout (a few milliseconds from the start of a 2-player hand) and PIMC's first deal, plus the
machine's own stalls, which no bot can bound.

The technique, by measurement (``scripts/compare_search.py``, where the PIMC it replaced is the
baseline: per move, every legal move played out on each sampled deal, then a vote, as GIB does
for bridge: Ginsberg, "GIB: Imperfect Information in a Computationally Challenging Game",
JAIR 14, 2001). Head to head, 2 players, 0.1 s a move each, ISMCTS won
0.581 of 93 decided hands (0.479-0.676) over 50 deal pairs (seed 3) and 0.607 of 107
(0.513-0.695) over 60 (seed 4); together 119 of 200, 0.595 (0.526-0.661), pairs won/lost
31/7. Against the heuristic (``scripts/duplicate.py``, normal level, ISMCTS with seed 1, the
default; 95% intervals, by deal at 3 and 4 players; fair shares 1/3 and 1/4):

                         PIMC (500 playouts, 0.9 s)          ISMCTS (1,000 iterations, 0.9 s)
    2 players            0.649 (0.614-0.683), 400 pairs      0.607 (0.570-0.642), 400 pairs
    3 players            0.409 (0.364-0.455), 108 deals      0.407 (0.372-0.442), 141 deals
    4 players            0.296 (0.265-0.328), 141 deals      0.314 (0.277-0.350), 150 deals
    2 players, vs random 0.902 (0.802-0.954), 31 pairs       0.959 (0.899-0.984), 50 pairs

ISMCTS is the stronger of the two head to head, at equal time (above) and at the normal
levels (``compare_search.py --shipped --pairs 80 --seed 7``: 1,000 iterations against PIMC's
500 playouts, both capped at 0.9 s: 0.583 of 144 decided hands (0.502-0.661), pairs won/lost
23/8), which is why it plays here; against the
heuristic it is no better than PIMC: at 2 players it scored less over 400 deal pairs (pairs
won/lost 144/48 against PIMC's 154/30, the intervals overlapping), at 3 and 4 players
and against random a little more, within the intervals. PIMC plays a best reply to each
sampled deal, which exploits the heuristic's fixed play; ISMCTS hedges across deals. Both
meet issue 12's goals there. The ISMCTS runs shared the machine with other work (load average 2 to
5 on its 2 cores): 0.26 s a move on average at 2 players, 0.33 at 3, 0.21 at 4; at most 0.97,
1.33 (once, a stall of the machine) and 0.91 s.

The levels (``SearchBot.budgets``) were, until the last of issue 25's changes (below, after the
hard level at 2 players), one budget for both searches: iterations under the caps the levels
had (0.25, 0.9 and 2.7 s a move), PIMC playing a fifth as many playouts. An iteration costs
most at the start of a hand, where its playout runs the whole hand (about 2,300 a second on an
idle core at 2 players, as few as 1,100 in some positions), and little near the end (tens of
thousands a second). The counts were chosen with ``scripts/time_cap.py`` (2 players against
the heuristic, 150 moves with a choice per level; seconds per move, mean / 95th percentile /
max, and the share of moves at the cap) so that on an idle machine no level meets its cap, and
the iterations, not the clock, decide (a run repeatable from its seed); with two busy-loop
processes on the 2 cores the cap binds on a few normal moves, a third of hard's:

    level   iterations  cap     idle                          2 busy processes
    easy         200    0.25 s  0.04 / 0.09 / 0.14 s, none    0.06 / 0.16 / 0.24 s, none
    normal     1,000    0.9 s   0.21 / 0.49 / 0.66 s, none    0.32 / 0.70 / 0.90 s, 1.3%
    hard       5,000    2.7 s   1.06 / 2.25 / 2.61 s, none    1.70 / 2.70 / 2.71 s, 29%

No move in either measurement went over its cap by 10%; in the duplicate runs above one did,
of 7,191 at 3 players: 1.33 s, when the machine's load average was about 5.

What issue 25's additions are worth so far (2 players, normal level, one core; deals played two
at a time by ``scripts/duplicate.py --jobs 2`` on this 2-core machine): against the heuristic
0.616 of 698 decided hands (0.579-0.651) over 400 deal pairs, pairs won/lost 149/53 (the ISMCTS
before them: 0.607, 0.570-0.642); head to head against that ISMCTS, 0.489 of 419 (0.442-0.537)
over 235 pairs, pairs won/lost 41/42. So neither the exact end nor inference with the heuristic
as the model has shown a gain yet; they cost 0.16 s a move on average instead of about 0.1,
none over the cap. They stay on as measured equal, for the work that builds on them (a better
model of play, less strategy fusion); ``endgame=False`` and ``inference=False`` turn them off.
On both cores (``workers=2``, two parts of 1,000 iterations, as ``p2pwhist play`` thinks on a
2-core machine; no clock) it took 0.631 of 363 decided hands (0.580-0.679) from the heuristic
over the first 200 of those deal pairs, pairs won/lost 76/18. The levels, head to head with no
clock: normal against easy 0.66 of 100 decided hands (0.563-0.745) over 59 pairs, pairs won/lost
25/5; hard against normal 0.61 of 23 (0.408-0.778) over the 13 pairs the machine allowed.
With inference, no clock, against the heuristic: at 3 players 0.393 of 244 decided hands (by deal
0.344-0.443) over 96 deals (seed 503); at 4 players 0.282 of 298 (0.238-0.326) over 100 (seed
504): no gain on the ISMCTS before it (the table above).

PIMC with the heuristic's playouts (issue 25, later; ``scripts/duplicate.py --time-limit 0
--jobs 2``, the normal level's budget, no clock, both searches on the same deals). Against the
heuristic at 2 players over 100 deal pairs (seed 901): ISMCTS 0.626 of 179 decided hands
(0.553-0.693), pairs won/lost 36/7, 0.27 s a move; PIMC with uniform deals 0.624 of 173; with
inference 0.652 of 178 (0.579-0.718), pairs won/lost 41/10, 0.39 s a move (with a sharper model,
temperature 0.02 and noise 0.05: 0.661, no clear gain). What better inference could give
(``scripts/boxwhist_ceiling.py``, 60 of those pairs): the same PIMC told the other seat's hand
and both boxes (only the stack sampled), at 100 playouts a move (``--pimc-playouts 100``), won
0.778 of 108 decided hands; told every card, at 20, 0.920 of 113. But head to head against
ISMCTS at 2 players (seed 902) it won only 0.396 of 169 decided hands (0.326-0.472) over 100
deal pairs, pairs won/lost 12/34: it plays a best reply to the heuristic,
the model in its playouts and its inference, and a stronger player is not the heuristic. So at
2 players ISMCTS plays. At 3 and 4 players PIMC is far the stronger against the heuristic, over
30 deals each (seeds 503 and 504; fair shares 1/3 and 1/4, intervals by deal): at 3 players
0.461 of 76 points (0.392-0.529) against ISMCTS's 0.370 of 81 (0.300-0.441), deals above/below
the fair share 16/3 against 7/4; at 4 players 0.418 of 91 (0.318-0.517) against 0.314 of 86
(0.227-0.401), 20/4 against 15/9. Over 40 more deals each (seeds 603 and 604, PIMC alone) it
took 0.427 of 103 (0.343-0.512) at 3 players and 0.297 of 111 (0.222-0.372) at 4: over all 70,
0.441 of 179 points and 0.351 of 202 (ISMCTS, over 96 and 100 other deals: 0.393 and 0.282).
Head to head, one PIMC seat against two ISMCTS ones at 3
players, it took 0.306 of 49 points over 20 deals (0.211-0.402; fair 0.333), deals above/below
5/5: about even. So at 3 and 4 players PIMC plays (``pimc=None``). Its levels are the same
budgets, a fifth as many playouts (40, 200, 1,000), under the same caps; at 3 players
(``scripts/time_cap.py --only 'boxwhist search 3p' --moves 40``; mean / 95th percentile / max,
share at the cap) none went over its cap by 10%:

    level   playouts  cap     idle                          2 busy processes
    easy         40   0.25 s  0.05 / 0.11 / 0.12 s, none    0.14 / 0.25 / 0.25 s, 5%
    normal      200   0.9 s   0.30 / 0.58 / 0.66 s, none    0.59 / 0.91 / 0.91 s, 26%
    hard      1,000   2.7 s   1.65 / 2.70 / 2.70 s, 10%     2.27 / 2.71 / 2.71 s, 55%

(That is with the heuristic's card counting kept as bit masks, which made a PIMC move at 3
players 1.6 times as fast with the same decisions; before it, idle, normal took 0.36 / 0.62 /
0.70 s and hard met its cap on 32% of the moves.)

Over 400 deals each on new seeds (``scripts/duplicate.py --players 3 --pairs 400 --seed 703
--time-limit 0 --jobs 2 --opponents heuristic``, and ``--players 4 ... --seed 704``; the normal
level's budget, no clock, one core, the bit-mask heuristic): at 3 players 0.464 of 970 points
(0.439-0.489 by deal), deals above/below the fair share 206/52, 0.28 s a move on average, in
47 min; at 4 players 0.341 of 1,242 (0.321-0.362), 218/69, 0.23 s a move, in 39 min. Issue
25's goals are 0.45 and 0.35: 3 players meets it at the point estimate, 4 players falls just
short, the goal inside the interval either way. On both cores, as ``p2pwhist play`` thinks on a
2-core machine (``--workers 2``: two parts of normal's budget, its 0.9 s cap on, one deal at a
time), on the same 400 deals at 4 players (seed 704) it took 0.356 of 1,250 points
(0.336-0.376), deals above/below the fair share 235/57, 0.21 s a move on average and at most
0.91, none over the cap by 10%, in 71 min: the goal met at the point estimate, as at 3 players.

At 2 players today's ISMCTS, the normal level as shipped (``scripts/duplicate.py --pairs 400
--seed 911 --opponents heuristic``, its 0.9 s cap, one deal at a time), took 0.607 of 713 decided
hands (0.571-0.642) from the heuristic over 400 deal pairs, pairs won/lost 131/44, 0.12 s a move
on average and at most 0.92, none over the cap by 10%, in 42 min: where the search stood before
issue 25 (0.607 above); run again two deals at a time (``--jobs 2``), the same figures. On
both cores (``--workers 2``, as ``p2pwhist play`` thinks here), on the same pairs and cap, it
took 0.615 of 715 (0.579-0.650), pairs won/lost 144/40, 0.13 s a move on average and at most
0.93, none over the cap by 10%, in 47 min: pair by pair against one core (``scripts/paired.py``)
+0.008 (-0.026 to +0.043). Twice the search is worth little against the heuristic, as 2,500 and
4,000 iterations (below) are. On seed 901's 100 pairs (above, 0.626 with the code then) today's code
took 0.669 of 178 (0.597-0.734): a hundred pairs' luck, within both intervals. Neither more
iterations nor another exploration constant gains on it (seed 901, no clock, ``scripts/paired.py``
pair by pair against 1,000 iterations at ``UCT`` 0.7, 0.669 of 178): 2,500 iterations 0.650 of
180, -0.019 (-0.090 to +0.053), 0.30 s a move against 0.12; ``UCT`` 1.4, 0.590, -0.079 (-0.155
to -0.002); 0.35, 0.548, -0.121 (-0.196 to -0.045). Nor do the exact end and inference show
their worth yet (the first 100 of seed 911's pairs, the cap as above, pair by pair against the
shipped 0.621 of 169): without the exact end 0.636 of 173, +0.015 (-0.021 to +0.050), 0.12 s a
move on average and at most 0.22 (the exact end makes the slowest moves); without inference
0.583 of 187, -0.038 (-0.111 to +0.034), 0.10 s a move.

Nor more of the second normal may take, nor PIMC's playouts under this tree (on those 100 pairs,
the cap as above, pair by pair; head to head against the shipped normal level on seed 921's):
4,000 iterations, 0.46 s a move on average and at most 0.92, took 0.685 of 184 from the
heuristic, +0.064 (-0.002 to +0.129), but only 51 of 101 decided hands head to head over 60
pairs: no better than itself with a quarter of the search. The tree with the heuristic's playouts for
every seat, each reading its own view of the deal (a fifth of the iterations, as they cost),
took 0.531 of 177, -0.090 (-0.170 to -0.011), 0.21 s a move, and 0.407 of 177 (0.337-0.480)
head to head, pairs won/lost 10/30 (likely as its 200 iterations try the root's moves thinly,
where PIMC tries every move on every deal). Neither kept. Nor a tenth of the greedy playouts'
moves played at random, to vary what a deterministic playout values (the same 100 pairs, no
clock, each run beside the shipped search): 0.626 of 174 against 0.621 of 169, +0.005 (-0.060
to +0.070), 0.135 s a move against 0.139.

The hard level at 2 players (5,000 iterations) against the heuristic, on seed 911's first 150
pairs with no clock, both cores (``--jobs 2``): 0.690 of 271 decided hands (0.633-0.742), pairs
won/lost 66/7, 0.58 s a move, in 38 min; normal on the same pairs 0.632 of 261 (0.572-0.688),
55/14, 0.13 s: pair by pair +0.058 (+0.004 to +0.112). So hard is stronger than normal against
the heuristic, just clear of even. Head to head (``--level hard --opponent-level normal
--opponents search --time-limit 0 --jobs 2 --pairs 150 --seed 1111``) hard won 0.583 of 266
decided hands (0.523-0.640) over 150 deal pairs, pairs won/lost 39/15, 0.79 s a move with no
clock (the machine shared with other runs), in 61 min: stronger than normal head to head too.
The 60 pairs of 4,000 iterations against normal above (51 of 101) were too few to show it.
Idle, hard's 5,000 iterations take 0.69 s a move on average, median 0.79, 95th percentile
1.28, at most 2.71 (``scripts/time_cap.py --only 'boxwhist search' --moves 150 --load 0``;
normal 0.15 / 0.16 / 0.25 / 0.91): under a 1 s cap a quarter of its moves or so would stop
for the clock. So capped (``--level hard --time-limit 1.0 --jobs 2``, seed 911's first 100
pairs, against the heuristic) it took 0.667 of 183 decided hands (0.596-0.731), pairs won/lost
41/5, 0.55 s a move and at most 1.06, none over the cap by 10%, in 24 min: pair by pair
against itself with no clock -0.006 (-0.025 to +0.015), the cap costs it next to nothing;
against the shipped normal (0.621 on those pairs) +0.045 (-0.021 to +0.111). Head to head
under the cap (``--level hard --time-limit 1.0 --opponent-level normal --opponents search
--jobs 2 --pairs 100 --seed 1111``, normal under its own 0.9 s) it won 0.559 of 179
(0.485-0.629), pairs won/lost 21/12, 0.55 s a move and at most 1.03, in 30 min: against itself
with no clock on those pairs (0.589) -0.030 (-0.063 to +0.002). Normal uses a sixth of the
second issue 25 allows it; five times its search under that second is where the 2-player goals
come nearest: head to head about 0.56 to 0.58 against the 0.60 asked, against the heuristic
about 0.67 on pairs where normal takes 0.62 against the 0.70 asked.

So the levels name their ISMCTS iterations (2 players) and PIMC playouts (3 and 4 players)
apart (``pimc_playouts``), and at 2 players normal searches 5,000 iterations under its 0.9 s
cap and hard 25,000 under 2.7 s; easy's 200 iterations, and every level's PIMC playouts (40,
200, 1,000) and caps, are as they were. Idle (``scripts/time_cap.py --only 'boxwhist search'
--moves 150 --load 0``; mean / median / 95th percentile / max, and the share of moves at the
cap): easy 0.02 / 0.02 / 0.08 / 0.15 s, none; normal 0.56 / 0.72 / 0.90 / 0.91 s, 10%; hard
2.14 / 2.70 / 2.71 / 2.71 s, 72%; none over its cap by 10%. Normal now meets its cap on a tenth
of its moves even idle (the clock, not the seed alone, decides those), where the second
issue 25 allows buys the most; hard is the clock's almost wholly. Against the heuristic on
issue 25's 400 deal pairs (``scripts/duplicate.py --opponents heuristic --jobs 2 --pairs 400
--seed 911``, the normal level as it is now, its cap on), normal took 0.675 of 719 decided hands
(0.640-0.708), pairs won/lost 171/23, 0.54 s a move on average and at most 0.93, none over the
cap by 10%, in 94 min: on the same pairs the normal level before took 0.607 of 713
(0.571-0.642), pairs won/lost 131/44. The goal of 0.70 lies inside the interval, above the
point. Head to head against the normal level before (``--opponents 'search(playouts=1000)'
--jobs 2 --pairs 400 --seed 1311 --max-seconds 2640``, both under the 0.9 s cap) it won 0.573
of 267 decided hands (0.513-0.631) over the 159 pairs 44 minutes allowed, pairs won/lost 44/18,
0.52 s a move and at most 0.92; with the 100 pairs of seed 1111 above (under a 1.0 s cap),
0.567 of 446 (0.521-0.612) over 259 pairs. Over 137 more (seed 1511, ``--pairs 141
--max-seconds 2200``, 37 min) it won 0.569 of 241 (0.505-0.629), pairs won/lost 33/12, 0.50 s a
move and at most 0.92; over all 396 pairs, 0.568 of 687 (0.530-0.604), pairs won/lost 98/42:
clearly stronger than the level before, short of the goal (0.60, the interval's low end above
0.55).

Hard against this normal at 2 players (``--level hard --opponent-level normal --opponents search
--jobs 2 --pairs 400 --seed 1411 --max-seconds 6000``, each under its own cap) won 0.532 of 171
decided hands (0.458-0.605) over the 101 deal pairs 100 minutes allowed, pairs won/lost 25/15,
1.78 s a move on average and at most 2.72, none over the cap by 10%: not shown stronger. Where
hard's 5,000 iterations took 0.583 from normal's 1,000 (above), five times as many again gain
about 0.53, which a hundred pairs cannot tell from even. Likely, past normal's budget more of
this search only settles what its sampled deals and greedy playouts value; it finds no better
play. So at 2 players easy is weaker than normal (the normal before took 0.66 from it, and
this one beats that normal), but hard is not shown stronger than normal.

Nor does this ISMCTS gain from trying only one card of each run of equivalent ones at the root
(the lowest, as PIMC and the exact end do, ``_distinct``), which would spend the root's
iterations on moves that differ: head to head against itself without it (the normal level,
both under the 0.9 s cap; ``scripts/duplicate.py --search 'search(merge=on)' --opponents search
--jobs 2 --seed 2111 --max-seconds 2400`` with the switch then in place) it won 0.493 of 150
decided hands (0.415-0.573) over 87 deal pairs, pairs won/lost 18/18, 0.53 s a move and at
most 0.92, none over the cap by 10%. Not kept.

Against the PIMC baseline at the normal levels (``scripts/compare_search.py --shipped --jobs 2``:
this normal's 5,000 iterations against PIMC's 500 playouts, both under the 0.9 s cap), over
issue 25's 400 deal pairs (339 of seed 2011 in the 4,700 s ``--max-seconds`` allowed, and 61
of seed 2012, 91 min in all), normal won 0.633 of 711 decided hands (0.597-0.667), pairs
won/lost 145/29, 0.49 s a move on average and at most 0.94, none of 20,800 over the cap by 10%
(seed 2011 alone 0.630 of 602, seed 2012 0.651 of 109). The normal level before took 0.583 of
144 (0.502-0.661) over 80 pairs (above): issue 25's goal against the baseline (0.60, the
interval's low end above 0.55) is met.

At 4 players, 100 deals (seed 804, no clock, the same deals for each; differences deal by deal
with ``scripts/paired.py``) against the shipped bot's 0.381 of 312 points (0.340-0.422):

- inference is worth its time: uniform deals at equal time (``search(inference=off)``, 1,430
  iterations' budget, 0.281 s a move against 0.288) took 0.321, a difference of -0.061
  (-0.115 to -0.007);
- scoring a hand another seat wins -1/3 and every draw 0 (the seat's point less the others'
  mean) instead of -1 for every hand it neither wins nor draws: 0.360, -0.021 (-0.060 to
  +0.017), not kept; a trick margin of 0.1 instead of 0.02: 0.365, -0.016 (-0.035 to +0.003),
  not kept; a sharper inference at equal time (16 candidates, the others' last 24 choices,
  410 iterations' budget): 0.289 of 121 points over the first 40 deals against 0.341 of 123,
  stopped, not kept.

PIMC's levels at 4 players, head to head (one seat at a level, the other three at another;
seed 804, no clock): normal against easy 0.279 of 183 points (0.227-0.331) over 60 deals, deals
above/below the fair share 24/16: the budget alone made easy no clearly weaker. So easy reads
nothing into how the others played (``Budget.switches``: inference off, at every table);
normal against that easy took 0.307 of 186 (0.264-0.349), 31/10. Hard against normal took only
0.179 of 67 (0.111-0.247) over the 24 deals 44 minutes allowed, 7/11, 1.32 s a move: more
playouts do not make PIMC stronger (below). At 3 players (seed 803, the easy of now): normal
against easy 0.413 of 138 points (0.355-0.471) over 60 deals, 31/11; hard against normal 0.356
of 59 (0.254-0.458) over 24 deals, 8/7, 1.19 s a move. So at 3 and 4 players hard was not shown
stronger than normal.

Why not: at 4 players PIMC has all its playouts can give it by normal's budget. Against the
heuristic on the same 44 deals (seed 804, no clock) hard took 0.352 of 142 points (0.299-0.405),
1.07 s a move, and normal 0.346 of 136 (0.280-0.411), 0.19 s: a difference of +0.007 (-0.052
to +0.065, ``paired.py``). What limits it is the model the playouts play by, not their number.
One change of the model was measured, ``soft=True`` (``_Modelled``): the other seats in the
playouts play as inference models them (``games.bots.PlayModel.odds``: the heuristic's best most
often, the others by how close their scores come), not always the heuristic's best, so that the
bot hedges instead of playing a best reply to the heuristic. Head to head against the same
search without it at the same budget (one seat soft, the others not; no clock): at 4 players,
at normal's budget, 0.242 of 182 points (0.193-0.290) over 59 deals (seed 804), 21/21: even; at
hard's, 0.158 of 38 (0.070-0.245) over 15 deals, 3/9, 1.02 s a move: worse. At 3 players, at
hard's, 0.419 of 43 (0.345-0.492) over 19 deals (seed 803), 9/1, 1.08 s a move (the seat without
it, every seat alike, took 0.308 of 39 on the same deals, 8/8: fair is 1/3); over 14 more deals
(seed 813) 0.423 of 26, 6/3; over all 33, 0.420 of 69 (0.356-0.485), 15/4. (These were first
read as against normal: ``scripts/duplicate.py`` gave the opponents the measured bot's budget,
which its results now record.) So hard plays soft (``Budget.switches``; at 2 players hard is
ISMCTS, which it leaves as it was). Hard against normal (``duplicate.py --level hard
--opponent-level normal``, no clock): at 3 players 0.409 of 93 points (0.339-0.478) over 38
deals (seed 823), 17/5, 1.15 s a move: clear of the fair share, just; at 4 players 0.271 of 118
(0.216-0.327) over 39 deals (seed 804), 19/10, 1.04 s a move, where hard without ``soft`` took
0.179 over 24 of those deals (above): not shown stronger than normal; over 60 more deals (seed
904, the same switches) 0.294 of 184 points (0.246-0.341), 26/14, 1.17 s a move with no clock:
above the fair share in both runs, clear of it in neither; over 50 more (seed 1004) 0.295 of 156
(0.245-0.345), 27/10, 1.04 s a move, in 36 min: the same. Together, 132 of 458 points (0.288)
over 149 deals, and the hard seat above its fair share in 72 deals, below it in 34: a sign test
puts that at p = 0.0003 were hard no stronger than normal. So at 4 players hard is stronger,
by deals, if by less than a deal's interval can show on its own.
``soft`` costs no more time: hard with it at 3 players, idle (``scripts/time_cap.py --only
'boxwhist search 3p' --moves 40 --load 0``), 1.45 / 2.32 / 2.64 s a move (mean / 95th
percentile / max), none at the cap.

Nor would sharper inference solve it: knowing the other hands would be worth about +0.2 at 3
and 4 players, but even the true posterior against the heuristic places few of the unseen
cards right, and in play it gained nothing measurable (``inference``'s docstring).

Nor a better player for our own seat in the playouts, at what it costs. PIMC values a move by
the heuristic's play after it; IIMC (Furtak and Buro, "Recursive Monte Carlo Search for
Imperfect Information Games", IEEE CIG 2013) plays our seat's later decisions in each playout
by a small PIMC of their own, from what the seat would know then. Tried at 4 players one level
deep (on the 44 deals of seed 804, no clock, against the heuristic, ``scripts/paired.py``
against the shipped 0.346 at 0.19 s a move): our next decision in each playout by 8 deals of
its own, 40 playouts a decision, 0.285 (-0.061, -0.140 to +0.018), 0.66 s a move; every later
decision by 1 deal, 22 playouts a decision, 0.289 (-0.057, -0.147 to +0.033), 0.17 s; by 2, 29
playouts, 0.279 (-0.067, -0.162 to +0.028), 0.36 s. The playouts a decision decide more than
their play: the shipped search with 22 instead of 200 took 0.265 (-0.081, -0.165 to +0.003),
with 1,000 (hard's budget, not soft) 0.352; IIMC at 22 playouts took +0.024 (-0.065 to
+0.113) over the same search at 22 without it. A nested playout costs 7 to 17 plain ones, so
IIMC with enough playouts would need several times normal's time to show what it is worth: not
kept.

What knowing the cards is worth at 2 players, and so what issue 25's 2-player goals ask
(``scripts/boxwhist_ceiling.py --searcher ismcts --playouts 1000``: this search as it plays at 2
players, at normal's budget then, no clock, every deal it samples the true one but for the
face-down stack's order). Against the heuristic it took 0.772 of 268 decided hands (0.719-0.819)
over 150 deal pairs (seed 911), pairs won/lost 89/4, 0.10 s a move; head to head against the
shipped search, 0.702 of 255 (0.643-0.755) over 150 pairs (seed 902), 74/13, in 13 and 31
minutes. PIMC told the same took only 48 of 104 head to head over the first 60 of those pairs
(stopped there): its heuristic playouts, not what it knows, hold it back against a searching
player. So the goal of 0.70 against the heuristic is 56% of the way from today's 0.61 to what
seeing the other hand and both boxes gives (0.77), and 0.60 head to head half the way from even
to seeing's 0.70. The inference measured, even with the heuristic as the exact model of the seat
it plays, went 18% of the first way for PIMC (0.624 to 0.652 against seeing's 0.778, seed 901,
above): what the other seat's play tells of its cards is little (even the true posterior places
few of them right, ``inference``'s docstring).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping
from typing import ClassVar

from p2pwhist.cards import card_mask
from p2pwhist.games.base import Play
from p2pwhist.games.bots import MODEL, Budget, Searching, Weighed, count, distinct_moves
from p2pwhist.games.boxwhist.engine import BoxWhistHand, trick_strength
from p2pwhist.games.boxwhist.heuristic import HeuristicBot
from p2pwhist.games.boxwhist.inference import Replay
from p2pwhist.games.doubledummy import OutOfTime, Position, Solver
from p2pwhist.games.jointsearch import STOP_EVERY, Deal, joint_values

__all__ = ["DEFAULT_ITERATIONS", "Knowledge", "SearchBot"]

# Iterations per decision at each level (see the module docstring for how they were chosen),
# and PIMC's playouts per decision at 3 and 4 players, where a playout costs several times as
# much and more of them gained nothing measurable past normal's.
EASY_ITERATIONS = 200
DEFAULT_ITERATIONS = 5_000
HARD_ITERATIONS = 25_000
EASY_PLAYOUTS = 40
DEFAULT_PLAYOUTS = 200
HARD_PLAYOUTS = 1_000
# UCB1's exploration constant, for scores of about -1 to 1 (a hand lost or won, plus 0.02 a
# trick of margin): sqrt(2)/2, the usual choice for rewards in [0, 1], the best of three
# measured: half and twice it both lost clearly at 2 players (the module docstring).
UCT = 0.7
_BLIND = -1  # the child for a closed box card played blind (rule 7): chance, not a choice
# A won hand scores 1; each trick of margin adds this much (breaks ties between moves that
# win or lose every sample, e.g. late in a decided hand).
_MARGIN_WEIGHT = 0.02
# The playout policy's prize rule (see ``_policy``), as rank indexes (rank - 2): a plain
# exposed card below the ten is not worth a trump or a card from the queen up.
_CHEAP_PRIZE_RANK = 8
_COSTLY_RANK = 10
# The exact endgame (2 players): once the stack is gone and at most this many tricks are left,
# each sampled deal is solved (``doubledummy.Solver``) instead of searched. scripts/bench_solver.py:
# a solve takes about 20 ms on average with 11 tricks left, 70 ms with 12, 340 ms with 15.
ENDGAME_TRICKS = 11
# A solved deal costs about as much as this many ISMCTS iterations: a level's iterations over it
# are its solved deals (never fewer than MIN_SOLVES), and each iteration buys this many positions
# searched (the solver searches about 300,000 a second: 1,000 iterations, about 0.7 s).
SOLVE_COST = 32
MIN_SOLVES = 8
NODES_PER_ITERATION = 200
# The joint end (``jointsearch``, off unless asked for): from this many tricks left, JOINT_DEALS
# sampled deals are searched together, the bot's next JOINT_DEPTH decisions shared by all of
# them (at 7 tricks about 0.17 s a decision on an idle core, at 9 about 0.9 s).
JOINT_TRICKS = 7
JOINT_DEALS = 12
JOINT_DEPTH = 3
# Inference (``inference.Replay``): the other seats' last RECENT choices weigh each deal. ISMCTS
# then draws its deals from a pool of weighed ones (``_Pool``): FIRST_DEALS, then one more for
# every ITERATIONS_PER_DEAL iterations (a weighed deal costs about a millisecond, an iteration a
# twentieth of one).
RECENT = 8
FIRST_DEALS = 8
ITERATIONS_PER_DEAL = 8
# PIMC with the heuristic's playouts (``heuristic_deal``): a budget with no playouts of PIMC's own
# (``pimc_playouts``; the levels name theirs) buys PLAYOUT_COST times fewer playouts than ISMCTS
# iterations. It was set so that PIMC's levels kept within the caps when the levels' budgets were
# one figure for both searches, not to match the costs: a PIMC move at 3 players
# takes about 2.3 times as long as ISMCTS's at the same budget (a playout from the first trick
# of a 2-player hand 3.1 ms, against 0.43 for an iteration). With inference each deal played is
# the pick of CANDIDATES sampled ones (each weighed costs about a fifth of a playout's time).
PLAYOUT_COST = 5
CANDIDATES = 4
# Rejection tries before the constrained deal (3 and 4 players only; 2 players deal exactly).
_REJECTION_TRIES = 20


class Knowledge:
    """What one seat knows of the hand, digested from its view; samples deals from it."""

    def __init__(self, view) -> None:
        self.seat = seat = view.seat
        self.players = n = view.players
        trump = view.trump
        self.trump = -1 if trump is None else int(trump)
        self.turn = view.turn
        self.hand = {p: int(c) for p, c in view.hand.items()}
        self.box = [(p, None if c is None else int(c)) for _, p, c in view.box]
        self.may_look = list(view.may_look)
        self.tricks_won = list(view.tricks_won)
        self.hand_sizes = list(view.hand_sizes)
        self.box_sizes = list(view.box_sizes)
        self.stack_size = view.stack_size
        exposed = view.exposed
        self.exposed = None if exposed is None else int(exposed)
        self.trick = [(play.seat, int(play.card), play.from_box) for play in view.trick]
        void = self.void = [[False] * 4 for _ in range(n)]
        played: set[int] = set()
        for plays in [t.plays for t in view.tricks] + [view.trick]:
            if not plays:
                continue
            led = int(plays[0].card) // 13
            for play in plays:
                played.add(int(play.card))
                if play.from_box or int(play.card) // 13 != led:
                    void[play.seat][led] = True
        self.known = [[] if j == seat else [int(c) for c in view.known_hand_cards(j)] for j in range(n)]
        seen = set(played) | set(self.hand.values()) | {c for _, c in self.box if c is not None}
        for cards in self.known:
            seen.update(cards)
        if self.exposed is not None:
            seen.add(self.exposed)
        self.unknown = sorted({int(c) for c in view.deck} - seen)
        # How many unknown cards each place holds.
        self.unknown_hand = [0 if j == seat else self.hand_sizes[j] - len(self.known[j]) for j in range(n)]
        self.unknown_box = [self.box_sizes[j] if j != seat else sum(c is None for _, c in self.box) for j in range(n)]
        self.face_down = max(0, self.stack_size - 1)
        self.tricks_left = -(-(sum(self.hand_sizes) + sum(self.box_sizes)) // n)  # the trick in progress too
        if sum(self.unknown_hand) + sum(self.unknown_box) + self.face_down != len(self.unknown):
            raise ValueError("the view's card counts do not add up")  # a view inconsistent with itself

    def sample(self, rng: random.Random) -> tuple[list[list[int]], list[list[int]], list[int], dict[int, int]]:
        """One deal consistent with this knowledge: (hands, boxes, stack top first, my box
        position → card). Uniform over consistent deals at 2 players; at 3 and 4 by rejection,
        then (rarely) by dealing the most constrained hand first."""
        n, seat = self.players, self.seat
        constrained = [j for j in range(n) if j != seat and self.unknown_hand[j] and any(self.void[j])]
        pool = list(self.unknown)
        hidden_hands: list[list[int]] = [[] for _ in range(n)]
        if len(constrained) <= 1:
            # Deal the (at most one) constrained hand from the cards it may hold, uniformly;
            # the rest are exchangeable.
            for j in constrained:
                void = self.void[j]
                allowed = [c for c in pool if not void[c // 13]]
                if len(allowed) < self.unknown_hand[j]:
                    allowed = pool  # no deal meets this void (a dishonest revoke): sample without it
                chosen = rng.sample(allowed, self.unknown_hand[j])
                hidden_hands[j] = chosen
                taken = set(chosen)
                pool = [c for c in pool if c not in taken]
            rng.shuffle(pool)
        else:
            pool, hidden_hands = self._deal_constrained(rng, constrained)
        it = iter(pool)
        hands: list[list[int]] = [[] for _ in range(n)]
        boxes: list[list[int]] = [[] for _ in range(n)]
        for j in range(n):
            if j == seat:
                hands[j] = list(self.hand.values())
                continue
            hands[j] = self.known[j] + hidden_hands[j]
            if j not in constrained:
                hands[j] += [next(it) for _ in range(self.unknown_hand[j])]
            boxes[j] = [next(it) for _ in range(self.box_sizes[j])]
        my_box: dict[int, int] = {}
        for p, c in self.box:
            my_box[p] = c if c is not None else next(it)
        boxes[seat] = list(my_box.values())
        stack = [] if self.exposed is None else [self.exposed] + [next(it) for _ in range(self.face_down)]
        return hands, boxes, stack, my_box

    def _deal_constrained(self, rng: random.Random, constrained: list[int]) -> tuple[list[int], list[list[int]]]:
        n = self.players
        for _ in range(_REJECTION_TRIES):
            pool = list(self.unknown)
            rng.shuffle(pool)
            hidden: list[list[int]] = [[] for _ in range(n)]
            ok = True
            i = 0
            for j in constrained:
                hidden[j] = pool[i:i + self.unknown_hand[j]]
                i += self.unknown_hand[j]
                if any(self.void[j][c // 13] for c in hidden[j]):
                    ok = False
                    break
            if ok:
                return pool[i:], hidden
        # Most constrained first (fewest cards allowed), retrying on a dead end.
        for _ in range(200):
            pool = list(self.unknown)
            rng.shuffle(pool)
            hidden = [[] for _ in range(n)]
            order = sorted(constrained,
                           key=lambda j: sum(1 for c in pool if not self.void[j][c // 13]) - self.unknown_hand[j])
            ok = True
            for j in order:
                allowed = [c for c in pool if not self.void[j][c // 13]]
                if len(allowed) < self.unknown_hand[j]:
                    ok = False
                    break
                chosen = allowed[:self.unknown_hand[j]]
                hidden[j] = chosen
                taken = set(chosen)
                pool = [c for c in pool if c not in taken]
            if ok:
                return pool, hidden
        # No deal meets the voids: some seat did not follow suit while holding the suit (on
        # honour, so a dishonest peer can; the audit finds it). Sample without them.
        pool = list(self.unknown)
        rng.shuffle(pool)
        hidden = [[] for _ in range(n)]
        for j in constrained:
            hidden[j], pool = pool[:self.unknown_hand[j]], pool[self.unknown_hand[j]:]
        return pool, hidden


# Rule 8 as tables (the playouts' inner loop): a card's strength in a trick,
# ``_STRENGTH[trump + 1][suit led][card]`` (``engine.trick_strength``), and what it costs to
# spend, ``_COST[trump + 1][card]``: its rank, plus 20 for a trump.
_STRENGTH = tuple(tuple(tuple(trick_strength(card, led, trump) for card in range(52)) for led in range(4))
                  for trump in range(-1, 4))
_COST = tuple(tuple(card % 13 + (20 if card // 13 == trump else 0) for card in range(52)) for trump in range(-1, 4))


class _Sim:
    """A Box Whist hand in plain ints with every card known: rules 6-10, as ``BoxWhistHand``."""

    __slots__ = ("boxes", "hands", "may_look", "n", "stack", "trick", "trump", "turn", "won")

    def __init__(self, n, trump, hands, boxes, may_look, stack, trick, turn, won) -> None:
        self.n = n
        self.trump = trump
        self.hands = hands
        self.boxes = boxes
        self.may_look = may_look
        self.stack = stack
        self.trick = trick  # [(seat, card, from_box)]
        self.turn = turn
        self.won = won

    def legal(self) -> tuple[list[int], bool]:
        """(cards the seat to act may play, are they all from the box?)"""
        seat = self.turn
        hand = self.hands[seat]
        if not hand:
            return self.boxes[seat], True
        if not self.trick:
            return hand, False
        led = self.trick[0][1] // 13
        following = [c for c in hand if c // 13 == led]
        if following:
            return following, False
        if self.may_look[seat]:
            return hand + self.boxes[seat], False
        return hand, False

    def apply(self, card: int) -> None:
        seat = self.turn
        hand = self.hands[seat]
        if card in hand:
            hand.remove(card)
            from_box = False
        else:
            self.boxes[seat].remove(card)
            from_box = True
        trick = self.trick
        trick.append((seat, card, from_box))
        n = self.n
        if len(trick) < n:
            self.turn = (seat + 1) % n
            return
        strength = _STRENGTH[self.trump + 1][trick[0][1] // 13]
        winner, top = trick[0][0], strength[trick[0][1]]
        for other, other_card, _ in trick:
            if strength[other_card] > top:
                winner, top = other, strength[other_card]
        self.won[winner] += 1
        self.may_look[winner] = True
        stack = self.stack
        if stack:
            for i in range(n):
                self.hands[(winner + i) % n].append(stack.pop(0))
        self.trick = []
        if any(self.hands) or any(self.boxes):
            self.turn = winner
        else:
            self.turn = None


def _policy(sim: _Sim, rng: random.Random) -> int:
    """A cheap perfect-information greedy move: win the trick with the cheapest card that
    no later seat can beat (unless the prize is small and the card dear), else throw the
    cheapest card; lead a sure winner, else the cheapest card. Cheap means low rank, plain
    suit before trump."""
    moves, blind = sim.legal()
    if len(moves) == 1:
        return moves[0]
    seat = sim.turn
    if blind and not sim.may_look[seat]:
        return rng.choice(moves)  # a closed box is played blind (rule 7)
    trump = sim.trump
    trick = sim.trick
    n = sim.n
    later = [(seat + i) % n for i in range(1, n - len(trick))]
    strengths = _STRENGTH[trump + 1]
    if trick:
        led = trick[0][1] // 13
        # To win, a card must beat the trick so far and anything a later seat can play.
        strength = strengths[led]
        bar = -1
        for play in trick:
            if strength[play[1]] > bar:  # noqa: PLR1730
                bar = strength[play[1]]
        for other in later:
            bar = max(bar, _threat(sim, other, led, strength))
        bars = None
    else:
        bar = 0
        bars = [-2] * 4  # per suit led, computed when first needed
    cost_of = _COST[trump + 1]
    cheapest = winner = -1
    cheapest_cost = winner_cost = 1000
    for card in moves:
        cost = cost_of[card]
        if cost < cheapest_cost:
            cheapest, cheapest_cost = card, cost
        if cost >= winner_cost:
            continue
        if bars is not None:
            suit = card // 13
            strength = strengths[suit]
            bar = bars[suit]
            if bar == -2:
                bar = bars[suit] = max([_threat(sim, other, suit, strength) for other in later] or [-1])
        if strength[card] > bar:
            winner, winner_cost = card, cost
    if winner < 0:
        return cheapest
    stack = sim.stack
    if stack and winner != cheapest:
        # Rule 9: the trick's winner takes the exposed card. Not worth a trump or an honour
        # when that card is a plain one below the ten: throw the cheapest card instead.
        # (Measured, scripts/duplicate.py, 150 deal pairs at 500 playouts, same deals: 0.69 of
        # decided hands against the heuristic with this rule, 0.62 without.)
        prize = stack[0]
        if prize // 13 != trump and prize % 13 < _CHEAP_PRIZE_RANK and (
                winner // 13 == trump or winner % 13 >= _COSTLY_RANK):
            return cheapest
    return winner


def _threat(sim: _Sim, seat: int, led: int, strength: tuple[int, ...]) -> int:
    """The strongest card ``seat`` may play to a trick led in ``led`` (-1 if none), by
    ``strength`` (``_STRENGTH`` for the trump and that suit)."""
    hand = sim.hands[seat]
    top = -1
    if hand:
        for c in hand:  # following suit
            if c // 13 == led and strength[c] > top:  # noqa: PLR1730 (max is slower in this inner loop)
                top = strength[c]
        if top >= 0:
            return top
        cards = hand + sim.boxes[seat] if sim.may_look[seat] else hand
    else:
        cards = sim.boxes[seat]
    for c in cards:
        if strength[c] > top:  # noqa: PLR1730
            top = strength[c]
    return top


def _playout(sim: _Sim, rng: random.Random) -> None:
    while sim.turn is not None:
        sim.apply(_policy(sim, rng))


def _score(won: list[int], seat: int) -> float:
    mine = won[seat]
    rival = max(w for j, w in enumerate(won) if j != seat)
    outcome = 1.0 if mine > rival else -1.0 if mine < rival else 0.0
    return outcome + _MARGIN_WEIGHT * (mine - rival)


def _masks(places: list[list[int]]) -> tuple[int, int]:
    """The two seats' cards in ``places`` (hands or boxes, at 2 players) as card masks, as the
    exact end's solvers take them."""
    first, second = places
    return card_mask(first), card_mask(second)


class _Node:
    """A node of the ISMCTS tree: the moves made since the root lead to it. ``avail`` counts
    the iterations in which its move was legal (at least once: when it was added)."""

    __slots__ = ("avail", "children", "total", "visits")

    def __init__(self) -> None:
        self.children: dict[int, _Node] = {}  # by card played (``_BLIND``: a closed box card)
        self.visits = 0
        self.total = 0.0  # the sum of the mover's scores
        self.avail = 1


class SearchBot(Searching):
    """PIMC with the heuristic's playouts or SO-ISMCTS with greedy ones over sampled deals, and
    at 2 players the end solved exactly; see the module docstring, and
    ``p2pwhist.games.bots.Searching`` for the budget (here ``playouts`` counts ISMCTS iterations,
    one sampled deal and one playout each, and a solved deal costs ``SOLVE_COST`` of them) and for
    ``workers``. ``pimc_playouts`` are PIMC's playouts a decision (by default ``playouts`` over
    ``PLAYOUT_COST``): at 2 players an iteration costs so little that the second a move allows
    buys far more of them than PIMC's playouts at 3 and 4, so each level names both. ``pimc``
    chooses the search: True PIMC, False ISMCTS, None (the default) by the table, PIMC at 3 and
    4 players and ISMCTS at 2, as measured. ``uct`` is UCB1's exploration constant; ``endgame``
    False leaves the end to the search too, ``inference`` False samples deals uniformly (both for
    comparison); ``soft`` True plays the other seats in PIMC's playouts as inference models them
    (see the module docstring)."""

    budgets: ClassVar[Mapping[str, Budget]] = {  # scripts/time_cap.py and scripts/duplicate.py measure them
        "easy": Budget(EASY_ITERATIONS, 0.25, counts=(("pimc_playouts", EASY_PLAYOUTS),),
                       switches=(("inference", False),)),
        "normal": Budget(DEFAULT_ITERATIONS, 0.9, counts=(("pimc_playouts", DEFAULT_PLAYOUTS),)),
        "hard": Budget(HARD_ITERATIONS, 2.7, counts=(("pimc_playouts", HARD_PLAYOUTS),), switches=(("soft", True),)),
    }
    # A hand won scores about 1, one lost about -1, a draw 0 (``_score``), so a mean score m
    # stands for about (m + 1) / 2 of the deals won (a draw counted as half).
    score_range = (-1.0, 1.0)
    score_words = "wins the hand in about {share:.0%} of the deals tried"

    def __init__(self, rng: random.Random, playouts: int | None = None, clock: Callable[[], float] | None = None,
                 time_limit: float | None = None, uct: float = UCT, endgame: bool = True, inference: bool = True,
                 joint: bool = False, pimc: bool | None = None, soft: bool = False, pimc_playouts: int | None = None,
                 **parallel) -> None:
        super().__init__(rng, playouts, clock, time_limit, **parallel)
        self.pimc_playouts = (max(1, self.playouts // PLAYOUT_COST) if pimc_playouts is None
                              else count("pimc_playouts", pimc_playouts))
        self.pimc = pimc
        self.soft = soft
        self.uct = uct
        self.endgame = endgame
        self.joint = joint
        self.inference = inference

    def obvious(self, view) -> Play | None:
        """The move when there is nothing to search: the only legal one, or a closed box card
        played blind (rule 7). None when there is a choice; either way the last decision's
        figures start afresh."""
        moves = view.legal_moves
        self.last_samples = 0
        self.last_weighed = ()
        if len(moves) == 1:
            return moves[0]
        if not view.hand and not view.may_look[view.seat]:
            return self.rng.choice(moves)  # only a closed box is left: played blind (rule 7)
        return None

    def choose(self, view) -> Play:
        clock = self.clock
        # The cap runs from here, so reading the view counts against it.
        deadline = None if clock is None or self.time_limit is None else clock() + self.time_limit
        moves = view.legal_moves
        obvious = self.obvious(view)
        if obvious is not None:
            return obvious
        k = Knowledge(view)
        replay = Replay(view, RECENT) if self.inference else None
        known = {**k.hand, **{p: c for p, c in k.box if c is not None}}
        move_of = {known[move.position]: move for move in moves}
        seeds = [self.rng.getrandbits(64) for _ in range(self.workers)]
        # Of equal scores, the cheapest card (plain before trump, low before high).
        trump = k.trump
        tiebreak = {card: (card % 13 + (20 if card // 13 == trump else 0), card) for card in move_of}
        parts = []
        if (self.joint and k.players == 2 and not k.stack_size and k.tricks_left <= JOINT_TRICKS
                and all(c is not None for _, c in k.box)):
            parts = self.runner(joint_part, [(k, replay, self.playouts, seed, clock, deadline) for seed in seeds])
        if not any(part.samples for part in parts) and (
                self.endgame and k.players == 2 and not k.stack_size and k.tricks_left <= ENDGAME_TRICKS):
            parts = self.runner(solve_part, [(k, replay, list(move_of), self.playouts, seed, clock, deadline)
                                             for seed in seeds])
        pimc = self.pimc if self.pimc is not None else k.players > 2
        if not any(part.samples for part in parts) and pimc:  # no endgame, or too slow to solve
            distinct = _distinct(view, moves)
            job = (k, replay or Replay(view, 0), distinct, CANDIDATES if replay else 1, self.soft)
            chosen = self.vote(len(distinct), heuristic_deal, job, deadline, self.pimc_playouts)
            self.last_weighed = self.weighed(distinct)
            return distinct[chosen]
        if not any(part.samples for part in parts):  # no endgame, or its first deal too slow to solve
            parts = self.runner(search_part, [(k, replay, self.playouts, seed, self.uct, clock, deadline)
                                              for seed in seeds])
        tried: dict[int, tuple[int, float]] = {}  # card -> (deals it was tried on, total score)
        for part in parts:
            for card, (deals, total) in part.items():
                deals_so_far, total_so_far = tried.get(card, (0, 0.0))
                tried[card] = (deals_so_far + deals, total_so_far + total)
        # ISMCTS's deals (visits) differ by move: the most visited first. A solved deal values
        # every move: the best total first.
        ranked = sorted(tried, key=lambda card: (-tried[card][0], -tried[card][1], tiebreak[card]))
        self.last_samples = sum(part.samples for part in parts)
        self.last_weighed = tuple(Weighed(move_of[card], tried[card][1] / tried[card][0], tried[card][0])
                                  for card in ranked)
        return self.last_weighed[0].move


def _distinct(view, moves: list[Play]) -> list[Play]:
    """One move for each run of equivalent cards among ``moves`` (``bots.distinct_moves``), the
    hand's and the box's apart: a box card is played only when void or once the hand is empty."""
    box = {p for _, p, _ in view.box}
    return distinct_moves(view, moves, lambda move: move.position in box)


def heuristic_deal(k: Knowledge, replay: Replay, moves: list[Play], candidates: int, soft: bool,
                   rng: random.Random) -> Callable[[int], float]:
    """One deal sampled from ``k``, the hand so far replayed on it; returns how move i scores
    on it, played out by the heuristic for every seat (each reading its own view; with ``soft``,
    the other seats as inference models them, ``_Modelled``). With ``candidates`` over 1 (and
    moves to ask about), the deal is the pick of that many sampled ones, each as likely to be
    picked as ``replay``'s model made the other seats' asked moves on it (sampling importance
    resampling: the vote counts every deal alike)."""
    decks = []
    for _ in range(candidates if candidates > 1 and replay.asked else 1):
        hands, boxes, stack, my_box = k.sample(rng)
        decks.append(replay.deck(hands, boxes, stack, my_box, k.known))
    weights = [replay.weight(deck) for deck in decks] if len(decks) > 1 else [1.0]
    root = replay.replayed(rng.choices(decks, weights=weights if sum(weights) else None)[0])
    policy = HeuristicBot(rng)
    others = _Modelled(policy, rng) if soft else policy
    return lambda i: heuristic_playout(root, moves[i], policy, k.seat, others)


def heuristic_playout(hand: BoxWhistHand, move: Play, policy: HeuristicBot, seat: int,
                      others: HeuristicBot | _Modelled) -> float:
    """``move`` played on a copy of ``hand``, then ``policy`` for ``seat`` and ``others`` for
    every other seat to the end, each reading its own view: ``seat``'s score."""
    playout = hand.clone()
    playout.apply(move)
    while (turn := playout.turn) is not None:
        playout.apply((policy if turn == seat else others).choose(playout.view(turn)))
    return _score(playout.tricks_won, seat)


class _Modelled:
    """Another seat in a soft playout, played as inference models it (``games.bots.MODEL``'s
    ``odds``): the heuristic's best move most often, the others by how close their scores come.
    A search whose playouts assume the heuristic's best reply every time plays a best
    reply to the heuristic; against players who are not the heuristic, this hedges."""

    def __init__(self, heuristic: HeuristicBot, rng: random.Random) -> None:
        self.heuristic = heuristic
        self.rng = rng

    def choose(self, view) -> Play:
        weighed = self.heuristic.weigh(view) if len(view.legal_moves) > 1 else []
        if not weighed:  # no choice, or a closed box played blind: the heuristic's own way
            return self.heuristic.choose(view)
        odds = MODEL.odds([score for _, score in weighed])
        return self.rng.choices([move for move, _ in weighed], weights=odds)[0]


def _weight(k: Knowledge, replay: Replay | None, deal: tuple) -> float:
    """How likely a deal sampled from ``k`` is, by ``replay`` (1 without one)."""
    if replay is None:
        return 1.0
    hands, boxes, stack, my_box = deal
    return replay.weight(replay.deck(hands, boxes, stack, my_box, k.known))


class _Pool:
    """Deals sampled from ``k`` and weighed by ``replay``, from which ISMCTS draws by weight: it
    starts with ``FIRST_DEALS`` and grows by one every ``ITERATIONS_PER_DEAL`` draws, so that it
    costs in step with the iterations, whatever the budget or the clock cuts it to."""

    def __init__(self, k: Knowledge, replay: Replay, rng: random.Random) -> None:
        self.k, self.replay, self.rng = k, replay, rng
        self.deals: list[tuple] = []
        self.cumulative: list[float] = []  # the weights' running sums: a draw is a bisection
        self.draws = 0
        for _ in range(FIRST_DEALS):
            self._add()

    def _add(self) -> None:
        deal = self.k.sample(self.rng)
        weight = _weight(self.k, self.replay, deal)
        self.deals.append(deal)
        self.cumulative.append((self.cumulative[-1] if self.cumulative else 0.0) + weight)

    def draw(self) -> tuple:
        """A deal of the pool by weight (uniformly while every weight is zero: a seat that
        played against every model of it), a fresh copy: a playout changes it."""
        self.draws += 1
        if self.draws % ITERATIONS_PER_DEAL == 0:
            self._add()
        if self.cumulative[-1]:
            deal = self.rng.choices(self.deals, cum_weights=self.cumulative)[0]
        else:
            deal = self.rng.choices(self.deals)[0]
        hands, boxes, stack, my_box = deal
        return [h[:] for h in hands], [b[:] for b in boxes], stack[:], my_box


class _Part(dict):
    """What one part of a move's search found: card -> (deals it was tried on, total score),
    and ``samples``, the deals the part sampled."""

    samples = 0


def solve_part(k: Knowledge, replay: Replay | None, cards: list[int], budget: int, seed: int,
               clock: Callable[[], float] | None, deadline: float | None) -> _Part:
    """At 2 players once the stack is gone: sampled deals, each solved exactly, every card of
    ``cards`` valued by whether it then wins, draws or loses the hand under best play
    (``doubledummy.Solver``), the deals weighed by ``replay`` (uniform without one). A part's
    totals are weighted means times its deals, so that parts add up.

    ``budget`` is in iterations (``SOLVE_COST`` a deal, ``NODES_PER_ITERATION`` a position
    searched): the part solves ``budget // SOLVE_COST`` deals (at least ``MIN_SOLVES``) within
    ``budget * NODES_PER_ITERATION`` positions, a deal cut off by the positions or the deadline
    left out. If the first deal alone takes half of either, it solves none: the caller then
    searches instead (a position too hard to solve in time, as a few are)."""
    rng = random.Random(seed)
    totals = dict.fromkeys(cards, 0.0)
    led = k.trick[0][1] if k.trick else -1
    out = _Part()
    weights = 0.0
    nodes = budget * NODES_PER_ITERATION
    used = 0
    first = None if deadline is None else clock() + (deadline - clock()) / 2  # type: ignore[misc]
    for solved in range(max(MIN_SOLVES, budget // SOLVE_COST)):
        if solved and deadline is not None and clock() >= deadline:  # type: ignore[misc]
            break
        deal = hands, boxes, _, _ = k.sample(rng)
        weight = _weight(k, replay, deal)
        position = Position(hands=_masks(hands), turn=k.turn, trump=k.trump, reserves=_masks(boxes),
                            looks=(k.may_look[0], k.may_look[1]), led=led)
        solver = Solver(k.trump, rng.randrange(52))
        limit = nodes - used if solved else nodes // 2
        end = deadline if solved else first
        solver.stop = lambda: solver.nodes > limit or (end is not None and clock() >= end)  # type: ignore[misc]
        try:
            values = solver.values(position, (k.tricks_won[0], k.tricks_won[1]))
        except OutOfTime:
            break
        used += solver.nodes
        for card in totals:
            totals[card] += weight * values[card]
        weights += weight
        out.samples += 1
    scale = out.samples / weights if weights > 0 else 0.0
    out.update((card, (out.samples, total * scale)) for card, total in totals.items())
    return out


def joint_part(k: Knowledge, replay: Replay | None, budget: int, seed: int, clock: Callable[[], float] | None,
               deadline: float | None) -> _Part:
    """At 2 players near the end, our box known: ``JOINT_DEALS`` sampled deals searched together
    (``jointsearch``), our next ``JOINT_DEPTH`` decisions shared by all of them, the deals weighed
    by ``replay``. Within ``budget * NODES_PER_ITERATION`` positions and the deadline, else it
    returns no samples (the caller solves deal by deal instead)."""
    rng = random.Random(seed)
    deals = []
    nodes = budget * NODES_PER_ITERATION
    solvers: list[Solver] = []
    joint = [0]  # the joint search's own work, in positions: a line of play costs one a deal

    def stop() -> bool:
        used = sum(s.nodes for s in solvers) + joint[0]
        return used > nodes or (deadline is not None and clock() >= deadline)  # type: ignore[misc]

    def joint_stop() -> bool:
        joint[0] += STOP_EVERY * JOINT_DEALS
        return stop()

    for _ in range(JOINT_DEALS):
        deal = hands, boxes, _, _ = k.sample(rng)
        weight = _weight(k, replay, deal)
        solver = Solver(k.trump, rng.randrange(52), stop)
        solvers.append(solver)
        deals.append(Deal(_masks(hands), _masks(boxes), weight, solver))
    out = _Part()
    if not sum(deal.weight for deal in deals):
        deals = [Deal(d.hands, d.reserves, 1.0, d.solver) for d in deals]  # no deal fits the model: uniform
    try:
        values = joint_values(deals, k.turn, k.trump, (k.may_look[0], k.may_look[1]),
                              k.trick[0][1] if k.trick else -1, (k.tricks_won[0], k.tricks_won[1]), JOINT_DEPTH,
                              joint_stop)
    except OutOfTime:
        return out
    out.samples = len(deals)
    out.update((card, (len(deals), value * len(deals))) for card, value in values.items())
    return out


def search_part(k: Knowledge, replay: Replay | None, iterations: int, seed: int, uct: float,
                clock: Callable[[], float] | None, deadline: float | None) -> _Part:
    """``iterations`` of SO-ISMCTS on a tree of its own (fewer at ``deadline``, never none):
    the root's moves by card, with their visits and total score. With ``replay``, each
    iteration's deal is drawn by weight from a pool of weighed deals (``_Pool``)."""
    rng = random.Random(seed)
    root = _Node()
    out = _Part()
    draw = (lambda: k.sample(rng)) if replay is None else _Pool(k, replay, rng).draw
    for iteration in range(iterations):
        if iteration and deadline is not None and clock() >= deadline:  # type: ignore[misc]
            break
        hands, boxes, stack, _ = draw()
        sim = _Sim(k.players, k.trump, hands, boxes, k.may_look[:], stack, k.trick[:], k.turn, k.tricks_won[:])
        node = root
        path: list[tuple[_Node, int]] = []  # (node, the seat whose move led to it)
        while sim.turn is not None:
            seat = sim.turn
            cards, blind = sim.legal()
            choices = [_BLIND] if blind and not sim.may_look[seat] else cards
            children = node.children
            untried = []
            for key in choices:
                child = children.get(key)
                if child is None:
                    untried.append(key)
                else:
                    child.avail += 1
            if untried:  # expand one node, then play out
                key = rng.choice(untried)
                child = children[key] = _Node()
            else:
                key = max(choices, key=lambda c: children[c].total / children[c].visits
                          + uct * math.sqrt(math.log(children[c].avail) / children[c].visits))
                child = children[key]
            sim.apply(rng.choice(cards) if key == _BLIND else key)
            path.append((child, seat))
            node = child
            if untried:
                break
        _playout(sim, rng)
        for child, seat in path:
            child.visits += 1
            child.total += _score(sim.won, seat)
        out.samples += 1
    out.update((card, (node.visits, node.total)) for card, node in root.children.items())
    return out
