"""lib.figures.heads draws what lib.heads computes: the control follows its inputs, figures draw."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np

from lib.attention import softmax
from lib.figures.heads import (
    TASK_ALT,
    TASK_PARAMS,
    plot_collapse,
    plot_hull,
    plot_task_circuits,
    setup_task,
    task_head_weights,
    update_task,
)
from lib.heads import two_offset_weights
from lib.widgets import Control


def test_the_task_heads_weights_are_the_rows_of_two_offset_weights_shifted_to_each_query():
    for n_heads in (1, 2):
        rows = two_offset_weights(n_heads, 3.0)
        for P, row in zip(task_head_weights(n_heads, 3.0), rows, strict=True):
            for t in range(8):  # key t - k gets the weight of offset k
                np.testing.assert_allclose(P[t, (t - np.arange(8)) % 8], row, atol=1e-12)


def test_the_task_control_follows_its_inputs():
    control = Control(setup_task, update_task, TASK_PARAMS, alt=TASK_ALT, figsize=(7.2, 2.9))
    control.set(n_heads=1, beta=8)
    one = control.png()
    control.set(n_heads=2, beta=8)
    assert control.png() != one


def test_the_figures_draw_their_data():
    values = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])
    outputs = softmax(np.random.default_rng(0).standard_normal((50, 3))) @ values
    ax = plot_hull(values, outputs)
    assert len(ax.collections) >= 2
    axes = plot_task_circuits(4.0)
    assert axes.shape == (2, 2)
    ax = plot_collapse({"pure": [1.0, 0.1, 1e-20], "skip": [1.0, 1.0, 2.0]})
    assert len(ax.get_lines()) == 2 and ax.get_lines()[0].get_ydata()[-1] == 1e-17
    plt.close("all")
