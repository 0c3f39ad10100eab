"""What a game keeps on disk while it lasts, and the unfinished games that may be taken up
again (protocol/session.md §7, wire.md §5).

Beside the transcript (``transcript.py``), which is written ahead (every message is in it before
it is sent or relayed), a game keeps ``TRANSCRIPT.secrets``, each hand's deck secret, saved
before use, and ``TRANSCRIPT.command``, the command line that started the peer, for
``p2pwhist resume``. With the transcript they are all a crashed peer needs to rebuild itself.
Both are per-user files, made like every private file here (``home.create_private``): at once,
mode 0600, never over a file or link already there, which whoever planted it could read or
use to run a command of theirs; and read back only if they are still a regular file of the
user's, mode 0600 (``home.reopen_private``). Both go when the game ends.

A spectator's game has its transcript alone: it holds no secret and cannot be resumed, so no
file beside its transcript ever makes it look like a game to take up (``unfinished`` asks for
the secrets file), even when the spectator is killed before it can tidy up.
"""

from __future__ import annotations

import fcntl  # POSIX, as the home's private files are (O_NOFOLLOW)
import hashlib
import json
import os
import secrets
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pwhist.bodies import Table
from p2pwhist.games.base import ConfigError
from p2pwhist.games.registry import game_entry
from p2pwhist.home import (
    HomeError,
    command_path,
    create_private,
    home_dir,
    new_transcript_path,
    reopen_private,
    secrets_path,
    unfinished_games,
)
from p2pwhist.session import HOST, SECRET_SIZE, LocalError, Session, SessionError
from p2pwhist.signed import Kind, SignatureError, SignedMessage, parse, public_bytes
from p2pwhist.transcript import TranscriptError, TranscriptWriter, read_transcript, read_unfinished

MAX_COMMAND = 64 * 1024  # a command line of ours is a few hundred bytes


class SecretFile:
    """Each hand's deck secret, from the operating system's randomness (deck.md §10.6),
    appended to a file beside the transcript and synced before use.

    Its descriptor stays open for the whole game and every secret is written and synced
    through it, so replacing the directory entry meanwhile cannot redirect a secret. Reopened
    to resume a game, it gives back the secrets saved in it, in order, before it draws new
    ones. Calling it gives the next secret (the session's secret source).

    It is held (an exclusive ``flock``) for as long as it is open: one process plays a game at
    a time. A second ``p2pwhist resume`` of a game already going on is refused (``HomeError``)
    before it reads or writes a thing, instead of appending the same messages to the same
    transcript as the first. The kernel lets the lock go when the process ends, however it ends."""

    def __init__(self, path: Path, reopen: bool = False) -> None:
        self.path = path
        self._saved: list[bytes] = []
        if reopen:
            fd = reopen_private(path, "the hand secrets")
            _hold(fd, path)
            data = _read_all(fd)
            whole = len(data) - len(data) % SECRET_SIZE  # a secret cut short by a crash was never used
            os.ftruncate(fd, whole)
            self._saved = [data[at : at + SECRET_SIZE] for at in range(0, whole, SECRET_SIZE)]
        else:
            fd = create_private(path, "the hand secrets")  # HomeError if anything is there already
            _hold(fd, path)
        self._fd = fd
        self._close = weakref.finalize(self, os.close, fd)  # closed by ``discard``, or at exit

    def __call__(self) -> bytes:
        if self._saved:
            return self._saved.pop(0)
        secret = secrets.token_bytes(SECRET_SIZE)
        try:
            written = 0
            while written < len(secret):
                written += os.write(self._fd, secret[written:])
            os.fsync(self._fd)
        except OSError as error:  # ends the game as our own failure, cleanly
            raise LocalError(f"cannot save a hand secret in {self.path}: {error.strerror}") from None
        return secret

    def close(self) -> None:
        """Close the file, and so let the game go, keeping it to resume."""
        self._close()

    def discard(self) -> None:
        """Close and delete the file: every secret in it is in the finished transcript, or it
        holds none yet, or the game is over and they protect nothing."""
        self._close()
        self.path.unlink(missing_ok=True)


