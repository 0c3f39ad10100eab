"""The session state machine, with every seat's real Session in one process (no sockets)."""

import dataclasses
import random

import pytest

from p2pwhist.bodies import Accept, CardPlay, Dispute, Forfeit, NextHand
from p2pwhist.deck import Claim, Commitment
from p2pwhist.games.base import PLAYS
from p2pwhist.games.bots import RandomBot
from p2pwhist.games.boxwhist.engine import BoxWhist
from p2pwhist.games.match import MatchLength
from p2pwhist.inprocess import open_table, random_match
from p2pwhist.session import Aborted, LocalError, Need, RemoteError, Session
from p2pwhist.signed import Kind, seal


def _step(sessions, bots):
    actor = next(s for s in sessions if s.need not in (Need.PEER, Need.DONE))
    value = bots[actor.seat].choose(actor.view()) if actor.need is Need.MOVE else False
    return actor, value


def _deliver(sessions, actor, message):
    for other in sessions:
        if other is not actor:
            other.receive(message.raw, actor.seat)


def until_message(sessions, kind, body=None):
    """Play honestly (random bots) until a message of ``kind`` (and ``body``) is made; return
    it, undelivered, with its sender."""
    bots = [RandomBot(random.Random(seat)) for seat in range(len(sessions))]
    while True:
        actor, value = _step(sessions, bots)
        message = actor.produce(value)
        if message.kind is kind and body in (None, message.body):
            return message, actor
        _deliver(sessions, actor, message)


def until_move(sessions):
    """Play honestly until some seat must move; return that seat's session."""
    bots = [RandomBot(random.Random(seat)) for seat in range(len(sessions))]
    while True:
        actor, value = _step(sessions, bots)
        if actor.need is Need.MOVE:
            return actor
        _deliver(sessions, actor, actor.produce(value))


def forge(sender: Session, body, seq=None, prev=None):
    """A message the sender signs by hand, bypassing its own session's checks."""
    return seal(sender._key, len(sender.log) if seq is None else seq, prev or sender.head, sender.seat, body)


def test_a_bad_signature_is_blamed_on_the_connection_that_carried_it():
    sessions = open_table(BoxWhist(3), MatchLength(hands=1), random.Random(1))
    message, sender = until_message(sessions, Kind.ACCEPT)
    tampered = bytearray(message.raw)
    tampered[-1] ^= 1  # the last byte of the signature
    with pytest.raises(RemoteError) as error:
        sessions[2].receive(bytes(tampered), via=0)
    assert error.value.seat == 0 and "signature" in error.value.reason
    with pytest.raises(LocalError):  # the session is over
        sessions[2].receive(message.raw, via=1)


def test_replayed_and_reordered_messages_are_refused():
    sessions = open_table(BoxWhist(2), MatchLength(hands=1), random.Random(2))
    first, _ = until_message(sessions, Kind.COMMIT)
    sessions[1].receive(first.raw, via=0)
    with pytest.raises(RemoteError) as error:
        sessions[1].receive(first.raw, via=0)  # the same message again
    assert "does not follow" in error.value.reason
    sessions = open_table(BoxWhist(2), MatchLength(hands=1), random.Random(2))
    early = forge(sessions[0], Commitment(bytes(32)), seq=len(sessions[0].log) + 1)
    with pytest.raises(RemoteError):
        sessions[1].receive(early.raw, via=0)


def test_a_message_out_of_turn_names_its_sender():
    sessions = open_table(BoxWhist(2), MatchLength(hands=1), random.Random(3))
    # After START, seat 1 must ACCEPT; seat 0 speaks out of turn.
    message = forge(sessions[0], NextHand(True))
    with pytest.raises(RemoteError) as error:
        sessions[1].receive(message.raw, via=0)
    assert error.value.seat == 0 and "out of turn" in error.value.reason


def test_a_relay_that_forks_the_log_is_noticed():
    sessions = open_table(BoxWhist(3), MatchLength(hands=1), random.Random(4))
    real, host = until_message(sessions, Kind.COMMIT)
    # The host shows seat 1 its real commitment and seat 2 a different, also validly signed one.
    other = forge(host, Commitment(bytes(32)), seq=real.seq, prev=real.prev)
    sessions[1].receive(real.raw, via=0)
    sessions[2].receive(other.raw, via=0)
    reply = sessions[1].produce()
    with pytest.raises(RemoteError) as error:
        sessions[2].receive(reply.raw, via=0)
    assert "different histories" in error.value.reason


