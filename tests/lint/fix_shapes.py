"""The shapes tests/lint/test_fix_equivalence.py runs beside the examples: how real training
scripts bind the names a fix rewrites (the deprecated AMP names above all), and the call
shapes where a rewrite went wrong. Each says whether a fix applies (and must keep every
branch's meaning) or the finding must stand without one. Free names (``use_fp16``,
``device``, ``model``, ``x``) take their values from the test's ``STUBS``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Shape:
    """A way scripts bind a name a fix rewrites. ``fixed``: a fix applies (and must keep
    both branches' meaning); otherwise the text must stay as it is, with no fix offered.
    ``reported``: the rule that must report it (None: no finding is promised)."""

    code: str
    fixed: bool
    reported: str | None = None


_NULL = "import torch\nfrom contextlib import nullcontext\n"

SHAPES: dict[str, Shape] = {
    # the shape: fp16 autocast must stay off when use_fp16 is False
    "ifexp-autocast": Shape(
        _NULL + "autocast = torch.cuda.amp.autocast if use_fp16 else nullcontext\n"
        "with autocast():\n    y = model(x)\n",
        fixed=False,
        reported="PTT001",
    ),
    "ifexp-autocast-in-function": Shape(
        _NULL + "\n\ndef forward(model, x, use_fp16):\n"
        "    autocast = torch.cuda.amp.autocast if use_fp16 else nullcontext\n"
        "    with autocast():\n        return model(x)\n\n\ny = forward(model, x, use_fp16)\n",
        fixed=False,
        reported="PTT001",
    ),
    "ifexp-grad-scaler": Shape(
        "import torch\nScaler = torch.cuda.amp.GradScaler if use_fp16 else torch.cpu.amp.GradScaler\n"
        "scaler = Scaler(init_scale=256.0, enabled=use_amp)\n",
        fixed=False,
        reported="PTT002",
    ),
    "ifexp-cpu-or-cuda-autocast": Shape(
        "import torch\n"
        "autocast = torch.cuda.amp.autocast if device.type == 'cuda' else torch.cpu.amp.autocast\n"
        "with autocast(dtype=torch.bfloat16):\n    y = model(x)\n",
        fixed=False,
        reported="PTT001",
    ),
    "ifexp-cpu-or-cuda-module": Shape(
        "import torch\namp = torch.cuda.amp if device.type == 'cuda' else torch.cpu.amp\n"
        "with amp.autocast(dtype=torch.bfloat16):\n    y = model(x)\n"
        "scaler = amp.GradScaler(init_scale=8.0)\n",
        fixed=False,
        reported="PTT001",
    ),
    # each side of the conditional is a whole call: both are rewritten, each keeps its meaning
    "ifexp-of-calls": Shape(
        _NULL
        + "ctx = torch.cuda.amp.autocast(dtype=torch.bfloat16) if use_fp16 else nullcontext()\n"
        "with ctx:\n    y = model(x)\n"
        "scaler = torch.cuda.amp.GradScaler(enabled=use_amp) if use_fp16 else None\n",
        fixed=True,
    ),
    "ifexp-of-calls-cpu-or-cuda": Shape(
        "import torch\nctx = (\n    torch.cuda.amp.autocast()\n    if device.type == 'cuda'\n"
        "    else torch.cpu.amp.autocast(dtype=torch.bfloat16)\n)\nwith ctx:\n    y = model(x)\n",
        fixed=True,
    ),
    "chain-of-ifexp": Shape(
        _NULL + "base = torch.cuda.amp.autocast if use_fp16 else nullcontext\nautocast = base\n"
        "with autocast():\n    y = model(x)\n",
        fixed=False,
    ),
    "chain-of-aliases": Shape(
        "import torch\nac = torch.cuda.amp.autocast\nautocast = ac\n"
        "with autocast(enabled=use_fp16):\n    y = model(x)\n",
        fixed=False,
    ),
    "import-as": Shape(
        "import torch\nfrom torch.cuda.amp import autocast as ac\n\n"
        "with ac(enabled=use_fp16):\n    y = model(x)\n\n\n"
        "@ac(dtype=torch.bfloat16)\ndef forward(x):\n    return model(x)\n\n\nz = forward(x)\n",
        fixed=True,
        reported="PTT001",
    ),
    "import-module-as": Shape(
        "import torch\nfrom torch.cuda import amp\n\nwith amp.autocast(enabled=use_fp16):\n"
        "    y = model(x)\nscaler = amp.GradScaler(enabled=use_fp16)\n",
        fixed=True,
        reported="PTT002",
    ),
    "alias-in-function": Shape(
        "import torch\n\n\ndef forward(model, x, enabled):\n"
        "    autocast = torch.cuda.amp.autocast\n    with autocast(enabled=enabled):\n"
        "        return model(x)\n\n\ny = forward(model, x, use_fp16)\n",
        fixed=True,
        reported="PTT001",
    ),
    "module-alias-used-in-function": Shape(
        "import torch\nautocast = torch.cuda.amp.autocast\n\n\ndef forward(model, x):\n"
        "    with autocast(enabled=use_fp16, dtype=torch.bfloat16):\n        return model(x)\n\n\n"
        "y = forward(model, x)\n",
        fixed=True,
        reported="PTT001",
    ),
    "self-attribute": Shape(
        _NULL + "\n\nclass Trainer:\n    def __init__(self, use_fp16):\n"
        "        self.autocast = torch.cuda.amp.autocast if use_fp16 else nullcontext\n"
        "        self.scaler = torch.cuda.amp.GradScaler(enabled=use_fp16)\n"
        "        self.bf16 = torch.cuda.amp.autocast(enabled=use_fp16, dtype=torch.bfloat16)\n\n"
        "    def step(self, model, x):\n        with self.autocast():\n            y = model(x)\n"
        "        with self.bf16:\n            return y, model(x)\n\n\n"
        "trainer = Trainer(use_fp16)\ny = trainer.step(model, x)\n",
        fixed=True,  # the calls; self.autocast (a conditional) is neither reported nor rewritten
        reported="PTT002",
    ),
    "class-attribute-ifexp": Shape(
        _NULL + "\n\nclass Trainer:\n"
        "    autocast = torch.cuda.amp.autocast if use_fp16 else nullcontext\n\n"
        "    def step(self):\n        with self.autocast():\n            return model(x)\n\n\n"
        "y = Trainer().step()\n",
        fixed=False,
    ),
    "functools-partial": Shape(
        "import functools\n\n"
        + _NULL
        + "autocast = functools.partial(torch.cuda.amp.autocast, dtype=torch.bfloat16) if use_fp16 else nullcontext\n"
        "with autocast():\n    y = model(x)\nhalf = functools.partial(torch.cuda.amp.autocast, enabled=use_fp16)\n"
        "with half():\n    z = model(x)\n",
        fixed=False,
    ),
    "partial-of-an-alias": Shape(
        "from functools import partial\n\nimport torch\n\nautocast = torch.cuda.amp.autocast\n"
        "bf16 = partial(autocast, dtype=torch.bfloat16)\nwith autocast(enabled=use_fp16):\n"
        "    y = model(x)\nwith bf16(enabled=use_fp16):\n    z = model(x)\n",
        fixed=True,
        reported="PTT001",
    ),
    # made inside another autocast region: the old defaults (fp16 for CUDA, bf16 for the
    # CPU, the weight cache on) must not turn into the enclosing region's settings
    "nested-in-another-dtype": Shape(
        "import torch\n\n\ndef forward(model, x):\n    with torch.cpu.amp.autocast():\n"
        "        return model(x)\n\n\nwith torch.autocast('cpu', dtype=torch.float16):\n"
        "    y = forward(model, x)\nwith torch.autocast('cuda', dtype=torch.bfloat16):\n"
        "    with torch.cuda.amp.autocast(enabled=use_fp16):\n        z = model(x)\n",
        fixed=True,
        reported="PTT001",
    ),
    "nested-in-cache-disabled": Shape(
        "import torch\n\nwith torch.autocast('cpu', cache_enabled=False):\n"
        "    with torch.cpu.amp.autocast(True, torch.bfloat16):\n        y = model(x)\n",
        fixed=True,
        reported="PTT001",
    ),
    # a name bound more than once: which binding a call sees depends on the run
    "if-else-statement": Shape(
        _NULL
        + "if use_fp16:\n    autocast = torch.cuda.amp.autocast\nelse:\n    autocast = nullcontext\n"
        "with autocast():\n    y = model(x)\n",
        fixed=False,
    ),
    "conditional-import": Shape(
        "import torch\nfrom contextlib import nullcontext as autocast\n\nif use_fp16:\n"
        "    from torch.cuda.amp import autocast\nwith autocast():\n    y = model(x)\n",
        fixed=False,
        reported="PTT001",
    ),
    "import-then-rebound": Shape(
        _NULL
        + "from torch.cuda.amp import autocast\n\nif not use_fp16:\n    autocast = nullcontext\n"
        "with autocast():\n    y = model(x)\n",
        fixed=False,
        reported="PTT001",
    ),
    "try-import": Shape(
        "import torch\n\ntry:\n    from torch.cuda.amp import autocast\nexcept ImportError:\n"
        "    from contextlib import nullcontext as autocast\nwith autocast(enabled=use_fp16):\n"
        "    y = model(x)\n",
        fixed=False,
    ),
    "parameter-shadows-alias": Shape(
        _NULL + "autocast = torch.cuda.amp.autocast\n\n\n"
        "def evaluate(model, x, autocast=nullcontext):\n    with autocast():\n        return model(x)\n\n\n"
        "y = evaluate(model, x)\nz = evaluate(model, x, autocast)\n",
        fixed=False,
        reported="PTT001",
    ),
    "annotated-rebinding": Shape(
        _NULL
        + "autocast = torch.cuda.amp.autocast\nif not use_fp16:\n    autocast: type = nullcontext\n"
        "with autocast():\n    y = model(x)\n",
        fixed=False,
        reported="PTT001",
    ),
    "walrus-rebinding": Shape(
        _NULL
        + "autocast = torch.cuda.amp.autocast\nif not use_fp16 and (autocast := nullcontext):\n"
        "    pass\nwith autocast():\n    y = model(x)\n",
        fixed=False,
        reported="PTT001",
    ),
    "loop-rebinding": Shape(
        _NULL
        + "autocast = torch.cuda.amp.autocast\nys = []\nfor autocast in [autocast, nullcontext]:\n"
        "    with autocast():\n        ys.append(model(x))\n",
        fixed=False,
        reported="PTT001",
    ),
    "def-rebinding": Shape(
        _NULL + "from torch.cuda.amp import autocast\n\nif not use_fp16:\n\n"
        "    def autocast():\n        return nullcontext()\n\n\nwith autocast():\n    y = model(x)\n",
        fixed=False,
        reported="PTT001",
    ),
    "global-rebinding": Shape(
        _NULL + "autocast = torch.cuda.amp.autocast\n\n\ndef off():\n    global autocast\n"
        "    autocast = nullcontext\n\n\nif not use_fp16:\n    off()\nwith autocast():\n    y = model(x)\n",
        fixed=False,
    ),
    "conditional-scaler-import": Shape(
        "import torch\n\nif use_fp16:\n    from torch.cuda.amp import GradScaler\nelse:\n"
        "    from torch.cpu.amp import GradScaler\nscaler = GradScaler(enabled=use_amp)\n",
        fixed=False,
        reported="PTT002",
    ),
    # other fixes that rewrite through a name: the same rule
    "ifexp-load": Shape(
        "import pickle\n\nimport torch\n\nwith open('ckpt.pkl', 'wb') as f:\n"
        "    pickle.dump({'w': [1.0, 2.0]}, f)\n"
        "load = torch.load if use_torch_format else pickle.load\n"
        "with open('ckpt.pt' if use_torch_format else 'ckpt.pkl', 'rb') as f:\n    state = load(f)\n",
        fixed=False,
        reported="PTT011",
    ),
    "ifexp-init-module": Shape(
        "import types\n\nimport torch\n\n\ndef xavier_normal(w):\n    with torch.no_grad():\n"
        "        w.fill_(0.5)\n\n\nmine = types.SimpleNamespace(xavier_normal=xavier_normal)\n"
        "init = torch.nn.init if use_fp16 else mine\ninit.xavier_normal(layer.weight)\n",
        fixed=False,
        reported="PTT009",
    ),
    "ifexp-memory-module": Shape(
        "import types\n\nimport torch\n\nmine = types.SimpleNamespace(memory_cached=lambda: 7)\n"
        "memory = torch.cuda if use_fp16 else mine\nused = memory.memory_cached()\n",
        fixed=False,
        reported="PTT005",
    ),
    # a factory's other arguments: device= must not change what they do
    "factory-requires-grad": Shape(
        "import torch\nw = torch.zeros(3, requires_grad=True).to(device)\n",
        fixed=False,
        reported="PTT015",
    ),
    "factory-out": Shape(
        "import torch\nbuf = torch.empty(3)\nw = torch.zeros(3, out=buf).to(device)\n",
        fixed=False,
        reported="PTT015",
    ),
    "factory-dtype-and-device": Shape(
        "import torch\nmask = torch.ones(2, 3, dtype=torch.bool).to(device)\n"
        "idx = torch.tensor([[0, 1], [2, 3]]).to(device=device)\n",
        fixed=True,
        reported="PTT015",
    ),
    # edit positions: a `(` in a comment before the call's own, a keyword already given
    "paren-in-comment": Shape(
        "import torch\nwith (torch.cuda.amp.autocast  # (see the docs)\n)(enabled=use_fp16):\n"
        "    y = model(x)\n",
        fixed=True,
        reported="PTT001",
    ),
    "keyword-given-twice": Shape(
        "import torch\n\ntry:\n\n    @torch.cuda.amp.custom_fwd(device_type='cuda')\n"
        "    def forward(ctx, x):\n        return x\n\nexcept TypeError:\n    failed = True\n",
        fixed=False,
        reported="PTT003",
    ),
}

#: Known behaviour-changing fixes, each with the place its cure belongs (strict: the test
#: fails as soon as a fix is cured, so the list shrinks).
XFAIL: dict[str, str] = {}
