// The live face of a lib.widgets.Control in Jupyter (an anywidget, lib.widgets.LivePicture):
// the control's frames, packed in sprites as on the site (explorable.js), and the positions of
// its inputs in i0, i1, ... (each ipywidgets input's `index`, linked in the browser with
// jslink), which pick the frame shown. Moving an input needs no round trip to the kernel.
// A box one frame high clips the sprite's <img>, moved up to the frame (spriteRows: lib.widgets
// prepends sprite.js to this module).
function render({ model, el }) {
  const geo = model.get("geometry");
  const sizes = model.get("sizes");
  const alts = model.get("alts");
  const urls = model.get("sprites").map(
    (bytes) => URL.createObjectURL(new Blob([bytes], { type: "image/webp" })));
  const view = document.createElement("div");
  view.className = "live-picture";
  Object.assign(view.style, {
    position: "relative", overflow: "hidden", width: geo.width + "px", maxWidth: "100%",
    aspectRatio: geo.width + "/" + geo.height,
  });
  const img = document.createElement("img");
  Object.assign(img.style, {
    position: "absolute", left: "0", top: "0", width: "100%", maxWidth: "none", height: "auto",
  });
  view.appendChild(img);
  el.appendChild(view);

  function show() {
    const k = stateNumber(sizes, sizes.map((_, p) => model.get("i" + p)));
    const { sprite, row, rows } = spriteRows(geo, k);
    const src = urls[sprite];
    if (img.src !== src) { img.src = src; }
    img.style.aspectRatio = geo.width + "/" + rows;
    img.style.transform = "translateY(" + (-100 * row / rows).toFixed(5) + "%)";
    img.alt = alts[k];
    Object.assign(view.dataset, { frame: k, row: row, width: geo.width, height: geo.height });
  }

  sizes.forEach((_, p) => model.on("change:i" + p, show));
  show();
  return () => urls.forEach((url) => URL.revokeObjectURL(url));
}

export default { render };
