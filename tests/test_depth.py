"""lib.depth against closed forms, finite differences and seeded simulations."""

from __future__ import annotations

import math

import numpy as np
import pytest

import lib
from lib.depth import (
    activation,
    activation_factor,
    init_variance,
    layer_norm,
    layer_norm_jacobian,
    layer_variance,
    residual_stream,
    rms_norm,
    rms_norm_jacobian,
    simulate_stack,
    stack_theory,
    tanh_stack_theory,
)
from tests.conftest import chapter_cell

# -- one layer and the initializations ----------------------------------------------------

def test_one_layer_variance_is_fan_in_sigma2_second_moment():
    rng = np.random.default_rng(0)
    n_in, n_out, sigma2, n = 200, 50, 0.003, 4000
    x = 1.5 + rng.standard_normal((n, n_in))  # non-zero mean: E[x²] = 1 + 1.5² = 3.25
    W = np.sqrt(sigma2) * rng.standard_normal((n_in, n_out))
    y = (x @ W).ravel()
    predicted = layer_variance(n_in, sigma2, 3.25)
    assert predicted == pytest.approx(n_in * sigma2 * 3.25)
    # one draw of W: the spread of Σ_j W_ij² around n_in σ² is about √(2/n_in) of it
    assert np.mean(y**2) == pytest.approx(predicted, rel=4 * np.sqrt(2 / n_in))


def test_initializations_are_the_published_variances():
    assert init_variance(100, 300, "fan_in") == pytest.approx(1 / 100)
    assert init_variance(100, 300, "fan_out") == pytest.approx(1 / 300)
    assert init_variance(100, 300, "glorot") == pytest.approx(2 / 400)
    assert init_variance(100, 300, "he") == pytest.approx(2 / 100)
    assert init_variance(100, 300, "fan_in", gain=3.0) == pytest.approx(3 / 100)


