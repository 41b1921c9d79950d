"""The verified PyTorch tips knowledge base: records, tools and site, one subpackage each.

    cli.py          python -m generator: assembles the commands below, maps errors to exit codes
      site/         pages from the records, MkDocs hooks, Pagefind index,     (uses all below)
                    the runtime of the composer page and the lint playground (Pyodide)
      doctor/       run a user's script for a few steps under hooks and       (uses all below)
                    torch.profiler; findings that name tips, the lint's beside them
      bench/        measure before vs after, results files, verdicts, charts  (uses records)
      compose/      a train.py from the chosen tips: options, flags, template (uses records)
      lint/         PTT rules over a user's script: engine, analysis, fixes   (uses records)
      records/      tips/*.yaml: schema, loading, validation, glossary (and Chinese text), taxonomy, search,
                    snippets, the harness that runs them, UI strings
    command.py, errors.py, paths.py: the foundation every layer may use

A module imports only from its own layer and the layers below (`lint-imports`, contract in
pyproject.toml). Torch is imported only by the code that runs snippets or measures;
``compose/browser.py`` and ``lint/browser.py``, which the tool pages run in the browser, import
only the standard library, Jinja2 and PyYAML (tests/site/test_tools_runtime.py).
"""

__version__ = "0.1.0"
