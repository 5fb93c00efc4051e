// compactor sweep: a click on a column's heading sorts its table by that
// column (again: the other way). Numbers sort by their data-v value, and
// a cell with none (–) goes last. Makes no request.
(function () {
  "use strict";
  var tables = document.querySelectorAll("table.sortable");
  Array.prototype.forEach.call(tables, function (table) {
    var heads = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(heads, function (th, col) {
      th.addEventListener("click", function () {
        var asc = !th.classList.contains("asc");
        Array.prototype.forEach.call(heads, function (h) { h.classList.remove("asc", "desc"); });
        th.classList.add(asc ? "asc" : "desc");
        var numeric = th.classList.contains("num");
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.forEach(function (r, i) { r.dataset.i = r.dataset.i || i; });
        rows.sort(function (a, b) {
          var x = a.cells[col], y = b.cells[col], d;
          if (numeric) {
            var u = x.dataset.v, v = y.dataset.v;
            if (u === "" || v === "") { return (u === "") - (v === "") || a.dataset.i - b.dataset.i; }
            d = Number(u) - Number(v);
          } else {
            d = x.textContent.localeCompare(y.textContent);
          }
          return (asc ? d : -d) || a.dataset.i - b.dataset.i;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });
})();
