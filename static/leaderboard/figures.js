// Draws every figure the server embedded as <script type="application/json" id="X-figure">
// (Django's json_script, escaped) into the element with id X. No data or no plotly.js: the page's own empty message stays.
(function () {
  "use strict";
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
      window.Plotly.newPlot(target, figure.data, figure.layout, {
        displayModeBar: false,
        responsive: true,
      });
    }
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", draw);
  } else {
    draw();
  }
})();
