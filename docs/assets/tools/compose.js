// The composer page: the form (one control per flag of `python -m generator compose`, rendered
// by generator/site/tools.py) runs the real composer in the browser and shows its script.
//
// - The state lives in the query string, one parameter per flag under its long name
//   (?amp&accum=4&device=cpu); a link restores it, and so do the back and forward buttons.
// - #compose-output holds the script; data-flags (the flags it was composed with, as JSON)
//   and data-state (busy, done, error, failed) say what it shows.
// - A contradiction shows the command's own message, next to each flag it names.
import { copyText, format, labels, latestOnly, startRuntime } from "./runtime.js";

const root = document.querySelector('[data-tool="compose"]');
if (root) setup(root);

function setup(root) {
  const L = labels(root);
  const form = root.querySelector("#compose-form");
  const blocks = Array.from(form.querySelectorAll(".compose-flag[data-flag]"));
  const output = root.querySelector("#compose-output");
  const command = root.querySelector("#compose-command");
  const status = root.querySelector("#compose-status");
  const error = root.querySelector("#compose-error");
  const errorText = root.querySelector("#compose-error-text");
  const download = root.querySelector("#compose-download");
  const runtime = startRuntime();
  let ready = false;
  let blobUrl = null;

  // null: the flag is not given; "": given without a value; else its value.
  function valueOf(block) {
    const kind = block.dataset.kind;
    if (kind === "switch") return block.querySelector("input").checked ? "" : null;
    if (kind === "choice") {
      const radio = block.querySelector("input:checked");
      const value = radio ? radio.value : block.querySelector("select").value;
      return value === "" || value === block.dataset.default ? null : value;
    }
    const value = block.querySelector("input").value.trim();
    return value === "" ? null : value;
  }

  function setValue(block, value) {
    const kind = block.dataset.kind;
    if (kind === "switch") {
      block.querySelector("input").checked = value !== null;
    } else if (kind === "choice") {
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

  function setDownload(text) {
    if (blobUrl) URL.revokeObjectURL(blobUrl);
    blobUrl = URL.createObjectURL(new Blob([text], { type: "text/x-python" }));
    download.href = blobUrl;
    download.removeAttribute("aria-disabled");
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

  function show(answer) {
    clearConflicts();
    output.dataset.flags = JSON.stringify(answer.flags);
    command.textContent = answer.command;
    if (answer.error) {
      errorText.textContent = answer.error;
      error.hidden = false;
      showConflict(answer.error);
      output.classList.add("is-stale");
      download.setAttribute("aria-disabled", "true");
      status.textContent = L.stale;
      output.dataset.state = "error";
      return;
    }
    error.hidden = true;
    output.textContent = answer.text;
    output.classList.remove("is-stale");
    setDownload(answer.text);
    status.textContent = L.ready;
    if (output.dataset.state !== "done" && !performance.getEntriesByName("compose-first").length) {
      performance.mark("compose-first");
    }
    output.dataset.state = "done";
  }

  function fail(problem) {
    status.textContent = format(L.failed, { error: problem.message });
    output.dataset.state = "failed";
  }

  const compose = latestOnly(async (argv, superseded) => {
    let answer;
    try {
      answer = await runtime.call({ flags: argv });
    } catch (problem) {
      fail(problem);
      return;
    }
    if (!superseded()) show(answer);
  });

  function update() {
    const argv = flags();
    // Until the answer comes, the script shown is for other flags: say so by fading it.
    output.classList.toggle("is-stale", JSON.stringify(argv) !== output.dataset.flags);
    output.dataset.state = "busy";
    if (ready) status.textContent = L.working;
    compose(argv);
  }

  form.addEventListener("input", () => {
    history.replaceState(history.state, "", location.pathname + query() + location.hash);
    update();
  });
  form.addEventListener("submit", (event) => event.preventDefault());
  window.addEventListener("popstate", () => {
    fromQuery(location.search);
    update();
  });
  root.querySelector("#compose-copy").addEventListener("click", async () => {
    status.textContent = (await copyText(output.textContent)) ? L.copied : L.copy_failed;
  });
  root.querySelector("#compose-copy-command").addEventListener("click", async () => {
    status.textContent = (await copyText(command.textContent)) ? L.copied : L.copy_failed;
  });
  download.addEventListener("click", (event) => {
    if (download.getAttribute("aria-disabled")) event.preventDefault();
  });

  runtime.ready.then(
    () => (ready = true),
    (problem) => fail(problem)
  );
  fromQuery(location.search);
  setDownload(output.textContent);
  update();
}
