"""A move over several cores: the parts are the same work whichever runner runs them, so a
seeded move depends on the number of workers only; the worker processes ignore Ctrl-C."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import trio

from p2pwhist import net
from p2pwhist.cores import Cores
from p2pwhist.games.boxwhist.engine import BoxWhist
from p2pwhist.games.boxwhist.search import SearchBot
from p2pwhist.local import shuffled_deck


def _positions():
    """Views at a few moments of a 2-player hand, the stack phase and the end both."""
    game = BoxWhist(2)
    hand = game.new_hand(0, (), cards=shuffled_deck(game, random.Random(3)))
    bot = SearchBot(random.Random(4), playouts=40)
    while (seat := hand.turn) is not None:
        if len(hand.tricks) in (0, 5, 18) and len(hand.view(seat).legal_moves) > 1:
            yield hand.view(seat)
        hand.apply(bot.choose(hand.view(seat)))


def test_worker_processes_make_the_same_move_as_the_parts_in_turn():
    with Cores(2) as cores:
        for view in _positions():
            here = SearchBot(random.Random(9), playouts=64, workers=2)
            there = SearchBot(random.Random(9), playouts=64, workers=2, runner=cores.run)
            assert here.choose(view) == there.choose(view)
            assert here.last_weighed == there.last_weighed
            # Each part is the level's whole budget: two cores think twice as much.
            one = SearchBot(random.Random(9), playouts=64)
            one.choose(view)
            assert there.last_samples == 2 * one.last_samples


def test_the_workers_ignore_ctrl_c():
    """Ctrl-C reaches the whole process group: the program decides, its workers do not. (The
    program here answers Ctrl-C, even where the test run began with it ignored: conftest.)"""
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    with Cores(2) as cores:
        handlers = cores.run(signal.getsignal, [(signal.SIGINT,), (signal.SIGINT,)])
    assert handlers == [signal.SIG_IGN, signal.SIG_IGN]


PROGRAM = """
import os, sys, time
from p2pwhist.cores import Cores
cores = Cores(2)
print(*cores.run(os.readlink, [("/proc/self",), ("/proc/self",)]), flush=True)  # the workers' pids
time.sleep(60)
"""


def test_the_workers_end_with_their_program_however_it_ends():
    """A program killed outright runs no clean-up: its workers see it gone and end."""
    program = subprocess.Popen([sys.executable, "-c", PROGRAM], stdout=subprocess.PIPE, text=True)
    try:
        workers = [int(pid) for pid in program.stdout.readline().split()]
        assert len(workers) == 2 and all(_running(pid) for pid in workers)
    finally:
        program.kill()
        program.wait()
    gone = time.monotonic() + 10
    while any(_running(pid) for pid in workers) and time.monotonic() < gone:
        time.sleep(0.1)
    assert not any(_running(pid) for pid in workers)


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"  # a zombie has ended; its parent, init, reaps it


async def test_a_peer_answers_while_its_bot_thinks_on_every_core():
    """A networked peer asks its bot in a worker thread (``net.Agent``), which waits there for
    the parts: the event loop goes on meanwhile. The bot's move waits for 50 turns of the loop,
    so it is made only if the loop runs while it thinks."""
    view = next(_positions())
    loop_turns = 0
    thought = threading.Event()

    def think(view):
        thought.wait(30)  # the loop's 50 turns, if it turns at all
        return SearchBot(random.Random(1), playouts=64, workers=2, runner=cores.run).choose(view)

    async def loop_runs() -> None:
        nonlocal loop_turns
        while not thought.is_set():
            loop_turns += 1
            if loop_turns == 50:
                thought.set()
            await trio.sleep(0)

    with Cores(2) as cores:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(loop_runs)
            move = await net.Agent(think, threaded=True).choose(view)
    assert loop_turns == 50 and view.refusal(move) is None


def _killed_unless_in(program: int) -> int:
    """A part whose worker is killed while it runs it (as by a system short of memory); only the
    program itself gets to the end of it."""
    if os.getpid() != program:
        os.kill(os.getpid(), signal.SIGKILL)
    return program


def test_a_worker_killed_costs_no_move():
    """The parts of a move whose worker was killed are thought in the program; the next move
    has a fresh pool."""
    program = os.getpid()
    with Cores(2) as cores:
        assert cores.run(_killed_unless_in, [(program,), (program,)]) == [program, program]
        fresh = [int(pid) for pid in cores.run(os.readlink, [("/proc/self",), ("/proc/self",)])]
        assert program not in fresh
