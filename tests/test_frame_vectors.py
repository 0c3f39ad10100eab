"""protocol/vectors/frames.json: every frame outside the log, as a value and as its bytes.

An independent peer can check itself against the file; so does this: each value, written with
msgpack's shortest forms (not with our encoder), gives the payload, and our reader of the
right direction takes the payload and writes it back unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import msgpack
import pytest

from p2pwhist.table import encode, read_from_host, read_from_joiner

VECTORS = json.loads((Path(__file__).parent.parent / "protocol" / "vectors" / "frames.json").read_text())
FROM_JOINER = {"hello", "ready", "vouch", "rejoin", "done", "watch", "chat"}


def _value(shown):
    if isinstance(shown, dict) and set(shown) == {"bin"}:
        return bytes.fromhex(shown["bin"])
    if isinstance(shown, dict):
        return {key: _value(item) for key, item in shown.items()}
    if isinstance(shown, list):
        return [_value(item) for item in shown]
    return shown


@pytest.mark.parametrize("vector", VECTORS["frames"], ids=[v["name"] for v in VECTORS["frames"]])
def test_each_frame_is_its_value_in_shortest_msgpack_and_reads_back(vector):
    payload = bytes.fromhex(vector["payload"])
    assert msgpack.packb(_value(vector["value"]), use_bin_type=True) == payload
    (label,) = vector["value"]
    read = read_from_joiner if label in FROM_JOINER else read_from_host
    assert encode(read(payload)) == payload


def test_the_vectors_cover_every_frame_outside_the_log():
    labels = {next(iter(v["value"])) for v in VECTORS["frames"]}
    assert labels == {"hello", "welcome", "ready", "lobby", "vouch", "refuse", "rejoin", "resumed", "notice", "done",
                      "watch", "chat"}
