"""The host's door as a pure machine (``p2pwhist.table``): admission, the handshake, trust
decisions that take as long as a person needs, seating, VOUCHes, START, and refusals, each a
transition driven by values in memory, with the time given by the test."""

from __future__ import annotations

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import given, settings
from hypothesis import strategies as st

from p2pwhist.bodies import Player
from p2pwhist.signed import fingerprint
from p2pwhist.table import (
    PROTOCOL_VERSION,
    Begin,
    Close,
    Hello,
    HostMachine,
    Limits,
    Lobby,
    Lost,
    Opened,
    Ready,
    Received,
    Refuse,
    Rejoin,
    Report,
    Send,
    Unvet,
    Vet,
    Vetted,
    Vouch,
    Welcome,
    encode,
    read_from_host,
)

LIMITS = Limits()


def key() -> bytes:
    return Ed25519PrivateKey.generate().public_key().public_bytes_raw()


class Door:
    """A host machine and the frames it sent, per connection; the clock is ``now``."""

    def __init__(self, seats: int = 2, limits: Limits = LIMITS) -> None:
        self.me = Player("alice", key())
        self.machine = HostMachine(self.me, seats, limits, lambda: bytes(32))
        self.now = 0.0
        self.sent: dict[int, list] = {}
        self.actions: list = []
        self.closed: set[int] = set()
        self.players: dict[int, Player] = {}

    def feed(self, event) -> list:
        return self._did(self.machine.handle(event, self.now))

    def tick(self, at: float) -> list:
        self.now = at
        return self._did(self.machine.tick(at))

    def _did(self, actions: list) -> list:
        self.actions += actions
        for action in actions:
            if isinstance(action, Send):
                self.sent.setdefault(action.conn, []).append(read_from_host(action.payload))
            elif isinstance(action, Close):
                self.closed.add(action.conn)
        return actions

    def last(self, conn: int):
        return self.sent[conn][-1]

    def lines(self) -> list[str]:
        return [a.line for a in self.actions if isinstance(a, Report)]

    def arrive(self, conn: int, name: str, address: str | None = None) -> Player:
        player = Player(name, key())
        self.players[conn] = player
        self.feed(Opened(conn, address or f"10.0.0.{conn}", f"10.0.0.{conn}:5000"))
        self.feed(Received(conn, encode(Hello(PROTOCOL_VERSION, name, player.key))))
        return player

    def ready(self, conn: int) -> list:
        return self.feed(Received(conn, encode(Ready())))

    def sit(self, conn: int, name: str) -> Player:
        player = self.arrive(conn, name)
        self.ready(conn)
        self.feed(Vetted(player.key, True))
        return player

    def vouch_all(self) -> list:
        """Every seated joiner says yes about every other."""
        out = []
        for conn, player in self.players.items():
            for other in self.players.values():
                if other is not player and conn not in self.closed:
                    out += self.feed(Received(conn, encode(Vouch(other.key, True))))
        return out


def begins(actions: list) -> list[Begin]:
    return [a for a in actions if isinstance(a, Begin)]


def test_hello_gets_welcome_naming_no_game_and_ready_puts_the_key_to_our_person():
    door = Door()
    bob = door.arrive(1, "bob")
    welcome = door.last(1)
    assert isinstance(welcome, Welcome) and welcome.game is None and welcome.key == door.me.key
    # Our person hears who is there while the joiner checks our key (they heard nothing before)
    assert door.lines() == ["bob is at the door, checking your key before sitting down"]
    actions = door.ready(1)
    assert Vet("bob", bob.key) in actions
    news = door.last(1)  # told at once that it waits for us
    assert isinstance(news, Lobby) and news.you is None and [p.name for p in news.players] == ["alice"]


def test_our_person_may_take_minutes_to_decide_and_the_joiner_is_told_it_waits_meanwhile():
    """A host who took more than 10 s to answer "Trust it?" crashed the joiner: the table now
    waits for the answer within Limits.trust, telling the joiner every news_every seconds."""
    door = Door()
    bob = door.arrive(1, "bob")
    door.ready(1)
    told = len(door.sent[1])
    for at in range(30, 300, 30):
        door.tick(at)
    assert len(door.sent[1]) - told >= 8 and all(isinstance(f, Lobby) and f.you is None for f in door.sent[1][told:])
    assert 1 not in door.closed
    door.now = 299.0
    actions = door.feed(Vetted(bob.key, True))
    assert begins(actions) and any(line.startswith("bob joined") for line in door.lines())


