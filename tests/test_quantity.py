from fractions import Fraction

import pytest

from schedcheck.reference.quantity import BINARY_SI, DECIMAL_EXPONENT, DECIMAL_SI, Quantity

F = Fraction


@pytest.mark.parametrize(
    "text, value",
    [
        ("1n", F(1, 10**9)),
        ("1u", F(1, 10**6)),
        ("1m", F(1, 1000)),
        ("1", F(1)),
        ("1k", F(10**3)),
        ("1M", F(10**6)),
        ("1G", F(10**9)),
        ("1T", F(10**12)),
        ("1P", F(10**15)),
        ("1E", F(10**18)),
        ("1Ki", F(2**10)),
        ("1Mi", F(2**20)),
        ("1Gi", F(2**30)),
        ("1Ti", F(2**40)),
        ("1Pi", F(2**50)),
        ("1Ei", F(2**60)),
    ],
)
def test_every_suffix(text: str, value: Fraction) -> None:
    assert Quantity.parse(text).as_fraction() == value
    assert Quantity.parse("3" + text[1:]).as_fraction() == 3 * value


@pytest.mark.parametrize(
    "text, value",
    [
        ("1e3", F(1000)),
        ("1E3", F(1000)),
        ("1e-3", F(1, 1000)),
        ("1E-3", F(1, 1000)),
        ("12e+2", F(1200)),
        ("1.5e2", F(150)),
        ("1e0", F(1)),
        ("0e5", F(0)),
        ("2.5e-1", F(1, 4)),
    ],
)
def test_exponents(text: str, value: Fraction) -> None:
    q = Quantity.parse(text)
    assert q.as_fraction() == value
    assert q.format == DECIMAL_EXPONENT


@pytest.mark.parametrize(
    "text, value",
    [
        ("1.5", F(3, 2)),
        (".5", F(1, 2)),
        ("5.", F(5)),
        ("+1", F(1)),
        ("-1", F(-1)),
        ("-.5", F(-1, 2)),
        ("007", F(7)),
        ("0", F(0)),
        ("-0", F(0)),
        ("1.G", F(10**9)),  # apimachinery accepts an empty fraction
        ("1.5Gi", F(3 * 2**29)),
        ("0.5Ki", F(512)),
        (" 2 ", F(2)),  # JSON decoding trims surrounding spaces
    ],
)
def test_plain_numbers_and_fractions(text: str, value: Fraction) -> None:
    assert Quantity.parse(text).as_fraction() == value


@pytest.mark.parametrize(
    "raw, value",
    [
        (2, F(2)),
        (0, F(0)),
        (-3, F(-3)),
        (1.5, F(3, 2)),
        (0.1, F(1, 10)),
        (1e-05, F(1, 10**5)),
        (100.0, F(100)),
        (2**70, F(2**70)),
    ],
)
def test_yaml_numbers(raw: int | float, value: Fraction) -> None:
    assert Quantity.parse(raw).as_fraction() == value


def test_parse_rounds_below_nano_away_from_zero() -> None:
    assert Quantity.parse("0.1n").as_fraction() == F(1, 10**9)
    assert Quantity.parse("1.5n").as_fraction() == F(2, 10**9)
    assert Quantity.parse("-0.1n").as_fraction() == F(-1, 10**9)
    assert Quantity.parse("1e-12").as_fraction() == F(1, 10**9)
    assert Quantity.parse("1e-5000").as_fraction() == F(1, 10**9)
    assert Quantity.parse("0e-5000").as_fraction() == 0


def test_binary_values_are_capped_at_int64() -> None:
    assert Quantity.parse("16Ei").as_fraction() == 2**63 - 1
    assert Quantity.parse("-16Ei").as_fraction() == -(2**63 - 1)
    assert Quantity.parse("16E").as_fraction() == 16 * 10**18  # decimal values are not capped


@pytest.mark.parametrize(
    "text, value, milli",
    [
        ("2", 2, 2000),
        ("500m", 1, 500),
        ("1500m", 2, 1500),
        ("1n", 1, 1),
        ("1u", 1, 1),
        ("1.5m", 1, 2),
        ("999999n", 1, 1),
        ("1000001n", 1, 2),
        ("1000000001n", 2, 1001),
        ("1Ki", 1024, 1024000),
        ("0", 0, 0),
        ("-1.5", -2, -1500),
        ("-1n", -1, -1),
        ("-500m", -1, -500),
    ],
)
def test_value_and_milli_value_round_away_from_zero(text: str, value: int, milli: int) -> None:
    q = Quantity.parse(text)
    assert q.value() == value
    assert q.milli_value() == milli


