// The composer page: the form (one control per flag of `python -m generator compose`, rendered
// by generator/site/tools.py) runs the real composer in the browser and shows its script.
//
// - The state lives in the query string, one parameter per flag under its long name
//   (?amp&accum=4&device=cpu); a link restores it, and so do the back and forward buttons. A
//   flag given bare reads as on the command line: ?activation-checkpointing is its data-const
//   (full), and a bare flag that needs a value is passed on bare, so the command's error shows.
// - #compose-output holds the script; data-flags (the flags it was composed with, as JSON)
//   and data-state (static, busy, done, error, failed) say what it shows.
// - Until the script shown answers the form (data-flags equals the form's flags), Download,
//   Copy and the command line are disabled and say "Preparing…": a click never hands out the
//   script of other flags, while Python loads or while it composes.
// - A contradiction shows the command's own message, in the page's language, next to each
//   flag it names. A script that runs on several processes shows, next to Download, the
//   commands its docstring gives for several machines (torchrun, SLURM).
import { copyText, format, labels, latestOnly, startRuntime } from "./runtime.js";

const root = document.querySelector('[data-tool="compose"]');
if (root) setup(root);

function setup(root) {
  const L = labels(root);
  const lang = document.documentElement.lang === "zh" ? "zh" : "en";
  const form = root.querySelector("#compose-form");
  const blocks = Array.from(form.querySelectorAll(".compose-flag[data-flag]"));
  const result = root.querySelector("#compose-result");
  const output = root.querySelector("#compose-output");
  const command = root.querySelector("#compose-command");
  const status = root.querySelector("#compose-status");
  const error = root.querySelector("#compose-error");
  const errorText = root.querySelector("#compose-error-text");
  const download = root.querySelector("#compose-download");
  const copy = root.querySelector("#compose-copy");
  const copyCommand = root.querySelector("#compose-copy-command");
  const launch = root.querySelector("#compose-launch");
  const launchBlocks = root.querySelector("#compose-launch-blocks");
  const toScript = root.querySelector("#compose-to-script");
  const runtime = startRuntime();
  let ready = false;
  let blobUrl = null;
  // The flags of the script in #compose-output (JSON): the page comes with the one for none.
  let scriptFlags = "[]";

  // null: the flag is not given; "": given without a value; else its value.
  function valueOf(block) {
    const kind = block.dataset.kind;
    if (kind === "switch") return block.querySelector("input").checked ? "" : null;
    if (kind === "choice") {
      const radio = block.querySelector("input:checked");
      const value = radio ? radio.value : block.querySelector("select").value;
      if (value === "" || value === block.dataset.default) return block.dataset.bare ? "" : null;
      return value;
    }
    const value = block.querySelector("input").value.trim();
    if (value === "") return block.dataset.bare ? "" : null;
    return value;
  }

  function setValue(block, value) {
    const kind = block.dataset.kind;
    delete block.dataset.bare;
    if (kind === "switch") {
      block.querySelector("input").checked = value !== null;
      return;
    }
    // Given bare: the value the command takes for it (its const), else it stays bare.
    if (value === "" && block.dataset.const) value = block.dataset.const;
    else if (value === "") block.dataset.bare = "1";
    if (kind === "choice") {
      const radios = Array.from(block.querySelectorAll("input[type=radio]"));
      if (radios.length) {
        const wanted = value || block.dataset.default;
        const match = radios.find((r) => r.value === wanted) || radios.find((r) => r.defaultChecked);
        if (match) match.checked = true;
      } else {
        const select = block.querySelector("select");
        const known = Array.from(select.options).some((o) => o.value === value);
        select.value = value !== null && known ? value : "";
      }
    } else {
      block.querySelector("input").value = value === null ? "" : value;
    }
  }

  function flags() {
    const argv = [];
    for (const block of blocks) {
      const value = valueOf(block);
      if (value === null) continue;
      argv.push("--" + block.dataset.flag);
      if (value !== "") argv.push(value);
    }
    return argv;
  }

  function query() {
    const parts = [];
    for (const block of blocks) {
      const value = valueOf(block);
      if (value === null) continue;
      const name = block.dataset.flag;
      parts.push(value === "" ? name : `${name}=${encodeURIComponent(value)}`);
    }
    return parts.length ? "?" + parts.join("&") : "";
  }

  function fromQuery(search) {
    const params = new URLSearchParams(search);
    for (const block of blocks) {
      const name = block.dataset.flag;
      setValue(block, params.has(name) ? params.get(name) : null);
    }
  }

  // Whether the script shown answers the form.
  function answers() {
    return scriptFlags === JSON.stringify(flags());
  }

  // Download, Copy and the command line: usable only when the script shown answers the form;
  // "Preparing…" while the one that does is on its way.
  function settle() {
    const ok = answers();
    const waiting = !ok && output.dataset.state === "busy";
    output.classList.toggle("is-stale", !ok);
    result.classList.toggle("is-preparing", waiting);
    result.setAttribute("aria-busy", String(waiting));
    copy.disabled = !ok;
    copyCommand.disabled = waiting;
    command.classList.toggle("is-stale", waiting);
    download.textContent = waiting ? L.preparing : L.download;
    if (ok) {
      download.href = blobUrl;
      download.removeAttribute("aria-disabled");
    } else {
      download.removeAttribute("href");
      download.setAttribute("aria-disabled", "true");
    }
    if (waiting || output.dataset.state === "busy") {
      // The labels carry their own spacing: none between Chinese sentences.
      status.textContent = (ready ? L.working : L.loading) + (ok ? "" : L.preparing_status);
    }
  }

  function setDownload(text) {
    if (blobUrl) URL.revokeObjectURL(blobUrl);
    blobUrl = URL.createObjectURL(new Blob([text], { type: "text/x-python" }));
  }

  function clearConflicts() {
    for (const block of blocks) {
      block.classList.remove("is-conflict");
      const note = block.querySelector(".compose-flag__conflict");
      note.hidden = true;
      note.textContent = "";
    }
  }

  function showConflict(message) {
    const named = new Set((message.match(/--[a-z][a-z0-9-]*/g) || []).map((f) => f.slice(2)));
    for (const block of blocks) {
      if (!named.has(block.dataset.flag)) continue;
      block.classList.add("is-conflict");
      const note = block.querySelector(".compose-flag__conflict");
      note.textContent = message;
      note.hidden = false;
    }
  }

  function showLaunch(commands) {
    launchBlocks.replaceChildren();
    for (const { kind, text } of commands || []) {
      const intro = document.createElement("p");
      intro.textContent = L[`launch_${kind}`] || "";
      const pre = document.createElement("pre");
      pre.className = "tool-code compose-launch__code";
      pre.tabIndex = 0;
      const code = document.createElement("code");
      code.dataset.kind = kind;
      code.textContent = text;
      pre.append(code);
      const button = document.createElement("button");
      button.type = "button";
      button.className = "md-button tool-button compose-launch__copy";
      button.textContent = L.copy;
      button.addEventListener("click", async () => {
        status.textContent = (await copyText(text)) ? L.copied : L.copy_failed;
      });
      intro.append(" ", button);
      launchBlocks.append(intro, pre);
    }
    launch.hidden = !launchBlocks.childElementCount;
  }

  function show(answer) {
    clearConflicts();
    output.dataset.flags = JSON.stringify(answer.flags);
    command.textContent = answer.command;
    if (answer.error) {
      errorText.textContent = answer.error;
      error.hidden = false;
      showConflict(answer.error);
      output.dataset.state = "error";
      settle();
      status.textContent = L.stale;
      return;
    }
    error.hidden = true;
    output.textContent = answer.text;
    scriptFlags = output.dataset.flags;
    setDownload(answer.text);
    showLaunch(answer.launch);
    if (output.dataset.state !== "done" && !performance.getEntriesByName("compose-first").length) {
      performance.mark("compose-first");
    }
    output.dataset.state = "done";
    settle();
    status.textContent = L.ready;
  }

  function fail(problem) {
    output.dataset.state = "failed";
    settle();
    status.textContent = format(L.failed, { error: problem.message });
  }

  const compose = latestOnly(async (argv, superseded) => {
    let answer;
    try {
      answer = await runtime.call({ flags: argv, lang });
    } catch (problem) {
      fail(problem);
      return;
    }
    if (!superseded()) show(answer);
  });

  function update() {
    output.dataset.state = "busy";
    settle();
    compose(flags());
  }

  form.addEventListener("input", (event) => {
    const block = event.target.closest(".compose-flag");
    if (block) delete block.dataset.bare; // edited: no longer the link's bare flag
    history.replaceState(history.state, "", location.pathname + query() + location.hash);
    update();
  });
  form.addEventListener("submit", (event) => event.preventDefault());
  window.addEventListener("popstate", () => {
    fromQuery(location.search);
    update();
  });
  copy.addEventListener("click", async () => {
    if (!answers()) return;
    status.textContent = (await copyText(output.textContent)) ? L.copied : L.copy_failed;
  });
  copyCommand.addEventListener("click", async () => {
    status.textContent = (await copyText(command.textContent)) ? L.copied : L.copy_failed;
  });
  download.addEventListener("click", (event) => {
    if (!answers()) event.preventDefault();
  });
  // Phones: a "Script" button while the script is out of view (the flags come first).
  if (toScript && "IntersectionObserver" in window) {
    new IntersectionObserver(([entry]) => {
      toScript.classList.toggle("is-hidden", entry.isIntersecting);
    }).observe(result);
  }

  runtime.ready.then(
    () => {
      ready = true;
      if (output.dataset.state === "busy") settle();
    },
    (problem) => fail(problem)
  );
  fromQuery(location.search);
  setDownload(output.textContent);
  update();
}