def test_nobody_answering_at_all_is_refused_after_the_trust_limit():
    door = Door()
    bob = door.arrive(1, "bob")
    door.ready(1)
    actions = door.tick(LIMITS.trust)
    assert Unvet(bob.key, "Refused bob: alice did not decide whether to play with you within 10:00") in actions
    assert isinstance(door.last(1), Refuse) and "did not decide" in door.last(1).reason and 1 in door.closed


def test_a_joiner_who_does_not_accept_our_key_says_so_and_our_person_hears_it_with_our_fingerprint():
    door = Door()
    door.arrive(1, "bob")
    door.feed(Received(1, encode(Vouch(door.me.key, False))))
    assert door.lines() == ["bob is at the door, checking your key before sitting down",
                            f"bob did not accept your key {fingerprint(door.me.key)}, and does not sit down"]
    assert 1 in door.closed and [type(frame) for frame in door.sent[1]] == [Welcome]  # no frame back
    door.feed(Lost(1, "closed the connection"))  # its hanging up says nothing more
    assert len(door.lines()) == 2 and 1 not in door.machine.lobby.arrivals


@pytest.mark.parametrize("about_us, trust", [(True, True), (False, False)])
def test_at_the_door_a_vouch_is_only_a_refusal_of_our_key(about_us, trust):
    door = Door()
    door.arrive(1, "bob")
    door.feed(Received(1, encode(Vouch(door.me.key if about_us else key(), trust))))
    assert door.lines()[-1] == "Refused bob: not a p2pwhist READY: expected a READY, not a VOUCH"
    assert 1 in door.closed


def test_a_joiner_who_leaves_while_checking_our_key_is_said_to_have_left_then():
    """Our person hears who was at the door and that they left while checking our key (a
    joiner that refuses it says so first: above)."""
    door = Door()
    door.arrive(1, "bob")
    door.feed(Lost(1, "closed the connection"))
    assert door.lines() == ["bob is at the door, checking your key before sitting down",
                            "bob left before sitting down, while checking your key (closed the connection)"]
    assert 1 not in door.machine.lobby.arrivals


def test_a_joiner_who_leaves_while_we_decide_withdraws_the_question_with_a_line():
    door = Door()
    bob = door.arrive(1, "bob")
    door.ready(1)
    from p2pwhist.table import Lost

    actions = door.feed(Lost(1, "closed"))
    assert actions[0] == Unvet(bob.key, "bob left before the game began; no need to answer about them")
    actions = door.feed(Vetted(bob.key, True))  # the person answered anyway: nobody to seat
    assert not begins(actions)
    assert door.machine.lobby.decided[bob.key] is True  # the answer is kept for this table


def test_our_answer_stands_for_the_same_key_at_this_table():
    door = Door(seats=3)
    bob = door.arrive(1, "bob")
    door.ready(1)
    door.feed(Vetted(bob.key, False))
    assert isinstance(door.last(1), Refuse) and "did not accept your key" in door.last(1).reason
    door.feed(Opened(2, "10.0.0.2", "10.0.0.2:1"))
    door.feed(Received(2, encode(Hello(PROTOCOL_VERSION, "bob", bob.key))))
    actions = door.ready(2)
    assert not [a for a in actions if isinstance(a, Vet)]  # not asked twice
    assert isinstance(door.last(2), Refuse)


@pytest.mark.parametrize("name, same_key, reason", [
    ("bob", False, "the name 'bob' is taken at this table (join again with another --name)"),
    ("alice", False, "the name 'alice' is taken at this table (join again with another --name)"),
    ("robert", True, "that key is already seated at this table"),
])
def test_a_taken_name_or_key_is_refused_in_one_line(name, same_key, reason):
    door = Door(seats=3)
    bob = door.sit(1, "bob")
    door.feed(Opened(2, "10.0.0.2", "10.0.0.2:1"))
    door.feed(Received(2, encode(Hello(PROTOCOL_VERSION, name, bob.key if same_key else key()))))
    assert door.last(2) == Refuse(reason) and 2 in door.closed


