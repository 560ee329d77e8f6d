(function () {
  // The variants view: sort a case table by the difference, show only the cases lost.
  function rowsOf(table) { return Array.prototype.slice.call(table.tBodies[0].rows); }
  function count(table) {
    var shown = rowsOf(table).filter(function (r) { return !r.hidden; }).length;
    var label = document.querySelector('span.shown[data-table="' + table.id + '"]');
    if (label) label.textContent = shown + " cases";
  }
  Array.prototype.forEach.call(document.querySelectorAll("table.variant-case-table"), function (table) {
    var head = table.querySelector("th.diff");
    var order = 0;
    function sort() {
      order = order === 1 ? -1 : 1;
      var rows = rowsOf(table);
      rows.sort(function (a, b) {
        var x = parseFloat(a.dataset.diff), y = parseFloat(b.dataset.diff);
        if (isNaN(x) || isNaN(y)) return isNaN(x) - isNaN(y);  // unpaired cases last
        return order * (x - y);
      });
      rows.forEach(function (r) { table.tBodies[0].appendChild(r); });
      head.setAttribute("aria-sort", order === 1 ? "ascending" : "descending");
    }
    head.addEventListener("click", sort);
    head.addEventListener("keydown", function (e) { if (e.key === "Enter") sort(); });
    var box = document.querySelector('input.lost-only[data-table="' + table.id + '"]');
    box.addEventListener("change", function () {
      rowsOf(table).forEach(function (r) { r.hidden = box.checked && r.dataset.lost !== "1"; });
      count(table);
    });
  });
})();