def test_claiming_a_card_of_another_hand_is_refused_at_once():
    sessions = open_table(BoxWhist(2), MatchLength(hands=1), random.Random(5))
    actor = until_move(sessions)
    hand = actor.hand
    victim = 1 - actor.seat
    position = hand.hands[victim][0]
    cheat = forge(actor, CardPlay(Claim(position, 0, 12345)))
    with pytest.raises(RemoteError) as error:
        sessions[victim].receive(cheat.raw, via=actor.seat)
    assert error.value.seat == actor.seat


def test_claiming_a_different_card_than_the_one_held_is_refused():
    sessions = open_table(BoxWhist(2), MatchLength(hands=1), random.Random(6))
    actor = until_move(sessions)
    position = actor.view().legal_moves[0].position
    honest = actor.deck.claim(position)
    wrong = (int(honest.card) + 1) % 52
    cheat = forge(actor, CardPlay(Claim(position, wrong, honest.key)))
    other = sessions[1 - actor.seat]
    with pytest.raises(RemoteError) as error:
        other.receive(cheat.raw, via=actor.seat)
    assert error.value.seat == actor.seat and "claim" in str(error.value)


def test_a_peer_that_signs_another_match_result_is_refused():
    sessions = open_table(BoxWhist(2), MatchLength(hands=1), random.Random(7))
    message, sender = until_message(sessions, Kind.FINAL)
    lie = dataclasses.replace(message.body, points=tuple(p + 1 for p in message.body.points))
    forged = forge(sender, lie, seq=message.seq, prev=message.prev)
    with pytest.raises(RemoteError) as error:
        sessions[1 - sender.seat].receive(forged.raw, via=sender.seat)
    assert "different match result" in error.value.reason


def test_the_host_may_not_stretch_a_match_of_set_length():
    sessions = open_table(BoxWhist(2), MatchLength(hands=1), random.Random(8))
    message, host = until_message(sessions, Kind.HAND, NextHand(False))
    forged = forge(host, NextHand(True), seq=message.seq, prev=message.prev)
    with pytest.raises(RemoteError) as error:
        sessions[1].receive(forged.raw, via=0)
    assert error.value.seat == 0


def test_an_abort_ends_the_session_for_everyone():
    sessions = open_table(BoxWhist(2), MatchLength(hands=1), random.Random(9))
    notice = sessions[1].abort("my cat walked on the keyboard")
    with pytest.raises(Aborted) as error:
        sessions[0].receive(notice.raw, via=1)
    assert error.value.seat == 1 and "cat" in error.value.reason
    assert sessions[0].log[-1].kind is Kind.ABORT


def test_our_own_illegal_move_is_refused_locally():
    sessions = open_table(BoxWhist(2), MatchLength(hands=1), random.Random(10))
    actor = until_move(sessions)
    illegal = next(PLAYS[p] for p in range(52) if PLAYS[p] not in actor.view().legal_moves)
    with pytest.raises(LocalError):
        actor.produce(illegal)


def test_a_false_dispute_is_pinned_on_the_disputer_by_the_audit():
    sessions = open_table(BoxWhist(2), MatchLength(hands=1), random.Random(12))
    liar = until_move(sessions)
    other = sessions[1 - liar.seat]
    lie = forge(liar, Dispute(0, "it decrypts to no card (it does)"))
    other.receive(lie.raw, via=liar.seat)
    # Both now reveal their secrets; the audit finds the deal clean, so the disputer lied.
    liar._take_dispute(lie, lie.body)
    for _ in range(2):
        sender = next(s for s in sessions if s.need is Need.SEND)
        message = sender.produce()
        assert message.kind is Kind.SECRET
        receiver = sessions[1 - sender.seat]
        if receiver.need is not Need.DONE:
            receiver.receive(message.raw, via=sender.seat)
    for session in sessions:
        assert session.need is Need.DONE and session.error.seat == liar.seat
        assert "dealt correctly" in session.error.reason


def test_a_timed_match_ends_when_the_host_says_time_is_up():
    sessions = open_table(BoxWhist(2), MatchLength(minutes=30), random.Random(13))
    bots = [RandomBot(random.Random(seat)) for seat in range(2)]
    while not all(s.need is Need.DONE for s in sessions):
        actor = next(s for s in sessions if s.need not in (Need.PEER, Need.DONE))
        if actor.need is Need.MOVE:
            value = bots[actor.seat].choose(actor.view())
        else:
            value = len(actor.match.results) >= 2 if actor.match else False  # the host's clock
        message = actor.produce(value)
        for other in sessions:
            if other is not actor:
                other.receive(message.raw, actor.seat)
    assert {len(s.outcome.hands) for s in sessions} == {2}