@pytest.mark.parametrize(
    "text, canonical",
    [
        ("2", "2"),
        ("1000", "1k"),
        ("1500m", "1500m"),
        ("1.5", "1500m"),
        ("0.5", "500m"),
        ("1024", "1024"),
        ("4Gi", "4Gi"),
        ("1.5Gi", "1536Mi"),
        ("1000Mi", "1000Mi"),
        ("1024Mi", "1Gi"),
        ("0.5Ki", "512"),  # binary below 1024 prints as decimal
        ("0.001Ki", "1024m"),
        ("1e3", "1e3"),
        ("12e+2", "1200"),
        ("1E-3", "1e-3"),
        ("1e-5", "10e-6"),
        ("1E", "1E"),
        ("1e21", "1e21"),
        ("1000E", "1000E"),
        ("0.1n", "1n"),
        ("-1.5", "-1500m"),
        ("-2Gi", "-2Gi"),
        ("0", "0"),
        ("0Gi", "0"),
        ("007", "7"),
    ],
)
def test_canonical_string(text: str, canonical: str) -> None:
    q = Quantity.parse(text)
    assert str(q) == canonical
    assert Quantity.parse(str(q)) == q


def test_formats() -> None:
    assert Quantity.parse("1Gi").format == BINARY_SI
    assert Quantity.parse("0.5Ki").format == BINARY_SI  # 512: prints as decimal, stays binary
    assert Quantity.parse("0.0001Ki").format == DECIMAL_SI  # below one: becomes decimal
    assert Quantity.parse("1E").format == DECIMAL_SI
    assert Quantity.parse("1e3").format == DECIMAL_EXPONENT
    assert Quantity(F(3, 2)).format == DECIMAL_SI


@pytest.mark.parametrize(
    "bad",
    [
        "4GB",
        "",
        "   ",
        "m",
        "Ki",
        ".",
        "-",
        "+",
        "e3",
        "1e",
        "1E+",
        "1ki",
        "1KI",
        "1.1.M",
        "1+1.0M",
        "0.1mi",
        "0.1am",
        "aoeu",
        ".5i",
        "1i",
        "-3.01e-",
        "1 Gi",
        "0x10",
        "1e1.5",
        "1_000",
        "1Mi3",
        "1ee3",
        "1e99999",
        "1e3000000000",
        "١",
    ],
)
def test_rejects_what_kubernetes_rejects(bad: str) -> None:
    with pytest.raises(ValueError, match="is not a Kubernetes quantity"):
        Quantity.parse(bad)


def test_rejection_message_is_short_and_quotes_the_input() -> None:
    with pytest.raises(ValueError) as info:
        Quantity.parse("4GB")
    assert str(info.value).startswith('"4GB" is not a Kubernetes quantity')
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("bad", [True, False, None, [], {}, float("nan"), float("inf"), object()])
def test_rejects_non_scalars(bad: object) -> None:
    with pytest.raises(ValueError, match="is not a Kubernetes quantity"):
        Quantity.parse(bad)  # type: ignore[arg-type]


def test_equality_hash_and_order_are_by_value() -> None:
    assert Quantity.parse("1") == Quantity.parse("1000m") == Quantity.parse("1e0")
    assert hash(Quantity.parse("1Ki")) == hash(Quantity.parse("1024"))
    assert len({Quantity.parse("1Ki"), Quantity.parse("1024"), Quantity.parse("1.024k")}) == 1
    assert Quantity.parse("1") != Quantity.parse("1001m")
    assert Quantity.parse("999m") < Quantity.parse("1") <= Quantity.parse("1") < Quantity.parse("1Ki")
    assert Quantity.parse("1") != "1"


def test_small_accessors() -> None:
    q = Quantity.parse("-250m")
    assert q.is_negative() and not q.is_zero()
    assert q.as_fraction() == F(-1, 4)
    assert not Quantity.parse("0").is_negative()
    assert Quantity.parse("0").is_zero()
    assert Quantity.parse(q) is q
    assert repr(Quantity.parse("2Gi")) == "Quantity('2Gi')"


def test_constructor_rounds_to_nano() -> None:
    assert Quantity(F(1, 3)).as_fraction() == F(333333334, 10**9)
    with pytest.raises(ValueError):
        Quantity(1, "Hex")
