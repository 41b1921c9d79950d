"""The composer: a ``train.py`` that applies the chosen tips (`script`), from the options in
`options`, with the flags of `cli`; `tips` maps features to the tips a script cites."""