@pytest.mark.parametrize("call, message", [
    (lambda: init_variance(0, 3, "he"), "fan_in must be a positive integer"),
    (lambda: init_variance(3, -1, "he"), "fan_out must be a positive integer"),
    (lambda: init_variance(3, 3, "xavier"), "init must be one of"),
    (lambda: init_variance(3, 3, "he", gain=0.0), "gain must be a positive number"),
    (lambda: layer_variance(0, 1.0, 1.0), "fan_in must be a positive integer"),
    (lambda: layer_variance(2, -1.0, 1.0), "sigma2 must be a non-negative number"),
    (lambda: activation([1.0], "gelu"), "activation must be one of"),
    (lambda: activation_factor("tanh"), "tanh has no constant factor"),
    (lambda: stack_theory([4], "he", "relu"), "at least an input and an output width"),
    (lambda: stack_theory([4, 0], "he", "relu"), "every width must be a positive integer"),
    (lambda: simulate_stack([4, 4], "he", "relu", 0), "numpy.random.Generator"),
    (lambda: simulate_stack([4, 4], "he", "swish", np.random.default_rng(0)), "one of"),
])
def test_bad_inputs_raise_clear_errors(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_relu_keeps_half_the_second_moment_of_a_symmetric_input():
    z = np.random.default_rng(1).standard_normal(400_000) * 1.7
    ratio = np.mean(activation(z, "relu") ** 2) / np.var(z)
    assert activation_factor("relu") == 0.5 and activation_factor("linear") == 1.0
    assert ratio == pytest.approx(0.5, abs=0.005)  # about 5 standard errors
    slope2 = np.mean((z > 0).astype(float))  # E[φ'(z)²] for ReLU
    assert slope2 == pytest.approx(0.5, abs=0.005)


# -- stacks ---------------------------------------------------------------------------------

def test_stack_theory_is_the_product_of_the_layer_factors():
    widths = [300, 100, 50]
    q, r = stack_theory(widths, "glorot", "relu")
    q1 = 300 * 2 / 400 / 2  # n_0 σ_1² c
    assert q.tolist() == pytest.approx([1.0, q1, q1 * 100 * 2 / 150 / 2])
    assert r[-1] == 1.0
    assert r[1] == pytest.approx(50 * 2 / 150 / 2)
    assert r[0] == pytest.approx(r[1] * 100 * 2 / 400 / 2)


def test_he_and_fan_in_keep_the_forward_signal_exactly_in_theory():
    q_he, _ = stack_theory([64] * 51, "he", "relu")
    q_lin, r_lin = stack_theory([64] * 51, "fan_in", "linear")
    assert np.all(q_he == 1.0) and np.all(q_lin == 1.0) and np.all(r_lin == 1.0)
    q_big, _ = stack_theory([64] * 51, "fan_in", "linear", gain=2.0)
    assert q_big[-1] == pytest.approx(2.0**50, rel=1e-12)


@pytest.mark.parametrize("init, act", [("fan_in", "linear"), ("glorot", "relu"),
                                       ("he", "relu"), ("fan_out", "linear")])
def test_simulated_layer_factors_match_the_theory(init, act):
    widths = [256, 128, 64, 128, 256]
    q_sim, r_sim = simulate_stack(widths, init, act, np.random.default_rng(2), n_nets=40,
                                  batch=32)
    q, r = stack_theory(widths, init, act)
    forward = q_sim[:, 1:] / q_sim[:, :-1]  # per network and layer
    backward = r_sim[:, :-1] / r_sim[:, 1:]
    for sim, exact in ((forward, q[1:] / q[:-1]), (backward, r[:-1] / r[1:])):
        se = sim.std(axis=0) / np.sqrt(sim.shape[0])
        assert np.all(np.abs(sim.mean(axis=0) - exact) < 5 * se + 0.02 * exact)


def test_a_tanh_stack_runs_and_shrinks():
    q, r = simulate_stack([64] * 21, "fan_in", "tanh", np.random.default_rng(3), n_nets=4)
    assert q.shape == r.shape == (4, 21)
    assert np.all(q[:, -1] < q[:, 1])  # E[tanh(z)²] < Var z: the signal fades


# -- normalization --------------------------------------------------------------------------

def test_layer_norm_standardizes_each_row_and_applies_gain_and_bias():
    x = np.random.default_rng(4).standard_normal((5, 16)) * 3 + 2
    y = layer_norm(x)
    assert np.abs(y.mean(axis=1)).max() < 1e-14
    assert np.abs(y.var(axis=1) - 1).max() < 1e-13
    g, b = np.linspace(0.5, 2, 16), np.linspace(-1, 1, 16)
    assert np.abs(layer_norm(x, g, b) - (g * y + b)).max() < 1e-14
    assert np.abs(layer_norm(7.0 * x - 3.0) - y).max() < 1e-13  # scale and shift invariant


def test_rms_norm_has_unit_mean_square_and_keeps_the_mean():
    x = np.random.default_rng(5).standard_normal((5, 16)) + 1
    y = rms_norm(x)
    assert np.abs(np.mean(y**2, axis=1) - 1).max() < 1e-14
    assert np.abs(rms_norm(0.01 * x) - y).max() < 1e-13  # scale invariant
    assert np.abs(rms_norm(x + 5.0) - y).max() > 0.1  # not shift invariant


@pytest.mark.parametrize("call, message", [
    (lambda: layer_norm(np.ones((2, 4))), "a row is constant"),
    (lambda: layer_norm([[1.0], [2.0]]), "at least 2 features"),
    (lambda: layer_norm([1.0, 2.0], gain=[1.0]), "gain and bias must have length 2"),
    (lambda: layer_norm([1.0, 2.0], eps=-1.0), "eps must be a non-negative number"),
    (lambda: rms_norm(np.zeros(3)), "zero vector"),
    (lambda: rms_norm_jacobian(np.zeros(3)), "zero vector"),
    (lambda: layer_norm_jacobian(np.ones(3)), "a row is constant"),
    (lambda: rms_norm(np.ones((2, 2)), gain=[1.0, 2.0, 3.0]), "length 2"),
])
def test_normalization_rejects_what_it_cannot_divide(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_eps_makes_a_constant_row_finite():
    assert np.all(layer_norm(np.ones(4), eps=1e-5) == 0.0)
    assert np.all(np.isfinite(rms_norm(np.zeros(4), eps=1e-5)))


@pytest.mark.parametrize("norm, jac", [(rms_norm, rms_norm_jacobian),
                                       (layer_norm, layer_norm_jacobian)])
def test_jacobians_match_finite_differences_and_scale_as_one_over_the_norm(norm, jac):
    x = np.random.default_rng(6).standard_normal(12) + 0.3
    J = jac(x)
    assert np.abs(J - lib.numerical_jacobian(norm, x)).max() < 1e-8
    flat = x if norm is rms_norm else np.ones(12)  # the direction the norm ignores
    assert np.abs(J @ flat).max() < 1e-12
    assert np.abs(jac(10.0 * x) - J / 10.0).max() < 1e-14


# -- the residual stream --------------------------------------------------------------------

def test_pre_norm_stream_grows_linearly_and_post_norm_stays_at_one():
    rng = np.random.default_rng(7)
    d, L, v = 64, 12, 0.5  # branch gain v = d σ²
    W = np.sqrt(v / d) * rng.standard_normal((400, L, d, d))
    x0 = rng.standard_normal((400, 1, d))
    # (nets, L + 1, 1, d)
    pre = np.stack([residual_stream(x, w, "pre") for x, w in zip(x0, W, strict=True)])
    ms = np.mean(pre**2, axis=(2, 3))  # (nets, L + 1)
    se = ms.std(axis=0) / np.sqrt(ms.shape[0])
    assert np.all(np.abs(ms.mean(axis=0) - (1 + v * np.arange(L + 1))) < 4 * se + 1e-12)
    post = residual_stream(x0[0], W[0], "post")
    assert np.abs(np.mean(post[1:] ** 2, axis=-1) - 1).max() < 1e-13
    none = np.stack([residual_stream(x, w, "none") for x, w in zip(x0[:100], W[:100], strict=True)])
    ratio = np.mean(none[:, 1:] ** 2, axis=(2, 3)) / np.mean(none[:, :-1] ** 2, axis=(2, 3))
    assert ratio.mean() == pytest.approx(1 + v, abs=4 * ratio.std() / np.sqrt(ratio.size))


def test_residual_stream_checks_its_shapes():
    with pytest.raises(ValueError, match="shape"):
        residual_stream(np.ones((2, 3)), np.zeros((2, 4, 4)), "pre")
    with pytest.raises(ValueError, match="2-D array"):
        residual_stream(np.ones(3), np.zeros((2, 3, 3)), "pre")
    with pytest.raises(ValueError, match="norm must be one of"):
        residual_stream(np.ones((2, 3)), np.zeros((2, 3, 3)), "sandwich")


# -- the chapter's derivations against lib ---------------------------------------------------

CHAPTER = "depth"


def test_the_chapters_stack_recursion_is_lib_stack_theory():
    ns = chapter_cell(CHAPTER, "derive-stack-theory")
    widths = [300, 120, 40, 90]
    for init in lib.INITS:
        for act in ("linear", "relu"):
            s2 = [init_variance(a, b, init) for a, b in zip(widths[:-1], widths[1:], strict=True)]
            ours = ns["stack_theory"](widths, s2, activation_factor(act))
            for a, b in zip(ours, stack_theory(widths, init, act), strict=True):
                assert np.abs(a - b).max() < 1e-13


def test_the_chapters_norms_are_lib_norms():
    ns = chapter_cell(CHAPTER, "derive-norms")
    x = np.random.default_rng(13).standard_normal((6, 24)) * 4 - 1
    assert np.abs(ns["layer_norm"](x) - layer_norm(x)).max() < 1e-14
    assert np.abs(ns["rms_norm"](x) - rms_norm(x)).max() < 1e-14


def test_the_chapters_tanh_recursion_is_lib_tanh_stack_theory():
    ns = chapter_cell(CHAPTER, "derive-tanh-theory", {"np": np, "lib": lib, "math": math})
    for gain, L in ((0.5, 3), (1.0, 40), (4.0, 25)):
        q, r = tanh_stack_theory(gain, L)
        assert np.allclose((q[-1], r[0]), ns["tanh_recursion"](gain, L), rtol=1e-12)


# -- tanh at infinite width --------------------------------------------------------------

def test_tanh_theory_one_layer_matches_monte_carlo():
    z = np.random.default_rng(21).standard_normal(400_000)
    for gain in (0.5, 2.0):
        q, r = tanh_stack_theory(gain, 1)
        t = np.tanh(np.sqrt(gain) * z)
        assert q[1] == pytest.approx(np.mean(t**2), abs=5 * np.std(t**2) / np.sqrt(z.size))
        slope2 = gain * (1 - t**2) ** 2
        assert r[0] == pytest.approx(np.mean(slope2), abs=5 * np.std(slope2) / np.sqrt(z.size))
        assert q[0] == 1.0 and r[1] == 1.0


def test_tanh_theory_small_signal_decays_as_one_over_2l():
    # 1/q_l ≈ 1/q_{l-1} + 2 for small q: after many layers 2 L q_L approaches 1
    q, _ = tanh_stack_theory(1.0, 2000)
    assert 2 * 2000 * q[-1] == pytest.approx(1.0, abs=0.01)


def test_tanh_theory_backward_is_the_product_of_layer_factors():
    q, r = tanh_stack_theory(4.0, 5)
    assert np.all(r[:-1] / r[1:] > 1)  # saturated: every backward factor exceeds 1
    assert r.shape == q.shape == (6,)


@pytest.mark.parametrize("call, message", [
    (lambda: tanh_stack_theory(0.0, 3), "gain must be a positive number"),
    (lambda: tanh_stack_theory(1.0, 0), "L must be a positive integer"),
])
def test_tanh_theory_rejects_bad_arguments(call, message):
    with pytest.raises(ValueError, match=message):
        call()
