// The catalog (/catalog/): filter, sort, and keep both in the query string.
//
// - Each <select data-filter="X"> keeps the rows whose space-separated data-X holds its value.
// - #filter-text keeps the rows whose data-text (id, title, summary, tags) holds every word.
// - A click (or Enter/Space) on a header <th data-sort="..."> sorts by that column; again:
//   the other way. Titles sort with the page language's collation (pinyin order on /zh/).
// - State lives in the URL (?text=&category=&helps=&impact=&sort=&order=), restored on load,
//   so a filtered view can be linked and survives reload and the back button. (Not `q`:
//   Material's search opens itself on a `?q=` in the URL.)
function main() {
  const DEFAULT_SORT = "title";

  function setup() {
    const table = document.getElementById("tip-catalog");
    if (!table || table.dataset.ready) return;
    table.dataset.ready = "1";
    const tbody = table.tBodies[0];
    const rows = Array.prototype.slice.call(tbody.rows);
    const selects = document.querySelectorAll(".tip-filters select[data-filter]");
    const text = document.getElementById("filter-text");
    const count = document.getElementById("catalog-count");
    const empty = document.getElementById("catalog-empty");
    const reset = document.getElementById("catalog-reset");
    const headers = Array.prototype.slice.call(table.querySelectorAll("thead th[data-sort]"));
    const collator = new Intl.Collator(document.documentElement.lang || undefined, {
      sensitivity: "base",
      numeric: true,
    });
    const state = { sort: DEFAULT_SORT, order: "ascending" };

    headers.forEach(function (th) {
      th.setAttribute("role", "columnheader"); // Material draws the sort arrows for these
      th.tabIndex = 0;
      if (!th.hasAttribute("aria-sort")) th.setAttribute("aria-sort", "none");
      th.addEventListener("click", function () {
        sortBy(th.dataset.sort, null);
      });
      th.addEventListener("keydown", function (event) {
        if (event.key === "Enter" || event.key === " ") {
          event.preventDefault();
          sortBy(th.dataset.sort, null);
        }
      });
    });

    function cellText(row, key) {
      const index = headers.findIndex(function (th) {
        return th.dataset.sort === key;
      });
      return index < 0 ? "" : row.cells[index].textContent.trim();
    }

    function sortBy(key, order, quiet) {
      if (!headers.some(function (th) { return th.dataset.sort === key; })) key = DEFAULT_SORT;
      if (order !== "ascending" && order !== "descending") {
        order = state.sort === key && state.order === "ascending" ? "descending" : "ascending";
      }
      state.sort = key;
      state.order = order;
      const sign = order === "ascending" ? 1 : -1;
      const sorted = rows.slice().sort(function (a, b) {
        let c = collator.compare(cellText(a, key), cellText(b, key));
        if (c === 0 && key !== DEFAULT_SORT) c = collator.compare(cellText(a, DEFAULT_SORT), cellText(b, DEFAULT_SORT));
        return sign * c;
      });
      sorted.forEach(function (row) { tbody.appendChild(row); });
      headers.forEach(function (th) {
        th.setAttribute("aria-sort", th.dataset.sort === key ? order : "none");
      });
      if (!quiet) save();
    }

    function apply(quiet) {
      const words = (text ? text.value : "").toLowerCase().split(/\s+/).filter(Boolean);
      let shown = 0;
      rows.forEach(function (row) {
        let ok = Array.prototype.every.call(selects, function (select) {
          if (!select.value) return true;
          return (row.dataset[select.dataset.filter] || "").split(" ").indexOf(select.value) !== -1;
        });
        const haystack = row.dataset.text || "";
        ok = ok && words.every(function (word) { return haystack.indexOf(word) !== -1; });
        row.hidden = !ok;
        if (ok) shown += 1;
      });
      if (count) count.textContent = count.dataset.template.replace("{n}", shown);
      if (empty) empty.hidden = shown !== 0;
      table.classList.toggle("tip-catalog--empty", shown === 0);
      const active = words.length > 0 || Array.prototype.some.call(selects, function (s) { return s.value; });
      if (reset) reset.hidden = !active;
      if (!quiet) save();
    }

    function save() {
      const params = new URLSearchParams(window.location.search);
      if (text) setParam(params, text.dataset.param, text.value.trim());
      selects.forEach(function (select) { setParam(params, select.dataset.param, select.value); });
      setParam(params, "sort", state.sort === DEFAULT_SORT ? "" : state.sort);
      setParam(params, "order", state.order === "ascending" ? "" : "desc");
      const query = params.toString();
      const url = window.location.pathname + (query ? "?" + query : "") + window.location.hash;
      if (url !== window.location.pathname + window.location.search + window.location.hash) {
        window.history.replaceState(window.history.state, "", url);
      }
    }

    function setParam(params, name, value) {
      if (value) params.set(name, value);
      else params.delete(name);
    }

    function restore() {
      const params = new URLSearchParams(window.location.search);
      if (text) text.value = params.get(text.dataset.param) || "";
      selects.forEach(function (select) {
        const value = params.get(select.dataset.param) || "";
        const known = Array.prototype.some.call(select.options, function (o) { return o.value === value; });
        select.value = known ? value : "";
      });
      sortBy(params.get("sort") || DEFAULT_SORT, params.get("order") === "desc" ? "descending" : "ascending", true);
      apply(true);
    }

    selects.forEach(function (select) {
      select.addEventListener("change", function () { apply(); });
    });
    if (text) text.addEventListener("input", function () { apply(); });
    if (reset) {
      reset.addEventListener("click", function () {
        if (text) text.value = "";
        selects.forEach(function (select) { select.value = ""; });
        apply();
        if (text) text.focus();
      });
    }
    window.addEventListener("popstate", restore);
    restore();
  }

  // Material's instant loading swaps pages without a reload: document$ fires on each page.
  if (window.document$ && typeof window.document$.subscribe === "function") {
    window.document$.subscribe(setup);
  } else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", setup);
  } else {
    setup();
  }
}

main();
