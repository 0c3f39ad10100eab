"""The table: how peers meet, play over their connections, return, and part, as pure machines.

Nothing here opens a socket, reads a clock or draws randomness: the edge (``p2pwhist.net``)
hands each machine what happened (an ``Event``: a connection opened, a frame received, a
connection lost, our person's answer) with the time, and does what it answers (an
``Action``: send, close, record, ask, show), in order. So every rule of the meeting, the
relay, the returns and the end is a transition a test can drive in memory, with any clock.

- ``HostMachine``: the host's door (``Lobby``: admission limits, HELLO / WELCOME / READY,
  trust decisions, seating, VOUCHes, START), then the game over the seats' connections
  (``Relay``: delivery, lost and returning seats, NOTICEs, forfeits by absence), then DONE.
- ``JoinerMachine``: a joiner's arrival (HELLO, checking the host, READY, the LOBBY news and
  its VOUCHes, START), the game over its one connection, its returns (REJOIN), DONE.
- ``SpectatorMachine``: a spectator's side (WATCH, then every message checked as it comes by
  a session holding no seat); the host's side of spectators is its ``Gallery``.
- ``Peer``: what both do with the session (``p2pwhist.session``): check, record, pass on and
  take each message, make ours, forfeits and ABORTs.
- ``Talk``: table talk, the lines seated players say to each other outside the log (CHAT).
- The frames outside the log, each a typed value decoded once (``read_from_joiner``,
  ``read_from_host``), and the limits and words that go with them.

The wire format is protocol/wire.md §2; the faults and returns are protocol/session.md §7.
"""

from p2pwhist.table._actions import (
    Action,
    Begin,
    BeginFailed,
    Begun,
    Choose,
    Chosen,
    Close,
    Connect,
    ConnId,
    Event,
    Finish,
    Heard,
    Keep,
    Lost,
    Opened,
    OpenFailed,
    Received,
    Record,
    Remember,
    Reopen,
    Report,
    Say,
    Send,
    Show,
    Sit,
    Spectate,
    Unchoose,
    Unvet,
    Vet,
    Vetted,
    Wish,
)
from p2pwhist.table._chat import PRESETS, Talk, chat_line, relay_chat, shown, typed_line
from p2pwhist.table._errors import LocalTableError, Refused, RemoteTableError, TableError, UnattributedTableError
from p2pwhist.table._frames import (
    MAX_CHAT,
    PROTOCOL_VERSION,
    Chat,
    Done,
    FrameError,
    FromHost,
    FromJoiner,
    Hello,
    Lobby,
    Logged,
    Notice,
    Presence,
    Ready,
    Refuse,
    Rejoin,
    Resumed,
    Vouch,
    Watch,
    Welcome,
    encode,
    read_for_spectator,
    read_from_host,
    read_from_joiner,
)
from p2pwhist.table._host import HostMachine
from p2pwhist.table._joiner import JoinerMachine, Resumable
from p2pwhist.table._limits import HANDSHAKE_FRAME, Limits
from p2pwhist.table._spectator import SpectatorMachine
from p2pwhist.table._trust import KeyJudgement, judge_key
from p2pwhist.table._words import notice_line

__all__ = [
    "Action",
    "Begin",
    "BeginFailed",
    "Begun",
    "Chat",
    "Choose",
    "Chosen",
    "Close",
    "ConnId",
    "Connect",
    "Done",
    "Event",
    "Finish",
    "FrameError",
    "FromHost",
    "FromJoiner",
    "HANDSHAKE_FRAME",
    "Heard",
    "Hello",
    "HostMachine",
    "JoinerMachine",
    "Keep",
    "KeyJudgement",
    "Limits",
    "Lobby",
    "LocalTableError",
    "Logged",
    "MAX_CHAT",
    "Lost",
    "Notice",
    "OpenFailed",
    "Opened",
    "PRESETS",
    "PROTOCOL_VERSION",
    "Presence",
    "Ready",
    "Received",
    "Record",
    "Refuse",
    "Refused",
    "Rejoin",
    "Remember",
    "RemoteTableError",
    "Reopen",
    "Report",
    "Resumable",
    "Resumed",
    "Say",
    "Send",
    "Show",
    "Sit",
    "Spectate",
    "SpectatorMachine",
    "Watch",
    "TableError",
    "Talk",
    "UnattributedTableError",
    "Unchoose",
    "Unvet",
    "Vet",
    "Vetted",
    "Vouch",
    "Welcome",
    "Wish",
    "chat_line",
    "encode",
    "judge_key",
    "notice_line",
    "read_for_spectator",
    "read_from_host",
    "read_from_joiner",
    "relay_chat",
    "shown",
    "typed_line",
]
