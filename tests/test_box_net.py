"""Bradley's Box over the network: whole matches between separate p2pwhist processes, and the
Box cheats, caught at once or by the end-of-game audit.

The matches run real ``python -m p2pwhist host/join`` processes (``netutil.Peers``); the cheats
are networked games in this trio process with one test-only cheater, built with the cheat
catalogue's helpers (``test_cheats``), on trio's mock clock as there.
"""

from __future__ import annotations

import dataclasses
import re

import pytest
from netutil import Finished, Peers
from test_cheats import CHEATER, assert_caught, cheat_once, play_table, signed

from p2pwhist.bodies import CardPlay
from p2pwhist.games.box.engine import Box
from p2pwhist.signed import Kind
from p2pwhist.text import plural
from p2pwhist.transcript import read_transcript
from p2pwhist.verify import verify


@dataclasses.dataclass
class Match:
    """A finished match between processes: each peer's exit, its transcript, what
    ``p2pwhist verify`` printed for the host's transcript, and its verdict as JSON."""

    done: list[Finished]
    transcripts: list
    verified: Finished
    verdict: dict


def play_match(tmp_path, players: int, hands: int, *args: str) -> Match:
    """A Box match: a heuristic host and joiners alternating random and heuristic bots."""
    with Peers(tmp_path) as peers:
        done, transcripts, verified = peers.match(players, "--game", "box", "--hands", str(hands), *args)
    assert [d.code for d in done] == [0] * players, [d.err for d in done]
    assert all("Traceback" not in d.err for d in done), [d.err for d in done]
    return Match(done, transcripts, verified, verify(read_transcript(transcripts[0])).to_json())


def assert_agreed(match: Match, players: int, hands: int, variant: str) -> None:
    """Every peer printed the same result and wrote the same bytes; verify accepts them."""
    done = match.done
    assert match.verified.code == 0, match.verified.out + match.verified.err
    assert match.verified.out.startswith(f"valid, complete: box, {plural(hands, 'hand')}, players "), match.verified.out
    (result,) = {d.result_line() for d in done}  # the one "Match over." line, alike on every peer
    assert result.removeprefix("Match over. ").removesuffix(".") in match.verified.out
    assert all(f"Transcript: {path}" in d.out for d, path in zip(done, match.transcripts))
    assert len({path.read_bytes() for path in match.transcripts}) == 1
    messages = list(read_transcript(match.transcripts[0]))
    assert [m.kind for m in messages[-players:]] == [Kind.FINAL] * players
    assert messages[0].body.game.to_wire() == {"game": "box", "players": players, "variant": variant}

    verdict = match.verdict
    assert verdict["valid"] and verdict["complete"] and verdict["game"] == "box", verdict
    assert len(verdict["players"]) == players and len(verdict["hands"]) == hands
    for hand in verdict["hands"]:
        assert hand["variant"] == variant and hand["offenders"] == []
        # Rule 11: seed, every seat but the one that emptied its box scores 1; pagat, the winner alone.
        assert sorted(hand["points"]) == ([0] + [1] * (players - 1) if variant == "seed" else [0] * (players - 1) + [1])
    assert verdict["match"]["points"] == [sum(h["points"][s] for h in verdict["hands"]) for s in range(players)]


@pytest.fixture(scope="module")
def four_seed(tmp_path_factory) -> Match:
    return play_match(tmp_path_factory.mktemp("box4"), 4, 2)


def test_a_four_player_box_match_between_processes_is_alike_everywhere_and_verifies(four_seed):
    assert_agreed(four_seed, 4, 2, "seed")


def test_a_four_player_pagat_box_match_between_processes_is_alike_everywhere_and_verifies(tmp_path):
    assert_agreed(play_match(tmp_path, 4, 2, "--variant", "pagat"), 4, 2, "pagat")


