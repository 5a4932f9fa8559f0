// The explorable face of a lib.widgets.Control: shows precomputed frames as the reader moves
// the HTML inputs, with no kernel and no network. lib/widgets.py inlines this file in each
// control, right after the control's data, so that `document.currentScript` finds its control.
// The frames are stacked in sprites; the <img> is one frame high (aspect-ratio, object-fit:
// cover) and its object-position picks the frame (see lib.widgets.sprite_position).
(function (root) {
  "use strict";
  var data = JSON.parse(root.querySelector('script[type="application/json"]').textContent);
  var img = root.querySelector("img");
  var inputs = Array.prototype.slice.call(root.querySelectorAll("[data-param]"));
  var geo = data.sprite;
  var sizes = data.labels.map(function (values) { return values.length; });
  // The sprite the page opened with is the <img>'s own source (not repeated in the data).
  var sprites = data.sprites.map(function (src) { return src || img.src; });

  // The position of one input in its parameter's list of values.
  function indexOf(input) {
    return input.type === "checkbox" ? (input.checked ? 1 : 0) : Number(input.value);
  }

  // One index per parameter for the inputs as they stand.
  function indices() {
    var parts = sizes.map(function () { return 0; });
    inputs.forEach(function (input) {
      parts[Number(input.dataset.param)] = indexOf(input);
    });
    return parts;
  }

  // The state's number in drawing order (the last parameter varies fastest).
  function frameOf(parts) {
    return parts.reduce(function (k, i, p) { return k * sizes[p] + i; }, 0);
  }

  // The vertical object-position (percent) that shows frame k in its sprite.
  function position(k) {
    var slot = geo.height + 2 * geo.pad;
    var first = k - (k % geo.perSprite);
    var frames = Math.min(geo.perSprite, geo.count - first);
    var spare = frames * slot - geo.height;
    return spare ? 100 * ((k - first) * slot + geo.pad) / spare : 0;
  }

  // Show each input's value beside it, and tell screen readers what a slider shows.
  function label(input) {
    var shown = data.labels[Number(input.dataset.param)][indexOf(input)];
    var output = root.querySelector('output[for="' + input.id + '"]');
    if (output) {
      output.textContent = shown;
    }
    if (input.type === "range") {
      input.setAttribute("aria-valuetext", shown);
    }
  }

  function show() {
    var parts = indices();
    var k = frameOf(parts);
    var key = parts.join(",");
    var src = sprites[Math.floor(k / geo.perSprite)];
    if (img.src !== src) {
      img.src = src;
    }
    img.style.objectPosition = "0 " + position(k).toFixed(4) + "%";
    img.alt = data.alts[key];
    img.dataset.frame = String(k);
    root.dataset.state = key;
    inputs.forEach(label);
  }

  inputs.forEach(function (input) {
    input.addEventListener("input", show);
    input.addEventListener("change", show);
  });
  show();
})(document.currentScript.parentNode);
