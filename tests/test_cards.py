import pytest
from hypothesis import given
from hypothesis import strategies as st

from p2pwhist.cards import CARDS, Card, CardError, Rank, Suit


@pytest.mark.parametrize(
    "text,rank,suit",
    [("QS", Rank.QUEEN, Suit.SPADES), ("10h", Rank.TEN, Suit.HEARTS), ("q♠", Rank.QUEEN, Suit.SPADES),
     ("Th", Rank.TEN, Suit.HEARTS), ("a♦", Rank.ACE, Suit.DIAMONDS), (" 2 c ", Rank.TWO, Suit.CLUBS)],
)
def test_parse_human_text(text, rank, suit):
    card = Card.parse(text)
    assert (card.rank, card.suit) == (rank, suit)


@pytest.mark.parametrize("text", ["", "Q", "11S", "QX", "box 2", "10", "QSS", "0H"])
def test_parse_rejects_what_is_not_a_card(text):
    with pytest.raises(CardError):
        Card.parse(text)


@given(st.sampled_from(CARDS))
def test_text_and_code_round_trip(card):
    assert Card.parse(str(card)) is card and Card.parse(card.ascii) is card
    assert Card(int(card)) is card and Card.of(card.rank, card.suit) is card


def test_codes_are_documented_values():
    assert int(Card.parse("2H")) == 0 and int(Card.parse("AH")) == 12
    assert int(Card.parse("2C")) == 26 and int(Card.parse("AS")) == 51


@pytest.mark.parametrize("bad", [-1, 52, True, "3", 2.0])
def test_bad_codes_are_refused(bad):
    with pytest.raises(CardError):
        Card(bad)
