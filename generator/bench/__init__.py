"""Benchmarks: measure each tip's before and after (`runner`), store the results (`results`),
judge them (`stats`) and show them (`view`, `chart`). Torch is imported only while measuring."""