def _play_open_match(players: int, wishes: dict[tuple[int, int], bool], seed: int) -> list:
    """An open match: ``wishes[(hands played, seat)]`` is that seat's answer to "another
    hand?" (yes when not given). Returns the sessions and the HAND messages signed."""
    sessions = open_table(BoxWhist(players), MatchLength(), random.Random(seed))
    bots = [RandomBot(random.Random(seat)) for seat in range(players)]
    asked = []
    while not all(s.need is Need.DONE for s in sessions):
        actor = next(s for s in sessions if s.need not in (Need.PEER, Need.DONE))
        if actor.need is Need.MOVE:
            value = bots[actor.seat].choose(actor.view())
        elif actor.need is Need.WISH:
            asked.append((len(actor.match.results), actor.seat))
            value = wishes.get((len(actor.match.results), actor.seat), True)
        else:
            value = False  # the host's clock: an open match has none
        message = actor.produce(value)
        for other in sessions:
            if other is not actor:
                other.receive(message.raw, actor.seat)
    return sessions, asked


def test_an_open_match_goes_on_while_everyone_wishes_and_the_first_no_ends_it():
    sessions, asked = _play_open_match(3, {(2, 1): False}, seed=14)
    assert {len(s.outcome.hands) for s in sessions} == {2}
    # nobody is asked before the first hand; after each hand, each seat in turn until a "no"
    assert asked == [(1, 0), (1, 1), (1, 2), (2, 0), (2, 1)]
    assert len({tuple(m.raw for m in s.log) for s in sessions}) == 1


def test_in_an_open_match_the_host_may_not_refuse_the_first_hand():
    sessions = open_table(BoxWhist(2), MatchLength(), random.Random(15))
    message, host = until_message(sessions, Kind.HAND, NextHand(True))
    forged = forge(host, NextHand(False), seq=message.seq, prev=message.prev)
    with pytest.raises(RemoteError) as error:
        sessions[1].receive(forged.raw, via=0)
    assert error.value.seat == 0 and "match length" in error.value.reason


def test_a_dispute_after_a_forfeit_settled_the_match_is_refused():
    """session.md §5: no DISPUTE window once a FORFEIT has settled the match; what is left of
    the log is signatures on a result that no audit changes."""
    sessions = open_table(BoxWhist(3), MatchLength(hands=1), random.Random(16))
    absent = until_move(sessions)  # a hand's cards are being revealed: the window is open
    declarer = sessions[0 if absent.seat != 0 else 1]
    cosigner = next(s for s in sessions if s not in (absent, declarer))
    notice = declarer.forfeit(absent.seat, "took too long")
    cosigner.receive(notice.raw, via=declarer.seat)
    dispute = forge(cosigner, Dispute(0, "too late to matter"))
    with pytest.raises(RemoteError) as error:
        declarer.receive(dispute.raw, via=cosigner.seat)
    assert error.value.seat == cosigner.seat and "forfeit settled the match" in error.value.reason
    assert declarer.log[-1].raw == dispute.raw  # recorded, the evidence


def _refused_then_aborted(receiver: Session, message, via: int) -> RemoteError:
    """``receiver`` refuses ``message``, which passed the envelope, then aborts: the ABORT
    follows the refused message, which is in its log (session.md §2, §5)."""
    with pytest.raises(RemoteError) as error:
        receiver.receive(message.raw, via)
    notice = receiver.abort(f"refused: {error.value.reason}", error.value.seat)
    assert [m.raw for m in receiver.log[-2:]] == [message.raw, notice.raw]
    assert notice.seq == message.seq + 1 and notice.prev == message.digest
    return error.value


@pytest.mark.parametrize("refusal", ["out of turn", "our own key", "declared a forfeit it may not",
                                     "after the match ended"])
def test_an_abort_after_a_refused_message_chains_to_it(refusal):
    if refusal == "after the match ended":
        sessions = random_match(BoxWhist(2), hands=1, seed=17)
        sender, body = sessions[0], NextHand(True)
    else:  # seat 1 is to ACCEPT
        sessions = open_table(BoxWhist(3), MatchLength(hands=1), random.Random(17))
        sender, body = {
            "out of turn": (sessions[0], NextHand(True)),
            "our own key": (sessions[1], Accept()),  # relayed to us by the host
            "declared a forfeit it may not": (sessions[0], Forfeit(2, "gone")),  # before every seat accepted
        }[refusal]
    assert refusal in _refused_then_aborted(sessions[1], forge(sender, body), via=0).reason
