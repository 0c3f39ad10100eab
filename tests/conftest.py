"""Fixtures every test file shares."""

import signal

import pytest
import trio.testing

# A test run started in the background by a shell without job control begins with Ctrl-C
# ignored, and every program it starts would inherit that: the tests that press Ctrl-C at a
# program (it must stop, and clean up) would see it ignored. With Python's own handler here, the
# programs start with Ctrl-C's default, as they do from a terminal.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture
def autojump_clock() -> trio.testing.MockClock:
    """pytest-trio's virtual clock, started where trio's real one might be: at an arbitrary,
    large time. A machine that counts from 0 rather than from the moment it was told of would
    pass with a clock that starts at 0, and fail for real (a returning joiner once declared its
    host absent at once)."""
    clock = trio.testing.MockClock(autojump_threshold=0)
    clock.jump(86_400)
    return clock
