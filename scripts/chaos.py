"""Kill-and-restart trials between real processes: does a match survive a peer's crash or a
lost connection, with every transcript identical and verifiable? And, with ``--adversary``,
does it survive a path that withholds and stalls, and a crowd that storms the host's door?

Each trial is a Box Whist match between ``python -m p2pwhist`` processes on loopback TCP, with
random bots, 2 or 3 players and 1 or 2 hands (the host alice on an explicit free port, the
joiners bob and carol, each with its own ``P2PWHIST_HOME``, ``--transcript``, ``--timeout 60``
and ``--wait 30``). The trials take their table and victim in turn: 2 players (the host, then
the joiner), then 3 players (the host, then each joiner). The fault is:

- ``kill`` (always for the host, two joiner trials in three): SIGKILL once the victim's
  transcript holds k messages, k random within the match's length (the transcript is read
  every 5 ms, so the kill lands at message k or a message or two later), then, after a random
  pause of up to a second, the very same command again, which resumes the match;
- ``cut`` (a joiner, one trial in three): the joiner reaches the host through a small TCP proxy
  run by this script; at message k the proxy closes both sockets of the connection (with a FIN
  or, half the time, a RST), the joiner process still running; it must reconnect by itself.

In one trial in four the fault waits, from message k on, for the victim to be choosing a card
(the next message due is its PLAY, as its transcript replayed into ``Session.observe`` says),
and the victim plays with the search bot, which thinks a while: random bots answer at once,
so a fault at a random message almost never finds a player choosing, which in a game between
people is where most of the time goes. k is then drawn from the match's first 60%.

A trial passes when every peer exits 0 (``finished``), the transcripts are byte-identical
(``identical``; the victim's also still begins with what it held at the fault) and ``verify``
on them exits 0 and says "valid, complete", with nobody forfeiting (``verify --json``:
``verified``). A trial still running after ``--deadline`` seconds is killed and counted as a
failure. A failed trial's folder (every transcript, secrets file and each process's stdout and
stderr, numbered in start order) is kept and its path printed; passed ones are removed unless
``--keep``.

``resume_s``: for a kill, the time from the restart (the process spawned) until the victim's
transcript first grows past what it held then, i.e. the match moving again: the median and the
maximum over the kill trials that passed. ``cut_resume_s``: for a cut, from the cut until the
victim's transcript grows after its next connection reached the proxy (the median over the cut
trials that passed). ``secrets_left``: passed trials after which a ``.secrets`` file was still
beside a transcript (reported, not failed).

Before the trials, one match of each shape without a fault gives each shape's length L in
messages, from which k is drawn (1 to L-1). A fault that comes when the victim's transcript
already holds the whole match (every FINAL: the kill landed as the process was exiting)
tests nothing; that trial is run again with a smaller k. ``--seed`` fixes the harness's
choices (table, victim, fault, k, pause), not the bots' cards and plays. ``--players``,
``--hands``, ``--victim``, ``--fault`` and ``--at`` narrow the trials to one kind, e.g. to
repeat a failure: ``--players 2 --hands 1 --victim alice --fault kill --at -1`` kills the host
when all but the match's last message are in its transcript, in every trial.

One line is printed per trial; the last line is one JSON object: {"trials", "finished",
"identical", "verified", "resume_s", "resume_s_max", "cut_resume_s", "secrets_left", "seed",
"failures"}. The exit code is 0 when every trial passed. The machine may be shared: the times
are figures, not limits.

``--adversary`` runs the adversary's trials instead (``scripts/adversary.py`` says what each
attack does). The host plays with ``--timeout 10 --wait 10``, the floors of the limits a table
agrees in START (``--timeout`` and ``--wait`` raise them), and random bots play every seat.
One joiner, the victim (bob at 2 players; bob, then carol at 3), reaches the host through a
proxy, and an adversary strikes at a random point: ``withhold`` drops one whole message the
victim sends (or its answer to DONE), ``stall`` stops its connection one way or both for a
while below the limits (then lets it flow, or resets it), ``storm`` floods the host's door from
the victim's address with silent connections, garbage, strangers and impostors bearing the
victim's public key (and, in two storms in three, resets the victim's connection meanwhile, so
that it comes back through the crowd). The kinds take turns, and after each round the table
and victim. A withhold or a stall strikes in the match's last 8 messages one time in four.

A trial passes when every process exits 0 (``finished``), the transcripts are byte-identical
(``identical``), ``verify --json`` calls each of them valid and complete (``verified``), with no
forfeit and no fork in any (``no_forfeit``: no honest seat forfeited), and every process ended
within its bound (``in_time``): when the adversary's last action ended (the frame dropped, the
stall over, the storm's last socket closed), plus the table's timeout and wait, plus twice a
whole match of that shape without a fault (timed first, at the same limits), plus 2 s
(``adversary.play_with_attack`` says why). An attack that finds nothing to strike (no message
of the victim's from message k on) is tried again at an earlier message. A failed trial's
folder also holds ``proxy.log``: every frame the victim's connections carried, each way, and
what the adversary did, timed from the host's start. ``--kind``, ``--players``, ``--hands``,
``--victim`` and ``--at`` narrow the trials as above (``--at`` is the withheld message's place,
or the victim's transcript's length at a stall or a storm). One line is printed per trial; the
last line is one JSON object: {"trials", "finished", "identical", "verified", "no_forfeit",
"in_time", "kinds": {KIND: {"trials", "passed"}}, "timeout", "wait", "seed", "failures"}.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # netutil: the process and proxy helpers the test suite uses too
# The peers are ``python -m p2pwhist`` processes: let them import this checkout wherever the script runs from.
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))

from adversary import KINDS, AttackRun, choose_attack, play_with_attack
from netutil import NAMES, Fault, FaultRun, Peers, frames_of, play_with_fault

from p2pwhist.limits import MIN_MOVE, MIN_WAIT

# (players, victim) in turn: 0 the host, 1.. the joiners in the order started.
ROTATION = ((2, 0), (2, 1), (3, 0), (3, 1), (3, 2))
SHAPES = tuple((players, hands) for players in (2, 3) for hands in (1, 2))
LATE_TRIES = 5  # a fault that came after the match's last message is tried again, at most this often
CUT_SHARE = 1 / 3  # of the joiner trials
CHOOSING_SHARE = 1 / 4  # of all trials: the fault waits for the victim to be choosing a card
CHOOSING_BEFORE = 0.6  # such a fault's k is drawn from the match's first 60%: the victim has cards left to play
MAX_PAUSE = 1.0  # seconds between a kill and the restart, at most
WAIT = 30.0
TIMEOUT = 60.0
# --adversary: the (players, victim) its trials take in turn (the victim is a joiner: the
# adversary is on its path), each with every kind of attack in turn.
ADVERSARY_ROTATION = ((2, 1), (3, 1), (3, 2))


class Calibration(Exception):
    pass


def lengths(out: Path, deadline: float, wanted: list[tuple[int, int]]) -> dict[tuple[int, int], int]:
    """Each shape's length in messages, from one match without a fault (which must pass)."""
    found = {}
    for players, hands in wanted:
        root = out / f"calibrate-{players}p-{hands}h"
        with Peers(root) as peers:
            run = play_with_fault(peers, players, hands, None, wait=WAIT, timeout=TIMEOUT, deadline=deadline)
        if run.problems():
            raise Calibration(f"a match without a fault failed, so no trial would mean anything: {run.report()}")
        found[players, hands] = len(frames_of(run.transcripts[0].read_bytes()))
        shutil.rmtree(root)
    return found


