"""Controls: parameter validation, the three faces, and the live widget driven by its values."""

import base64
import io
import json
import re

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest

from lib import sigmoid
from lib.widgets import MIN_TEXT_PX, Choice, Control, Slider, Toggle, render_frames


def setup(fig):
    ax = fig.add_subplot()
    (line,) = ax.plot([], [])
    ax.set_xlim(-5, 5)
    ax.set_ylim(0, 1)
    return {"line": line, "calls": []}


def update(artists, gap, flip, kind="sigmoid"):
    artists["calls"].append((gap, flip, kind))
    x = np.linspace(-5, 5, 50)
    y = sigmoid(gap - x if flip else x - gap)
    artists["line"].set_data(x, y if kind == "sigmoid" else 1 - y)


PARAMS = [Slider("gap", (-2, 0, 2), 0, integer=True, label="gap"), Toggle("flip", False)]


@pytest.fixture
def control():
    return Control(setup, update, PARAMS, alt="sigmoid shifted by {gap}, flipped: {flip}")


def test_slider_rejects_bad_specs():
    with pytest.raises(ValueError, match="at least one value"):
        Slider("a", (), 0)
    with pytest.raises(ValueError, match="increasing"):
        Slider("a", (2, 1), 1)
    with pytest.raises(ValueError, match="not one of its values"):
        Slider("a", (1, 2), 3)
    with pytest.raises(ValueError, match="non-finite"):
        Slider("a", (1, float("nan")), 1)


def test_choice_and_toggle_validate():
    with pytest.raises(ValueError, match="not an option"):
        Choice("c", ("x", "y"), "z")
    with pytest.raises(ValueError, match="True or False"):
        Toggle("t").validate("yes")
    assert Choice("c", ("x", "y"), "x").validate("y") == "y"


def test_control_rejects_bad_construction():
    with pytest.raises(ValueError, match="at least one parameter"):
        Control(setup, update, [], alt="x")
    with pytest.raises(ValueError, match="unique"):
        Control(setup, update, [Toggle("a"), Toggle("a")], alt="x")
    with pytest.raises(ValueError, match="alt text"):
        Control(setup, update, PARAMS, alt=" ")


def test_set_validates_and_updates(control):
    control.set(gap=2)
    assert control.values == {"gap": 2, "flip": False}
    assert control.artists["calls"][-1] == (2, False, "sigmoid")
    with pytest.raises(ValueError, match=r"gap must lie in \[-2, 2\]"):
        control.set(gap=3)
    with pytest.raises(ValueError, match="unknown parameters"):
        control.set(temperature=1)
    assert control.values["gap"] == 2  # a rejected value changes nothing


def payload_of(html: str) -> dict:
    return json.loads(re.search(r'<script type="application/json">(.*?)</script>',
                                html).group(1))


def sprite_frames(html: str) -> list[np.ndarray]:
    """Every frame of an explorable face, cut out of its sprites, in state order."""
    from PIL import Image

    data = payload_of(html)
    geo = data["sprite"]
    default = re.search(r'<img src="([^"]+)"', html).group(1)
    frames = []
    for src in data["sprites"]:
        raw = base64.b64decode((src or default).split(",", 1)[1])
        assert raw[:4] == b"RIFF" and raw[8:12] == b"WEBP"
        pixels = np.asarray(Image.open(io.BytesIO(raw)).convert("RGB"))
        slot = geo["height"] + 2 * geo["pad"]
        assert pixels.shape[1] == geo["width"] and pixels.shape[0] % slot == 0
        for top in range(0, pixels.shape[0], slot):
            frame = pixels[top + geo["pad"]:top + geo["pad"] + geo["height"]]
            # the padding repeats the frame's own edge rows: no neighbour can bleed in
            assert (pixels[top:top + geo["pad"]] == frame[:1]).all()
            assert (pixels[top + slot - geo["pad"]:top + slot] == frame[-1:]).all()
            frames.append(frame)
    assert len(frames) == geo["count"]
    return frames


def test_explorable_face_has_one_frame_per_state(control):
    html = control.explorable_html()
    payload = payload_of(html)
    assert sorted(payload["alts"]) == [f"{i},{j}" for i in range(3) for j in range(2)]
    assert payload["sprite"]["count"] == 6 and len(payload["sprites"]) == 1
    assert payload["sprites"] == [None]  # the <img> holds the only sprite, not repeated
    frames = sprite_frames(html)
    assert len({f.tobytes() for f in frames}) == 6
    assert payload["alts"]["2,1"] == "sigmoid shifted by 2, flipped: True"
    assert 'data-state="1,0"' in html  # opens at the defaults
    assert html.count('type="range"') == 1 and html.count('type="checkbox"') == 1
    assert control.values == {"gap": 0, "flip": False}  # defaults restored afterwards


