"""Signatures checked by a helper process ahead of ``verify`` (p2pwhist.signatures).

The helper may only vouch: what it calls good must be good, and whatever it does (refuse, die,
never start) the verdict must be the one the verifier reaches alone."""

import pytest
from test_verify import write

from p2pwhist import signatures
from p2pwhist.games.boxwhist.engine import BoxWhist
from p2pwhist.inprocess import random_match
from p2pwhist.signatures import CheckedAhead
from p2pwhist.signed import parse
from p2pwhist.transcript import TranscriptError, read_transcript
from p2pwhist.verify import verify
from p2pwhist.wire import pack

WINDOW = 8


@pytest.fixture(scope="module")
def log():
    return random_match(BoxWhist(2), hands=1, seed=5)[0].log


@pytest.fixture(scope="module")
def long_log():
    """More messages than a window, so that ``verify`` starts its helper."""
    log = random_match(BoxWhist(2), hands=4, seed=6)[0].log
    assert len(log) > signatures.WINDOW + 20
    return log


def forged(message):
    """``message`` with one bit of its signature flipped: well formed, badly signed."""
    signature = bytes([message.signature[0] ^ 1]) + message.signature[1:]
    return parse(pack([message.signed, signature]))


def keys(log):
    return [player.key for player in log[0].body.players]


def test_the_helper_vouches_for_good_signatures_and_for_no_other(log):
    messages = list(log[1:])
    messages[40] = forged(messages[40])
    with CheckedAhead(iter(messages), keys(log), window=WINDOW) as checked:
        flags = [vouched for _, vouched in checked]
    assert len(flags) == len(messages)
    assert not any(flags[:WINDOW])  # read while the helper starts: left to the verifier
    assert flags[40] is False
    assert all(flags[WINDOW:40]) and all(flags[41:])


def test_a_message_from_a_seat_the_table_lacks_is_not_vouched_for(log):
    messages = list(log[1:])
    with CheckedAhead(iter(messages), keys(log)[:1], window=WINDOW) as checked:
        flags = [(message.seat, vouched) for message, vouched in checked][WINDOW:]
    assert {seat for seat, vouched in flags if vouched} == {0}
    assert any(seat == 1 for seat, _ in flags)


def test_what_the_stream_raises_comes_after_every_message_before_it(log):
    def stream():
        yield from log[1:20]
        raise TranscriptError("damaged", 20)

    taken = []
    with CheckedAhead(stream(), keys(log), window=WINDOW) as checked, \
            pytest.raises(TranscriptError, match="message 20: damaged"):
        for message, _ in checked:
            taken.append(message)
    assert taken == log[1:20]


def test_a_helper_that_dies_leaves_every_later_message_to_the_verifier(log):
    with CheckedAhead(iter(log[1:]), keys(log), window=WINDOW) as checked:
        first = [next(checked) for _ in range(WINDOW + 1)]
        assert first[-1][1] is True
        checked._helper.kill()
        checked._helper.wait()
        rest = [vouched for _, vouched in checked]
    assert len(first) + len(rest) == len(log) - 1
    assert not any(rest[WINDOW:])  # at most what it answered before it died is vouched for


def test_verify_judges_alike_with_and_without_its_helper(long_log, tmp_path, monkeypatch):
    bad = list(long_log)
    bad[300] = forged(bad[300])
    started = []
    real_start = signatures._start_helper

    def recorded_start(table_keys):
        started.append(real_start(table_keys))
        return started[-1]

    verdicts = {}
    for name, messages in ("good", long_log), ("bad", bad):
        path = write(tmp_path / f"{name}.p2pw", messages)
        monkeypatch.setattr(signatures, "_start_helper", recorded_start)
        with_helper = verify(read_transcript(path))
        monkeypatch.setattr(signatures, "_start_helper", lambda table_keys: None)
        alone = verify(read_transcript(path))
        assert with_helper.to_json() == alone.to_json()
        verdicts[name] = with_helper
    assert verdicts["good"].valid and verdicts["good"].complete
    assert not verdicts["bad"].valid and verdicts["bad"].error.seq == 300
    assert "bad signature" in verdicts["bad"].error.reason
    assert len(started) == 2 and all(helper.poll() is not None for helper in started)  # none left running


def test_verify_of_a_short_transcript_starts_no_helper(log, tmp_path, monkeypatch):
    monkeypatch.setattr(signatures, "_start_helper", lambda table_keys: pytest.fail("a helper for a short file"))
    assert len(log) < signatures.WINDOW
    assert verify(read_transcript(write(tmp_path / "short.p2pw", log))).valid
