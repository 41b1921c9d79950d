// Catalog filters: hide the rows of #tip-catalog that do not match every chosen filter.
// Each <select data-filter="X"> matches against the space-separated values in data-X.
(function () {
  function apply() {
    var table = document.getElementById("tip-catalog");
    if (!table) return;
    var selects = document.querySelectorAll(".tip-filters select[data-filter]");
    var shown = 0;
    table.querySelectorAll("tbody tr").forEach(function (row) {
      var ok = Array.prototype.every.call(selects, function (select) {
        if (!select.value) return true;
        var values = (row.dataset[select.dataset.filter] || "").split(" ");
        return values.indexOf(select.value) !== -1;
      });
      row.hidden = !ok;
      if (ok) shown += 1;
    });
    var count = document.getElementById("catalog-count");
    if (count) count.textContent = count.dataset.template.replace("{n}", shown);
  }
  function init() {
    document.querySelectorAll(".tip-filters select[data-filter]").forEach(function (select) {
      select.addEventListener("change", apply);
    });
    apply();
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