def test_sprite_frames_are_the_drawn_frames(control):
    """Each frame in the sprites is the state drawn on its own, up to the shared palette, and
    the figure as :meth:`Control.png` saves it."""
    from PIL import Image

    drawn = render_frames(control)
    frames = sprite_frames(control.explorable_html())
    for (key, pixels), frame in zip(drawn.items(), frames, strict=True):
        assert np.abs(pixels.astype(int) - frame).mean() < 2, key
    saved = np.asarray(Image.open(io.BytesIO(control.png())).convert("RGB"))
    assert (saved == drawn["1,0"]).all()


def test_states_split_into_sprites_of_bounded_size(control, monkeypatch):
    """A control with many frames gets several sprites, each within the decoded-size cap."""
    from lib import widgets
    from lib.widgets import sprites

    monkeypatch.setattr(sprites, "SPRITE_MAX_PIXELS", 3 * 380 * 640)  # three frames each
    html = control.explorable_html()
    payload = payload_of(html)
    assert payload["sprite"]["perSprite"] == 3 and len(payload["sprites"]) == 2
    assert payload["sprites"][0] is None and payload["sprites"][1]  # default "1,0": frame 2
    frames = sprite_frames(html)
    drawn = list(render_frames(control).values())
    for k, frame in enumerate(frames):  # each frame is nearest to its own state's drawing
        distance = [np.abs(d.astype(int) - frame).mean() for d in drawn]
        assert int(np.argmin(distance)) == k
    for k in range(6):
        slot_top = (k % 3) * (360 + 4) + 2  # rows above frame k in its sprite
        assert widgets.sprite_rows(payload["sprite"], k) == (slot_top, 3 * (360 + 4))


def test_split_column_finds_the_gap_between_plot_and_readout():
    from lib.widgets import split_column

    frame = np.full((10, 100, 3), 255, np.uint8)
    frame[:, 5:60] = 0  # a plot
    frame[:, 75:95] = 0  # its readout
    assert split_column([frame]) == 67
    assert split_column([frame[:, :60]]) is None  # no blank band inside the drawing
    other = frame.copy()
    other[:, 60:66] = 0  # a frame whose drawing reaches into the band narrows it
    assert split_column([frame, other]) == 70


def test_sprite_rejects_bad_frames():
    from lib.widgets import sprite

    with pytest.raises(ValueError, match="at least one frame"):
        sprite([])
    with pytest.raises(ValueError, match="one shape"):
        sprite([np.zeros((4, 4, 3), np.uint8), np.zeros((5, 4, 3), np.uint8)])


def test_explorable_face_is_deterministic(control):
    assert control.explorable_html() == control.explorable_html()


def test_bundle_carries_every_face(control):
    bundle = control._repr_mimebundle_()
    assert {"text/html", "image/png", "text/plain"} <= set(bundle)
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert bundle["text/plain"] == "Control(gap=0, flip=False)"
    assert base64.b64decode(bundle["image/png"]).startswith(b"\x89PNG")


def test_live_face_links_each_input_to_its_picture(control):
    """Each input's index is linked in the browser to the picture's i<n>; the picture holds the
    same sprites as the explorable face; the kernel follows the inputs."""
    import traitlets

    box = control.widget()
    picture = box.picture
    assert picture.sizes == [3, 2] and (picture.i0, picture.i1) == (1, 0)
    assert picture.sprites == control.packed()["sprites"]
    assert picture.alts[1] == "sigmoid shifted by -2, flipped: True"
    links = [(link.source[0], link.source[1], link.target[0], link.target[1])
             for link in box.links]
    assert links == [(box.inputs["gap"], "index", picture, "i0"),
                     (box.inputs["flip"], "index", picture, "i1")]
    box.inputs["gap"].value = 2
    box.inputs["flip"].value = True
    assert control.values == {"gap": 2, "flip": True}
    assert control.artists["calls"][-1] == (2, True, "sigmoid")
    with pytest.raises(traitlets.TraitError):  # the slider has only the explorable values
        box.inputs["gap"].value = 99
    assert control.values["gap"] == 2
    assert control.widget() is box


def test_live_picture_and_control_reject_bad_input(control):
    from lib.widgets import MAX_PARAMS, live_picture

    packed = control.packed()
    with pytest.raises(ValueError, match="out of range"):
        live_picture(packed, [3, 2], [3, 0])
    with pytest.raises(ValueError, match="6 frames are packed"):
        live_picture(packed, [3, 3], [0, 0])
    with pytest.raises(ValueError, match="one index each"):
        live_picture(packed, [3, 2], [0])
    with pytest.raises(ValueError, match=f"at most {MAX_PARAMS} parameters"):
        Control(setup, update, [Toggle(f"t{i}") for i in range(MAX_PARAMS + 1)], alt="x")


def test_choice_parameter_in_both_faces():
    c = Control(setup, update, PARAMS + [Choice("kind", ("sigmoid", "complement"), "sigmoid")],
                alt="{kind}")
    assert "<select" in c.explorable_html()
    c.widget().inputs["kind"].value = "complement"
    assert c.artists["calls"][-1][2] == "complement"


