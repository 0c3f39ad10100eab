"""A joiner's arrival as a pure machine (``p2pwhist.table.JoinerMachine``): what it makes of a
host that is no p2pwhist host, of a slow trust question, of the lobby's news, and of START."""

from __future__ import annotations

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pwhist.bodies import Player, Table
from p2pwhist.games.boxwhist.engine import BoxWhist
from p2pwhist.games.match import MatchLength
from p2pwhist.identity import fingerprint
from p2pwhist.session import start_message
from p2pwhist.table import (
    HANDSHAKE_FRAME,
    PROTOCOL_VERSION,
    Close,
    Connect,
    Finish,
    Hello,
    JoinerMachine,
    Limits,
    Lobby,
    Lost,
    Opened,
    OpenFailed,
    Ready,
    Received,
    Refuse,
    Refused,
    RemoteTableError,
    Reopen,
    Report,
    Resumable,
    Send,
    Sit,
    TableError,
    UnattributedTableError,
    Vet,
    Vetted,
    Vouch,
    Welcome,
    encode,
    read_from_joiner,
)

LIMITS = Limits()


class Arrival:
    """A joiner machine whose host is played by the test."""

    def __init__(self, **extra) -> None:
        self.key = Ed25519PrivateKey.generate()
        self.host_key = Ed25519PrivateKey.generate()
        self.host = Player("alice", self.host_key.public_key().public_bytes_raw())
        self.machine = JoinerMachine("bob", self.key, "alice.lan:7878", LIMITS, **extra)
        self.now = 0.0
        self.actions = self.machine.begin(self.now)
        assert self.actions == [Connect()]
        self.feed(Opened(1))

    def feed(self, event) -> list:
        actions = self.machine.handle(event, self.now)
        self.actions += actions
        return actions

    def tick(self, at: float) -> list:
        self.now = at
        actions = self.machine.tick(at)
        self.actions += actions
        return actions

    def from_host(self, frame) -> list:
        return self.feed(Received(1, encode(frame) if not isinstance(frame, bytes) else frame))

    def welcome(self, game: bytes | None = None) -> list:
        return self.from_host(Welcome(PROTOCOL_VERSION, "alice", self.host.key, bytes(32), game))

    def sent(self) -> list:
        return [read_from_joiner(a.payload) for a in self.actions if isinstance(a, Send)]

    def result(self):
        (finish,) = [a for a in self.actions if isinstance(a, Finish)]
        return finish.result

    def lines(self) -> list[str]:
        return [a.line for a in self.actions if isinstance(a, Report)]


def test_hello_first_and_a_handshake_sized_limit_until_the_host_has_spoken():
    arrival = Arrival()
    assert arrival.sent() == [Hello(PROTOCOL_VERSION, "bob", arrival.machine.me.key)]
    assert arrival.machine.frame_limit(1) == HANDSHAKE_FRAME


def test_a_silent_server_is_named_in_one_line_after_the_hello_limit():
    arrival = Arrival()
    assert arrival.machine.deadline == LIMITS.hello
    arrival.tick(LIMITS.hello)
    result = arrival.result()
    assert isinstance(result, UnattributedTableError)
    assert str(result) == "the host alice.lan:7878 did not answer within 10 s"


