"""Mental poker: a deck that seats who do not trust each other shuffle and deal together.

No seat, and no server, ever knows more of the deck than has been revealed to it, yet every
card a seat plays can be checked by everyone at once, and every other step at the end of the
hand. The protocol, its reasoning and its byte formats are in ``protocol/deck.md``; this
package is pure and deterministic (no I/O, no clock, no randomness of its own: each seat's
per-hand secret comes in from the caller, who takes it from ``secrets.token_bytes(32)``).

The deck knows nothing of any game: it holds card codes at positions 0..size−1 of the final
deck; which positions go to whom, and when, is the game layer's business.

Use, for each seat, once per hand::

    params = DeckParams(game_id, hand, cards, seats)     # the same at every seat
    deck = Deck(params, seat, secrets.token_bytes(32))
    broadcast(deck.commit())
    # ... every peer message goes to deck.receive_wire(sender, obj) (or receive(sender, msg))
    #     and may return Revealed(position, card) events ...
    broadcast(deck.shuffle_pass())      # when deck.phase is SHUFFLING and deck.turn == seat
    broadcast(deck.lock_pass())         # when deck.phase is LOCKING and deck.turn == seat
    broadcast(deck.keys_for([3, 7]))    # our keys for 3 and 7: a seat that then holds every
                                        # other seat's key for a position learns its card
    broadcast(deck.claim(3))            # play the card at 3, which was revealed to this seat
    deck.known_card(3)                  # the card at 3 if this seat knows it, else None
    broadcast(deck.reveal_secret())     # the hand is over
    result = deck.audit()               # once every secret is in (deck.phase is DONE);
                                        # anyone else: audit(params, record)

To reveal a position to one seat, every other seat publishes its key for it; to reveal it to
all, every seat does. Messages are frozen dataclasses; ``msg.to_wire()`` gives msgpack-ready
values and ``decode_message(obj)`` parses them back.

Errors: ``LocalDeckError`` is our misuse; ``RemoteDeckError(seat, step, reason, position)``
names the peer at fault; ``UnattributedDeckError(suspects, …)`` means someone cheated and the
audit, after every seat has revealed its secret, will say who. ``AuditResult.deviation`` is
the first ``Deviation(seat, step, position, detail)`` or None, and ``AuditResult.cards`` the
card at every position.
"""

from p2pwhist.deck._audit import AuditResult, DeckRecord, Deviation, Published, audit
from p2pwhist.deck._deck import Deck, Phase, Revealed
from p2pwhist.deck._errors import (
    DeckError,
    LocalDeckError,
    MessageFormatError,
    RemoteDeckError,
    Step,
    UnattributedDeckError,
)
from p2pwhist.deck._messages import (
    Claim,
    Commitment,
    LockPass,
    Message,
    MessageType,
    PositionKey,
    PositionKeys,
    SecretReveal,
    ShufflePass,
    decode_message,
)
from p2pwhist.deck._params import DeckParams

__all__ = [
    "AuditResult",
    "Claim",
    "Commitment",
    "Deck",
    "DeckError",
    "DeckParams",
    "DeckRecord",
    "Deviation",
    "LocalDeckError",
    "LockPass",
    "Message",
    "MessageFormatError",
    "MessageType",
    "Phase",
    "PositionKey",
    "PositionKeys",
    "Published",
    "RemoteDeckError",
    "Revealed",
    "SecretReveal",
    "ShufflePass",
    "Step",
    "UnattributedDeckError",
    "audit",
    "decode_message",
]