def rotation(fixed: argparse.Namespace) -> list[tuple[int, int]]:
    """The (players, victim) the trials take in turn, as narrowed by --players, --victim, --fault."""
    return [(players, victim) for players, victim in ROTATION
            if fixed.players in (None, players) and fixed.victim in (None, NAMES[victim])
            and not (fixed.fault == "cut" and victim == 0)]


def shapes(fixed: argparse.Namespace) -> list[tuple[int, int]]:
    return [(players, hands) for players, hands in SHAPES
            if any(p == players for p, _ in rotation(fixed)) and fixed.hands in (None, hands)]


def choose(number: int, rng: random.Random, length: dict[tuple[int, int], int],
           fixed: argparse.Namespace) -> tuple[int, int, Fault]:
    turns = rotation(fixed)
    players, victim = turns[number % len(turns)]
    hands = fixed.hands or rng.choice((1, 2))
    whole = length[players, hands]
    choosing = fixed.choosing or rng.random() < CHOOSING_SHARE
    last = int(whole * CHOOSING_BEFORE) if choosing else whole - 1  # a card is still to be chosen after it
    at = rng.randint(1, last) if fixed.at is None else fixed.at if fixed.at > 0 else whole + fixed.at
    cut = fixed.fault == "cut" or (fixed.fault is None and victim > 0 and rng.random() < CUT_SHARE)
    if cut:
        return players, hands, Fault(victim, "cut", at, reset=rng.random() < 0.5, choosing=choosing)
    return players, hands, Fault(victim, "kill", at, delay=round(rng.uniform(0, MAX_PAUSE), 2), choosing=choosing)