def test_a_full_table_refuses_the_next_while_its_players_still_decide():
    door = Door(seats=3)
    door.sit(1, "bob")
    door.sit(2, "carol")
    door.arrive(3, "dave")
    assert door.last(3) == Refuse("the table is full")


def test_one_joiner_refusing_another_costs_only_the_refused_their_seat():
    """One joiner refusing another used to end the table for all four: now the refused player
    leaves, the others keep their seats, and the table waits for another."""
    door = Door(seats=4)
    bob, carol, dave = door.sit(1, "bob"), door.sit(2, "carol"), door.sit(3, "dave")
    news = door.last(1)
    assert isinstance(news, Lobby) and (1, 3) in news.undecided  # bob has yet to say about dave
    door.feed(Received(1, encode(Vouch(carol.key, True))))
    door.feed(Received(2, encode(Vouch(bob.key, True))))
    actions = door.feed(Received(1, encode(Vouch(dave.key, False))))
    assert not begins(actions)
    assert isinstance(door.last(3), Refuse) and "bob did not accept you" in door.last(3).reason and 3 in door.closed
    assert "bob did not accept dave; dave leaves the table" in door.lines()
    assert [a.player.name for a in door.machine.lobby.seated] == ["bob", "carol"]
    del door.players[3]
    erin = door.sit(4, "erin")
    actions = door.vouch_all()
    (begin,) = begins(actions)
    assert [p.name for p in begin.players] == ["alice", "bob", "carol", "erin"] and begin.players[3] == erin


def test_a_joiner_who_leaves_as_the_table_fills_is_not_seated_and_the_host_waits_on():
    """Every seat is taken, and an earlier joiner hangs up before the last yes: the table is
    not full after all, so no START, even on the yes about the one who left; the next joiner
    fills the seat, and START seats the two who stayed, in the order they sat down."""
    from p2pwhist.table import Lost

    door = Door(seats=3)
    bob, carol = door.sit(1, "bob"), door.sit(2, "carol")
    door.feed(Received(1, encode(Vouch(carol.key, True))))
    actions = door.feed(Lost(1, "closed"))
    actions += door.feed(Received(2, encode(Vouch(bob.key, True))))  # carol's yes about bob, who has gone
    assert not begins(actions)
    assert "bob left before the game began; its seat is free again" in door.lines()
    assert [a.player.name for a in door.machine.lobby.seated] == ["carol"]
    news = door.last(2)
    assert isinstance(news, Lobby) and [p.name for p in news.players] == ["alice", "carol"] and news.you == 1
    del door.players[1]
    dan = door.sit(3, "dan")
    (begin,) = begins(door.vouch_all())
    assert begin.players == (door.me, carol, dan)


def test_no_start_until_everyone_has_accepted_everyone():
    door = Door(seats=3)
    bob, carol = door.sit(1, "bob"), door.sit(2, "carol")
    assert not begins(door.feed(Received(1, encode(Vouch(carol.key, True)))))
    assert begins(door.feed(Received(2, encode(Vouch(bob.key, True)))))


def test_a_seated_joiner_who_never_says_is_unseated_after_the_trust_limit():
    door = Door(seats=3)
    door.sit(1, "bob")
    door.now = 10.0
    door.sit(2, "carol")
    door.feed(Received(2, encode(Vouch(door.players[1].key, True))))
    door.tick(10.0 + LIMITS.trust)
    assert 1 in door.closed and 2 not in door.closed
    assert any("bob did not say within 10:00 whether it plays with carol" in line for line in door.lines())


def test_a_seated_joiner_that_speaks_out_of_place_has_left():
    door = Door(seats=3)
    door.sit(1, "bob")
    door.feed(Received(1, encode(Ready())))
    assert 1 in door.closed and not door.machine.lobby.seated
    assert any("bob spoke before the game began; its seat is free again" in line for line in door.lines())


