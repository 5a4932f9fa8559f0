// The explorable face of a lib.widgets.Control: swaps precomputed frames as the reader moves
// the HTML inputs, with no kernel and no network. lib/widgets.py inlines this file in each
// control, right after the control's data, so that `document.currentScript` finds its control.
(function (root) {
  "use strict";
  var data = JSON.parse(root.querySelector('script[type="application/json"]').textContent);
  var img = root.querySelector("img");
  var inputs = Array.prototype.slice.call(root.querySelectorAll("[data-param]"));

  // The position of one input in its parameter's list of values.
  function indexOf(input) {
    return input.type === "checkbox" ? (input.checked ? 1 : 0) : Number(input.value);
  }

  // The key of the frame for the inputs as they stand: "i,j,k", one index per parameter.
  function key() {
    var parts = [];
    inputs.forEach(function (input) {
      parts[Number(input.dataset.param)] = indexOf(input);
    });
    return parts.join(",");
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
    var k = key();
    img.src = data.frames[k];
    img.alt = data.alts[k];
    root.dataset.state = k;
    inputs.forEach(label);
  }

  inputs.forEach(function (input) {
    input.addEventListener("input", show);
    input.addEventListener("change", show);
  });
  show();
})(document.currentScript.parentNode);
