"""Write protocol/vectors/verdicts/: transcripts, each with the verdict the specification
gives it, so that any verifier can check itself against them (session.md §5).

Each case is a transcript built by ``tests/verdicts.py`` (real sessions in memory, messages
made by hand, bytes damaged) and the fields of ``p2pwhist verify --json`` that protocol/
fixes for it, written here from the spec (but for the honest match's hand results, a function
of its log by the rules, pinned as p2pwhist computes them). The script judges each file with
``p2pwhist verify --json`` (in this process) and writes it, as ``verdicts/<name>.p2pw`` and an
entry of ``verdicts.json``, only if the verdict agrees; a case where the code and the spec
disagree is withheld and said on stderr, and the script then exits 1.

Everything is seeded, so two runs write the same bytes. The numbers below (seqs, points) are
those of the seeded games: a change to the schedule, the engine or the bots that plays a game
differently shows as a mismatch too, to be read before it is called a disagreement with the
spec.

    python scripts/make_verdict_vectors.py

The last line is one JSON object: {"vectors": N, "written": "protocol/vectors/verdicts.json"}.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # verdicts: the transcripts the tests of verify build too

import verdicts

from p2pwhist import cli

VECTORS = ROOT / "protocol" / "vectors"
INDEX = VECTORS / "verdicts.json"
FILES = VECTORS / "verdicts"

DAMAGED_AT_19 = {"valid": False, "error": {"seq": 19, "seat": None}}  # bob's first move is message 19


@dataclass(frozen=True)
class Case:
    name: str
    build: Callable[[], bytes]
    decides: str
    exit: int  # 0 valid, 1 invalid, 2 unreadable
    verdict: dict[str, Any]  # the fields the spec fixes (``verdicts.mismatches`` says how they compare)


CASES = (
    Case("honest-match", verdicts.honest_match,
         "session.md §2, §5: an honest 2-player Box Whist match of two hands is valid and complete; each hand's "
         "result and the match's are computed from the log (rules-boxwhist §4, §11, §12)",
         0, {"valid": True, "complete": True, "error": None, "forfeit": None, "fork": None,
             "hands": [{"dealer": 0, "trumps": "spades", "scores": [16, 10], "points": [1, 0], "offenders": [],
                        "left": []},
                       {"dealer": 1, "trumps": "hearts", "scores": [19, 7], "points": [1, 0], "offenders": [],
                        "left": []}],
             "match": {"points": [2, 0], "winner": 0}}),
    Case("forfeit-before-the-trump-card", verdicts.forfeit_before_the_trump_card,
         "session.md §5, §7.3 and rules-boxwhist §4, §11: a 3-player first hand forfeited after the deal, before "
         "every seat published its key for the trump card, is in progress: it is scored as it stands (no trick), "
         "lost by the leaver (in \"left\", not among the \"offenders\": a forfeit proves no breach), with trumps "
         "\"?\"; the two remaining seats share the most points, so nobody wins "
         "(winner nil), and the forfeit, signed only by seats that share the result, is not witnessed",
         0, {"valid": True, "complete": True, "error": None,
             "hands": [{"dealer": 1, "trumps": "?", "scores": [0, 0, 0], "points": [0, 0, 0], "offenders": [],
                        "left": [2]}],
             "match": {"points": [0, 0, 0], "winner": None},
             "forfeit": {"seat": 2, "seq": 25, "how": "absent", "declared_by": 0, "signed_by": [0, 1],
                         "witnessed": False}}),
    Case("abort-blaming-another", verdicts.abort_blaming_another,
         "session.md §2, §5, §7.3: an ABORT after every seat accepted is its sender leaving: valid, unfinished; "
         "the sender forfeits the match (the hand in progress is lost by it, and with two seats the other wins), "
         "and the seat the ABORT blames is reported as unproven",
         0, {"valid": True, "complete": False, "error": None,
             "forfeit": {"seat": 1, "seq": 19, "how": "left", "blamed": 0, "blame": "unproven"},
             "match": {"points": [1, 0], "winner": 0}}),
    Case("abort-then-damage", verdicts.abort_then_damage,
         "session.md §2, §5: nothing after an ABORT is read: a frame that is no message after it changes nothing "
         "(the verdict of abort-blaming-another)",
         0, {"valid": True, "complete": False, "error": None,
             "forfeit": {"seat": 1, "seq": 19, "how": "left", "blamed": 0, "blame": "unproven"},
             "match": {"points": [1, 0], "winner": 0}}),
    Case("two-player-forfeit", verdicts.two_player_forfeit,
         "session.md §7.3: with two seats a FORFEIT is signed by the one seat that gains from it: absent, not "
         "witnessed; the remaining seat wins the match, and the hand in progress is lost by the absent seat, which "
         "is listed as having left it, never as an offender (a FORFEIT proves no breach)",
         0, {"valid": True, "complete": True, "error": None,
             "hands": [{"dealer": 0, "trumps": "spades", "scores": [0, 0], "points": [1, 0], "offenders": [],
                        "left": [1]}],
             "forfeit": {"seat": 1, "seq": 19, "how": "absent", "declared_by": 0, "signed_by": [0],
                         "witnessed": False},
             "match": {"points": [1, 0], "winner": 0}}),
    Case("witnessed-forfeit", verdicts.witnessed_forfeit,
         "session.md §7.3: a 3-player FORFEIT co-signed by a seat that does not gain from it (the match goes to "
         "the declarer) is witnessed",
         0, {"valid": True, "complete": True, "error": None,
             "forfeit": {"seat": 1, "seq": 35, "how": "absent", "declared_by": 0, "signed_by": [0, 2],
                         "witnessed": True},
             "match": {"points": [1, 0, 0], "winner": 0}}),
    Case("bad-signature", verdicts.bad_signature,
         "session.md §5: a badly signed message with no ABORT after it makes the log invalid at that message and "
         "blames nobody",
         1, DAMAGED_AT_19),
    Case("replayed-message", verdicts.replayed,
         "session.md §5: a readable message that does not follow the log (a replay), with no ABORT after it, makes "
         "the log invalid at its own seq and blames nobody",
         1, {"valid": False, "error": {"seq": 18, "seat": None}}),
    Case("malformed-then-abort", verdicts.malformed_then_abort,
         "session.md §5, wire.md §3: a malformed message (not in msgpack's shortest encoding) followed by the "
         "recording peer's ABORT at its place makes the log invalid at that place, blamed on the seat the ABORT "
         "names",
         1, {"valid": False, "error": {"seq": 19, "seat": 1}}),
    Case("oversize-frame", verdicts.oversize_frame,
         "wire.md §4, session.md §5: a frame announcing more than 65,536 bytes is malformed, not torn: the log is "
         "invalid at its place, and with no ABORT after it nobody is blamed",
         1, DAMAGED_AT_19),
    Case("torn-final-frame", verdicts.torn_final_frame,
         "wire.md §4, session.md §5: a file that ends inside its last message is judged on the complete messages "
         "before it (valid, unfinished), and the verifier says the file ends inside message N",
         0, {"valid": True, "complete": False, "error": None,
             "words": {"stopped": ["the file ends inside message 19"]}}),
    Case("refused-then-abort", verdicts.refused_then_abort,
         "session.md §2, §5, wire.md §3: a message validly signed and next in the log but out of turn is its "
         "author's fault: the log is invalid at it, naming its author; the recorder's ABORT after it (seq one "
         "more) is not read",
         1, {"valid": False, "error": {"seq": 19, "seat": 1}}),
    Case("dispute-after-a-forfeit", verdicts.dispute_after_a_forfeit,
         "session.md §5: no DISPUTE once a FORFEIT has settled the match: one sent instead of a co-signature is "
         "refused, and the log is invalid at it, naming its sender",
         1, {"valid": False, "error": {"seq": 31, "seat": 2}}),
    Case("unfounded-dispute", verdicts.unfounded_dispute,
         "session.md §2, §5: a DISPUTE the audit does not bear out convicts the disputer; the log is invalid at "
         "the message that completed the audit's input, the opening's last SECRET",
         1, {"valid": False, "error": {"seq": 21, "seat": 1}}),
    Case("cheat-in-the-cut", verdicts.cheat_in_the_cut,
         "session.md §2, §5: a cheat the cut's audit finds makes the log invalid at the cut opening's last "
         "message, seat n−2's COMMIT to hand 1's deck, naming the cheater",
         1, {"valid": False, "error": {"seq": 11, "seat": 1}}),
    Case("start-with-hands-and-minutes", verdicts.start_with_hands_and_minutes,
         "session.md §3, §5: a START whose length names both hands and minutes is malformed: invalid at message 0, "
         "nobody at fault",
         1, {"valid": False, "error": {"seq": 0, "seat": None}}),
    Case("start-of-version-99", verdicts.start_of_version_99,
         "session.md §3, §5: a START of a version other than 2 or 3 cannot be judged: the file is unreadable "
         "(exit 2), not invalid, and accuses nobody",
         2, {"valid": False, "error": {"seq": None, "seat": None}}),
    Case("stranger-at-seat-3", verdicts.stranger_at_seat_3,
         "session.md §5, wire.md §3: a badly signed message naming a seat the table does not have (seat 3 of 3) "
         "makes the log invalid at it and blames nobody",
         1, {"valid": False, "error": {"seq": 1, "seat": None}}),
    Case("fork", verdicts.fork,
         "session.md §5, §7.3: the accused's own file, holding its PLAY and then the FORFEIT declaring it absent "
         "at that very place, is a fork: valid as far as it goes (unfinished), and no forfeit",
         0, {"valid": True, "complete": False, "error": None, "forfeit": None,
             "fork": {"seq": 19, "accused": 1, "declared_by": 0, "kinds": ["play", "forfeit"]}}),
)


def judged(path: Path) -> tuple[int, dict[str, Any]]:
    """``p2pwhist verify --json PATH``, run in this process: its exit status and its object."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = cli.main(["verify", "--json", str(path)])
    return code, json.loads(out.getvalue())


