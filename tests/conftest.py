"""Fixtures every test file shares."""

import pytest
import trio.testing


@pytest.fixture
def autojump_clock() -> trio.testing.MockClock:
    """pytest-trio's virtual clock, started where trio's real one might be: at an arbitrary,
    large time. A machine that counts from 0 rather than from the moment it was told of would
    pass with a clock that starts at 0, and fail for real (a returning joiner once declared its
    host absent at once)."""
    clock = trio.testing.MockClock(autojump_threshold=0)
    clock.jump(86_400)
    return clock
