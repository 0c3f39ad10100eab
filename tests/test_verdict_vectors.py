"""protocol/vectors/verdicts.json: transcripts and the verdicts the specification gives them
(session.md §5), written by scripts/make_verdict_vectors.py.

An independent verifier checks itself against the files; so does ``p2pwhist verify``: each
file gets its entry's exit status and every field its entry fixes. And the files can be
written again byte for byte: every builder is seeded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import verdicts

from p2pwhist import cli

VECTORS = Path(__file__).resolve().parent.parent / "protocol" / "vectors"
ENTRIES = json.loads((VECTORS / "verdicts.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("entry", ENTRIES, ids=[entry["name"] for entry in ENTRIES])
def test_verify_gives_each_vector_its_verdict(entry, capsys):
    code = cli.main(["verify", "--json", str(VECTORS / entry["file"])])
    report = json.loads(capsys.readouterr().out)
    assert code == entry["exit"], report
    assert verdicts.mismatches(entry["verdict"], report) == [], report


def test_every_file_has_an_entry_and_every_entry_a_file():
    assert sorted(path.name for path in (VECTORS / "verdicts").iterdir()) == \
        sorted(Path(entry["file"]).name for entry in ENTRIES)


def test_a_vector_is_built_with_the_same_bytes_every_time():
    """Keys, secrets and bots are seeded and Ed25519 signs deterministically: running the
    script again writes the same files."""
    assert verdicts.bad_signature() == verdicts.bad_signature()


def test_a_mismatch_is_found_and_named():
    report = {"valid": False, "error": {"seq": 19, "seat": None, "reason": "the file ends inside message 19"}}
    assert verdicts.mismatches({"valid": False, "error": {"seq": 19, "seat": None}}, report) == []
    assert verdicts.mismatches({"error": {"seat": 1}, "forfeit": None, "words": {"error.reason": ["message 20"]}},
                               report) == ["error.seat: None, expected 1", "forfeit: missing, expected None",
                                           "error.reason: 'the file ends inside message 19' does not say 'message 20'"]