def trial_line(number: int, trials: int, hands: int, run: FaultRun, seconds: float) -> str:
    head = f"trial {number + 1}/{trials}: {run.describe()}, {hands} hand{'s' if hands > 1 else ''}"
    problems = run.problems()
    if problems:
        return f"{head}: FAILED ({seconds:.1f} s): {'; '.join(problems)}; kept {run.root}"
    assert run.fault is not None
    since = "the restart" if run.fault.kind == "kill" else f"the cut ({run.connections} connections in all)"
    moving = f"moving again {run.resume_s:.2f} s after {since}" if run.resume_s is not None else "never seen moving again"
    if run.choosing is False:
        moving += " (the kill came just after its card: not while it chose)"
    left = run.secrets_left()
    note = f"; secrets files left behind: {', '.join(p.name for p in left)}" if left else ""
    return f"{head}: ok ({seconds:.1f} s), struck at message {run.struck}, {moving}{note}"


def median(values: list[float]) -> float | None:
    return round(statistics.median(values), 3) if values else None


# -- --adversary ------------------------------------------------------------------------------


def adversary_rotation(fixed: argparse.Namespace) -> list[tuple[int, int]]:
    return [(players, victim) for players, victim in ADVERSARY_ROTATION
            if fixed.players in (None, players) and fixed.victim in (None, NAMES[victim])]


def calibrate(out: Path, deadline: float, wanted: list[tuple[int, int]], timeout: int,
              wait: int) -> dict[tuple[int, int], tuple[int, float]]:
    """Each shape's length in messages and its time in seconds (the host's start to the last
    process's end, and the verifier), from one match without a fault at the trials' limits."""
    found = {}
    for players, hands in wanted:
        root = out / f"calibrate-{players}p-{hands}h"
        began = time.monotonic()
        with Peers(root) as peers:
            run = play_with_fault(peers, players, hands, None, wait=wait, timeout=timeout, deadline=deadline)
        seconds = time.monotonic() - began
        if run.problems():
            raise Calibration(f"a match without a fault failed, so no trial would mean anything: {run.report()}")
        found[players, hands] = len(frames_of(run.transcripts[0].read_bytes())), round(seconds, 2)
        shutil.rmtree(root)
    return found


def attack_line(number: int, trials: int, hands: int, run: AttackRun, match_s: float) -> str:
    head = f"trial {number + 1}/{trials}: {run.describe()}, {hands} hand{'s' if hands > 1 else ''}"
    took = run.seconds()
    problems = run.problems()
    if problems:
        return f"{head}: FAILED ({took:.1f} s): {'; '.join(problems)}; kept {run.root}"
    what = []
    if run.withheld is not None:
        what.append(f"withheld {run.withheld}")
    if run.stalled:
        what.append(f"stalled {run.stalled} connection{'s' if run.stalled > 1 else ''}")
    if run.storm:
        made = sum(run.storm.values())
        what.append(f"stormed with {made} connections ({run.storm_failed} refused or dropped before they were "
                    "written to)")
        if run.attack.cut is not None and not run.cut:
            what.append(f"the match was over before {NAMES[run.attack.victim]}'s connection was to be reset")
    what.append(f"{NAMES[run.attack.victim]} connected {run.connections} time"
                f"{'s' if run.connections != 1 else ''} through the proxy")
    margin = f"; the last process ended {run.bound - run.began - took:.1f} s before its bound" \
        if run.bound is not None else ""
    return f"{head}: ok ({took:.1f} s, {took - match_s:+.1f} s on a match without faults{margin}): {', '.join(what)}"


