"""``p2pwhist stats`` (issue 24): counts and ratings from a folder of transcripts, against
the results worked out by hand from tests/stats_fixture.py's games.

The games, in file-name order (alice, bob; carol at one table), and what each counts:

- 01 bob wins 2-0, both hands his; 02 is bob's copy of the same game: a duplicate.
- 03 a draw, 1-1: a hand each.
- 04 alice wins 1-0: her hand, then a hand nobody wins (0-0, a drawn hand).
- 05 alice, bob, carol: bob, to move, is declared absent, carol co-signs (a witness): the one
  hand is scored as it stands, alice 1, bob 0 (left), carol 0; match places alice, carol, bob.
- 06 alice leaves with her own ABORT (bob's file): the hand goes to bob, alice places last.
- 07 alice wins 2-0; bob revoked in the first hand (a proven breach) and lost it.
- 08 bob is declared absent at a table of two: alice alone signs, so counted but not rated.
- 09 a game alice won, one byte changed: invalid. 10 unfinished. 11 random bytes, 12 empty:
  not transcripts. notes.txt is not named like a transcript: not read.

So, from alice's side against bob: matches lost (01), drawn (03), won (04), won (05), lost
(06), won (07), won (08): 4-2-1; hands lost 2 (01), won+lost (03), won+drawn (04), won (05),
lost (06), won 2 (07), won (08): 6-4-1; he left twice (05, 08), she once (06); his breach
once (07). Against carol (05): the match and its hand won.

Last, the stats cache (``p2pwhist.stats_cache``), on the same games.
"""

from __future__ import annotations

import json
import os
import shutil

import pytest
from cryptography.hazmat.primitives import serialization
from hypothesis import given, settings
from hypothesis import strategies as st
from openskill.models import PlackettLuce
from stats_fixture import KEYS, fixture
from test_hostile_input import values

from p2pwhist import cli, stats
from p2pwhist.identity import fingerprint
from p2pwhist.signed import public_bytes
from p2pwhist.stats_cache import VerifiedCache
from p2pwhist.transcript import read_transcript
from p2pwhist.verify import verify
from p2pwhist.wire import frame, pack, unpack

ALICE_KEY, BOB_KEY, CAROL_KEY = (public_bytes(key.public_key()) for key in KEYS)
FP = {name: fingerprint(key) for name, key in zip(("alice", "bob", "carol"), (ALICE_KEY, BOB_KEY, CAROL_KEY))}
NOT_COUNTED = {"02-bob-wins-bobs-copy.p2pw": "duplicate", "09-forged.p2pw": "invalid",
               "10-unfinished.p2pw": "unfinished", "11-garbage.p2pw": "not a transcript",
               "12-empty.p2pw": "not a transcript"}
# The rated matches' places (0 the best), seats alice, bob[, carol], in order: 08 is not rated.
RATED = [(1, 0), (0, 0), (0, 1), (0, 2, 1), (1, 0), (0, 1)]


