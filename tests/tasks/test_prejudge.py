"""The deterministic pre-judge (`tasks.prejudge`): the seed examples, each rule, and the corpus.

The corpus (tests/data/prejudge_corpus.yaml) is labelled by the built-in prompt's rules; the
pre-judge may abstain on any pair but must never contradict a label.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from accord.tasks.consistency.prejudge import Verdict, normalise, prejudge

CORPUS = Path(__file__).resolve().parents[1] / "data" / "prejudge_corpus.yaml"
EXPECTED: dict[str, Verdict] = {"consistent": "A", "disagreement": "B"}


def tolerant(first: str, second: str) -> Verdict | None:
    """The verdict, checked to be the same both ways round."""
    verdict = prejudge(first, second, "tolerant")
    assert prejudge(second, first, "tolerant") == verdict, "the pre-judge must be symmetric"
    return verdict


# ------------------------------------------------------------------------------------------------
# the seed examples (the documentation's own pairs)


@pytest.mark.parametrize(
    ("first", "second", "verdict"),
    [
        ("$1,081,396", "$1,081,395.67", "A"),
        ("$1,065,619", "$1,065,618.90", "A"),
        ("42.67%", "42.7%", "A"),
        ("2024-01-15", "January 15, 2024", "A"),
        ("1000", "1,000", "A"),
        ("$500,000", "$450,000", "B"),
        ("Sales increased", "Sales decreased", "B"),
    ],
)
def test_seed_examples_are_settled(first: str, second: str, verdict: Verdict) -> None:
    assert tolerant(first, second) == verdict


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("There are 42 users", "There're 42 users"),
        ("Revenue amounts to $1M", "Revenue amount to $1M"),
        ("Sales decreased by 10%", "Sales fell by 10%"),
    ],
)
def test_seed_style_variations_are_never_a_disagreement(first: str, second: str) -> None:
    assert tolerant(first, second) in ("A", None)
    assert tolerant(first, second) == "A"  # and this implementation settles them


# ------------------------------------------------------------------------------------------------
# normalise and identical mode


def test_normalise_collapses_whitespace_folds_case_and_trims_trailing_punctuation() -> None:
    assert normalise("  Total Revenue:\n\t$5,000 .  ") == "total revenue: $5,000"
    assert normalise("STRASSE") == normalise("strasse")
    assert normalise("Yes!") == normalise("yes")
    assert normalise("Sales rose?") != normalise("Sales rose")  # a question is kept apart


def test_identical_mode_settles_only_equal_normalised_answers() -> None:
    assert prejudge("Total:  $5,000.", "total: $5,000", "identical") == "A"
    assert prejudge("1000", "1,000", "identical") is None
    assert prejudge("Sales increased", "Sales decreased", "identical") is None


def test_tolerant_mode_settles_identical_answers_too() -> None:
    assert tolerant("Revenue rose 5%.", "revenue   rose 5%") == "A"


def test_an_unknown_mode_is_rejected() -> None:
    with pytest.raises(ValueError, match="unknown pre-judge mode"):
        prejudge("a", "b", "off")  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------------------
# numbers, currency and percentages


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("Total revenue: $1.2M", "Total revenue: $1,200,000"),
        ("We served 3.2 million requests.", "We served 3,200,000 requests."),
        ("The site had 12.5k visits.", "The site had 12,500 visits."),
        ("Revenue of $1.5bn", "Revenue of $1,500M"),
        ("Total refunds: €12,400", "Total refunds: 12,400 EUR"),
        ("Total spend was $7,340.", "Total spend was 7,340 dollars."),
        ("Churn was 5 percent.", "Churn was 5%."),
        ("YoY change: -4.2%", "YoY change: −4.2%"),
    ],
)
def test_number_formats_are_normalised(first: str, second: str) -> None:
    assert tolerant(first, second) == "A"


def test_numbers_within_a_tenth_of_a_percent_match() -> None:
    assert tolerant("There were 10,001 orders.", "There were 10,000 orders.") == "A"
    assert tolerant("There were 1,001 orders.", "There were 1,000 orders.") is None


def test_currency_under_one_dollar_matches_only_when_it_is_a_rounding() -> None:
    assert tolerant("The average price is $12.", "The average price is $12.40.") == "A"
    assert tolerant("The average price is $12.40.", "The average price is $12.90.") is None
    assert tolerant("The average price is $0.", "The average price is $0.40.") is None


def test_percentages_match_at_the_coarser_precision_but_not_at_0_or_100() -> None:
    assert tolerant("Growth was 7.25%.", "Growth was 7.3%.") == "A"
    assert tolerant("North has 38% of revenue.", "North has 38.2% of revenue.") == "A"
    assert tolerant("Success rate: 100%", "Success rate: 99.6%") is None
    assert tolerant("Error rate: 0%", "Error rate: 0.3%") is None
    assert tolerant("Margin is 40%.", "Margin is 42.4%.") is None


def test_a_material_difference_is_a_disagreement() -> None:
    assert tolerant("Total orders: 15,230", "Total orders: 12,980") == "B"
    assert tolerant("Churn was 5%.", "Churn was 8%.") == "B"
    assert tolerant("Revenue: 1.2 million", "Revenue: 1.2 billion") == "B"


def test_currency_must_differ_by_more_than_ten_dollars_to_be_material() -> None:
    assert tolerant("The average price is $12.", "The average price is $18.") is None
    assert tolerant("The average price is $45.", "The average price is $55.01.") == "B"


def test_differences_between_the_two_thresholds_go_to_the_judge() -> None:
    assert tolerant("Revenue was $1,000,000.", "Revenue was $1,050,000.") is None
    assert tolerant("There are 42 users.", "There are 43 users.") is None
    assert tolerant("Revenue was $1.23M.", "Revenue was $1,234,567.") is None


def test_a_gap_that_rounding_explains_is_never_material() -> None:
    assert tolerant("Revenue was $1M.", "Revenue was $1.4M.") is None
    assert tolerant("The correlation is 0.", "The correlation is 0.05.") is None


def test_a_sign_flip_is_left_to_the_judge() -> None:
    assert tolerant("Net income was -$12,000.", "Net income was $12,000.") is None


def test_a_number_and_a_percentage_or_currency_do_not_compare() -> None:
    assert tolerant("Revenue: $5,000", "Revenue: 5,000") is None
    assert tolerant("Conversion rate: 0.043", "Conversion rate: 4.3%") is None
    assert tolerant("Margin rose by 2 percentage points.", "Margin rose by 2%.") is None
    assert tolerant("Revenue: $5,000", "Revenue: €5,000") is None


def test_a_dotted_thousands_separator_is_ambiguous() -> None:
    assert tolerant("The file has 1.000 rows.", "The file has 1,000 rows.") is None
    assert tolerant("The file has 1.000 rows.", "The file has 1.000 rows!") == "A"


def test_approximate_figures_never_give_a_disagreement() -> None:
    assert tolerant("Revenue was about $2M.", "Revenue was approximately $2M.") == "A"
    assert tolerant("Around 40% of users", "45% of users") is None
    assert tolerant("~40% of users", "45% of users") is None
    assert tolerant("40% of users", "45% of users") == "B"


# ------------------------------------------------------------------------------------------------
# years, identifiers, dates and times


def test_a_year_in_context_is_a_categorical_fact() -> None:
    assert tolerant("Sales peaked in 2022.", "Sales peaked in 2023.") == "B"
    assert tolerant("There were 2020 orders.", "There were 2021 orders.") is None
    assert tolerant("There were 2020 orders.", "There were 2,020 orders.") == "A"


def test_identifiers_must_be_equal() -> None:
    assert tolerant("Customer ID 10001 spent most.", "Customer ID 10000 spent most.") == "B"
    assert tolerant("The top store is Store 12.", "The top store is store #12.") == "A"


@pytest.mark.parametrize(
    "other",
    ["January 15, 2024", "Jan. 15th, 2024", "15 Jan 2024", "01/15/2024", "2024/01/15"],
)
def test_date_formats_are_normalised(other: str) -> None:
    assert tolerant("The peak day was 2024-01-15.", f"The peak day was {other}.") == "A"


def test_dates_of_another_day_or_precision() -> None:
    assert tolerant("The peak day was 2024-01-15.", "The peak day was 2024-01-16.") == "B"
    assert tolerant("Peak: January 2024", "Peak: 2024-01") == "A"
    assert tolerant("Peak: January 2024", "Peak: 2024-01-15") is None


def test_an_ambiguous_slash_date_is_only_equal_to_itself() -> None:
    assert tolerant("Shipped on 04/05/2024.", "Shipped on 04/05/2024") == "A"
    assert tolerant("Shipped on 04/05/2024.", "Shipped on 2024-04-05.") is None
    assert tolerant("Shipped on 04/05/2024.", "Shipped on 2024-06-07.") == "B"


def test_month_names_are_dates() -> None:
    assert tolerant("Sales peaked in Sept.", "Sales peaked in September.") == "A"
    assert tolerant("Sales peaked in March.", "Sales peaked in July.") == "B"
    assert tolerant("Sales in May were $5M.", "Sales may be $5M.") is None


def test_clock_times_are_never_material() -> None:
    assert tolerant("Traffic peaks at 9am.", "Traffic peaks at 9 am.") == "A"
    assert tolerant("Report generated at 10:05.", "Report generated at 10:07.") is None


# ------------------------------------------------------------------------------------------------
# direction words


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("Revenue went up 8%.", "Revenue rose 8%."),
        ("Customer count declined.", "Customer count dropped."),
        ("Q2 sales were 15% higher than Q1.", "Q2 sales were 15% greater than Q1."),
        ("Fewer than 5% of orders were returned.", "Less than 5% of orders were returned."),
        ("North had the highest sales.", "North had the largest sales."),
    ],
)
def test_direction_synonyms_agree(first: str, second: str) -> None:
    assert tolerant(first, second) == "A"


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("Revenue went up 8%.", "Revenue went down 8%."),
        ("Average order value is higher in North.", "Average order value is lower in North."),
        ("There is a positive correlation.", "There is a negative correlation."),
        ("The company made a profit of $2M.", "The company made a loss of $2M."),
        ("North had the most orders.", "North had the fewest orders."),
        ("Churn improved in Q2.", "Churn worsened in Q2."),
    ],
)
def test_a_reversed_direction_is_a_disagreement(first: str, second: str) -> None:
    assert tolerant(first, second) == "B"


def test_direction_words_of_another_intensity_or_kind_go_to_the_judge() -> None:
    assert tolerant("Sales rose 2%.", "Sales surged 2%.") is None
    assert tolerant("Sales increased.", "Sales were higher.") is None


def test_two_reversals_in_one_sentence_go_to_the_judge() -> None:
    assert tolerant("Lower prices led to more sales.", "Higher prices led to fewer sales.") is None


def test_negations_and_hedges_block_a_disagreement() -> None:
    assert tolerant("Sales did not increase.", "Sales did not decrease.") is None
    assert tolerant("Sales did not increase.", "Sales didn't increase.") == "A"
    assert tolerant("Sales did not increase.", "Sales increased.") is None
    assert tolerant("Sales may have increased.", "Sales may have decreased.") is None
    assert tolerant("Revenue is $5M, not $4M.", "Revenue is $4M, not $5M.") is None


def test_the_agent_narrating_its_work_blocks_a_disagreement() -> None:
    assert tolerant("I ran 3 queries: revenue is $5M.", "I ran 2 queries: revenue is $5M.") is None


# ------------------------------------------------------------------------------------------------
# words: grammar, categorical facts, order


def test_grammar_contractions_and_stopwords_are_ignored() -> None:
    assert tolerant("The data shows 3 anomalies.", "The data show 3 anomalies.") == "A"
    assert tolerant("TOTAL REVENUE IS $5M", "Total revenue is $5M") == "A"
    assert tolerant("The company's revenue was $8.2M.", "The company revenue is $8.2M.") == "A"
    assert tolerant("The average is $45.20.", "The mean is $45.2.") == "A"


def test_acronyms_are_not_stopwords() -> None:
    assert tolerant("US sales were $5M.", "Sales were $5M.") is None
    assert tolerant("IT spend was $5M.", "Spend was $5M.") is None


def test_a_different_proper_name_in_a_one_answer_slot_is_a_disagreement() -> None:
    assert tolerant("Only West grew.", "Only East grew.") == "B"
    assert tolerant("In Q1, North led with $5M.", "In Q1, South led with $5M.") == "B"
    assert tolerant("The top region is West.", "The top region is East.") == "B"
    assert tolerant("The busiest weekday is Friday.", "The busiest weekday is Monday.") == "B"
    assert tolerant("Sales rose except in North.", "Sales rose except in South.") == "B"


def test_names_that_may_be_the_same_or_need_not_exclude_each_other_go_to_the_judge() -> None:
    assert tolerant("The top performer is Jon.", "The top performer is John.") is None
    assert tolerant("The top day was Saturday.", "The top day was Sat.") is None
    assert tolerant("The top market is USA.", "The top market is US.") is None
    assert tolerant("Data from the Finance team.", "Data from the Marketing team.") is None
    assert tolerant("The top source is Orders.", "The top source is Sales.") is None
    assert tolerant("Top seller is Apple, then Pear.", "Top seller is Pear, then Apple.") is None
    assert tolerant("The top product is Laptop Pro.", "The top product is Laptop Air.") is None


def test_lowercase_word_differences_go_to_the_judge() -> None:
    assert tolerant("Customers prefer email support.", "Customers prefer phone support.") is None
    assert tolerant("Revenue amounts to $1M.", "Revenue totals $1M.") is None


def test_word_order_matters() -> None:
    assert tolerant("North: $5M, South: $3M", "North: $3M, South: $5M") == "B"
    assert tolerant("North: $5M, South: $3M", "South: $3M, North: $5M") is None
    assert tolerant("Revenue grew from $4M to $5M.", "Revenue grew to $5M from $4M.") is None


def test_a_question_is_not_a_statement() -> None:
    assert tolerant("Sales increased.", "Sales increased?") is None


# ------------------------------------------------------------------------------------------------
# extensions and bare answers


def test_a_small_extra_sentence_is_consistent() -> None:
    base = "Total revenue is $4.2M."
    assert tolerant(base, base + " This figure includes online and in-store channels.") == "A"
    assert tolerant("Total is $500,000.", "Total is $450,000. It covers all regions.") == "B"


@pytest.mark.parametrize(
    "extra",
    [
        " However, March is missing.",  # a contrast word
        " It grew 5% in 2024.",  # a fact and a direction word
        " Revenue came from the West.",  # repeats the answer's words
        " Pear leads sales.",  # names another top item
        ", driven by the holiday season.",  # not a whole sentence
        " Orders were placed by many different kinds of customers across all of our stores "
        "nationwide during every single week of that busy quarter.",  # not small
    ],
)
def test_an_extension_that_could_change_the_answer_goes_to_the_judge(extra: str) -> None:
    assert tolerant("Total revenue is $4.2M.", "Total revenue is $4.2M" + extra) is None


def test_an_extra_list_item_is_not_an_extension() -> None:
    listed = "Top products:\n- Apple\n- Pear"
    assert tolerant(listed, listed + "\n- Kiwi") is None


def test_a_bare_answer_matches_a_sentence_with_the_same_facts() -> None:
    assert tolerant("42", "There are 42 users.") == "A"
    assert tolerant("$1,204,330", "Total revenue was $1,402,330.") == "B"
    assert tolerant("42", "42 if we include refunds") is None
    assert tolerant("5", "5 out of 7") is None


def test_empty_or_contentless_answers_go_to_the_judge() -> None:
    assert tolerant("", "Something") is None
    assert tolerant("-", "N/A") is None


# ------------------------------------------------------------------------------------------------
# markdown


TABLE = "| Region | Revenue |\n|---|---|\n| West | $1,204,330 |\n| North | $980,112 |"


def test_markdown_tables_compare_cell_by_cell() -> None:
    formatted = "| Region | Revenue |\n|--:|--:|\n| West | $1,204,329.61 |\n| North | $980,112.00 |"
    assert tolerant(TABLE, formatted) == "A"
    assert tolerant(TABLE, TABLE.replace("$980,112", "$780,112")) == "B"
    assert tolerant(TABLE, TABLE.replace("West", "East")) == "B"


def test_list_markers_bold_and_headings_are_ignored() -> None:
    first = "## Top products\n1. Laptop - $1.2M\n2. Monitor - $640K"
    second = "**Top products**\n- Laptop: $1,200,000\n- Monitor: $640,000"
    assert tolerant(first, second) == "A"


def test_title_case_headings_are_not_names() -> None:
    assert tolerant("Key Finding: revenue rose", "Key Insight: revenue rose") is None
    assert tolerant("## Sales Summary\nTotal: $5M", "## Sales Overview\nTotal: $5M") is None


# ------------------------------------------------------------------------------------------------
# the corpus


def load_corpus() -> list[dict[str, Any]]:
    pairs: list[dict[str, Any]] = yaml.safe_load(CORPUS.read_text(encoding="utf-8"))
    return pairs


def test_corpus_is_well_formed_and_balanced() -> None:
    pairs = load_corpus()
    assert len(pairs) >= 220
    assert all(set(pair) == {"a", "b", "label", "why"} for pair in pairs)
    assert all(pair["label"] in EXPECTED and pair["why"] for pair in pairs)
    assert len({(pair["a"], pair["b"]) for pair in pairs}) == len(pairs)
    consistent = sum(pair["label"] == "consistent" for pair in pairs)
    assert 0.4 <= consistent / len(pairs) <= 0.6


def test_corpus_has_no_wrong_decision_and_a_meaningful_share_settled(
    capsys: pytest.CaptureFixture[str],
) -> None:
    pairs = load_corpus()
    wrong = []
    settled = 0
    for pair in pairs:
        verdict = tolerant(pair["a"], pair["b"])
        if verdict is not None:
            settled += 1
            if verdict != EXPECTED[pair["label"]]:
                wrong.append((pair["a"], pair["b"], pair["label"], verdict))
    share = settled / len(pairs)
    with capsys.disabled():
        print(f"\npre-judge corpus: {settled}/{len(pairs)} settled ({share:.1%}), {wrong=}")
    assert wrong == []
    assert share >= 0.30


def test_identical_mode_is_never_wrong_on_the_corpus() -> None:
    for pair in load_corpus():
        verdict = prejudge(pair["a"], pair["b"], "identical")
        assert verdict in (None, EXPECTED[pair["label"]])
