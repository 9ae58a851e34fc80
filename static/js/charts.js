// Draws every chart of a page: an element with data-chart="<id>" gets the Plotly figure that
// the server wrote into <script type="application/json" id="<id>"> (Django's json_script).
// The figure is data, never code: nothing here builds script from strings.
(function () {
  "use strict";

  var CONFIG = { responsive: true, displaylogo: false, modeBarButtonsToRemove: ["select2d", "lasso2d"] };

  function render(element) {
    var source = document.getElementById(element.getAttribute("data-chart"));
    if (!source) {
      return;
    }
    var figure = JSON.parse(source.textContent);
    var config = Object.assign({}, CONFIG, figure.config || {});
    Plotly.newPlot(element, figure.data || [], figure.layout || {}, config).then(function () {
      element.setAttribute("data-rendered", "true");
    });
  }

  function renderAll() {
    if (typeof Plotly === "undefined") {
      document.querySelectorAll("[data-chart]").forEach(function (element) {
        element.textContent = "The chart library did not load; the numbers are in the table below.";
        element.classList.add("chart-failed");
      });
      return;
    }
    document.querySelectorAll("[data-chart]").forEach(render);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", renderAll);
  } else {
    renderAll();
  }
})();
