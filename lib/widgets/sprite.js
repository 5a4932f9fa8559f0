// Where a state of a lib.widgets.Control lies in its sprites, written once for both faces:
// the site's (explorable.js) and Jupyter's (live.js) each load this file before their own.
// lib.widgets.sprites.sprite_rows is its Python twin (the page's first paint, before any script
// runs); tests/test_browser.py checks that the two agree on every frame of every control.

// The state's number in drawing order, from one index per parameter (the last varies fastest).
function stateNumber(sizes, parts) {
  return parts.reduce(function (k, i, p) { return k * sizes[p] + i; }, 0);
}

// Frame k: its sprite's number, the row at which the frame starts in that sprite, and the
// sprite's height in rows. Slot j of a sprite of m frames starts at row j (H + 2 pad) + pad
// of m (H + 2 pad).
function spriteRows(geo, k) {
  var slot = geo.height + 2 * geo.pad;
  var first = k - (k % geo.perSprite);
  return { sprite: first / geo.perSprite, row: (k - first) * slot + geo.pad,
           rows: Math.min(geo.perSprite, geo.count - first) * slot };
}
