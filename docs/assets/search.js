// Site search: Pagefind in Material's search box (overrides/partials/search.html).
//
// The index is built after every MkDocs build by generator/site/search.py, one bundle per
// language (pagefind/, zh/pagefind/), so an English page searches English pages and a
// Chinese page Chinese ones. Every kind of page (tips, problems, tools, lint rules, guides) is
// ranked in one list, by the sum of two scores, each relative to its best page:
// - the fields: each bundle's pages.json holds every page's title, summary, keywords and the
//   problem words it leads (a problem's first tip), ranked with BM25F. English terms match up
//   to their ending (accumulate ~ accumulation); Chinese terms are its characters and pairs of
//   characters (显存不足: 显, 存, 不, 足, 显存, 存不, 不足), which need no dictionary, where
//   the browser's word segmenter splits words it does not know (显存) into characters;
// - the text: Pagefind's score for the whole query, plus each term's on its own, times its
//   rarity. An extra word ("low GPU utilization") adds to the pages that have it and drops
//   none that lack it.
// A "best match" row comes first: the pages whose title or own search words have most of
// their terms in common with the query, or a problem page whose title or search phrase the
// query holds whole; a problem's words are also the own words of the tip it lists first, so
// a query naming a problem shows the problem page and that tip. The results are shown PAGE
// at a time, with a button for the next ones: no cap hides any.
// A query is read as the CLI reads it (generator/records/query.py): its first characters and
// terms only (a pasted megabyte costs what 2,000 characters cost), and the glossary's
// synonyms (梯度检查点 is searched as 激活重计算). A term with a digit matches only itself (a
// rule code names one rule). `?q=words` in the address opens the search with that query.
function setup() {
  const root = document.querySelector("[data-tip-search]");
  const toggle = document.getElementById("__search");
  if (!root || !toggle) return;
  const input = root.querySelector(".md-search__input");
  const form = root.querySelector("form");
  const meta = root.querySelector(".md-search-result__meta");
  const list = root.querySelector(".md-search-result__list");
  const site = new URL(root.dataset.root, location.href); // this language's site root
  const lang = document.documentElement.lang || "en";
  const PAGE = 20;
  // Ranking weights (measured on tests/site/search_queries.yaml): the text and field scores
  // (each relative to its best page), the whole-query match, a field's weight in BM25F, and
  // the share of terms a best match has in common with the query (over all terms of both).
  const W = { text: 1, fields: 1, whole: 1, title: 3, keys: 2, lead: 1, summary: 1, k1: 1.2,
    b: 0.75, best: 0.6, floor: 0.15 };
  // A phrase names its page in a query that holds it from this many terms (CONTAINED in
  // generator/records/search.py).
  const CONTAINED = 2;
  // Matches in the title, the tip id and the keywords (tags, category, problems; see
  // generator/site/search.py) rank above matches in the body text.
  const RANKING = { metaWeights: { title: 5, id: 5, keywords: 3 } };
  // How a query is read, from the page directory (generator/records/query.py, as the CLI
  // reads it): its first MAX_CHARS characters, its first MAX_TERMS terms, the words that carry
  // no meaning, and the glossary's synonyms ([pattern, term, replace, unless words]).
  let MAX_CHARS = 2000;
  let MAX_TERMS = 64;
  let STOP = new Set();
  let STOP_ZH = null;
  let SYNONYMS = [];
  const CJK = /[\u3400-\u9fff]/;
  let pagefind = null;
  let directory = null;
  let ticket = 0;
  let timer = null;
  let current = null;

  function load() {
    if (!pagefind) {
      const bundle = new URL("pagefind/pagefind.js", site).href;
      pagefind = import(bundle).then(async function (pf) {
        await pf.options({ baseUrl: site.pathname, ranking: RANKING });
        return pf;
      });
      directory = fetch(new URL("pagefind/pages.json", site).href)
        .then(function (r) { return r.ok ? r.json() : {}; })
        .catch(function () { return {}; })
        .then(function (data) {
          MAX_CHARS = data.max_chars || MAX_CHARS;
          MAX_TERMS = data.max_terms || MAX_TERMS;
          STOP = new Set(data.stop || []);
          STOP_ZH = data.stop_zh ? new RegExp(data.stop_zh, "g") : null;
          SYNONYMS = (data.synonyms || []).map(function (s) {
            return { pattern: new RegExp(s[0], "g"), term: s[1], replace: s[2], unless: s[3] };
          });
          const pages = data.pages || [];
          pages.forEach(function (p) {
            // A rule's page ranks by its code (its keys): for the words of its message, the
            // tip it enforces is the better answer (as in the CLI).
            const rule = p.kind === "rule";
            p.t = { title: rule ? [] : terms(p.title, true),
              keys: terms((p.keys || []).join(" ; "), true),
              lead: terms((p.lead || []).join(" ; "), true),
              summary: rule ? [] : terms(p.summary || "", true) };
            p.own = [p.title].concat(p.words || []).map(function (w) { return terms(w); });
            p.leads = (p.lead || []).map(function (w) { return terms(w); });
          });
          return pages;
        });
    }
    return pagefind;
  }

  // The terms of a text: English words in lower case (dotted names split, stop words out),
  // and each Chinese run (stop words cut out) as its characters, each followed by the pair it
  // ends; with `all`, every occurrence (for BM25F's term counts), else each term once, in order.
  function terms(text, all) {
    let out = [];
    const tokens = text.toLowerCase().match(/[a-z0-9_]+|[\u3400-\u9fff]+/g) || [];
    tokens.forEach(function (w) {
      if (CJK.test(w)) {
        const run = STOP_ZH ? w.replace(STOP_ZH, "") : w;
        for (let i = 0; i < run.length; i++) {
          out.push(run[i]);
          if (i) out.push(run.slice(i - 1, i + 1));
        }
      } else if (!STOP.has(w)) {
        out.push(w);
      }
    });
    if (!all && !out.length) out = tokens; // only stop words: keep them
    return all ? out : Array.from(new Set(out));
  }

  // The query in lower case with the glossary's synonyms: a variant in Chinese characters
  // replaced by the term, one in Latin letters followed by it; longest phrases first, none
  // overlapping, a term left alone where the query names one of its `unless` words
  // (generator/records/query.py's rewrite, the CLI's).
  function rewrite(query) {
    query = query.toLowerCase();
    const taken = [];
    SYNONYMS.forEach(function (s) {
      if (s.unless.some(function (w) { return query.indexOf(w.toLowerCase()) >= 0; })) return;
      s.pattern.lastIndex = 0;
      let m;
      while ((m = s.pattern.exec(query)) !== null) {
        const start = m.index;
        const end = m.index + m[0].length;
        if (end === start) { s.pattern.lastIndex++; continue; }
        const free = taken.every(function (t) { return end <= t.start || start >= t.end; });
        if (free) taken.push({ start: start, end: end, s: s });
      }
    });
    taken.sort(function (a, b) { return a.start - b.start; });
    let out = "", pos = 0;
    taken.forEach(function (t) {
      out += query.slice(pos, t.start) + (t.s.replace ? "" : query.slice(t.start, t.end)) +
        " " + t.s.term + " ";
      pos = t.end;
    });
    return out + query.slice(pos);
  }

  // What a search ranks by (read_query in generator/records/query.py): the text (the first
  // MAX_CHARS characters, with the synonyms) and its first MAX_TERMS terms.
  function read(query) {
    // Characters, as Python counts them (an emoji is one), of at most twice as many units.
    const text = rewrite(Array.from(query.slice(0, 2 * MAX_CHARS)).slice(0, MAX_CHARS).join(""));
    return { text: text, terms: terms(text).slice(0, MAX_TERMS) };
  }

  // The words Pagefind looks up: the query's words as the browser segments them.
  function words(text) {
    let all;
    if (typeof Intl !== "undefined" && Intl.Segmenter) {
      const segmenter = new Intl.Segmenter(lang, { granularity: "word" });
      all = Array.from(segmenter.segment(text))
        .filter(function (s) { return s.isWordLike; })
        .map(function (s) { return s.segment.toLowerCase(); });
    } else {
      all = text.toLowerCase().split(/\s+/).filter(Boolean);
    }
    const content = all.filter(function (w) {
      return !STOP.has(w) && !(STOP_ZH && w.replace(STOP_ZH, "") === "");
    });
    return Array.from(new Set(content.length ? content : all)).slice(0, MAX_TERMS);
  }

  const DIGIT = /\d/;
  const CODE = /^([a-z]+)(\d+)$/;

  // A code by its letters and number (ptt55 is ptt055), another term as it is.
  function code(term) {
    const m = CODE.exec(term);
    return m ? m[1] + (m[2].replace(/^0+/, "") || "0") : term;
  }

  // Whether two terms are one up to an ending (accumulate ~ accumulation, lint ~ linter); a
  // term with a digit only as itself (fp16 is no fp8, PTT038 no PTT001), a code by its number.
  function same(a, b) {
    if (a === b) return true;
    if (DIGIT.test(a) || DIGIT.test(b)) return code(a) === code(b);
    if (CJK.test(a) || CJK.test(b)) return false;
    let n = 0;
    while (n < a.length && n < b.length && a[n] === b[n]) n++;
    return n >= 4 && n >= Math.min(a.length, b.length) - 3;
  }

  function has(list, term) {
    return list.some(function (t) { return same(term, t); });
  }

  const FIELDS = ["title", "keys", "lead", "summary"];

  function hits(list, term) {
    let n = 0;
    for (let i = 0; i < list.length; i++) if (same(term, list[i])) n++;
    return n;
  }

  // Field scores by page: BM25F over the titles, keywords and summaries of the directory.
  function fieldScores(pages, query) {
    const scores = new Map();
    const n = pages.length || 1;
    const avg = {};
    FIELDS.forEach(function (f) {
      avg[f] = pages.reduce(function (s, p) { return s + p.t[f].length; }, 0) / n || 1;
    });
    query.forEach(function (q) {
      const tf = new Map();
      pages.forEach(function (p) {
        let sum = 0;
        FIELDS.forEach(function (f) {
          const c = hits(p.t[f], q);
          if (c) sum += W[f] * c / (1 - W.b + W.b * p.t[f].length / avg[f]);
        });
        if (sum) tf.set(p, sum);
      });
      if (!tf.size) return;
      const idf = Math.log(1 + (n - tf.size + 0.5) / (tf.size + 0.5));
      tf.forEach(function (v, p) {
        scores.set(p, (scores.get(p) || 0) + idf * v * (W.k1 + 1) / (v + W.k1));
      });
    });
    return scores;
  }

  // The share of a field's terms the query has (shared terms over all terms of both).
  function cover(fields, query) {
    let best = 0;
    fields.forEach(function (field) {
      if (!field.length) return;
      const shared = query.filter(function (q) { return has(field, q); }).length;
      best = Math.max(best, shared / (query.length + field.length - shared));
      // A code (PTT011) names its page, whatever else the query holds.
      if (field.length === 1 && CODE.test(field[0]) && has(query, field[0])) {
        best = Math.max(best, 1);
      }
    });
    return best;
  }

  // Whether the query holds every term of one of the phrases (of CONTAINED terms at least;
  // with `half`, a phrase that is at least half of the query).
  function held(phrases, query, half) {
    return phrases.some(function (f) {
      return f.length >= CONTAINED && (!half || 2 * f.length >= query.length) &&
        f.every(function (t) { return has(query, t); });
    });
  }

  // The best-bet row: pages whose title or own search words share most of their terms with
  // the query, or that it names (a problem page whose title or search phrase it holds whole:
  // "training is slow on one GPU" names "Training is slow"), at most two; a tip also by the
  // words of the problem it leads (held as at least half of the query), after a page matched
  // by its own words (the problem page, then its first tip). As BestMatches in
  // generator/records/search.py.
  function bestBets(pages, query) {
    const found = [];
    pages.forEach(function (page, i) {
      const own = page.kind === "problem" && held(page.own, query) ? 1 : cover(page.own, query);
      const best = Math.max(own, held(page.leads, query, true) ? 1 : cover(page.leads, query));
      if (best >= W.best) found.push({ page: page, cover: best, lead: own < best, i: i });
    });
    found.sort(function (a, b) { return b.cover - a.cover || a.lead - b.lead || a.i - b.i; });
    const top = found.length ? found[0].cover : 0;
    return found.filter(function (f) { return f.cover === top; }).slice(0, 2)
      .map(function (f) { return f.page; });
  }

  // Text scores by Pagefind id: the whole query, plus each term on its own (each relative to
  // its best page, times its rarity). Chinese terms are pairs of characters, looked up as
  // phrases: each page also indexes its characters one by one, in order (generator/site/
  // search.py), so the phrase "计时" holds the pages with those two characters side by side.
  async function textScores(pf, read, n) {
    const scores = new Map();
    const results = new Map();
    function addAll(found, weight) {
      if (!found.length) return;
      const max = Math.max.apply(null, found.map(function (r) { return r.score; })) || 1;
      const idf = Math.log(1 + n / found.length);
      found.forEach(function (r) {
        results.set(r.id, r);
        scores.set(r.id, (scores.get(r.id) || 0) + weight * idf * r.score / max);
      });
    }
    const parts = words(read.text);
    const each = CJK.test(read.text) ? read.terms : parts.length > 1 ? parts : [];
    // Every search at once; their results are added in order, as if one after the other.
    const found = await Promise.all([pf.search(parts.join(" ") || read.text)].concat(
      each.map(function (term) {
        return pf.search(CJK.test(term) && term.length > 1 ? '"' + term + '"' : term);
      })));
    addAll(found[0].results, W.whole);
    each.forEach(function (term, i) {
      const phrase = CJK.test(term) && term.length > 1;
      // A phrase search gives every page the same score: its rarity alone counts.
      addAll(phrase ? found[i + 1].results.map(function (r) {
        return { id: r.id, score: 1, data: r.data };
      }) : found[i + 1].results, 1);
    });
    return { scores: scores, results: results };
  }

  function normalised(map) {
    let max = 0;
    map.forEach(function (v) { max = Math.max(max, v); });
    return function (key) { return max ? (map.get(key) || 0) / max : 0; };
  }

  // Every page matching the query, best first, the best matches at the top: rows of
  // {page (its directory entry), result (Pagefind's), best}. Pages below W.floor of the first
  // ranked one's score are left out: they share only a common word with the query.
  async function rank(pf, query) {
    const pages = await directory;
    const input = read(query);
    const q = input.terms;
    const byId = new Map();
    pages.forEach(function (p) { if (p.id) byId.set(p.id, p); });
    const text = await textScores(pf, input, pages.length || 100);
    const t = normalised(text.scores);
    const f = normalised(fieldScores(pages, q));
    const rows = new Map();
    text.results.forEach(function (r, id) {
      const page = byId.get(id) || null;
      rows.set(id, { page: page, result: r, score: W.text * t(id) + W.fields * (page ? f(page) : 0) });
    });
    pages.forEach(function (page) {
      const id = page.id || page.url;
      if (!rows.has(id) && f(page)) rows.set(id, { page: page, result: null, score: W.fields * f(page) });
    });
    const best = bestBets(pages, q);
    const bestSet = new Set(best);
    // The floor is relative to the first page after the best matches: a rule's code, a best
    // match far above every other page, still lists the tip the rule enforces.
    let ranked = Array.from(rows.values()).filter(function (row) { return !bestSet.has(row.page); })
      .sort(function (a, b) { return b.score - a.score; });
    const top = ranked.length ? ranked[0].score : 0;
    ranked = ranked.filter(function (row) { return row.score >= W.floor * top; });
    return best.map(function (p) { return { page: p, result: null, best: true }; }).concat(ranked);
  }

  function kindLabel(kind) {
    return root.dataset["kind" + kind.charAt(0).toUpperCase() + kind.slice(1)] || "";
  }

  function item(title, url, text, kind, best) {
    const li = document.createElement("li");
    li.className = "md-search-result__item" + (best ? " tip-search-best" : "");
    const link = document.createElement("a");
    link.className = "md-search-result__link";
    link.href = url;
    const article = document.createElement("article");
    article.className = "md-search-result__article md-typeset";
    const icon = document.createElement("div");
    icon.className = "md-search-result__icon md-icon";
    const heading = document.createElement("h1");
    heading.textContent = title;
    article.append(icon);
    const label = best ? root.dataset.best : kindLabel(kind || "");
    if (label) {
      const tag = document.createElement("span");
      tag.className = "tip-search-kind";
      tag.textContent = label;
      article.append(tag);
    }
    article.append(heading);
    if (text) {
      const p = document.createElement("p");
      if (text.html) p.innerHTML = text.html; // Pagefind escapes the page text and adds <mark>
      else p.textContent = text;
      article.append(p);
    }
    link.append(article);
    li.append(link);
    return li;
  }

  // One row: from the page directory, or from Pagefind's data for a page without a summary.
  async function row(r) {
    const page = r.page;
    if (page && (page.summary || !r.result)) {
      return item(page.title, new URL(page.url, site).pathname, page.summary || "", page.kind, r.best);
    }
    const data = await r.result.data();
    const text = data.meta.summary || (data.excerpt ? { html: data.excerpt } : null);
    return item(data.meta.title || data.url, data.url, text, data.meta.kind, r.best);
  }

  // Render the next PAGE results (and the button for the ones after); the first new row.
  async function more(state) {
    const next = state.ranked.slice(state.shown, state.shown + PAGE);
    const rows = await Promise.all(next.map(row));
    if (state !== current) return null;
    state.shown += next.length;
    const button = list.querySelector(".tip-search-more");
    if (button) button.remove();
    rows.forEach(function (li) { list.append(li); });
    if (state.shown < state.ranked.length) {
      const li = document.createElement("li");
      li.className = "tip-search-more";
      const b = document.createElement("button");
      b.type = "button";
      b.className = "md-button";
      b.textContent = root.dataset.more.replace("{n}", String(state.ranked.length - state.shown));
      b.addEventListener("click", function () {
        more(state).then(function (added) {
          if (added) added.querySelector("a").focus();
        });
      });
      li.append(b);
      list.append(li);
    }
    return rows[0] || null;
  }

  function count(total) {
    return total === 0 ? root.dataset.none
      : total === 1 ? root.dataset.one
      : root.dataset.other.replace("#", String(total));
  }

  async function run(query) {
    const mine = ++ticket;
    query = query.trim();
    if (!query) {
      current = null;
      list.textContent = "";
      meta.textContent = root.dataset.placeholder;
      return;
    }
    const pf = await load();
    const ranked = await rank(pf, query);
    if (mine !== ticket) return; // a newer query has started
    const state = { query: query, ranked: ranked, shown: 0 };
    current = state;
    list.textContent = "";
    meta.textContent = count(ranked.length); // every page the list holds, a best match once
    await more(state);
    if (mine !== ticket) return;
    root.dataset.query = query; // lets tests wait for the results of this very query
  }

  function open() {
    toggle.checked = true;
    input.focus();
  }

  function links() {
    return Array.prototype.slice.call(list.querySelectorAll(".md-search-result__link"));
  }

  // The elements Tab moves between while the search is open: it stays inside the dialog.
  function focusables() {
    const all = root.querySelectorAll(".md-search__inner input, .md-search__inner a[href], " +
      ".md-search__inner button, .md-search__inner [tabindex]");
    return Array.prototype.filter.call(all, function (el) {
      return el.tabIndex >= 0 && !el.disabled && el.getClientRects().length > 0;
    });
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
    const all = links();
    const at = all.indexOf(document.activeElement);
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
    if (event.key === "Tab" && toggle.checked) {
      const stops = focusables();
      if (!stops.length) return;
      const at = stops.indexOf(document.activeElement);
      const next = at < 0 ? 0
        : event.shiftKey ? (at + stops.length - 1) % stops.length
        : (at + 1) % stops.length;
      event.preventDefault();
      stops[next].focus();
      return;
    }
    const target = event.target;
    const typing = target && (target.isContentEditable ||
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

  // For tests, and for a look at the ranking from the console: the terms a query is ranked by,
  // and the addresses of its first n results, best first, as the list shows them.
  window.tipSearch = {
    read: async function (query) {
      await load();
      await directory;
      const r = read(query.trim());
      r.words = words(r.text); // what Pagefind is asked for, the whole query and word by word
      return r;
    },
    results: async function (query, n) {
      if (!query.trim()) return [];
      const ranked = (await rank(await load(), query.trim())).slice(0, n || PAGE);
      return Promise.all(ranked.map(async function (r) {
        if (r.page) return new URL(r.page.url, site).pathname;
        return new URL((await r.result.data()).url, location.href).pathname;
      }));
    },
  };

  const query = new URLSearchParams(location.search).get("q");
  if (query !== null) {
    input.value = query;
    open();
    run(query);
  }
}

setup();
