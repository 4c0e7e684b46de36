// Client-side sorting of tables with class "sortable": a click on a header sorts by the cells'
// data-value (numbers when they parse), toggling the direction. Links still sort server-side
// when scripts are off.
(function () {
  "use strict";
  function cellValue(row, index) {
    var cell = row.cells[index];
    var raw = cell ? cell.getAttribute("data-value") || cell.textContent : "";
    var number = parseFloat(raw);
    return isNaN(number) ? raw.toLowerCase() : number;
  }
  function sortBy(table, index, header) {
    var body = table.tBodies[0];
    var descending = header.getAttribute("aria-sort") !== "descending";
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = cellValue(a, index), y = cellValue(b, index);
      if (x === y) return 0;
      return (x < y ? -1 : 1) * (descending ? -1 : 1);
    });
    rows.forEach(function (row) { body.appendChild(row); });
    // The places were taken for the server's sort key: in another order they say nothing.
    table.classList.add("resorted");
    var headers = table.tHead.rows[0].cells;
    for (var i = 0; i < headers.length; i++) headers[i].removeAttribute("aria-sort");
    header.setAttribute("aria-sort", descending ? "descending" : "ascending");
  }
  function init() {
    var tables = document.querySelectorAll("table.sortable");
    tables.forEach(function (table) {
      var headers = table.tHead.rows[0].cells;
      Array.prototype.forEach.call(headers, function (header, index) {
        var link = header.querySelector("a.sort");
        if (!link) return;
        link.addEventListener("click", function (event) {
          if (event.shiftKey) return; // shift-click: the server's order, as a plain link
          event.preventDefault();
          sortBy(table, index, header);
        });
      });
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