@pytest.mark.parametrize("payload, words", [
    (encode(Hello(1, "bob", bytes(32))), "you speak protocol version 1; this host speaks version 3"),
    (b"\x81\xa5hello\xc0", "not a p2pwhist HELLO"),
    (encode(Ready()), "not a p2pwhist HELLO: expected a HELLO, not a READY"),
    (b"\x92\x01\x02", "not a p2pwhist HELLO: expected a HELLO, not a message of the log"),
    (b"\xc1 not msgpack", "not a p2pwhist HELLO: expected a HELLO, not malformed msgpack"),
    (b"\xa5hello", "not a p2pwhist HELLO: expected a HELLO, not 'hello'"),
    (b"\x81\xc1", "not a p2pwhist HELLO: malformed msgpack"),
    (b"\x81\xa5hello" + b"\x91" * 995 + b"\xc0", "not a p2pwhist HELLO: a value nested more than 8 levels deep"),
], ids=["version-1", "not-a-hello", "ready", "a-message", "garbage", "a-string", "malformed-map", "deep-map"])
def test_a_bad_first_frame_is_refused_in_one_line_naming_what_was_expected(payload, words):
    door = Door()
    door.feed(Opened(1, "10.0.0.1", "10.0.0.1:1"))
    door.feed(Received(1, payload))
    assert isinstance(door.last(1), Refuse) and words in door.last(1).reason and 1 in door.closed


def test_silence_is_dropped_after_the_hello_limit_and_the_welcomed_after_the_trust_limit():
    door = Door()
    door.feed(Opened(1, "10.0.0.1", "10.0.0.1:1"))
    door.arrive(2, "bob")
    door.tick(LIMITS.hello)
    assert 1 in door.closed and 2 not in door.closed  # bob's person may be deciding about us
    door.tick(LIMITS.trust)
    assert 2 in door.closed


def test_at_the_caps_the_oldest_silent_handshake_makes_room_and_a_seated_key_goes_first():
    """At the cap of one network (a /24: 10.0.0.9 and 10.0.0.10 count together) the oldest
    connection of that network that has said nothing makes room; at the cap in all, the oldest
    anywhere. Our person's question (VETTING) is never dropped: with nothing else to drop, the
    newcomer is refused."""
    limits = Limits(pending=3, pending_per_network=2)
    door = Door(limits=limits)
    door.feed(Opened(1, "10.0.0.9", "x"))
    door.feed(Opened(2, "10.0.0.10", "x"))
    door.feed(Opened(3, "10.0.0.11", "x"))  # a third from 10.0.0.0/24: the oldest, 1, goes
    assert door.closed == {1} and "too many connections from your network" in door.last(1).reason
    door.feed(Opened(4, "10.0.1.1", "x"))
    door.feed(Opened(5, "10.0.2.1", "x"))  # a fifth in all: the oldest anywhere, 2, goes
    assert door.closed == {1, 2} and "too many connections waiting" in door.last(2).reason
    assert any("Dropped a joiner at x to make room" in line for line in door.lines())
    vetting = {}
    for conn, network in ((6, "10.0.3.1"), (7, "10.0.4.1"), (8, "10.0.5.1")):
        vetting[conn] = door.arrive(conn, f"p{conn}", network)
        door.ready(conn)  # our person is asked about each
    assert {3, 4, 5} <= door.closed and not door.closed & set(vetting)
    door.feed(Opened(9, "10.0.7.1", "x"))
    assert 9 in door.closed and "too many connections waiting" in door.last(9).reason


def test_during_the_game_a_hello_naming_a_seated_key_is_never_made_room_for():
    """bob returns during the game from a network a stranger fills with silent connections:
    the stranger's make room for his, his HELLO keeps its place, and the newest HELLO naming
    his key replaces an older one."""
    door = Door(limits=Limits(pending=64, pending_per_network=3))
    bob = door.sit(1, "bob")
    assert begins(door.actions)
    door.machine.lobby.begun(bytes(32), (door.me, bob))  # the game is under way (its START is not needed here)
    door.feed(Opened(10, "10.9.9.1", "x"))
    door.feed(Received(10, encode(Hello(PROTOCOL_VERSION, "bob", bob.key))))
    assert isinstance(door.last(10), Welcome)
    for conn in range(11, 30):  # silent squatters in bob's /24
        door.feed(Opened(conn, "10.9.9.2", "x"))
    assert 10 not in door.closed and len([c for c in range(11, 30) if c not in door.closed]) == 2
    door.feed(Opened(30, "10.9.9.1", "x"))
    door.feed(Received(30, encode(Hello(PROTOCOL_VERSION, "bob", bob.key))))
    assert 10 in door.closed and isinstance(door.last(30), Welcome)


