"""Input validation shared by lib, and the plotting helpers' contracts."""

import matplotlib
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
        _checks.require_generator(0)
    with pytest.raises(ValueError, match="RandomState"):
        _checks.require_generator(np.random.RandomState(0))


@pytest.mark.parametrize("bad", [1.0, -0.1, float("nan"), "wide", None])
def test_tolerance_rejects(bad):
    with pytest.raises(ValueError, match=r"^eps must be a number in \[0, 1\)"):
        _checks.tolerance(bad)
    assert _checks.tolerance(0) == 0.0 and _checks.tolerance(np.float32(0.5)) == 0.5


@pytest.mark.parametrize("bad", [-1.0, float("nan"), float("inf"), "x", None])
def test_non_negative_float_rejects(bad):
    with pytest.raises(ValueError, match="^min_time must be a non-negative number"):
        _checks.non_negative_float(bad, "min_time")
    assert _checks.non_negative_float(0, "min_time") == 0.0


def test_nonzero_length():
    assert _checks.nonzero_length(np.array([3.0, 4.0]), "a") == 5.0
    with pytest.raises(ValueError, match="^b is the zero vector"):
        _checks.nonzero_length(np.zeros(3), "b")


@pytest.mark.parametrize("bad, message", [
    ([1.0, 2.0, 3.0], "shape"), ([[1.0, 2.0]], "shape"), ([np.nan, 1.0], "NaN"),
    ([0.0, 0.0], "zero vector"),
])
def test_plane_vector_rejects(bad, message):
    with pytest.raises(ValueError, match=message):
        _checks.plane_vector(bad, "a")
    assert _checks.plane_vector([1, 0], "a").dtype == float


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
