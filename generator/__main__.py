"""Entry point for ``python -m generator``."""

from generator.cli import main

raise SystemExit(main())
