// The book's additions to the theme, on every page (loaded by tools/sphinx_ext/book_site.py):
// scroll cues for wide equations and figures, a legible size for figures on phones, skip links
// to the page's controls, landmarks for stray content, search results with math as text, and
// solutions' printed output open (lib.widgets.folded_output folds it for JupyterLab; here the
// whole cell is already behind the solution's toggle).
(function () {
  "use strict";

  // Figures are drawn at 100 dpi with 9-point text (lib.plotting's house style): 12.5 px.
  var HOUSE_TEXT_PX = 12.5;
  var MIN_TEXT_PX = 9;

  // Mark a box that scrolls sideways with the sides that hide content (book.css draws a cue).
  function markScroll(box) {
    var more = box.scrollWidth - box.clientWidth;
    box.classList.toggle("scrolls-left", more > 1 && box.scrollLeft > 1);
    box.classList.toggle("scrolls-right", more > 1 && box.scrollLeft < more - 1);
    // a box that scrolls must be reachable by keyboard (arrow keys scroll it)
    if (more > 1) { box.setAttribute("tabindex", "0"); } else { box.removeAttribute("tabindex"); }
  }

  function watchScroll(box) {
    markScroll(box);
    box.addEventListener("scroll", function () { markScroll(box); }, {passive: true});
    if (window.ResizeObserver) {
      new ResizeObserver(function () { markScroll(box); }).observe(box);
    }
  }

  // A display equation scrolls in its MathJax container, which MathJax creates when it
  // typesets the equation (lazily, as it nears the screen): the equation's box changes size.
  // The math itself is watched too: its width changes when MathJax's fonts arrive.
  function watchEquation(div) {
    var observer = window.ResizeObserver ? new ResizeObserver(update) : null;
    function update() {
      var box = div.querySelector("mjx-container");
      if (box && !box.bookWatched) {
        box.bookWatched = true;
        box.addEventListener("scroll", function () { markScroll(box); }, {passive: true});
        if (observer && box.firstElementChild) { observer.observe(box.firstElementChild); }
      }
      if (box) { markScroll(box); }
    }
    update();
    if (observer) { observer.observe(div); }
  }

  // A figure keeps at least the width at which its text is MIN_TEXT_PX tall; its box scrolls.
  function keepLegible(img) {
    if (img.closest(".explorable")) { return; }  // controls carry their own minimum width
    function size() {
      if (img.naturalWidth) {
        img.style.minWidth = Math.ceil(img.naturalWidth * MIN_TEXT_PX / HOUSE_TEXT_PX) + "px";
        var box = img.closest(".cell_output");
        if (box) { markScroll(box); }
      }
    }
    if (img.complete) { size(); } else { img.addEventListener("load", size); }
  }

  // Skip links, after the theme's "Skip to main content", one per control on the page.
  function skipLinks() {
    var controls = document.querySelectorAll(".explorable");
    var first = document.getElementById("pst-skip-link");
    if (!controls.length || !first) { return; }
    var nav = document.createElement("div");
    nav.className = "skip-link skip-controls d-print-none";
    controls.forEach(function (control, n) {
      control.setAttribute("tabindex", "-1");
      var link = document.createElement("a");
      link.href = "#" + control.id;
      link.textContent = "Skip to control " + (n + 1) + ": " +
        (control.getAttribute("aria-label") || "").replace(/^Control: /, "");
      nav.appendChild(link);
    });
    first.after(nav);
  }

  // The primary sidebar (site title, search button, table of contents) as one landmark.
  function landmarks() {
    document.querySelectorAll(".bd-sidebar-primary").forEach(function (bar) {
      if (!bar.getAttribute("role")) {
        bar.setAttribute("role", "complementary");
        bar.setAttribute("aria-label", "Book navigation");
      }
    });
  }

  // An empty header cell (the corner of a table whose rows are labelled) heads nothing:
  // make it an ordinary cell, so screen readers do not announce an unnamed column header.
  function emptyHeaders() {
    document.querySelectorAll("main th").forEach(function (th) {
      if (th.textContent.trim() || th.querySelector("img, svg")) { return; }
      var td = document.createElement("td");
      td.className = th.className;
      th.replaceWith(td);
    });
  }

  // TeX as readable text, for search result snippets (the search page does not typeset).
  var SYMBOLS = {
    alpha: "α", beta: "β", gamma: "γ", delta: "δ", Delta: "Δ", epsilon: "ε", varepsilon: "ε",
    theta: "θ", lambda: "λ", mu: "μ", pi: "π", rho: "ρ", sigma: "σ", Sigma: "Σ", tau: "τ",
    phi: "φ", omega: "ω", sum: "Σ", prod: "Π", int: "∫", infty: "∞", cdot: "·", times: "×",
    le: "≤", leq: "≤", ge: "≥", geq: "≥", ne: "≠", neq: "≠", approx: "≈", sim: "~",
    to: "→", rightarrow: "→", in: "∈", top: "ᵀ", perp: "⟂", pm: "±", lVert: "‖", rVert: "‖",
    Vert: "‖", lvert: "|", rvert: "|", mid: "|", ldots: "…", cdots: "⋯", dots: "…",
    partial: "∂", nabla: "∇", quad: " ", qquad: " ", langle: "⟨", rangle: "⟩"
  };
  var SUPERSCRIPTS = {"0": "⁰", "1": "¹", "2": "²", "3": "³", "4": "⁴", "n": "ⁿ", "T": "ᵀ"};

  function texToText(tex) {
    var text = tex
      .replace(/\\[()[\]]|\$\$?/g, "")
      .replace(/\\(begin|end)\{[^}]*\}|\\(left|right|big|Big|bigg|Bigg)\b|&/g, "")
      .replace(/\\\\/g, "; ")
      .replace(/\\[,;:! ]/g, " ")
      .replace(/\\frac\{([^{}]*)\}\{([^{}]*)\}/g, "($1)/($2)")
      .replace(/\\sqrt\{([^{}]*)\}/g, "√($1)")
      .replace(/\\(operatorname|mathrm|mathbb|mathbf|mathcal|text|textrm|boldsymbol)\{([^{}]*)\}/g, "$2")
      .replace(/\\([A-Za-z]+)/g, function (m, name) {
        return Object.prototype.hasOwnProperty.call(SYMBOLS, name) ? SYMBOLS[name] : name;
      })
      .replace(/\^\{?([0-4nT])\}?/g, function (m, c) { return SUPERSCRIPTS[c]; })
      .replace(/[{}]/g, "")
      .replace(/\s+/g, " ");
    return text.trim();
  }

  function readableSearch() {
    // searchtools.js declares `const Search`: a global binding, not a property of window
    var search = typeof Search === "undefined" ? null : Search;  // eslint-disable-line no-undef
    if (!search || !search.htmlToText || search.htmlToText.bookPatched) { return; }
    var original = search.htmlToText;
    search.htmlToText = function (htmlString, anchor) {
      var doc = new DOMParser().parseFromString(htmlString, "text/html");
      doc.querySelectorAll(".math").forEach(function (el) {
        el.querySelectorAll(".eqno").forEach(function (n) { n.remove(); });
        el.textContent = " " + texToText(el.textContent) + " ";
      });
      doc.querySelectorAll(".explorable script").forEach(function (el) { el.remove(); });
      return original(doc.documentElement.outerHTML, anchor);
    };
    search.htmlToText.bookPatched = true;
  }
  window.bookTexToText = texToText;
  readableSearch();

  document.addEventListener("DOMContentLoaded", function () {
    readableSearch();
    skipLinks();
    landmarks();
    emptyHeaders();
    document.querySelectorAll("main div.math").forEach(watchEquation);
    document.querySelectorAll(".explorable-figure, .cell_output").forEach(watchScroll);
    document.querySelectorAll(".cell_output img").forEach(keepLegible);
    document.querySelectorAll("details.folded-output").forEach(function (d) { d.open = true; });
  });
})();