@pytest.mark.parametrize("sample, words", [
    (b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n", "it sent 'HTTP/1.1 400 Bad Request'"),
    (bytes.fromhex("15030300020228"), "it sent bytes 15 03 03 00 02 02 28"),
])
def test_an_http_or_tls_server_does_not_speak_p2pwhist(sample, words):
    arrival = Arrival()
    arrival.feed(Lost(1, "sent a frame of 1213486160 bytes, over the 1024-byte limit", sample))
    result = arrival.result()
    assert isinstance(result, RemoteTableError)
    assert str(result) == f"alice.lan:7878 does not speak p2pwhist ({words})"


@pytest.mark.parametrize("payload", [b"\x92garbage", b"\x81\xc1", b"\x81\xa7welcome" + b"\x91" * 995 + b"\xc0"],
                         ids=["array", "malformed-map", "deep-map"])
def test_a_garbage_frame_does_not_speak_p2pwhist_either(payload):
    arrival = Arrival()
    arrival.from_host(payload)
    assert "does not speak p2pwhist (it sent" in str(arrival.result())


def test_a_malformed_frame_from_the_host_while_we_wait_ends_the_table_in_one_line():
    arrival = Arrival()
    arrival.welcome()
    arrival.feed(Vetted(arrival.host.key, True))
    arrival.from_host(b"\x81\xa5lobby\xc1")
    result = arrival.result()
    assert isinstance(result, RemoteTableError)
    assert str(result) == "alice (the host) sent a bad frame: malformed msgpack (FormatError)"


def test_unreachable_is_one_line():
    arrival = JoinerMachine("bob", Ed25519PrivateKey.generate(), "alice.lan:7878", LIMITS)
    arrival.begin(0.0)
    (finish,) = [a for a in arrival.handle(OpenFailed("Connection refused"), 0.0) if isinstance(a, Finish)]
    assert str(finish.result) == "cannot reach the host alice.lan:7878: Connection refused"


def test_a_refusal_is_the_hosts_own_words():
    arrival = Arrival()
    arrival.from_host(Refuse("the table is full"))
    result = arrival.result()
    assert isinstance(result, Refused) and str(result) == "the host alice.lan:7878 refused us: the table is full"


def test_expect_checks_the_hosts_key_and_stands_for_trust():
    arrival = Arrival(expect="0000-0000-0000-0000-0000-0000-0000-0000")
    arrival.welcome()
    result = arrival.result()
    assert isinstance(result, TableError) and "does not sit down: the host's key is" in str(result)
    good = Arrival()
    good.machine.expect = fingerprint(good.host.key)
    good.welcome()
    assert Ready() in good.sent() and not [a for a in good.actions if isinstance(a, Vet)]


def test_our_person_takes_as_long_as_they_need_about_the_host():
    arrival = Arrival()
    arrival.welcome()
    assert Vet("alice", arrival.host.key) in arrival.actions
    assert arrival.machine.deadline is None  # nothing of ours runs out while our person thinks
    arrival.now = 900.0
    arrival.feed(Vetted(arrival.host.key, True))
    assert arrival.sent()[-1] == Ready()


def test_refusing_the_host_leaves_before_sitting_down_and_says_so_to_the_host():
    arrival = Arrival()
    arrival.welcome()
    arrival.feed(Vetted(arrival.host.key, False))
    # One line of its own: the edge has said which key was refused and why (it said it twice)
    assert str(arrival.result()) == "bob does not sit down at alice's table" and Ready() not in arrival.sent()
    # The host hears it (it heard only a closed connection), and the frame leaves before the close
    assert arrival.sent()[-1] == Vouch(arrival.host.key, False)
    close = next(a for a in arrival.actions if isinstance(a, Close))
    assert close.part and close.within > 0


def test_a_host_key_not_the_expected_one_is_refused_to_the_host_too():
    arrival = Arrival(expect="0000-1111-2222-3333-4444-5555-6666-7777")
    arrival.welcome()
    assert arrival.sent()[-1] == Vouch(arrival.host.key, False) and Ready() not in arrival.sent()
    assert str(arrival.result()).startswith("bob does not sit down: the host's key is ")


def test_waiting_says_for_whom_and_the_news_keeps_the_host_alive():
    arrival = Arrival()
    arrival.welcome()
    arrival.feed(Vetted(arrival.host.key, True))
    me = arrival.machine.me
    arrival.from_host(Lobby(3, (arrival.host,), None, ()))
    assert arrival.lines()[-2:] == [f"Waiting for alice to accept you; your fingerprint is {fingerprint(me.key)}",
                                    "1 of 3 seats taken: alice"]
    for at in (30.0, 60.0, 90.0, 120.0):  # news every 30 s: never silent for 95 s
        arrival.tick(at)
        arrival.from_host(Lobby(3, (arrival.host,), None, ()))
    assert not [a for a in arrival.actions if isinstance(a, Finish)]
    assert len([line for line in arrival.lines() if line.startswith("Waiting for alice")]) == 1  # said once
    arrival.tick(120.0 + LIMITS.silence)
    assert "has said nothing for 1:35: it is gone" in str(arrival.result())


def test_each_other_player_is_put_to_us_once_and_answered_by_vouch():
    arrival = Arrival()
    arrival.welcome()
    arrival.feed(Vetted(arrival.host.key, True))
    me = arrival.machine.me
    carol = Player("carol", Ed25519PrivateKey.generate().public_key().public_bytes_raw())
    news = Lobby(4, (arrival.host, me, carol), 1, ((1, 2), (2, 1)))
    arrival.from_host(news)
    assert Vet("carol", carol.key) in arrival.actions
    assert "You have not yet said whether you play with carol" in arrival.lines()
    arrival.from_host(news)
    assert len([a for a in arrival.actions if isinstance(a, Vet)]) == 2  # the host, then carol once
    arrival.feed(Vetted(carol.key, False))
    assert arrival.sent()[-1] == Vouch(carol.key, False)


def _start(arrival: Arrival, *others: Player) -> bytes:
    table = Table(BoxWhist(2 + len(others)), MatchLength(hands=1), (arrival.host, arrival.machine.me, *others),
                  bytes(32), "2026-12-02")
    return start_message(arrival.host_key, table).raw


def test_start_with_the_players_we_accepted_sits_us_down():
    arrival = Arrival()
    arrival.welcome()
    arrival.feed(Vetted(arrival.host.key, True))
    start = _start(arrival)
    actions = arrival.from_host(start)
    (sit,) = [a for a in actions if isinstance(a, Sit)]
    assert sit.seat == 1 and sit.start.raw == start


def test_start_with_a_player_we_never_accepted_is_refused_with_a_signed_abort():
    arrival = Arrival()
    arrival.welcome()
    arrival.feed(Vetted(arrival.host.key, True))
    stranger = Player("mallory", Ed25519PrivateKey.generate().public_key().public_bytes_raw())
    arrival.from_host(_start(arrival, stranger))
    result = arrival.result()
    assert isinstance(result, RemoteTableError) and "without our word on mallory" in str(result)
    assert any(isinstance(a, Send) and a.payload[0] & 0xF0 == 0x90 for a in arrival.actions)  # the ABORT


def test_a_host_playing_an_unfinished_game_of_ours_takes_it_up():
    game = bytes(range(32))
    arrival = Arrival(resumable=[Resumable(game, "Box Whist with alice, hosted by alice", "old.p2pw")])
    arrival.welcome(game)
    assert arrival.actions[-1] == Reopen(game)


def test_a_new_table_is_joined_and_an_unfinished_game_is_named_in_one_line():
    arrival = Arrival(resumable=[Resumable(bytes(32), "Box Whist with dave, hosted by dave", "old.p2pw")])
    arrival.welcome()
    assert arrival.lines() == ["An unfinished game (Box Whist with dave, hosted by dave) is waiting in old.p2pw: "
                               "p2pwhist resume old.p2pw goes back to it. This is a new table."]
    assert Vet("alice", arrival.host.key) in arrival.actions


def test_a_host_in_another_game_of_which_we_hold_nothing():
    arrival = Arrival()
    arrival.welcome(bytes(32))
    assert "no unfinished transcript of ours" in str(arrival.result())
    assert any(isinstance(a, Close) for a in arrival.actions)


def test_a_host_naming_a_game_of_ours_must_be_that_games_host():
    """A game's id is no secret: a host with another key that names it is not taken up."""
    from p2pwhist.session import Session
    from p2pwhist.table import Begun

    arrival = Arrival()
    real_host = Ed25519PrivateKey.generate()
    table = Table(BoxWhist(2), MatchLength(hands=1),
                  (Player("alice", real_host.public_key().public_bytes_raw()), arrival.machine.me), bytes(32),
                  "2026-12-02")
    start = start_message(real_host, table)
    session = Session(start, 1, arrival.key, lambda: bytes(32))
    arrival.machine.resumable = [Resumable(session.game_id, "Box Whist with alice, hosted by alice", "old.p2pw")]
    arrival.welcome(session.game_id)  # from arrival.host_key, not real_host
    assert arrival.actions[-1] == Reopen(session.game_id)
    arrival.feed(Begun(session))
    result = arrival.result()
    assert isinstance(result, RemoteTableError) and "another key than that game's host" in str(result)


def test_a_game_of_ours_taken_up_on_this_connection_gives_the_host_the_whole_wait_from_now():
    """A joiner restarted with its very command, whose host names the game, used to declare
    the host absent at its next tick: its time away was counted from the clock's origin (0),
    and an edge's clock (trio's) starts anywhere. It is counted from the moment we take the
    game up again, like a return by ``resume``."""
    from p2pwhist.session import Session
    from p2pwhist.table import Begun

    arrival = Arrival()
    arrival.now = 50_000.0  # trio's clock starts at a large arbitrary offset
    table = Table(BoxWhist(2), MatchLength(hands=1), (arrival.host, arrival.machine.me), bytes(32), "2026-12-02")
    session = Session(start_message(arrival.host_key, table), 1, arrival.key, lambda: bytes(32))
    arrival.machine.resumable = [Resumable(session.game_id, "Box Whist with alice, hosted by alice", "old.p2pw")]
    arrival.welcome(session.game_id)
    arrival.feed(Begun(session))
    arrival.tick(arrival.now + 1)
    assert not [a for a in arrival.actions if isinstance(a, Finish)], arrival.lines()
    assert arrival.machine.deadline is not None and arrival.machine.deadline > arrival.now


def test_a_flood_of_notices_shows_each_seats_news_once_until_it_changes_or_comes_again_in_time():
    """A host may send NOTICEs as fast as its connection goes; each was a line on our screen. The
    same seat's same news again within a second (an honest host sends it once an interval, at
    least 2.5 s) is dropped; other news, and the same news in time, show."""
    from p2pwhist.session import Session
    from p2pwhist.signed import parse
    from p2pwhist.table import Begun, Notice, Presence

    arrival = Arrival()
    arrival.welcome()
    arrival.feed(Vetted(arrival.host.key, True))
    carol = Player("carol", Ed25519PrivateKey.generate().public_key().public_bytes_raw())
    arrival.from_host(Lobby(3, (arrival.host, arrival.machine.me, carol), 1, ()))
    arrival.feed(Vetted(carol.key, True))
    start = _start(arrival, carol)
    arrival.from_host(start)
    arrival.feed(Begun(Session(parse(start), 1, arrival.key, lambda: bytes(32))))

    def shown(*notices: Notice) -> list[str]:
        before = len(arrival.lines())
        for notice in notices:
            arrival.from_host(notice)
        return arrival.lines()[before:]

    assert len(shown(*[Notice(2, Presence.SLOW, n, 2000 - n) for n in range(1000)])) == 1
    assert shown(Notice(2, Presence.GONE, 5, 295)) == ["carol lost connection; waiting for them to return (4:55 left)."]
    assert shown(Notice(0, Presence.SLOW, 5, 295)) == ["Waiting for alice for 0:05; they forfeit in 4:55."]
    arrival.now += LIMITS.notice_interval  # an honest host's next word on it
    assert shown(Notice(2, Presence.GONE, 35, 265), Notice(2, Presence.GONE, 35, 265)) == [
        "carol lost connection; waiting for them to return (4:25 left)."]
    assert len(arrival.machine.noticed) == 2  # one entry a seat, however many NOTICEs
