"""The composer: a ``train.py`` (a conv net, or with ``--model gpt`` a GPT) that applies the
chosen tips (`script`), from the options defined once as data in `catalog` (of the types in
`option_types`; `options` makes them `ComposeOptions`, checks them and exports them for the
browser; `flags` makes them the subcommand's flags, `docs` the page's tables); `tips` maps
features to the tips a script cites, `results` shows the measured figures."""
