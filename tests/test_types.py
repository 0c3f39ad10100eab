"""The package type-checks: ``mypy`` (its settings in pyproject.toml) finds nothing.

Types here are more than documentation: a value that may be None, passed where it may not,
is a fault a test can miss until a user meets it (mypy found one, an old START's missing
limits read after Ctrl-C, that no test had reached). The check runs in the suite, so no change
lands that brings one back."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_package_type_checks(tmp_path: Path) -> None:
    # A cache of its own: a shared one could hold another tree's results, and the suite's
    # workers may run this beside other checks.
    done = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
