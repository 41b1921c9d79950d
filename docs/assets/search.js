// Site search: Pagefind in Material's search box (overrides/partials/search.html).
//
// The index is built after every MkDocs build by generator/sitesearch.py, one bundle per
// language (pagefind/, zh/pagefind/), so an English page searches English pages and a
// Chinese page Chinese ones.
// Tips come first, then the guide pages (usage, composer, problems...). A query whose words
// do not all occur in one page falls back to the pages holding the most of them, so a
// problem typed as a sentence ("training is slow first epoch") still finds something.
// `?q=words` in the address opens the search with that query.
(function () {
  "use strict";
  var root = document.querySelector("[data-tip-search]");
  var toggle = document.getElementById("__search");
  if (!root || !toggle) return;
  var input = root.querySelector(".md-search__input");
  var form = root.querySelector("form");
  var meta = root.querySelector(".md-search-result__meta");
  var list = root.querySelector(".md-search-result__list");
  var site = new URL(root.dataset.root, location.href); // this language's site root
  var lang = document.documentElement.lang || "en";
  var LIMIT = 10;
  // Matches in the title, the tip id and the keywords (tags, category, problems; see
  // generator/sitesearch.py) rank above matches in the body text.
  var RANKING = { metaWeights: { title: 5, id: 5, keywords: 3 } };
  // English words that carry no meaning in a query; dropped when other words remain.
  var STOP = new Set(("a an and are as at be by can do does for from get how i in into is it " +
    "my of on or so the to what when why with without").split(" "));
  var pagefind = null;
  var ticket = 0;
  var timer = null;

  function load() {
    if (!pagefind) {
      var bundle = new URL("pagefind/pagefind.js", site).href;
      pagefind = import(bundle).then(async function (pf) {
        await pf.options({ baseUrl: site.pathname, ranking: RANKING });
        return pf;
      });
    }
    return pagefind;
  }

  function words(query) {
    var all;
    if (typeof Intl !== "undefined" && Intl.Segmenter) {
      var segmenter = new Intl.Segmenter(lang, { granularity: "word" });
      all = Array.from(segmenter.segment(query))
        .filter(function (s) { return s.isWordLike; })
        .map(function (s) { return s.segment.toLowerCase(); });
    } else {
      all = query.toLowerCase().split(/\s+/).filter(Boolean);
    }
    var content = all.filter(function (w) { return !STOP.has(w); });
    return Array.from(new Set(content.length ? content : all));
  }

  // Pages of one kind ("tip" or "guide") for the query: those holding every word, best
  // first, then those holding the most words. `.all` is the number holding every word.
  async function rank(pf, query, kind) {
    var options = { filters: { kind: kind } };
    var parts = words(query);
    var found = (await pf.search(parts.join(" ") || query, options)).results;
    found.all = found.length;
    if (found.length >= LIMIT || parts.length < 2) return found;
    var seen = new Set(found.map(function (r) { return r.id; }));
    var partial = new Map();
    for (var i = 0; i < parts.length; i++) {
      var results = (await pf.search(parts[i], options)).results;
      results.forEach(function (r) {
        if (seen.has(r.id)) return;
        var entry = partial.get(r.id) || { result: r, score: 0, words: 0 };
        entry.score += r.score;
        entry.words += 1;
        partial.set(r.id, entry);
      });
    }
    var more = Array.from(partial.values()).sort(function (a, b) {
      return b.words - a.words || b.score - a.score;
    });
    var ranked = found.concat(more.map(function (e) { return e.result; }));
    ranked.all = found.length;
    return ranked;
  }

  function item(data) {
    var li = document.createElement("li");
    li.className = "md-search-result__item";
    var link = document.createElement("a");
    link.className = "md-search-result__link";
    link.href = data.url;
    link.tabIndex = -1;
    var article = document.createElement("article");
    article.className = "md-search-result__article md-typeset";
    var icon = document.createElement("div");
    icon.className = "md-search-result__icon md-icon";
    var title = document.createElement("h1");
    title.textContent = data.meta.title || data.url;
    article.append(icon, title);
    var text = document.createElement("p");
    if (data.meta.summary) {
      text.textContent = data.meta.summary;
      article.append(text);
    } else if (data.excerpt) {
      text.innerHTML = data.excerpt; // Pagefind escapes the page text and adds <mark>
      article.append(text);
    }
    link.append(article);
    li.append(link);
    return li;
  }

  function show(query, total, data) {
    list.textContent = "";
    if (!query) {
      meta.textContent = root.dataset.placeholder;
      return;
    }
    meta.textContent = total === 0 ? root.dataset.none
      : total === 1 ? root.dataset.one
      : root.dataset.other.replace("#", String(total));
    data.forEach(function (d) { list.append(item(d)); });
  }

  async function run(query) {
    var mine = ++ticket;
    query = query.trim();
    if (!query) {
      show("", 0, []);
      return;
    }
    var pf = await load();
    var tips = await rank(pf, query, "tip");
    var guides = await rank(pf, query, "guide");
    var shown = tips.concat(guides).slice(0, LIMIT);
    var data = await Promise.all(shown.map(function (r) { return r.data(); }));
    if (mine !== ticket) return; // a newer query has started
    // The count: pages holding every word, or else those holding some.
    var total = tips.all + guides.all || tips.length + guides.length;
    show(query, total, data);
    root.dataset.query = query; // lets tests wait for the results of this very query
  }

  function open() {
    toggle.checked = true;
    input.focus();
  }

  function links() {
    return Array.prototype.slice.call(list.querySelectorAll(".md-search-result__link"));
  }

  input.addEventListener("input", function () {
    clearTimeout(timer);
    timer = setTimeout(function () { run(input.value); }, 100);
  });
  input.addEventListener("focus", function () {
    toggle.checked = true;
    load();
  });
  toggle.addEventListener("change", function () {
    if (toggle.checked) input.focus();
  });
  form.addEventListener("reset", function () {
    setTimeout(function () {
      run("");
      input.focus();
    }, 0);
  });
  root.addEventListener("keydown", function (event) {
    var all = links();
    var at = all.indexOf(document.activeElement);
    if (event.key === "Escape") {
      toggle.checked = false;
      input.blur();
    } else if (event.key === "Enter" && document.activeElement === input && all.length) {
      event.preventDefault();
      location.href = all[0].href;
    } else if (event.key === "ArrowDown" && all.length) {
      event.preventDefault();
      all[Math.min(at + 1, all.length - 1)].focus();
    } else if (event.key === "ArrowUp" && at >= 0) {
      event.preventDefault();
      if (at === 0) input.focus();
      else all[at - 1].focus();
    }
  });
  document.addEventListener("keydown", function (event) {
    var target = event.target;
    var typing = target && (target.isContentEditable ||
      /^(INPUT|SELECT|TEXTAREA)$/.test(target.tagName));
    if (typing || event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key === "/" || event.key === "s" || event.key === "f") {
      event.preventDefault();
      open();
    }
  });
  document.querySelectorAll("a[data-search-open]").forEach(function (a) {
    a.addEventListener("click", function (event) {
      event.preventDefault();
      open();
    });
  });

  var query = new URLSearchParams(location.search).get("q");
  if (query !== null) {
    input.value = query;
    open();
    run(query);
  }
})();
