// The Python of the composer page and the lint playground, in a worker so the page stays
// responsive while it loads (generator/site/runtime.py builds what it loads).
//
// The page sends one {init: {pyodide, bundle, entry}} message, then {id, request} messages:
// each request (a JSON string) goes to the entry module's run(), and its answer (a JSON string)
// comes back as {id, result}, or {id, error} if Python raised. Every file comes from the site.
let start;
const init = new Promise((resolve) => (start = resolve));
const entry = init.then(boot);

async function boot({ pyodide, bundle, entry: module }) {
  const [{ loadPyodide }, archive] = await Promise.all([
    import(pyodide + "pyodide.mjs"),
    fetch(bundle).then((response) => {
      if (!response.ok) throw new Error(`${bundle}: HTTP ${response.status}`);
      return response.arrayBuffer();
    }),
  ]);
  const py = await loadPyodide({ indexURL: pyodide });
  py.unpackArchive(archive, "zip", { extractDir: "/lib/tools" });
  py.runPython("import sys\nsys.path.insert(0, '/lib/tools')");
  const run = py.pyimport(module).run;
  return (request) => run(request);
}

function message(error) {
  const text = String((error && error.message) || error);
  // A Python traceback ends with the exception's line: that is the part worth showing.
  const lines = text.trim().split("\n");
  return lines[lines.length - 1];
}

self.onmessage = async (event) => {
  const { id, init: settings, request } = event.data;
  if (settings) {
    start(settings);
    try {
      await entry;
      self.postMessage({ id, result: "ready" });
    } catch (error) {
      self.postMessage({ id, error: message(error) });
    }
    return;
  }
  try {
    const run = await entry;
    self.postMessage({ id, result: run(request) });
  } catch (error) {
    self.postMessage({ id, error: message(error) });
  }
};
