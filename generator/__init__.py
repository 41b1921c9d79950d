"""The verified PyTorch tips knowledge base: records, validation, rendering and tooling.

The CLI (``python -m generator``) is a thin layer over the library modules:

- :mod:`generator.records`: find, validate and load ``tips/*.yaml``;
- :mod:`generator.schema`: the record schema (exported as ``tips/schema.json``);
- :mod:`generator.search`: ranked full-text search in English and Chinese;
- :mod:`generator.snippets` and :mod:`generator.generated`: the generated files and their freshness;
- :mod:`generator.harness`: run a snippet and its checks the way the test suite does.
"""

__version__ = "0.1.0"
