"""PrefAndroid's house rules beyond its Sochi and Leningrad entries, hand-worked as
docs/RULES-variants.md's examples: the consolation at 10 a trick (``consolation_price``)."""

from controller.core.config import parse_rules
from controller.core.contract_scoring import ContractDeal, score_contract

S3 = ("seat1", "seat2", "seat3")


def rules(players=3, **keys):
    return parse_rules(keys, players)


def failed_six(r, whisters=("seat3",)):
    """seat2 6♠ down one (5 tricks); seat3 took 3, seat1 2; dealer seat1."""
    d = ContractDeal(game="6s", declarer="seat2", ending="played", defenders=("seat3", "seat1"),
                     whisters=tuple(whisters), half_whister=None, dealer="seat1", seats=S3,
                     taken={"seat2": 5, "seat3": 3, "seat1": 2})
    return score_contract(r, d)[0]


# --- consolation_price ---------------------------------------------------------------------

def test_the_consolation_is_ten_a_trick_whatever_the_game():
    table = failed_six(rules())
    assert table.whists == {("seat3", "seat2"): 5 * 2 + 2, ("seat1", "seat2"): 2}
    ten = failed_six(rules(consolation_price="ten"))
    assert ten.whists == {("seat3", "seat2"): 5 * 2 + 10, ("seat1", "seat2"): 10}
    assert ten.gora == table.gora == {"seat2": 2}              # the remiz is the game's
    both = failed_six(rules(convention="leningrad", consolation_price="ten"), ("seat3", "seat1"))
    assert both.whists == {("seat3", "seat2"): (3 * 2 + 10) * 2, ("seat1", "seat2"): (2 * 2 + 10) * 2}


def test_a_made_contract_writes_no_consolation_either_way():
    d = ContractDeal(game="6s", declarer="seat2", ending="played", defenders=("seat3", "seat1"),
                     whisters=("seat3",), half_whister=None, dealer="seat1", seats=S3,
                     taken={"seat2": 6, "seat3": 3, "seat1": 1})
    assert score_contract(rules(consolation_price="ten"), d)[0].to_dict() == score_contract(rules(), d)[0].to_dict()
