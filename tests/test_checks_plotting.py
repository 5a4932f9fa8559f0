"""Input validation shared by lib, and the plotting helpers' contracts."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest

from lib import _checks, plotting


@pytest.mark.parametrize("bad, message", [
    ([], "empty"), ([[1.0]], "1-D"), (3.0, "1-D"), ([1.0, np.nan], "NaN"), ([np.inf], "infinite"),
])
def test_as_vector_rejects(bad, message):
    with pytest.raises(ValueError, match=message):
        _checks.as_vector(bad, "q")


def test_as_vector_names_the_argument():
    with pytest.raises(ValueError, match="^q must be a 1-D vector"):
        _checks.as_vector([[1.0, 2.0]], "q")
    assert _checks.as_vector([1, 2]).dtype == float


@pytest.mark.parametrize("bad, message", [
    ([1.0, 2.0], "2-D"), (np.zeros((0, 3)), "empty"), ([[np.nan]], "NaN"),
])
def test_as_matrix_rejects(bad, message):
    with pytest.raises(ValueError, match=message):
        _checks.as_matrix(bad, "Q")


def test_as_array_rejects():
    with pytest.raises(ValueError, match="scalar"):
        _checks.as_array(1.0)
    with pytest.raises(ValueError, match="empty"):
        _checks.as_array([])
    assert _checks.as_array([[1, 2]]).shape == (1, 2)


def test_same_length():
    with pytest.raises(ValueError, match="same dimension, got 2 and 3"):
        _checks.same_length(np.zeros(2), np.zeros(3))
    _checks.same_length(np.zeros((4, 2)), np.zeros(2))


@pytest.mark.parametrize("bad", [0, -1, 2.5, True, "3", None])
def test_positive_int_rejects(bad):
    with pytest.raises(ValueError, match="positive integer"):
        _checks.positive_int(bad, "n")


@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), float("inf"), "x", None])
def test_positive_float_rejects(bad):
    with pytest.raises(ValueError, match="positive number"):
        _checks.positive_float(bad, "temperature")


def test_generator_required():
    with pytest.raises(ValueError, match="numpy.random.Generator"):
        _checks.generator(0)
    with pytest.raises(ValueError, match="RandomState"):
        _checks.generator(np.random.RandomState(0))


def test_house_style_is_white_and_colour_blind_safe():
    plotting.use_house_style()
    assert matplotlib.rcParams["figure.facecolor"] == "white"
    cycle = [c["color"] for c in matplotlib.rcParams["axes.prop_cycle"]]
    assert cycle[0].upper() == plotting.COLORS["blue"]


@pytest.mark.parametrize("helper, args", [
    (plotting.plot_distribution, ([1, 2, 3], [0.2, 0.3, 0.5])),
    (plotting.plot_histogram, (np.arange(10.0),)),
    (plotting.plot_weights, ([0.1, 0.9],)),
])
def test_plot_helpers_draw_on_the_given_axes(helper, args):
    fig, ax = plt.subplots()
    assert helper(*args, ax=ax) is ax
    assert ax.patches  # bars were drawn
    plt.close(fig)


def test_plot_helpers_reject_empty_or_mismatched_input():
    with pytest.raises(ValueError):
        plotting.plot_distribution([1, 2], [0.5])
    with pytest.raises(ValueError):
        plotting.plot_histogram([])
    with pytest.raises(ValueError):
        plotting.plot_weights([[0.5, 0.5]])