def test_news_keeps_coming_and_names_who_decides_about_whom():
    door = Door(seats=3)
    door.sit(1, "bob")
    door.sit(2, "carol")
    assert door.lines()[-2:] == ["bob is deciding whether to play with carol",
                                 "carol is deciding whether to play with bob"]
    sent = len(door.sent[1])
    door.tick(door.now + LIMITS.news_every)
    assert len(door.sent[1]) == sent + 1
    news = door.last(1)
    assert set(news.undecided) == {(1, 2), (2, 1)} and news.you == 1 and news.seats == 3


def test_during_the_game_a_stranger_is_told_the_table_is_full_and_a_ready_is_refused():
    door = Door()
    door.sit(1, "bob")
    door.machine.lobby.begun(bytes(32), (door.me, door.players[1]))
    door.arrive(2, "carol")
    assert door.last(2) == Refuse("the table is full: a game is under way")
    door.feed(Opened(3, "10.0.0.3", "x"))
    door.feed(Received(3, encode(Hello(PROTOCOL_VERSION, "bob", door.players[1].key))))
    welcome = door.last(3)
    assert isinstance(welcome, Welcome) and welcome.game == bytes(32)
    door.ready(3)
    assert door.last(3) == Refuse("a game is under way at this table")


def test_a_rejoin_while_seating_is_told_this_is_a_new_table():
    door = Door()
    door.arrive(1, "bob")
    door.feed(Received(1, encode(Rejoin(bytes(32), 1, 5, bytes(32), bytes(64)))))
    assert "seating a new table" in door.last(1).reason


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 6), st.sampled_from(["open", "hello", "ready", "yes", "no", "lost",
                                                                "vouch", "tick", "junk"])), max_size=60))
def test_any_order_of_arrivals_and_answers_keeps_the_table_sane(steps):
    """Whatever happens in whatever order: never more seated than seats, every seated joiner
    distinct, no START before every seat is taken and every VOUCH is yes, and START at most once."""
    from p2pwhist.table import Lost

    door = Door(seats=3)
    keys = {conn: key() for conn in range(1, 7)}
    opened: set[int] = set()
    started = 0
    for conn, step in steps:
        if step == "open" and conn not in opened:
            opened.add(conn)
            actions = door.feed(Opened(conn, f"10.0.0.{conn}", "x"))
        elif conn not in opened:
            continue
        elif step == "hello":
            actions = door.feed(Received(conn, encode(Hello(PROTOCOL_VERSION, f"p{conn}", keys[conn])))) \
                if conn in door.machine.lobby.arrivals else []
        elif step == "ready":
            actions = door.feed(Received(conn, encode(Ready()))) if conn in door.machine.lobby.arrivals else []
        elif step in ("yes", "no"):
            actions = door.feed(Vetted(keys[conn], step == "yes"))
        elif step == "vouch":
            actions = []
            if conn in door.machine.lobby.arrivals:
                for other in keys.values():
                    if other != keys[conn]:
                        actions += door.feed(Received(conn, encode(Vouch(other, True))))
        elif step == "lost":
            actions = door.feed(Lost(conn, "closed"))
        elif step == "tick":
            actions = door.tick(door.now + 100)
        else:
            actions = door.feed(Received(conn, b"\xc1")) if conn in door.machine.lobby.arrivals else []
        lobby = door.machine.lobby
        seated = lobby.seated
        assert len(seated) <= 2 and len({a.player.key for a in seated}) == len(seated)
        for begin in begins(actions):
            started += 1
            assert len(begin.players) == 3
            joined = [a for a in seated]
            assert all(all(a.vouched.get(b.player.key) for b in joined if b is not a) for a in joined)
        assert started <= 1