def adversary(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """The --adversary trials (module docstring)."""
    turns = adversary_rotation(args)
    if not turns:
        parser.error("no trial fits --players and --victim (the adversary's victim is a joiner; carol plays only at 3)")
    if args.fault or args.choosing:
        parser.error("--fault and --choosing are the kill-and-restart trials'; --adversary takes --kind")
    kinds = [args.kind] if args.kind else list(KINDS)
    timeout = MIN_MOVE if args.timeout is None else args.timeout
    wait = MIN_WAIT if args.wait is None else args.wait
    if timeout < MIN_MOVE or wait < MIN_WAIT:
        parser.error(f"the table's limits are at least --timeout {MIN_MOVE} and --wait {MIN_WAIT}")
    seed = args.seed if args.seed is not None else random.randrange(2**32)
    rng = random.Random(seed)
    out = args.out or Path(tempfile.mkdtemp(prefix="p2pwhist-adversary-"))
    out.mkdir(parents=True, exist_ok=True)
    print(f"seed {seed}; files under {out}; the table's limits: --timeout {timeout} --wait {wait}", flush=True)
    wanted = [(players, hands) for players, hands in SHAPES
              if any(p == players for p, _ in turns) and args.hands in (None, hands)]
    counts = {"trials": args.trials, "finished": 0, "identical": 0, "verified": 0, "no_forfeit": 0, "in_time": 0}
    per_kind = {kind: {"trials": 0, "passed": 0} for kind in kinds}
    failures: list[str] = []

    def summary() -> str:
        return json.dumps({**counts, "kinds": per_kind, "timeout": timeout, "wait": wait, "seed": seed,
                           "failures": failures})

    try:
        shape = calibrate(out, args.deadline, wanted, timeout, wait)
    except Calibration as error:
        print(error)
        counts["trials"] = 0
        failures.append(str(error).splitlines()[0])
        print(summary())
        return 1
    print("without a fault: " + ", ".join(f"{p} players {h} hand{'s' if h > 1 else ''}: {n} messages in {t:.1f} s"
                                          for (p, h), (n, t) in shape.items()), flush=True)

    for number in range(args.trials):
        kind = kinds[number % len(kinds)]
        players, victim = turns[(number // len(kinds)) % len(turns)]
        hands = args.hands or rng.choice((1, 2))
        length, match_s = shape[players, hands]
        attack = choose_attack(kind, victim, length, rng, timeout, wait)
        if args.at is not None:
            attack = replace(attack, at=args.at if args.at > 0 else length + args.at)
        root = out / f"trial-{number + 1:03d}"
        for attempt in range(1, LATE_TRIES + 1):
            try:
                with Peers(root) as peers:
                    run = play_with_attack(peers, players, hands, attack, timeout=timeout, wait=wait,
                                           match_s=match_s, rng=rng, deadline=args.deadline)
            except Exception as error:  # noqa: BLE001 (a harness fault: counted, named, and the next trial runs)
                run = AttackRun(players, attack, [root / "alice.p2pw"], error=f"harness error: {error!r}")
            if not run.missed or attempt == LATE_TRIES:
                break
            print(f"trial {number + 1}/{args.trials}: {run.describe()}: {run.attack_problems()[0]}; "
                  f"again{' at an earlier message' if args.at is None else ''}", flush=True)
            shutil.rmtree(root)
            if args.at is None:
                attack = replace(attack, at=rng.randint(1, max(1, attack.at - 1)))
        ran = run.error is None and not run.hung
        invalid, forfeits = run.verdict_problems() if ran else ([], [])
        counts["finished"] += run.error is None and not run.exit_problems()
        counts["identical"] += ran and not run.unlike_transcripts()
        counts["verified"] += ran and not invalid
        counts["no_forfeit"] += ran and not forfeits
        counts["in_time"] += run.error is None and not run.hung and not run.time_problems()
        per_kind[kind]["trials"] += 1
        problems = run.problems()
        print(attack_line(number, args.trials, hands, run, match_s), flush=True)
        if problems:
            failures.append(f"trial {number + 1} ({run.describe()}, {hands}h): {problems[0]} [{run.root}]")
            continue
        per_kind[kind]["passed"] += 1
        if not args.keep:
            shutil.rmtree(root)

    if failures:
        print(f"failed trials' files are kept under {out}")
    elif args.out is None and not args.keep:
        shutil.rmtree(out)
    print(summary())
    return 0 if not failures else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, default=100, help="trials to run (default 100)")
    parser.add_argument("--seed", type=int, default=None, help="seed of the harness's choices (default: random)")
    parser.add_argument("--out", type=Path, default=None,
                        help="folder for the trials' files (default: a new temporary folder)")
    parser.add_argument("--deadline", type=float, default=90.0,
                        help="seconds after which a trial still running is killed and failed (default 90)")
    parser.add_argument("--keep", action="store_true", help="keep the folders of trials that passed too")
    narrow = parser.add_argument_group("to repeat one kind of trial (each fixes that choice; the others stay random)")
    narrow.add_argument("--players", type=int, choices=(2, 3))
    narrow.add_argument("--hands", type=int, choices=(1, 2))
    narrow.add_argument("--victim", choices=NAMES[:3], help="alice is the host; bob and carol join")
    narrow.add_argument("--fault", choices=("kill", "cut"))
    narrow.add_argument("--choosing", action="store_true", help="every fault waits for the victim to be "
                        "choosing a card")
    narrow.add_argument("--at", type=int, help="strike at this message; 0 or less counts from the match's "
                        "length (-1: when all but the last message are in)")
    hostile = parser.add_argument_group("--adversary: a peer that withholds, stalls and storms (module docstring)")
    hostile.add_argument("--adversary", action="store_true", help="run the adversary's trials instead")
    hostile.add_argument("--kind", choices=KINDS, help="only this kind of attack")
    hostile.add_argument("--timeout", type=int, default=None,
                         help=f"the host's --timeout, which the table agrees (default {MIN_MOVE}, the floor)")
    hostile.add_argument("--wait", type=int, default=None,
                         help=f"the host's --wait, which the table agrees (default {MIN_WAIT}, the floor)")
    args = parser.parse_args(argv)
    if args.adversary:
        return adversary(args, parser)
    if args.kind or args.timeout is not None or args.wait is not None:
        parser.error("--kind, --timeout and --wait are for --adversary (the kill-and-restart trials play at "
                     f"--timeout {TIMEOUT:g} --wait {WAIT:g})")
    if not rotation(args):
        parser.error("no trial fits --players, --victim and --fault (a cut is a joiner's; carol plays only at 3)")

    seed = args.seed if args.seed is not None else random.randrange(2**32)
    rng = random.Random(seed)
    out = args.out or Path(tempfile.mkdtemp(prefix="p2pwhist-chaos-"))
    out.mkdir(parents=True, exist_ok=True)
    print(f"seed {seed}; files under {out}", flush=True)
    try:
        length = lengths(out, args.deadline, shapes(args))
    except Calibration as error:
        print(error)
        print(json.dumps({"trials": 0, "finished": 0, "identical": 0, "verified": 0, "resume_s": None,
                          "resume_s_max": None, "cut_resume_s": None, "secrets_left": 0, "seed": seed,
                          "failures": [str(error).splitlines()[0]]}))
        return 1
    if args.at is not None and any(not 1 <= (args.at if args.at > 0 else n + args.at) for n in length.values()):
        parser.error(f"--at {args.at} is not within every match: {length}")
    print("match lengths without a fault: " + ", ".join(f"{p} players {h} hand{'s' if h > 1 else ''}: {n} messages"
                                                       for (p, h), n in length.items()), flush=True)

    finished = identical = verified = secrets_left = 0
    resumes: list[float] = []
    cut_resumes: list[float] = []
    failures: list[str] = []
    for number in range(args.trials):
        players, hands, fault = choose(number, rng, length, args)
        root = out / f"trial-{number + 1:03d}"
        began = time.monotonic()
        for attempt in range(1, LATE_TRIES + 1):
            try:
                with Peers(root) as peers:
                    run = play_with_fault(peers, players, hands, fault, wait=WAIT, timeout=TIMEOUT,
                                          deadline=args.deadline)
            except Exception as error:  # noqa: BLE001 (a harness fault: counted, named, and the next trial runs)
                run = FaultRun(players, fault, [root / "alice.p2pw"], error=f"harness error: {error!r}")
            if not run.late or attempt == LATE_TRIES:
                break
            again = "again at an earlier message" if args.at is None else "again"
            print(f"trial {number + 1}/{args.trials}: {run.describe()}: {run.fault_problems()[0]}; {again}", flush=True)
            shutil.rmtree(root)
            if args.at is None:  # else the same message again, in a new match
                fault = replace(fault, at=rng.randint(1, max(1, fault.at - 1)))
        seconds = time.monotonic() - began
        ran = run.error is None and not run.hung  # else there is nothing whole to compare
        finished += run.error is None and not run.exit_problems()
        identical += ran and not run.transcript_problems()
        verified += ran and not run.verify_problems()
        problems = run.problems()
        print(trial_line(number, args.trials, hands, run, seconds), flush=True)
        if problems:
            failures.append(f"trial {number + 1} ({run.describe()}, {hands}h): {problems[0]} [{run.root}]")
            continue
        secrets_left += bool(run.secrets_left())
        if run.resume_s is not None:
            (resumes if fault.kind == "kill" else cut_resumes).append(run.resume_s)
        if not args.keep:
            shutil.rmtree(root)

    if failures:
        print(f"failed trials' files are kept under {out}")
    elif args.out is None and not args.keep:
        shutil.rmtree(out)
    print(json.dumps({
        "trials": args.trials, "finished": finished, "identical": identical, "verified": verified,
        "resume_s": median(resumes), "resume_s_max": round(max(resumes), 3) if resumes else None,
        "cut_resume_s": median(cut_resumes), "secrets_left": secrets_left, "seed": seed, "failures": failures,
    }))
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
