// Follows a run that is still being graded: polls its small status endpoint, updates the
// badge, and reloads the page once, when everything has finished. Stops polling after that.
(function () {
  "use strict";
  var INTERVAL_MS = 2000;
  var MAX_POLLS = 900; // half an hour; a longer wait is a reload away
  function start() {
    var badge = document.getElementById("live-status");
    if (!badge || badge.getAttribute("data-finished") === "1") return;
    var url = badge.getAttribute("data-url");
    var polls = 0;
    function show(status) {
      var span = document.createElement("span");
      span.className = "status status-" + status.replace(/[^a-z_]/g, "");
      span.textContent = status;
      badge.replaceChildren(span);
    }
    function poll() {
      polls += 1;
      fetch(url, { headers: { Accept: "application/json" } })
        .then(function (response) { return response.ok ? response.json() : null; })
        .then(function (data) {
          if (!data) return;
          show(String(data.status));
          if (data.finished) {
            window.location.reload();
            return;
          }
          if (polls < MAX_POLLS) window.setTimeout(poll, INTERVAL_MS);
        })
        .catch(function () {
          if (polls < MAX_POLLS) window.setTimeout(poll, INTERVAL_MS * 2);
        });
    }
    window.setTimeout(poll, INTERVAL_MS);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