def disagreement(case: Case, content: bytes, scratch: Path) -> list[str]:
    """How ``verify`` on ``content`` departs from ``case``'s verdict; empty if it agrees."""
    path = scratch / f"{case.name}.p2pw"
    path.write_bytes(content)
    code, report = judged(path)
    found = [] if code == case.exit else [f"exit {code}, expected {case.exit}"]
    found += verdicts.mismatches(case.verdict, report)
    if found:
        found.append(f"verify --json said: {json.dumps(report)}")
    return found


def main() -> int:
    FILES.mkdir(parents=True, exist_ok=True)
    entries, withheld = [], []
    with tempfile.TemporaryDirectory() as scratch:
        for case in CASES:
            content = case.build()
            found = disagreement(case, content, Path(scratch))
            if found:
                withheld.append(case.name)
                print(f"{case.name}: withheld, the code and the spec disagree ({case.decides})", file=sys.stderr)
                for line in found:
                    print(f"    {line}", file=sys.stderr)
                continue
            (FILES / f"{case.name}.p2pw").write_bytes(content)
            entries.append({"name": case.name, "file": f"verdicts/{case.name}.p2pw", "decides": case.decides,
                            "exit": case.exit, "verdict": case.verdict})
    kept = {f"{entry['name']}.p2pw" for entry in entries}
    for stale in FILES.glob("*.p2pw"):  # a vector withheld now, or one no longer made
        if stale.name not in kept:
            stale.unlink()
    INDEX.write_text(json.dumps(entries, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    if withheld:
        print(f"withheld {len(withheld)}: {', '.join(withheld)}", file=sys.stderr)
    print(json.dumps({"vectors": len(entries), "written": str(INDEX.relative_to(ROOT))}))
    return 1 if withheld else 0


if __name__ == "__main__":
    sys.exit(main())
