// Draws every figure the server embedded as <script type="application/json" id="X-figure">
// (Django's json_script, escaped) into the element with id X. No data or no plotly.js: the page's own empty message stays.
// A figure with "run_links": true carries run ids as its points' customdata: a click on such a
// point opens /runs/<id>/. Without a mouse the first tap shows the point's label, a second opens it.
(function () {
  "use strict";
  var canHover = !window.matchMedia || window.matchMedia("(hover: hover)").matches;

  function runId(event) {
    var point = event && event.points && event.points[0];
    var id = point ? point.customdata : null;
    return typeof id === "number" && id > 0 && Math.floor(id) === id ? id : null;
  }

  function linkRuns(plot) {
    var armed = null;
    plot.on("plotly_click", function (event) {
      var id = runId(event);
      if (id === null) return;
      var point = event.points[0];
      var key = point.curveNumber + ":" + point.pointNumber;
      if (!canHover && armed !== key) {
        armed = key;
        return;
      }
      window.location.assign("/runs/" + id + "/");
    });
    var drag = function () {
      return plot.querySelector(".nsewdrag");
    };
    plot.on("plotly_hover", function (event) {
      if (runId(event) !== null && drag()) drag().style.cursor = "pointer";
    });
    plot.on("plotly_unhover", function () {
      if (drag()) drag().style.cursor = "";
    });
  }

  function draw() {
    var specs = document.querySelectorAll('script[type="application/json"][id$="-figure"]');
    for (var i = 0; i < specs.length; i++) {
      var target = document.getElementById(specs[i].id.slice(0, -"-figure".length));
      if (!target) continue;
      var figure;
      try {
        figure = JSON.parse(specs[i].textContent);
      } catch (err) {
        target.textContent = "This figure could not be read.";
        continue;
      }
      if (!figure || !window.Plotly) continue;
      target.textContent = "";
      // On a touch screen a drag scrolls the page rather than zooming the plot.
      if (!canHover) figure.layout.dragmode = false;
      var drawn = window.Plotly.newPlot(target, figure.data, figure.layout, {
        displayModeBar: false,
        responsive: true,
      });
      if (figure.run_links) drawn.then(linkRuns);
    }
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", draw);
  } else {
    draw();
  }
})();
