// The per-query table of a treckit report: sort by a column, filter, and a page of rows at a time (the page stays
// fast with tens of thousands of queries).  Numbers are rounded as Python's format(x, ".4f") rounds them: half to
// even on the exact binary value, so that the table says what the results files and the summary say.
// Then plotly (loaded after this script) draws each figure from its JSON when the figure comes into view.
(function () {
  "use strict";
  var boxes = Array.prototype.slice.call(document.querySelectorAll("script.figure-data"));
  function draw(json) {
    var div = document.getElementById(json.dataset.for);
    if (div.dataset.drawn) { return; }
    div.dataset.drawn = "1";
    var fig = JSON.parse(json.textContent);
    var config = JSON.parse(document.getElementById("treckit-plot-config").textContent);
    window.Plotly.newPlot(div, fig.data, fig.layout, config);
  }
  window.treckitDrawAll = function () { boxes.forEach(draw); };     // before printing, or a whole-page picture
  window.addEventListener("beforeprint", window.treckitDrawAll);
  window.addEventListener("load", function () {
    if (!("IntersectionObserver" in window)) { window.treckitDrawAll(); return; }
    var byId = {};
    boxes.forEach(function (json) { byId[json.dataset.for] = json; });
    var seen = new IntersectionObserver(function (entries) {
      entries.forEach(function (entry) {
        if (entry.isIntersecting) { seen.unobserve(entry.target); draw(byId[entry.target.id]); }
      });
    }, { rootMargin: "300px" });
    boxes.forEach(function (json) { seen.observe(document.getElementById(json.dataset.for)); });
  });
})();
(function () {
  "use strict";
  var PAGE_ROWS = 50;
  var data = JSON.parse(document.getElementById("treckit-data").textContent);
  var table = document.getElementById("query-table");
  if (!table) { return; }
  var columns = data.columns, all = data.rows, shown = all, first = 0, sortBy = -1, ascending = true;
  var filter = document.getElementById("filter"), typeFilter = document.getElementById("type-filter");
  var count = document.getElementById("count"), prev = document.getElementById("prev"), next = document.getElementById("next");

  function fixed4(x) {
    if (x === null || x === undefined) { return ""; }
    var exact = Math.abs(x).toFixed(40), dot = exact.indexOf(".");
    if (/^50*$/.test(exact.slice(dot + 5))) {
      // exactly halfway (a double near a tie differs from it within 40 digits): to the even last digit
      var kept = Number(exact.slice(0, dot + 5).replace(".", ""));
      var text = String(kept % 2 === 0 ? kept : kept + 1).padStart(5, "0");
      return (x < 0 ? "-" : "") + text.slice(0, text.length - 4) + "." + text.slice(text.length - 4);
    }
    return Object.is(x, -0) ? "-0.0000" : x.toFixed(4);
  }
  function signed4(x) {
    if (x === null || x === undefined) { return ""; }
    var t = fixed4(x);
    return t.charAt(0) === "-" ? t : "+" + t;
  }
  function key(v) { return v === null || v === undefined ? null : v; }
  function compare(a, b) {
    var x = key(a[sortBy]), y = key(b[sortBy]);
    if (x === null && y === null) { return 0; }
    if (x === null) { return 1; }            // rows without a value last, either way
    if (y === null) { return -1; }
    var c = x < y ? -1 : x > y ? 1 : 0;
    return ascending ? c : -c;
  }
  function head() {
    var tr = document.createElement("tr");
    columns.forEach(function (col, j) {
      var th = document.createElement("th");
      th.textContent = col.name;
      th.classList.add(col.kind);
      th.dataset.column = String(j);
      if (j === sortBy) { th.classList.add(ascending ? "sorted-asc" : "sorted-desc"); }
      th.addEventListener("click", function () {
        ascending = sortBy === j ? !ascending : true;
        sortBy = j;
        apply();
      });
      tr.appendChild(th);
    });
    var thead = table.tHead;
    thead.textContent = "";
    thead.appendChild(tr);
  }
  function body() {
    var tbody = table.tBodies[0];
    var frag = document.createDocumentFragment();
    shown.slice(first, first + PAGE_ROWS).forEach(function (row) {
      var tr = document.createElement("tr");
      columns.forEach(function (col, j) {
        var td = document.createElement("td"), v = row[j];
        if (col.kind === "value") { td.textContent = fixed4(v); }
        else if (col.kind === "delta") {
          td.textContent = signed4(v);
          td.className = v > 0 ? "pos" : v < 0 ? "neg" : "";
        } else { td.textContent = v === null ? "" : v; td.className = col.kind; }
        tr.appendChild(td);
      });
      frag.appendChild(tr);
    });
    tbody.textContent = "";
    tbody.appendChild(frag);
    var last = Math.min(first + PAGE_ROWS, shown.length);
    count.textContent = shown.length ? "rows " + (first + 1) + "\u2013" + last + " of " + shown.length +
      (shown.length < all.length ? " (filtered from " + all.length + ")" : "") : "no row matches";
    prev.disabled = first === 0;
    next.disabled = last >= shown.length;
  }
  function apply() {
    var words = filter.value.toLowerCase(), type = typeFilter ? typeFilter.value : "";
    var searched = columns.map(function (c, j) { return c.kind === "id" || c.kind === "type" || c.kind === "text" ? j : -1; })
      .filter(function (j) { return j >= 0; });
    var typeAt = columns.findIndex(function (c) { return c.kind === "type"; });
    shown = all.filter(function (row) {
      if (type && row[typeAt] !== type) { return false; }
      return !words || searched.some(function (j) { return row[j] !== null && String(row[j]).toLowerCase().indexOf(words) >= 0; });
    });
    if (sortBy >= 0) { shown = shown.slice().sort(compare); }
    first = 0;
    head();
    body();
  }
  filter.addEventListener("input", apply);
  if (typeFilter) { typeFilter.addEventListener("change", apply); }
  prev.addEventListener("click", function () { first = Math.max(0, first - PAGE_ROWS); body(); });
  next.addEventListener("click", function () { if (first + PAGE_ROWS < shown.length) { first += PAGE_ROWS; body(); } });
  apply();
  if (window.performance && performance.mark) { performance.mark("treckit-table-ready"); }
})();
