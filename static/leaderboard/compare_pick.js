// The board's "compare two agents": once two rows are checked the other boxes rest, and the
// button asks for two. Without scripts the form still submits and the page says to pick two.
(function () {
  "use strict";
  function init() {
    var form = document.getElementById("compare-agents");
    if (!form) return;
    var boxes = document.querySelectorAll('input[type="checkbox"][form="compare-agents"]');
    var button = form.querySelector("button");
    function update() {
      var checked = Array.prototype.filter.call(boxes, function (b) { return b.checked; });
      Array.prototype.forEach.call(boxes, function (b) {
        b.disabled = !b.checked && checked.length >= 2;
      });
      button.disabled = checked.length !== 2;
      form.classList.toggle("ready", checked.length === 2);
    }
    Array.prototype.forEach.call(boxes, function (b) { b.addEventListener("change", update); });
    update();
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
