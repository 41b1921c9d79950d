"""`python -m generator doctor`: run a user's training script for a few steps, measure where
the time and memory go, and name the tips that fix it.

`generator.doctor.script` checks the script and runs it as ``__main__``;
`generator.doctor.hooks` counts the optimizer steps and times their phases;
`generator.doctor.trace` runs ``torch.profiler`` over the profiled steps and reads its
events once, `generator.doctor.stacks` tracing them to the user's lines;
`generator.doctor.memory` and `generator.doctor.dynamo` read the allocations
and ``torch.compile``'s records; `generator.doctor.detect` and
`generator.doctor.detect_device` turn them into findings, each naming a tip
(`generator.doctor.kinds`, checked by ``validate`` in `generator.doctor.tips`), with
`generator.doctor.intervals` for spans of time (GPU busy, communication hidden);
`generator.doctor.ranks` gathers the ranks under torchrun; `generator.doctor.session` runs
it all; `generator.doctor.static` adds the lint's findings; `generator.doctor.report` and
`generator.doctor.html` write the report, `generator.doctor.docs` its page's examples.
Only the modules that measure import torch, and only when the command runs; `kinds` (read
by the site build) imports nothing.
"""