def test_each_parameter_builds_its_own_html_input():
    slider = Slider("theta", (0, 45, 90), 45, label="angle θ", fmt="{}°")
    html = slider.html_input("c-0", 0, 45.0)  # the float a validated value becomes
    assert '<label for="c-0">angle θ</label>' in html
    assert 'value="1"' in html and 'aria-valuetext="45°"' in html
    assert '<output for="c-0">45°</output>' in html
    assert 'type="checkbox"' in Toggle("t", True).html_input("c-1", 1, True)
    assert "checked" in Toggle("t", True).html_input("c-1", 1, True)
    choice = Choice("c", ("x", "y"), "y").html_input("c-2", 2, "y")
    assert '<option value="1" selected>y</option>' in choice and 'for="c-2"' in choice


def test_each_parameter_builds_its_own_live_widget():
    import ipywidgets as W

    slider = Slider("a", (1.0, 2.5), 2.5, fmt="{:.1f} s").live_widget()
    assert isinstance(slider, W.SelectionSlider)
    assert slider.options == (("1.0 s", 1.0), ("2.5 s", 2.5)) and slider.index == 1
    toggle = Toggle("t", True).live_widget()
    assert isinstance(toggle, W.ToggleButtons)
    assert toggle.options == (("off", False), ("on", True))
    assert toggle.index == 1 and toggle.value is True
    assert isinstance(Choice("c", ("x", "y"), "x").live_widget(), W.ToggleButtons)


def test_render_frames_draws_every_state_and_restores_the_values(control):
    control.set(gap=2)
    frames = render_frames(control)
    assert len(frames) == 3 * 2 and control.values == {"gap": 2, "flip": False}
    assert {f.shape for f in frames.values()} == {(360, 640, 3)}


def test_explorable_face_is_accessible_and_runs_the_shipped_script(control):
    html = control.explorable_html()
    assert html.count("aria-valuetext=") == 1 and 'aria-label="Control: gap, flip"' in html
    assert 'role="group"' in html and "__UID__" not in html
    assert "document.currentScript.parentNode" in html  # lib/explorable.js, inlined
    px = float(re.search(r'data-text-px="([\d.]+)"', html).group(1))
    min_width = int(re.search(r"min-width:(\d+)px", html).group(1))
    # at its minimum width, the frame's smallest text is still MIN_TEXT_PX tall
    assert min_width * px / (control.fig.get_figwidth() * control.fig.dpi) >= MIN_TEXT_PX


def test_folded_output_keeps_what_was_printed_when_the_block_raises(capsys):
    from lib.widgets import folded_output

    with pytest.raises(ZeroDivisionError), folded_output():
        print("before the error")
        _ = 1 / 0
    assert capsys.readouterr().out == "before the error\n"


def _line_control(**kwargs):
    def setup(fig):
        return {"line": fig.add_subplot().plot([0, 1], [0, 0])[0]}

    def update(artists, y):
        artists["line"].set_ydata([y, y])

    return Control(setup, update, [Slider("y", (0.0, 1.0), 0.0)], alt="a line at {y}",
                   figsize=(2, 1), **kwargs)


def test_packed_frames_are_cached_by_the_code_that_drew_them(tmp_path, monkeypatch):
    """Same history of inputs: the frames come from disk, not drawn again; another history,
    or ``cache=False``, draws them. Outside IPython nothing is cached."""
    from lib.widgets import cache
    from lib.widgets import control as control_module

    monkeypatch.setenv(cache.ENV, str(tmp_path))
    drawn = []
    real_states = control_module._states

    def counting_states(c):
        drawn.append(c)
        return real_states(c)

    monkeypatch.setattr(control_module, "_states", counting_states)
    assert cache.key("anything") is None  # no IPython here
    _line_control().packed()
    assert len(drawn) == 1 and not list(tmp_path.iterdir())

    history = ["import lib", "c = Control(...)"]
    monkeypatch.setattr(cache, "_history", lambda: list(history))
    first = _line_control().packed()
    assert len(drawn) == 2 and len(list(tmp_path.glob("*.pickle"))) == 1
    again = _line_control().packed()
    assert len(drawn) == 2 and again == first  # from disk
    history.append("x = 1")
    _line_control().packed()
    assert len(drawn) == 3  # another history: drawn again
    _line_control(cache=False).packed()
    assert len(drawn) == 4
    monkeypatch.setenv(cache.ENV, "off")
    assert cache.folder() is None


def test_a_kernel_history_holds_the_cell_being_run():
    """The cache key's history includes the running cell (IPython stores it before running)."""
    from IPython.core.interactiveshell import InteractiveShell

    from lib.widgets import cache

    shell = InteractiveShell.instance()
    try:
        shell.run_cell("from lib.widgets import cache; seen = cache._history()",
                       store_history=True)
        assert shell.user_ns["seen"][-1].startswith("from lib.widgets import cache")
    finally:
        InteractiveShell.clear_instance()
    assert cache._history() is None
