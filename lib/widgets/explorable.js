// The explorable face of a lib.widgets.Control: shows precomputed frames as the reader moves
// the HTML inputs, with no kernel and no network. lib.widgets inlines this file in each
// control, after sprite.js and the control's data, so that `document.currentScript` finds its
// control.
// The frames are stacked in sprites. A box one frame high (.explorable-view) clips the
// sprite's <img>, moved up to the frame (spriteRows, in sprite.js). On a screen too narrow
// for the whole frame at a legible size, the frame is cut into its two `pieces` (at a blank
// band of columns, e.g. between a plot and its readout; lib.widgets.narrow_pieces), which
// stack.
(function (root) {
  "use strict";
  var data = JSON.parse(root.querySelector('script[type="application/json"]').textContent);
  var figure = root.querySelector(".explorable-figure");
  var view = root.querySelector(".explorable-view");
  var img = view.querySelector("img");
  var inputs = Array.prototype.slice.call(root.querySelectorAll("[data-param]"));
  var geo = data.sprite;
  var sizes = data.labels.map(function (values) { return values.length; });
  // The sprite the page opened with is the <img>'s own source (not repeated in the data).
  var sprites = data.sprites.map(function (src) { return src || img.src; });
  var views = [view];
  var frame = 0;

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

  // Place every view's <img> on frame k: each view shows its piece [x0, x1, y0, y1] of it.
  // The sprite moves up by a fraction of its own height, exact at any scale.
  function place(k) {
    var at = spriteRows(geo, k);
    var src = sprites[at.sprite];
    views.forEach(function (v) {
      var pic = v.querySelector("img");
      var piece = v.piece || [0, geo.width, 0, geo.height];
      if (pic.src !== src) { pic.src = src; }
      pic.style.aspectRatio = geo.width + "/" + at.rows;
      pic.style.transform = "translateY(" +
        (-100 * (at.row + piece[2]) / at.rows).toFixed(5) + "%)";
    });
    img.dataset.frame = String(k);
  }

  // One view of the whole frame, or its two pieces stacked when the frame does not fit.
  function layout() {
    var room = figure.clientWidth;
    var split = !!(geo.pieces && room && room < geo.width * geo.minScale);
    var pieces = split ? geo.pieces : [[0, geo.width, 0, geo.height]];
    if (split && views.length === 1) {
      var half = view.cloneNode(true);
      var pic = half.querySelector("img");
      pic.alt = "";
      pic.setAttribute("aria-hidden", "true");
      figure.appendChild(half);
      views.push(half);
    }
    var widest = Math.max.apply(null, pieces.map(function (p) { return p[1] - p[0]; }));
    var scale = Math.min(1, Math.max(geo.minScale, room / widest));
    figure.classList.toggle("explorable-split", split);
    views.forEach(function (v, n) {
      var piece = pieces[n];
      var pic = v.querySelector("img");
      v.hidden = !piece;
      if (!piece) { return; }
      v.piece = piece;
      var w = piece[1] - piece[0];
      v.style.aspectRatio = w + "/" + (piece[3] - piece[2]);
      v.style.width = split ? (w * scale).toFixed(2) + "px" : geo.width + "px";
      v.style.maxWidth = split ? "none" : "100%";
      v.style.minWidth = split ? "0" : Math.ceil(geo.width * geo.minScale) + "px";
      pic.style.width = (100 * geo.width / w).toFixed(4) + "%";
      pic.style.left = (-100 * piece[0] / w).toFixed(4) + "%";
    });
    place(frame);
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
    frame = stateNumber(sizes, parts);
    place(frame);
    img.alt = data.alts[parts.join(",")];
    root.dataset.state = parts.join(",");
    inputs.forEach(label);
  }

  inputs.forEach(function (input) {
    input.addEventListener("input", show);
    input.addEventListener("change", show);
  });
  show();
  layout();
  var room = figure.clientWidth;
  function relayout() {  // only when the room changes (a new layout resizes the box's height)
    if (figure.clientWidth !== room) {
      room = figure.clientWidth;
      window.requestAnimationFrame(layout);
    }
  }
  if (window.ResizeObserver) {
    new ResizeObserver(relayout).observe(figure);
  } else {
    window.addEventListener("resize", relayout);
  }
})(document.currentScript.parentNode);
