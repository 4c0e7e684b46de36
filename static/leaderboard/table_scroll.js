// A table wider than its card scrolls sideways inside it (.table-wrap). On a phone that is easy
// to miss, so each such card gets a line above it saying how many columns are in view, a fade
// on the edge where more columns wait (class more-right / more-left) and, once scrolled, a
// shadow under its sticky first column. Nothing changes for a table that fits.
(function () {
  "use strict";
  function columnsInView(wrap) {
    var row = wrap.querySelector("thead tr") || wrap.querySelector("tr");
    if (!row) return [0, 0];
    var edge = wrap.getBoundingClientRect().right + 1;
    var cells = row.cells, seen = 0, total = 0;
    for (var i = 0; i < cells.length; i++) {
      var span = cells[i].colSpan || 1;
      total += span;
      if (cells[i].getBoundingClientRect().right <= edge) seen += span;
    }
    return [seen, total];
  }
  function update(wrap, hint) {
    var max = wrap.scrollWidth - wrap.clientWidth;
    var scrolls = max > 1;
    wrap.classList.toggle("scrolls", scrolls);
    wrap.classList.toggle("more-right", scrolls && wrap.scrollLeft < max - 1);
    wrap.classList.toggle("more-left", scrolls && wrap.scrollLeft > 1);
    hint.hidden = !scrolls;
    if (!scrolls) return;
    var counts = columnsInView(wrap);
    hint.textContent = wrap.scrollLeft < max - 1
      ? counts[0] + " of " + counts[1] + " columns in view: scroll the table sideways for the rest \u2192"
      : "\u2190 the table scrolls back to its first columns";
  }
  function init() {
    var wraps = document.querySelectorAll(".table-wrap");
    Array.prototype.forEach.call(wraps, function (wrap) {
      var hint = document.createElement("p");
      hint.className = "scroll-hint";
      hint.hidden = true;
      hint.setAttribute("aria-hidden", "true");
      wrap.parentNode.insertBefore(hint, wrap);
      var go = function () { update(wrap, hint); };
      wrap.addEventListener("scroll", go, { passive: true });
      window.addEventListener("resize", go);
      go();
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