def test_a_six_player_box_game_between_processes_is_alike_everywhere_and_verifies(tmp_path):
    assert_agreed(play_match(tmp_path, 6, 1), 6, 1, "seed")


def test_show_prints_each_box_games_record_and_the_match_table(four_seed, tmp_path):
    with Peers(tmp_path) as peers:
        shown = peers.start("reader", "show", str(four_seed.transcripts[0])).finish()
    assert shown.code == 0 and shown.err == "", shown.err
    verdict = four_seed.verdict
    names = [p["name"] for p in verdict["players"]]
    lines = shown.out.splitlines()
    for number, hand in enumerate(verdict["hands"], start=1):
        start = lines.index(f'[Hand "{number}"]')
        assert lines[start - 2:start] == ['[Game "box"]', f'[Players "{", ".join(names)}"]']
        assert lines[start + 1] == f'[Dealer "{names[hand["dealer"]]}"]' and lines[start + 2] == '[Variant "seed"]'
        end = lines.index("", start)
        record = lines[start + 4:end]
        # The deal, every card known from the audit: four hand cards and four box cards a seat.
        for name, line in zip(names, record):
            held = re.fullmatch(rf"{name}: (\S+ \S+ \S+ \S+) \| box (\S+ \S+ \S+ \S+)", line)
            assert held, line
        assert record[len(names)].startswith("Pile: ") and len(record[len(names)].split()) == 1 + 52 - 8 * 4
        rounds = record[len(names) + 1:-1]
        assert rounds and all(re.match(rf"\s*{i}\. ", r) for i, r in enumerate(rounds, start=1)), rounds
        assert "too high" in rounds[0]  # a round ends on a box card too high (or the game ends)
        points = ", ".join(f"{n} {p}" for n, p in zip(names, hand["points"]))
        assert record[-1].startswith("Result: box cards left ") and record[-1].endswith(f"; points {points}")
    # The match table: one row per game, then the match's points, as every peer printed them.
    (header,) = [i for i, line in enumerate(lines) if line.split() == ["Hand", *names]]
    rows = [line.split() for line in lines[header + 1:header + 1 + len(verdict["hands"])]]
    assert rows == [[str(i), *map(str, h["points"])] for i, h in enumerate(verdict["hands"], start=1)]
    assert lines[-1] == four_seed.done[0].result_line().removeprefix("Match over. ")


# -- cheats ----------------------------------------------------------------------------------

BOX3 = Box(3)


async def test_claiming_a_card_not_held_is_caught_at_once_in_box(tmp_path, monkeypatch, autojump_clock):
    """Bob plays a hand card but names another card, one he does not hold."""

    def claim_another_card(session, value, honest):
        hand = session.view().hand
        claim = session.deck.claim(next(iter(hand)))
        other = next(c for c in BOX3.deck() if c not in hand.values())
        return signed(session, CardPlay(dataclasses.replace(claim, card=other)))

    cheat_once(monkeypatch, CHEATER, Kind.PLAY, claim_another_card)
    table = await play_table(tmp_path, game=BOX3)
    assert_caught(table, CHEATER, "which is not the card there", "at once")


async def test_a_box_card_named_instead_of_taken_blind_is_caught_at_once(tmp_path, monkeypatch, autojump_clock):
    """Bob claims a closed box card by name (the box is dealt face down: nobody, its owner
    included, may see it), dressing up a claim of one of his hand cards."""
    named = []

    def name_a_box_card(session, value, honest):
        view = session.view()
        _, position, card = view.box[0]
        assert card is None  # closed: bob cannot know it
        claim = session.deck.claim(next(iter(view.hand)))
        named.append(position)
        return signed(session, CardPlay(dataclasses.replace(claim, position=position)))

    cheat_once(monkeypatch, CHEATER, Kind.PLAY, name_a_box_card)
    table = await play_table(tmp_path, game=BOX3)
    assert named
    assert_caught(table, CHEATER, "claims a card it may not see", "at once")
