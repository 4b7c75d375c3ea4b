"""Self-driving automata: hand-derived outputs, the reference queue, validation."""

import numpy as np
import pytest

from epcg.games.dwp.domain.sda import check_sda, random_population, random_sda, sda_bits, sda_from_table

from tests.reference import dwp as ref


def text(bits):
    return "".join(map(str, bits))


def test_zeros_drift_farther_apart():
    # "10" first; each consumed 1 appends "11", each consumed 0 appends "0":
    # 10 | 11 0 | 1111 0 | 11111111 0 | 1^16 0 ...
    g = sda_from_table([("10", 2, 1), ("11", 2, 1), ("0", 2, 1)])
    out = text(sda_bits(g, 200))
    assert out.startswith("10" "110" "11110" "111111110" + "1" * 16 + "0")
    zeros = [i for i, c in enumerate(out) if c == "0"]
    gaps = np.diff(zeros)
    assert (np.diff(gaps) > 0).all() and len(zeros) >= 6


def test_two_bit_strings_by_hand():
    # A="01" (0->A, 1->B), B="1" (0->A, 1->B).
    # out 01; consume 0 at A -> A: +01; consume 1 at A -> B: +1; consume 0 at B -> A: +01;
    # consume 1 at A -> B: +1; consume 1 at B -> B: +1; consume 0 at B -> A: +01;
    # consume 1 at A -> B: +1
    g = sda_from_table([("01", 0, 1), ("1", 0, 1)])
    assert text(sda_bits(g, 12)) == "".join(["01", "01", "1", "01", "1", "1", "01", "1"])


def test_constant_machines():
    assert text(sda_bits(sda_from_table([("1", 0, 0)]), 5)) == "11111"
    assert text(sda_bits(sda_from_table([("00", 0, 0)]), 5)) == "00000"
    assert sda_bits(sda_from_table([("10", 0, 0)]), 0).size == 0
    assert text(sda_bits(sda_from_table([("10", 0, 0)]), 1)) == "1"


@pytest.mark.parametrize("states", [1, 2, 5, 12, 20])
def test_kernel_matches_queue_reference(states):
    rng = np.random.default_rng(states)
    for g in random_population(20, states, rng):
        assert sda_bits(g, 300).tolist() == ref.sda_bits(g, 300)


def test_random_machines_are_valid_and_seeded():
    pop = random_population(50, 7, np.random.default_rng(3))
    for g in pop:
        check_sda(g)
    assert set(pop[:, :, 0].ravel()) == {1, 2}
    again = random_population(50, 7, np.random.default_rng(3))
    assert (pop == again).all()
    assert random_sda(4, np.random.default_rng(0)).shape == (4, 5)


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([[3, 0, 0, 0, 0]], "lengths"),
        ([[1, 0, 2, 0, 0]], "bits"),
        ([[1, 0, 1, 0, 0]], "unused"),
        ([[1, 0, 0, 0, 1]], "transitions"),
        (np.zeros((0, 5)), "states"),
        (np.zeros((2, 4)), "states"),
    ],
)
def test_invalid_machines(rows, message):
    with pytest.raises(ValueError, match=message):
        check_sda(np.array(rows))


def test_invalid_requests():
    g = sda_from_table([("1", 0, 0)])
    with pytest.raises(ValueError):
        sda_bits(g, -1)
    with pytest.raises(ValueError):
        sda_from_table([("101", 0, 0)])
    with pytest.raises(ValueError):
        random_population(3, 0, np.random.default_rng())