def _hold(fd: int, path: Path) -> None:
    """Hold the secrets file open as ``fd`` (``SecretFile``), or close it and say who has it."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise HomeError(f"another p2pwhist on this machine is playing this game now (it holds {path})") from None


def _read_all(fd: int) -> bytes:
    os.lseek(fd, 0, os.SEEK_SET)
    chunks = []
    while chunk := os.read(fd, 65536):
        chunks.append(chunk)
    return b"".join(chunks)


class GameFiles:
    """The transcript, the secrets and the command of one game of ours, open while it lasts;
    a spectator's has no secrets (``secrets`` None) and no command."""

    def __init__(self, path: Path, secret_file: SecretFile | None, writer: TranscriptWriter) -> None:
        self.path = path
        self.secrets = secret_file
        self.writer = writer

    @staticmethod
    def create(path: Path | None, start: SignedMessage, command: list[str] | None, seated: bool = True) -> GameFiles:
        """New files for the game that ``start`` opens, at ``path`` (default: a new name under
        ``$P2PWHIST_HOME/games``), with ``start`` written; a spectator's (not ``seated``), the
        transcript alone. If one cannot be made (a file or a link already there, perhaps
        planted; an unwritable folder) none is left behind, and ``HomeError`` or
        ``TranscriptError`` says why in one line."""
        path = path or new_transcript_path(hashlib.sha256(start.raw).digest())
        secret_file = SecretFile(secrets_path(path)) if seated else None
        try:
            writer = TranscriptWriter(path)
        except TranscriptError:
            if secret_file is not None:
                secret_file.discard()
            raise
        if command is not None:  # a game started with no command (``play``'s own seat) cannot be resumed
            try:
                with os.fdopen(create_private(command_path(path), "the command to resume with"), "w") as out:
                    json.dump({"argv": command}, out)
            except HomeError:
                writer.close()
                path.unlink(missing_ok=True)  # ours: made a moment ago, and empty but for its header
                if secret_file is not None:
                    secret_file.discard()
                raise
        files = GameFiles(path, secret_file, writer)
        files.add(start)
        return files

    def add(self, message: SignedMessage) -> None:
        self.writer.append(message)

    def sync(self) -> None:
        self.writer.sync()

    def evidence(self, raw: bytes) -> None:
        """Write the message we refused, before our ABORT, so that anyone who verifies the
        transcript reaches our verdict. A frame that is not even a message proves nothing."""
        try:
            self.writer.append(parse(raw))
        except SignatureError:
            pass

    def close(self, over: bool, warn: Callable[[str], None]) -> None:
        """Close the transcript and the secrets, and so let the game go; once it is ``over``,
        delete the secrets and the command: every secret still held is in the transcript, or
        protects nothing any more."""
        self.writer.close()
        if self.secrets is not None and over:
            self.secrets.discard()
        elif self.secrets is not None:
            self.secrets.close()  # kept, to go on with
        if over:
            try:
                command_path(self.path).unlink(missing_ok=True)
            except OSError as error:  # it resumes nothing without the secrets: a warning, not a failure
                warn(f"Warning: cannot delete {command_path(self.path)}: {error.strerror}")


def read_command(transcript: Path) -> list[str]:
    """The command line that started the game in ``transcript``, from its command file, read
    without following a link and only if it is a private file of the user's (else
    ``HomeError``): another user's file must never choose what ``p2pwhist resume`` runs."""
    where = command_path(transcript)
    fd = reopen_private(where, "the command to resume with")
    try:
        data = os.read(fd, MAX_COMMAND + 1)
    finally:
        os.close(fd)
    try:
        argv = json.loads(data)["argv"]
    except (ValueError, KeyError, TypeError):
        argv = None
    if len(data) > MAX_COMMAND or not (isinstance(argv, list) and all(isinstance(a, str) for a in argv)
                                       and argv[:1] in (["play"], ["host"], ["join"])):
        raise HomeError(f"{where} does not hold a play, host or join command")
    return argv


@dataclass(frozen=True)
class Unfinished:
    """A game of ours that stopped before its end (a crash, Ctrl-C, a lost connection), as its
    transcript's first message says."""

    path: Path
    start: SignedMessage
    seat: int

    @property
    def table(self) -> Table:
        assert isinstance(self.start.body, Table)
        return self.start.body

    @property
    def game_id(self) -> bytes:
        return hashlib.sha256(self.start.raw).digest()

    def describe(self) -> str:
        """"Box Whist with bob and carol, hosted by you"."""
        players = self.table.players
        others = [p.name for seat, p in enumerate(players) if seat != self.seat]
        host = "you" if self.seat == HOST else players[HOST].name
        return f"{game_entry(self.table.game).text.title} with {', '.join(others)}, hosted by {host}"