@pytest.fixture(scope="module")
def games(tmp_path_factory):
    return fixture(tmp_path_factory.mktemp("fixture") / "games")


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("P2PWHIST_HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    return tmp_path / "home"


def as_alice(home) -> None:
    pem = KEYS[0].private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    (home / "identity.pem").write_bytes(pem)


def stats_json(capsys, *args: str) -> dict:
    assert cli.main(["stats", "--json", *args]) == 0
    return json.loads(capsys.readouterr().out)


def tally(played=0, won=0, lost=0, drawn=0) -> dict:
    assert played == won + lost + drawn
    return {"played": played, "won": won, "lost": lost, "drawn": drawn}


def expected_ratings() -> dict[bytes, tuple[float, float]]:
    """openskill's Plackett-Luce, fed by hand with ``RATED``."""
    model = PlackettLuce()
    ratings = {key: model.rating() for key in (ALICE_KEY, BOB_KEY, CAROL_KEY)}
    for places in RATED:
        keys = [ALICE_KEY, BOB_KEY, CAROL_KEY][:len(places)]
        rated = model.rate([[ratings[key]] for key in keys], ranks=list(places))
        ratings.update({key: team[0] for key, team in zip(keys, rated)})
    return {key: (rating.mu, rating.sigma) for key, rating in ratings.items()}


def test_the_fixture_counted_field_by_field_from_the_saved_games(games, home, capsys):
    shutil.copytree(games, home / "games")
    as_alice(home)
    report = stats_json(capsys)
    assert report["counted"] == 7 and report["unrated"] == 1
    assert {s["file"].rsplit("/", 1)[-1]: s["reason"] for s in report["not_counted"]} == NOT_COUNTED
    duplicate = next(s for s in report["not_counted"] if s["reason"] == "duplicate")
    assert duplicate["detail"].endswith("01-bob-wins.p2pw, counted once")
    forged = next(s for s in report["not_counted"] if s["reason"] == "invalid")
    assert "signature" in forged["detail"]
    players = {p["name"]: p for p in report["players"]}
    assert [p["name"] for p in report["players"]] == ["alice", "carol", "bob"]  # best rated first
    ratings = expected_ratings()
    for name, key, matches, hands, left, breaches in [
        ("alice", ALICE_KEY, tally(7, 4, 2, 1), tally(11, 6, 4, 1), 1, 0),
        ("bob", BOB_KEY, tally(7, 2, 4, 1), tally(11, 4, 6, 1), 2, 1),
        ("carol", CAROL_KEY, tally(1, 0, 1, 0), tally(1, 0, 1, 0), 0, 0),
    ]:
        player = players[name]
        assert (player["key"], player["fingerprint"]) == (key.hex(), FP[name])
        assert (player["matches"], player["hands"], player["left"], player["breaches"]) == \
            (matches, hands, left, breaches), name
        mu, sigma = ratings[key]
        assert player["rating"] == {"mu": round(mu, 3), "sigma": round(sigma, 3), "ordinal": round(mu - 3 * sigma, 3)}
    assert report["you"] == players["alice"]
    bob, carol = report["opponents"]
    assert bob == {"name": "bob", "fingerprint": FP["bob"], "key": BOB_KEY.hex(), "matches": tally(7, 4, 2, 1),
                   "hands": tally(11, 6, 4, 1), "forfeits": {"they_left": 2, "we_left": 1},
                   "breaches": {"theirs": 1, "ours": 0}, "rating": players["bob"]["rating"]}
    assert carol == {"name": "carol", "fingerprint": FP["carol"], "key": CAROL_KEY.hex(),
                     "matches": tally(1, 1, 0, 0), "hands": tally(1, 1, 0, 0),
                     "forfeits": {"they_left": 0, "we_left": 0}, "breaches": {"theirs": 0, "ours": 0},
                     "rating": players["carol"]["rating"]}


def test_the_fixture_in_text(games, home, capsys):
    as_alice(home)
    assert cli.main(["stats", str(games)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Counted 7 matches (1 not rated: a forfeit only its winner signed); 5 files not counted.")
    lines = out.splitlines()
    mu, sigma = expected_ratings()[ALICE_KEY]
    assert f"You: alice ({FP['alice']}), rating {mu:.1f} ± {sigma:.1f} (ordinal {mu - 3 * sigma:.1f})" in lines
    assert "  matches 7: 4-2-1, hands 11: 6-4-1 (played: won-lost-drawn); left 1, breaches 0" in lines
    against = lines[lines.index("Against you (played: won-lost-drawn, from your side):") + 2]  # after the header
    # bob: matches, hands, he left, you left, his breaches, yours, his rating
    assert against.split()[:10] == ["bob", FP["bob"], "7:", "4-2-1", "11:", "6-4-1", "2", "1", "1", "0"]
    not_counted = lines[lines.index("Not counted:") + 1:]
    # a file that is no transcript says what it is not instead of its reason's word
    said = {"not a transcript": "not a p2pwhist transcript (no P2PWHST1 header)"}
    assert [line.split(": ", 2)[1] for line in not_counted] == [said.get(why, why) for why in NOT_COUNTED.values()]


def test_without_an_identity_stats_are_per_player_and_none_is_made(games, home, capsys):
    report = stats_json(capsys, str(games))
    assert report["you"] is None and report["opponents"] == [] and len(report["players"]) == 3
    assert not (home / "identity.pem").exists()
    assert cli.main(["stats", str(games)]) == 0
    out = capsys.readouterr().out
    assert "You:" not in out and "Against you" not in out and "Players, best rated first" in out


def test_a_forged_transcript_counts_for_nobody(games, home, capsys, tmp_path):
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(games / "09-forged.p2pw", alone)
    report = stats_json(capsys, str(alone))
    assert report["counted"] == 0 and report["players"] == []
    assert [s["reason"] for s in report["not_counted"]] == ["invalid"]
    without = tmp_path / "without"
    shutil.copytree(games, without)
    (without / "09-forged.p2pw").unlink()
    assert stats_json(capsys, str(games))["players"] == stats_json(capsys, str(without))["players"]


def test_a_forfeit_only_its_winner_signed_is_counted_but_not_rated(games, home, capsys):
    report = stats_json(capsys, str(games / "08-bob-absent-of-two.p2pw"))
    assert report["counted"] == 1 and report["unrated"] == 1
    assert [(p["name"], p["matches"]["won"], p["left"], p["rating"]) for p in report["players"]] == \
        [("alice", 1, 0, None), ("bob", 0, 1, None)]


def test_a_file_given_twice_or_also_saved_is_read_once(games, home, capsys):
    shutil.copytree(games, home / "games")
    saved = str(home / "games" / "03-draw.p2pw")
    report = stats_json(capsys, saved, saved, str(home / "games"))
    assert report["counted"] == 7 and len(report["not_counted"]) == len(NOT_COUNTED)


def test_an_empty_folder_and_no_saved_games(home, capsys, tmp_path):
    (tmp_path / "empty").mkdir()
    assert stats_json(capsys, str(tmp_path / "empty")) == \
        {"you": None, "opponents": [], "players": [], "counted": 0, "unrated": 0, "not_counted": []}
    assert cli.main(["stats"]) == 0
    assert capsys.readouterr().out == f"No games to count: each match you play is kept in {home / 'games'}, " \
        "where p2pwhist stats finds it (or name transcripts or folders of them).\n"
    assert cli.main(["stats", str(tmp_path / "gone.p2pw")]) == 0  # no counts of nothing in brackets
    assert capsys.readouterr().out.startswith("Counted 0 matches; 1 file not counted.\n\nNot counted:\n")


def test_a_fifo_named_like_a_transcript_is_listed_not_read(home, capsys, tmp_path):
    folder = tmp_path / "games"
    folder.mkdir()
    os.mkfifo(folder / "pipe.p2pw")  # opened for reading, it would wait for a writer for ever
    report = stats_json(capsys, str(folder))
    assert [(s["reason"], s["detail"] == "not a regular file") for s in report["not_counted"]] == [
        ("not a transcript", True)]


def test_a_file_that_is_no_transcript_is_named_once_in_its_line(home, capsys, tmp_path):
    """Each line says the file and what is wrong with it, once (it said the file twice: "x.p2pw:
    not a transcript: x.p2pw is not a p2pwhist transcript (...)")."""
    folder = tmp_path / "odd"
    folder.mkdir()
    (folder / "junk.p2pw").write_bytes(b"junk")
    (folder / "dir.p2pw").mkdir()
    os.mkfifo(folder / "pipe.p2pw")
    assert cli.main(["stats", str(folder), str(tmp_path / "gone.p2pw")]) == 0
    listed = capsys.readouterr().out.split("Not counted:\n", 1)[1].splitlines()
    assert listed == [f"  {folder / 'dir.p2pw'}: not a regular file",
                      f"  {folder / 'junk.p2pw'}: not a p2pwhist transcript (no P2PWHST1 header)",
                      f"  {folder / 'pipe.p2pw'}: not a regular file",
                      f"  {tmp_path / 'gone.p2pw'}: No such file or directory"]


def test_a_folder_of_garbage(home, capsys, tmp_path):
    folder = tmp_path / "garbage"
    folder.mkdir()
    (folder / "a.p2pw").write_bytes(b"P2PWHST1" + b"\xff" * 40)
    (folder / "b.p2pw").write_bytes(b"\x00" * 3)
    (folder / "c.p2pw").mkdir()  # a folder named like a transcript
    (folder / "d.txt").write_bytes(b"P2PWHST1")
    report = stats_json(capsys, str(folder), str(tmp_path / "missing.p2pw"))
    assert report["counted"] == 0 and report["players"] == []
    assert [(s["file"].rsplit("/", 1)[-1], s["reason"]) for s in report["not_counted"]] == \
        [("a.p2pw", "invalid"), ("b.p2pw", "not a transcript"), ("c.p2pw", "not a transcript"),
         ("missing.p2pw", "not a transcript")]


def test_ranking_puts_the_seat_that_left_last_and_shares_equal_points():
    assert stats.ranking((2, 1, 2), None) == (0, 2, 0)
    assert stats.ranking((3, 0, 0), 0) == (2, 0, 0)
    assert stats.ranking((1, 0, 1), 2) == (0, 1, 2)


def test_a_verdict_of_an_unfinished_game_is_not_a_match(games):
    counted = stats.MatchRecord.from_verdict(verify(read_transcript(games / "10-unfinished.p2pw")))
    assert counted.reason is stats.Reason.UNFINISHED and "waiting for bob" in counted.detail


def test_an_unreadable_identity_is_one_line_and_exit_2(home, capsys):
    (home / "identity.pem").write_text("not a key")
    assert cli.main(["stats"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.startswith("p2pwhist: cannot read the identity key")
    assert len(captured.err.splitlines()) == 1


# -- the stats cache (p2pwhist.stats_cache): a second run takes each result from it and reports
# exactly what verifying every file does; a file changed since is verified again; a cache that
# does not read back whole, or of another version, is as none; its decoders refuse garbage
# with ValueError alone (fuzzed).

@pytest.fixture
def verified(monkeypatch) -> list[str]:
    """The files ``p2pwhist stats`` verifies, by name, as it verifies them."""
    names: list[str] = []
    match = cli._match

    def counting(path):
        names.append(path.name)
        return match(path)

    monkeypatch.setattr(cli, "_match", counting)
    return names


def distinct(folder) -> int:
    """The files of ``folder`` that differ in their bytes (the fixture holds a copy)."""
    return len({path.read_bytes() for path in folder.glob("*.p2pw")})


def test_a_second_run_takes_every_result_from_the_cache_and_reports_the_same(games, home, capsys, verified):
    first = stats_json(capsys, str(games))
    assert len(verified) == distinct(games) and (home / "stats-cache").exists()
    assert stats_json(capsys, str(games)) == first
    assert len(verified) == distinct(games)  # none verified again


def test_a_file_changed_since_is_verified_again_and_counted_as_it_now_is(games, home, capsys, verified, tmp_path):
    folder = tmp_path / "games"
    shutil.copytree(games, folder)
    stats_json(capsys, str(folder))
    changed = sorted(folder.glob("*.p2pw"))[0]
    changed.write_bytes((games / "09-forged.p2pw").read_bytes() + b"\0")  # the same name, bytes never met
    verified.clear()
    cached = stats_json(capsys, str(folder))
    assert verified == [changed.name]
    assert [s["reason"] for s in cached["not_counted"] if s["file"].endswith(changed.name)] == ["invalid"]
    (home / "stats-cache").unlink()
    assert cached == stats_json(capsys, str(folder))  # as if every file were verified afresh


@pytest.mark.parametrize("damage", ["another version", "a torn frame", "a bad record", "garbage"])
def test_a_cache_that_does_not_read_back_whole_is_as_none(games, home, capsys, verified, damage):
    stats_json(capsys, str(games))
    path = home / "stats-cache"
    good = path.read_bytes()
    header = 4 + int.from_bytes(good[:4], "big")  # the version's frame
    path.write_bytes({"another version": frame(pack(["0.0.0"])) + good[header:],
                      "a torn frame": good[:-3],
                      "a bad record": good + frame(pack([b"d" * 32, ["match", b"g", [], [], [], [], None, True]])),
                      "garbage": b"\xff" * 100}[damage])
    verified.clear()
    stats_json(capsys, str(games))
    assert len(verified) == distinct(games)


def test_each_result_of_the_fixture_reads_back_as_it_was(games):
    for path in sorted(games.glob("*.p2pw")):
        result = cli._match(path)
        assert stats.record_from_wire(unpack(pack(stats.record_to_wire(result)))) == result


@settings(max_examples=300, deadline=None)
@given(value=values)
def test_a_record_decoder_refuses_garbage_with_value_error_alone(value):
    try:
        stats.record_from_wire(value)
    except ValueError:
        pass


@settings(max_examples=200, deadline=None)
@given(data=st.one_of(st.binary(max_size=300), st.lists(values, max_size=4).map(
    lambda items: b"".join(frame(pack(item)) for item in [[cli.p2pwhist.__version__], *items]))))
def test_any_cache_file_loads_as_some_or_no_results_never_an_error(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("cache") / "stats-cache"
    path.write_bytes(data)
    cache = VerifiedCache.load(path)
    assert all(isinstance(r, stats.MatchRecord | stats.NotCounted) for r in cache._old.values())
