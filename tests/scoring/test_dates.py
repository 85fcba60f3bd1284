"""Dates in any written form."""

from datetime import date

from medmemorybench.scoring._dates import DateMention, find_dates, parse_iso, states_date

DAY = date(2024, 3, 4)


def test_iso_date():
    assert states_date("It was 2024-03-04.", DAY)


def test_day_month_year():
    assert states_date("on 4 March 2024", DAY)


def test_month_day_ordinal_year():
    assert states_date("March 4th, 2024", DAY)


def test_day_of_month():
    assert states_date("the 4th of March 2024", DAY)


def test_abbreviated_month():
    assert states_date("Mar 4, 2024", DAY)


def test_yearless_date_matches_on_month_and_day():
    # the sessions themselves say "4 March" without a year
    assert states_date("you started on 4 March", DAY)


def test_chinese_date():
    assert states_date("2024年3月4日开始", DAY)


def test_wrong_year_does_not_match():
    assert not states_date("4 March 2023", DAY)


def test_neighbouring_day_does_not_match():
    # "14 March" contains "4 March" as text but is another day
    assert not states_date("14 March 2024", DAY)


def test_ambiguous_numeric_date_is_not_read():
    # 04/03/2024 is 4 March in Europe and 3 April in the US
    assert find_dates("04/03/2024") == []


def test_impossible_date_is_ignored():
    assert find_dates("31 February 2024") == []


def test_find_dates_keeps_missing_year_as_none():
    assert find_dates("April 17") == [DateMention(None, 4, 17)]


def test_parse_iso_rejects_non_dates():
    assert parse_iso("2024-03-04") == DAY
    assert parse_iso("500 mg") is None


def test_a_numeric_date_is_read_where_only_one_order_is_a_date():
    # the seed-21 panel's "26/5/2024" and "14/2/2024"
    assert find_dates("26/5/2024 and 5/26/2024") == [DateMention(2024, 5, 26)] * 2
    assert states_date("diagnosed on Valentine's Day, 14/2/2024", date(2024, 2, 14))
    assert not states_date("on 15/2/2024", date(2024, 2, 14))
