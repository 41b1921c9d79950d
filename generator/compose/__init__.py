"""The composer: a ``train.py`` (a conv net, or with ``--model gpt`` a GPT) that applies the
chosen tips (`script`), from the options defined once as data in `options` (whence the flags
of `flags`, the page's tables of `docs` and the browser's `options.options_schema`); `tips`
maps features to the tips a script cites, `results` shows the measured figures."""
