// The lint playground: the script in #lint-input is checked as you type by the real
// `python -m generator lint`, running in the browser (generator/lint/browser.py).
//
// - #lint-output lists the findings, one <li data-rule data-line data-column data-fix> each,
//   in the page's language (`--lang`), with links to the rule's tip and rule page in that
//   language; data-state (busy, done, failed) says whether it is up to date.
// - The fixes show as the diff `--diff` prints, and can be applied to the text: the safe ones,
//   and the unsafe ones too when #lint-unsafe is checked (`--unsafe-fixes`), as in ruff.
// - #lint-json holds the findings as `--format json` prints them.
// - "Copy a link" puts the script, compressed, in the link's fragment (#code=...&name=...),
//   which browsers never send to a server; opening such a link restores the script.
// The code is never sent anywhere: Python runs in a worker of this page.
import { copyText, format, labels, latestOnly, startRuntime } from "./runtime.js";

async function encode(text) {
  const stream = new Blob([text]).stream().pipeThrough(new CompressionStream("deflate-raw"));
  const bytes = new Uint8Array(await new Response(stream).arrayBuffer());
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

async function decode(code) {
  const binary = atob(code.replace(/-/g, "+").replace(/_/g, "/"));
  const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate-raw"));
  return new Response(stream).text();
}

const root = document.querySelector('[data-tool="lint"]');
if (root) setup(root);

function setup(root) {
  const L = labels(root);
  const rules = JSON.parse(root.querySelector("#lint-rules").textContent);
  const input = root.querySelector("#lint-input");
  const name = root.querySelector("#lint-name");
  const output = root.querySelector("#lint-output");
  const status = root.querySelector("#lint-status");
  const errors = root.querySelector("#lint-errors");
  const errorsText = root.querySelector("#lint-errors-text");
  const fix = root.querySelector("#lint-fix");
  const fixCount = root.querySelector("#lint-fix-count");
  const diff = root.querySelector("#lint-diff");
  const json = root.querySelector("#lint-json");
  const editor = root.querySelector(".lint-editor");
  const unsafe = root.querySelector("#lint-unsafe");
  const lang = root.dataset.lang || "en";
  const runtime = startRuntime();
  const apply = root.querySelector("#lint-apply");
  let fixed = null;
  // The request the findings and fixes shown answer (JSON): "Apply the fixes" waits
  // ("Preparing…") until they answer the script and options in the page.
  let answered = null;

  function request() {
    return { source: input.value, name: name.value, lang, unsafe: unsafe.checked };
  }

  function settle() {
    const ok = answered === JSON.stringify(request());
    apply.disabled = !ok;
    apply.textContent = ok ? L.apply : L.preparing;
    fix.classList.toggle("is-stale", !ok);
  }

  function withCode(text) {
    // The messages write code between backticks, as Markdown does.
    const span = document.createElement("span");
    span.className = "lint-message";
    text.split("`").forEach((part, i) => {
      if (i % 2) {
        const code = document.createElement("code");
        code.textContent = part;
        span.append(code);
      } else if (part) {
        span.append(part);
      }
    });
    return span;
  }

  function link(href, text) {
    const a = document.createElement("a");
    a.href = href;
    a.textContent = text;
    return a;
  }

  function item(finding) {
    const li = document.createElement("li");
    li.className = `lint-finding lint-finding--${finding.severity}`;
    li.dataset.rule = finding.rule;
    li.dataset.line = String(finding.line);
    li.dataset.column = String(finding.column);
    if (finding.fix) li.dataset.fix = finding.fix;
    const where = document.createElement("button");
    where.type = "button";
    where.className = "lint-pos";
    where.textContent = `${finding.line}:${finding.column}`;
    where.title = format(L.go_to_line, finding);
    where.addEventListener("click", () => select(finding));
    const code = document.createElement("code");
    code.className = "lint-code";
    code.textContent = finding.rule;
    const severity = document.createElement("span");
    severity.className = `lint-badge lint-badge--${finding.severity}`;
    severity.textContent = L[finding.severity] || finding.severity;
    li.append(where, " ", code, " ", withCode(finding.message), " ", severity);
    if (finding.fix) {
      // safe: --fix applies it; unsafe: only with --unsafe-fixes (the command's applicability)
      const badge = document.createElement("span");
      badge.className = `lint-badge lint-badge--fix lint-badge--${finding.fix}`;
      badge.textContent = L[finding.fix] || finding.fix;
      li.append(" ", badge);
    }
    const rule = rules[finding.rule];
    if (rule) {
      const links = document.createElement("span");
      links.className = "lint-links";
      links.append(L.tip + " ", link(rule.url, rule.title));
      if (rule.page) links.append(" · ", link(rule.page, L.rule_page));
      li.append(" ", links);
    }
    return li;
  }

  function select(finding) {
    const lines = input.value.split("\n");
    let start = 0;
    for (let i = 0; i < finding.line - 1 && i < lines.length; i++) start += lines[i].length + 1;
    const end = start + (lines[finding.line - 1] || "").length;
    input.focus();
    input.setSelectionRange(start + Math.max(0, finding.column - 1), end);
    const height = input.scrollHeight / Math.max(lines.length, 1);
    input.scrollTop = Math.max(0, (finding.line - 3) * height);
  }

  function showDiff(text) {
    diff.replaceChildren();
    for (const line of text.split(/(?<=\n)/)) {
      const span = document.createElement("span");
      const mark = line.startsWith("@@") ? "hunk" : line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : "";
      if (mark) span.className = `lint-diff--${mark}`;
      span.textContent = line;
      diff.append(span);
    }
  }

  function show(answer) {
    output.replaceChildren(...answer.findings.map(item));
    const count = (fix) => answer.findings.filter((f) => f.fix === fix).length;
    errors.hidden = !answer.errors.length;
    errorsText.textContent = answer.errors.join("\n");
    if (answer.findings.length) {
      status.textContent = format(L.found, { n: answer.findings.length, safe: count("safe"), unsafe: count("unsafe") });
    } else status.textContent = answer.errors.length ? "" : L.none;
    fixed = answer.fixed;
    fix.hidden = !answer.fixes;
    answered = JSON.stringify(answer.request);
    const extra = answer.unsafe ? " --unsafe-fixes" : "";
    fixCount.textContent = format(L.fixes, { n: answer.fixes, fix: "--fix" + extra, diff: "--diff" + extra });
    output.dataset.unsafe = String(answer.unsafe);
    showDiff(answer.diff);
    json.textContent = answer.json;
    output.dataset.name = answer.name;
    if (!performance.getEntriesByName("lint-first").length) performance.mark("lint-first");
    output.dataset.state = "done";
    settle();
  }

  const lint = latestOnly(async (wanted, superseded) => {
    let answer;
    try {
      answer = await runtime.call(wanted);
    } catch (problem) {
      status.textContent = format(L.failed, { error: problem.message });
      output.dataset.state = "failed";
      return;
    }
    if (!superseded()) show({ ...answer, request: wanted });
  });

  function update() {
    output.dataset.state = "busy";
    settle();
    lint(request());
  }

  // The script of a shared link, if the fragment holds one; true when it did.
  async function fromLink() {
    const params = new URLSearchParams(location.hash.slice(1));
    if (!params.has("code")) return false;
    try {
      input.value = await decode(params.get("code"));
      name.value = params.get("name") || "train.py";
    } catch {
      status.textContent = L.bad_link;
    }
    return true;
  }

  async function open(file) {
    if (!file) return;
    input.value = await file.text();
    name.value = file.name;
    update();
  }

  input.addEventListener("input", update);
  name.addEventListener("input", update);
  unsafe.addEventListener("change", update);
  root.querySelector("#lint-file").addEventListener("change", (event) => open(event.target.files[0]));
  root.querySelector("#lint-sample").addEventListener("click", () => {
    input.value = input.defaultValue;
    name.value = "train.py";
    update();
  });
  root.querySelector("#lint-clear").addEventListener("click", () => {
    input.value = "";
    update();
    input.focus();
  });
  apply.addEventListener("click", () => {
    if (fixed === null || answered !== JSON.stringify(request())) return;
    input.value = fixed;
    update();
  });
  root.querySelector("#lint-share").addEventListener("click", async () => {
    const fragment = `#code=${await encode(input.value)}&name=${encodeURIComponent(name.value)}`;
    history.replaceState(history.state, "", location.pathname + location.search + fragment);
    status.textContent = (await copyText(location.href)) ? L.copied : L.copy_failed;
  });
  window.addEventListener("hashchange", async () => {
    if (await fromLink()) update();
  });
  editor.addEventListener("dragover", (event) => {
    event.preventDefault();
    editor.classList.add("is-dragging");
  });
  editor.addEventListener("dragleave", () => editor.classList.remove("is-dragging"));
  editor.addEventListener("drop", (event) => {
    event.preventDefault();
    editor.classList.remove("is-dragging");
    open(event.dataTransfer.files[0]);
  });
  fromLink().then(update);
}
