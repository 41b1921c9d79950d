"""The verified PyTorch tips knowledge base: records, validation, rendering and tooling.

The CLI (``python -m generator``) is a thin layer over the library modules:

- `generator.records`: find, validate and load ``tips/*.yaml``;
- `generator.schema`: the record schema (exported as ``tips/schema.json``);
- `generator.search`: ranked full-text search in English and Chinese;
- `generator.snippets` and `generator.generated`: the generated files and their freshness;
- `generator.harness`: run a snippet and its checks the way the test suite does.
"""

__version__ = "0.1.0"
