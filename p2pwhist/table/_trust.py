"""Whether to play with a key: what we know of it, and the words for each answer
(protocol/wire.md §5).

Identity is the key; the name is only a label anyone can choose. A key we played with before
is trusted, under any name. A new key is put to our person, or, with nobody to ask, accepted;
when its name is one we knew with another key, both fingerprints are named, so that a
stranger who borrows a name cannot pass for its owner, nor lock the owner out. The edge reads
the known peers and asks the person; this module only judges and words.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from p2pwhist.identity import fingerprint


@dataclass(frozen=True)
class KeyJudgement:
    """What we know of ``key``, which calls itself ``name``: the name it last played under, if
    we played with it (``label``); else the keys we knew under that name (``before``, the
    newest last, at most two)."""

    name: str
    key: bytes
    label: str | None
    before: tuple[str, ...]

    @property
    def known(self) -> bool:
        return self.label is not None

    @property
    def print(self) -> str:
        return fingerprint(self.key)

    def remark(self) -> str | None:
        """For a known key under a new name: a line saying so."""
        if self.label is None or self.label == self.name:
            return None
        return f"{self.name} has the key you played with as {self.label!r} ({self.print})"

    def question(self) -> str:
        """What our person is asked about a new key."""
        if self.before:  # the name is known, the key is not: say so plainly, it may be an impostor
            return (f"This is a different key from the {self.name!r} you played before (now {self.print}, "
                    f"before {' or '.join(self.before)}): someone else may be using that name. "
                    "Play with this key? [y/N] ")
        return f"New player {self.name!r} with key {self.print}. Trust it? [y/N] "

    def warning(self) -> str | None:
        """With nobody to ask, a new key is accepted; when its name had another key, a line says so."""
        if not self.before:
            return None
        return (f"Warning: {self.name!r} has a different key from the {self.name!r} you played before "
                f"(now {self.print}, before {' or '.join(self.before)}); accepting it, as nobody is here to ask")

    def refusal(self, us: str) -> str:
        """What the player refused is told: by ``us``, the name of whoever refused."""
        if self.before:
            return (f"{us} did not accept key {self.print} for {self.name!r}: it is not the key they played with "
                    "under that name")
        return f"{us} did not accept your key {self.print}"

    def refused_line(self) -> str:
        """What our own person reads when they refuse."""
        if self.before:
            return (f"{self.name!r} has a different key from the {self.name!r} you played before "
                    f"(now {self.print}, before {' or '.join(self.before)}), and was not trusted")
        return f"{self.name} (key {self.print}) was not trusted"


def judge_key(known: Mapping[str, str], name: str, key: bytes) -> KeyJudgement:
    """What ``known`` (fingerprint → the name it last played under, oldest first) says of ``key``."""
    print_ = fingerprint(key)
    label = known.get(print_)
    before = () if label is not None else tuple([p for p, n in known.items() if n == name][-2:])
    return KeyJudgement(name, key, label, before)
