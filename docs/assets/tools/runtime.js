// The runtime of the two tool pages: starts the worker (worker.js) after the page's first
// paint, and turns its messages into promises. The <script data-tool-runtime> tag that loads
// the page's module says where Pyodide, the archive and the entry module are.

/** Labels of the page (generator/templates/site/ui.yaml), by key. */
export function labels(root) {
  const node = root.querySelector("script.tool-labels");
  return node ? JSON.parse(node.textContent) : {};
}

/** `template` with each {name} replaced by values[name]. */
export function format(template, values) {
  return template.replace(/\{([a-z_]+)\}/g, (all, name) => (name in values ? values[name] : all));
}

function afterFirstPaint(callback) {
  const go = () => requestAnimationFrame(() => setTimeout(callback, 0));
  if (document.readyState === "complete") go();
  else window.addEventListener("load", go, { once: true });
}

/**
 * Start the runtime; returns {ready, call}: `ready` settles when Python has loaded, and
 * `call(request)` sends a request object and resolves with the parsed answer.
 */
export function startRuntime() {
  const tag = document.querySelector("script[data-tool-runtime]");
  const url = (path) => new URL(path, document.baseURI).href;
  const worker = new Worker(new URL("worker.js", import.meta.url), { type: "module" });
  const pending = new Map();
  let next = 0;
  worker.onmessage = (event) => {
    const { id, result, error } = event.data;
    const waiting = pending.get(id);
    pending.delete(id);
    if (!waiting) return;
    if (error) waiting.reject(new Error(error));
    else waiting.resolve(result);
  };
  worker.onerror = (event) => {
    event.preventDefault();
    for (const waiting of pending.values()) waiting.reject(new Error(event.message || "worker"));
    pending.clear();
  };
  const send = (payload) =>
    new Promise((resolve, reject) => {
      const id = next++;
      pending.set(id, { resolve, reject });
      worker.postMessage({ id, ...payload });
    });
  const ready = new Promise((resolve, reject) => {
    afterFirstPaint(() => {
      const init = {
        pyodide: url(tag.dataset.pyodide),
        bundle: url(tag.dataset.bundle),
        entry: tag.dataset.entry,
      };
      send({ init }).then(resolve, reject);
    });
  });
  return {
    ready,
    call: (request) => ready.then(() => send({ request: JSON.stringify(request) })).then(JSON.parse),
  };
}

/**
 * Run `job` for the latest state only: while one call is running, later requests wait, and
 * only the last of them runs next. `job` returns a promise.
 */
export function latestOnly(job) {
  let running = false;
  let queued = null;
  const pump = async () => {
    if (running || queued === null) return;
    const state = queued;
    queued = null;
    running = true;
    try {
      await job(state, () => queued !== null);
    } finally {
      running = false;
      pump();
    }
  };
  return (state) => {
    queued = state;
    pump();
  };
}

/** Copy `text` to the clipboard; resolves true if the browser allowed it. */
export async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    return false;
  }
}