def unfinished(path: Path, key: Ed25519PrivateKey) -> Unfinished:
    """The unfinished game in ``path`` in which ``key`` holds a seat; ``ConfigError`` if it is
    not one (no secrets file beside it: the game is over, or never was ours)."""
    if not secrets_path(path).is_file():
        raise ConfigError(f"{path} is not an unfinished game of yours: there is no {secrets_path(path).name} "
                          "beside it (a game deletes it when it ends)")
    try:
        start = next(read_transcript(path))
    except StopIteration:
        raise ConfigError(f"{path} holds no message") from None
    except TranscriptError as error:
        raise ConfigError(f"{path}: {error}") from None
    table = start.body
    mine = public_bytes(key.public_key())
    players = table.players if isinstance(table, Table) else ()
    seats = [seat for seat, player in enumerate(players) if player.key == mine]
    if start.kind is not Kind.START or not seats:
        raise ConfigError(f"{path} is not a game in which your key holds a seat")
    return Unfinished(path, start, seats[0])


def our_unfinished(key: Ed25519PrivateKey) -> list[Unfinished]:
    """Our unfinished games under ``$P2PWHIST_HOME/games``, newest first."""
    found = []
    for path in unfinished_games():
        try:
            found.append(unfinished(path, key))
        except ConfigError:
            continue
    return found


def started_by(argv: list[str]) -> Path | None:
    """The newest unfinished game that this very command line started."""
    for path in unfinished_games():
        try:
            if read_command(path) == argv:
                return path
        except HomeError:
            continue
    return None


def reopen(game: Unfinished, key: Ed25519PrivateKey) -> tuple[Session, GameFiles]:
    """Our session rebuilt from the transcript and the saved secrets (session.md §7), and the
    game's files reopened to go on; ``ConfigError`` in one line when the transcript does not
    rebuild (damaged, edited, or the game is over)."""
    try:
        secret_file = SecretFile(secrets_path(game.path), reopen=True)  # first: the game is ours alone now
    except HomeError as error:
        raise ConfigError(f"cannot resume {game.path}: {error}") from None
    try:
        log = read_unfinished(game.path)  # which may cut a torn message off its end
    except TranscriptError as error:
        secret_file.close()
        raise ConfigError(f"cannot resume {game.path}: {error}") from None
    try:
        session = Session.resume(log, game.seat, key, secret_file)
    except LocalError as error:  # our own transcript or secrets were changed: kept, to be looked at
        raise ConfigError(f"cannot resume {game.path}: {error}") from None
    except SessionError as error:  # the log ends in a stop or a verdict: the game is over
        stopped: SessionError | None = error
    else:
        stopped = session.error
    if stopped is not None:
        secret_file.discard()
        command_path(game.path).unlink(missing_ok=True)
        raise ConfigError(f"{game.path} is a game that was stopped ({stopped}): there is nothing to resume")
    return session, GameFiles(game.path, secret_file, TranscriptWriter(game.path, reopen=True))


def resume_argv(path: Path | None) -> list[str]:
    """The command line that goes on with the unfinished game in ``path`` (default: the newest
    of ours): the play, host or join command that started it, with its transcript named, as an
    absolute path (we may be elsewhere now). ``ConfigError`` in one line when there is none."""
    if path is None:
        games = unfinished_games()
        if not games:
            raise ConfigError(f"there is no unfinished game to resume in {home_dir() / 'games'}")
        path = games[0]
    if not path.is_file():
        raise ConfigError(f"there is no file {path}")
    if not secrets_path(path).is_file():
        raise ConfigError(f"{path} is not an unfinished game: the secrets file beside it is gone "
                          "(a game deletes it when it ends)")
    try:
        argv = read_command(path)
    except HomeError as error:
        raise ConfigError(f"cannot tell how {path} was played ({error}); run the play, host or join command that "
                          "started it again, with --transcript") from None
    if "--transcript" in argv:  # named again below
        at = argv.index("--transcript")
        argv = argv[:at] + argv[at + 2 :]
    return [*argv, "--transcript", str(path.absolute())]
