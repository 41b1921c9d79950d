"""Tensors made from data and from factory functions: copies and devices."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from generator.lint.analysis import Context
from generator.lint.rules.base import (
    Edit,
    Invalid,
    Report,
    Rule,
    add_keyword,
    remove_method_call,
)
from generator.lint.syntax import (
    has_star_kwargs,
    is_const,
    kwarg,
    last_name,
    method_name,
    receiver,
    root_name,
)

_ARRAY_FUNCS = {
    "array",
    "asarray",
    "ascontiguousarray",
    "load",
    "loadtxt",
    "genfromtxt",
    "fromfile",
    "frombuffer",
    "zeros",
    "ones",
    "empty",
    "full",
    "zeros_like",
    "ones_like",
    "empty_like",
    "full_like",
    "arange",
    "linspace",
    "logspace",
    "stack",
    "concatenate",
    "vstack",
    "hstack",
    "eye",
    "identity",
    "tile",
    "repeat",
    "memmap",
}
#: Array methods whose result is an array.
_ARRAY_METHODS = {"astype", "reshape", "transpose", "copy", "flatten", "ravel", "squeeze", "T"}


def _is_numpy_root(ctx: Context, name: str) -> bool:
    q = ctx.imports.get(name)
    if q is not None:
        return q.split(".")[0] == "numpy"
    return name == "np" and name not in ctx.assignments


def _numpy_array(ctx: Context, node: ast.AST, depth: int = 0) -> bool:
    """Whether ``node`` is a NumPy array by construction: ``np.load(...)``,
    ``rng.integers(0, 9, size=n)``, ``x.astype(...)`` or a slice of such an array, or a
    name only ever assigned such values. Scalars (``np.random.rand()``) are not arrays."""
    if depth > 3:
        return False
    if isinstance(node, ast.Subscript):
        return isinstance(node.slice, ast.Slice) and _numpy_array(ctx, node.value, depth + 1)
    if isinstance(node, ast.Name):
        values = ctx.assignments.get(node.id, [])
        return bool(values) and all(_numpy_array(ctx, v, depth + 1) for v in values)
    if not isinstance(node, ast.Call | ast.Attribute):
        return False
    if isinstance(node, ast.Call) and method_name(node) == "astype" and node.args:
        return True  # arr.astype(np.float32): an array method, whatever arr is
    root = root_name(node)
    if root is None or not (_is_numpy_root(ctx, root) or _numpy_object(ctx, root, depth)):
        return False
    chain: ast.expr = node
    while isinstance(chain, ast.Call | ast.Attribute | ast.Subscript):
        if isinstance(chain, ast.Call):
            name = method_name(chain) or (
                chain.func.id if isinstance(chain.func, ast.Name) else None
            )
            q = ctx.qualname(chain.func) or ""
            if name in _ARRAY_METHODS or kwarg(chain, "size") is not None:
                return True
            if q.startswith("numpy.") and q.rsplit(".", 1)[1] in _ARRAY_FUNCS:
                return True
            chain = chain.func
        elif isinstance(chain, ast.Attribute):
            if chain.attr == "T":
                return True
            chain = chain.value
        else:
            chain = chain.value
    return False


def _numpy_object(ctx: Context, name: str, depth: int) -> bool:
    """Whether ``name`` is only ever assigned NumPy objects (``rng = np.random.default_rng()``)."""
    values = ctx.assignments.get(name, [])
    return bool(values) and all(
        (r := root_name(v)) is not None
        and (_is_numpy_root(ctx, r) or (depth < 3 and _numpy_object(ctx, r, depth + 1)))
        for v in values
    )


class TensorFromNumpy(Rule):
    """`torch.tensor(array)` always allocates and copies. `torch.from_numpy(array)` shares
    the array's memory (no copy), and `torch.as_tensor` copies only when the dtype or
    device asks for it. Keep `torch.tensor` where you need an independent copy."""

    code = "PTT014"
    name = "tensor-from-numpy-copy"
    severity = "warning"
    message = (
        "`torch.tensor(<NumPy array>)` copies the data: use `torch.from_numpy` or `torch.as_tensor`"
    )
    message_zh = (
        "`torch.tensor(<NumPy 数组>)` 会拷贝数据：请改用 `torch.from_numpy` 或 `torch.as_tensor`"
    )
    why_zh = (
        "`torch.tensor(array)` 总是重新分配内存并拷贝数据。`torch.from_numpy(array)` 与数组共享内存"
        "（不拷贝），`torch.as_tensor` 只在 dtype 或设备要求时才拷贝。确实需要一份独立的副本时，"
        "再用 `torch.tensor`。如果 `dtype=` 与数组本身的 dtype 不同（float64 数据转成 `torch.float32`、"
        "int32 标签转成 `torch.long`），拷贝本来就免不了，不会报告；只有已知数组的 dtype 正是所要的"
        " dtype 时才报告。"
    )
    tip = "from-numpy-no-copy"
    VALID = (
        "import numpy as np\nimport torch\nx = torch.from_numpy(np.load('x.npy'))\n",
        "import torch\nx = torch.tensor([1.0, 2.0])\ny = torch.tensor(values)\n",
        "import numpy as np\nimport torch\nnoise = np.random.rand()\nz = torch.tensor(noise)\n",
        # a dtype conversion copies anyway: float64 features to float32, int32 labels to int64
        "import numpy as np\nimport torch\nfeatures = np.load('x.npy')\n"
        "x = torch.tensor(features, dtype=torch.float32)\n"
        "labels = np.load('y.npy').astype(np.int32)\ny = torch.tensor(labels, dtype=torch.long)\n",
    )
    INVALID = (
        Invalid(
            "import numpy as np\nimport torch\nfeatures = np.load('x.npy').astype(np.float32)\n"
            "x = torch.tensor(features)\n",
            instead="import numpy as np\nimport torch\nfeatures = np.load('x.npy').astype(np.float32)\n"
            "x = torch.from_numpy(features)\n",
        ),
        "import numpy as np\nimport torch\nrng = np.random.default_rng(0)\n"
        "labels = rng.integers(0, 10, size=100)\ny = torch.tensor(labels)\n",
        "import numpy\nimport torch\nx = torch.Tensor(numpy.asarray(rows))\n",
        "import numpy as np\nimport torch\nx = torch.tensor(frame.astype(np.float32))\n",
        # the array already has the dtype asked for: the copy buys nothing
        "import numpy as np\nimport torch\nfeatures = np.load('x.npy').astype(np.float32)\n"
        "x = torch.tensor(features, dtype=torch.float32)\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        names = ("torch.tensor", "torch.Tensor", "torch.FloatTensor", "torch.LongTensor")
        for call in ctx.calls(*names):
            if not (call.args and _numpy_array(ctx, call.args[0])):
                continue
            dtype = kwarg(call, "dtype")
            if dtype is not None and _array_dtype(ctx, call.args[0]) != _TORCH_DTYPE.get(
                ctx.qualname(dtype.value) or ""
            ):
                continue  # a conversion: the copy is needed anyway
            yield Report(call)


#: NumPy and torch dtypes by one name (``float32``), for comparing what a copy converts.
_TORCH_DTYPE = {
    f"torch.{name}": canon
    for canon, aliases in {
        "float32": ("float32", "float"),
        "float64": ("float64", "double"),
        "float16": ("float16", "half"),
        "int64": ("int64", "long"),
        "int32": ("int32", "int"),
        "int16": ("int16", "short"),
        "int8": ("int8",),
        "uint8": ("uint8",),
        "bool": ("bool",),
    }.items()
    for name in aliases
}


def _array_dtype(ctx: Context, node: ast.AST, depth: int = 0) -> str | None:
    """The dtype of a NumPy array where the code states it (``.astype(np.float32)``,
    ``np.zeros(n, dtype=np.int64)``), followed through one name; None when unknown."""
    if isinstance(node, ast.Name) and depth < 2:
        values = ctx.assignments.get(node.id, [])
        found = {_array_dtype(ctx, v, depth + 1) for v in values}
        return found.pop() if len(found) == 1 else None
    if not isinstance(node, ast.Call):
        return None
    spec = node.args[0] if method_name(node) == "astype" and node.args else None
    if spec is None and (kw := kwarg(node, "dtype")) is not None:
        spec = kw.value
    if spec is None:
        return None
    q = ctx.qualname(spec) or ""
    if q.startswith("numpy."):
        return q.rsplit(".", 1)[1]
    if isinstance(spec, ast.Constant) and isinstance(spec.value, str):
        return spec.value
    return None


_FACTORIES = {
    "zeros",
    "ones",
    "empty",
    "full",
    "eye",
    "tensor",
    "arange",
    "linspace",
    "logspace",
    "rand",
    "randn",
    "randint",
    "randperm",
    "normal",
}
#: Factories whose values are identical wherever they are made: the fix may move them.
_EXACT = {"zeros", "ones", "empty", "full", "eye", "tensor"}


_DTYPE_NAMES = {
    "float",
    "float16",
    "float32",
    "float64",
    "half",
    "bfloat16",
    "double",
    "int",
    "int8",
    "int16",
    "int32",
    "int64",
    "long",
    "uint8",
    "bool",
    "short",
    "complex64",
    "complex128",
}


def _literal(node: ast.AST) -> bool:
    """Data written in the code: a number, or a list or tuple of literals."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.UnaryOp):
        return _literal(node.operand)
    if isinstance(node, ast.BinOp):
        return _literal(node.left) and _literal(node.right)  # 0.485 * 255
    return isinstance(node, ast.List | ast.Tuple) and all(_literal(e) for e in node.elts)


def _built_here(node: ast.AST) -> bool:
    """Data the code spells out: a literal, or a Python sequence built in place
    (``list(range(n))``, ``[i * 2 for i in ids]``), not a value that arrives from elsewhere."""
    if _literal(node) or isinstance(node, ast.List | ast.Tuple | ast.ListComp | ast.GeneratorExp):
        return True
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id
        in {
            "list",
            "tuple",
            "range",
        }
    )


def device_of(ctx: Context, call: ast.Call) -> tuple[bool, str | None]:
    """Whether ``x.to(...)``/``x.cuda()`` moves ``x`` to a device, and the source of that
    device when the call does nothing else (so the fix can move it into the factory)."""
    if method_name(call) == "cuda":
        return True, ('"cuda"' if not call.args and not call.keywords else None)
    if method_name(call) != "to":
        return False, None
    device_kw = kwarg(call, "device")
    arg = device_kw.value if device_kw is not None else (call.args[0] if call.args else None)
    if arg is None:
        return False, None
    q = ctx.qualname(arg) or ""
    if q.startswith("torch.") and q.removeprefix("torch.") in _DTYPE_NAMES:
        return False, None
    name = last_name(arg)
    device_like = (
        device_kw is not None
        or (
            isinstance(arg, ast.Constant)
            and isinstance(arg.value, str)
            and arg.value.split(":")[0] in {"cuda", "cpu", "mps", "xpu", "meta"}
        )
        or (
            name is not None and ("device" in name.lower() or name in {"dev", "rank", "local_rank"})
        )
        or (isinstance(arg, ast.Call) and ctx.qualname(arg.func) == "torch.device")
    )
    if not device_like:
        return False, None
    only = len(call.args) + len(call.keywords) == 1
    return True, (ctx.segment(arg) if only else None)


def _host_bound(factory: ast.Call) -> bool:
    """Arguments whose meaning `device=` would change: ``requires_grad=True`` (the moved copy
    is not a leaf; made on the device, it is), ``pin_memory=True`` (only host memory is
    pinned), ``out=`` (a tensor of its own device)."""
    return kwarg(factory, "out") is not None or any(
        (kw := kwarg(factory, name)) is not None and not is_const(kw.value, False)
        for name in ("requires_grad", "pin_memory")
    )


class FactoryThenMove(Rule):
    """`torch.randn(...).to(device)` first fills a tensor in host memory, then copies it
    to the device. Factory functions take `device=`: the tensor is made where it is used,
    with no host allocation and no copy. The fix moves `device` into the call for factories
    whose values do not depend on where they are made (`zeros`, `ones`, `full`, `empty`,
    `eye`, `tensor`); random factories draw from the device's generator instead, so those
    are reported without a fix, and so is a factory that also takes `requires_grad=True` (the
    copy is not a leaf: its `.grad` stays empty), `pin_memory=True` (only host memory is
    pinned) or `out=` (a host tensor). `torch.tensor(data).to(device)` is reported only for data the
    code spells out (a literal, `list(range(n))`): data that arrives from elsewhere (a NumPy
    array, an environment's reward) has to be copied to the device whatever the call looks
    like."""

    code = "PTT015"
    name = "factory-then-move"
    severity = "warning"
    message = "tensor created on the CPU and then moved: pass `device=` to the factory"
    message_zh = "张量先在 CPU 上创建、再搬到设备上：请把 `device=` 直接传给工厂函数"
    why_zh = (
        "`torch.randn(...).to(device)` 先在内存里填好一个张量，再把它拷贝到设备上。工厂函数都接受"
        " `device=`：张量直接在使用它的设备上创建，不占用主机内存，也没有拷贝。对于数值与创建位置无关的"
        "工厂函数（`zeros`、`ones`、`full`、`empty`、`eye`、`tensor`），修复会把 `device` 移进调用；"
        "随机工厂函数改到设备上创建后会改用设备的随机数生成器，所以只报告、不修复；同时传了"
        " `requires_grad=True`（拷贝出来的张量不是叶子节点，它的 `.grad` 始终为空）、`pin_memory=True`"
        "（只有主机内存才能锁页）或 `out=`（一个主机上的张量）的工厂函数也只报告、不修复。"
        "`torch.tensor(data).to(device)` 只在数据由代码本身写出时报告（字面量、`list(range(n))`）：从别处来的"
        "数据（NumPy 数组、环境返回的奖励）无论怎么写，都得拷贝到设备上。"
    )
    fix_note = "Only for factories whose values do not depend on where they are made."
    fix_note_zh = "只修复数值与创建位置无关的工厂函数。"
    tip = "create-tensors-on-device"
    fixable = True
    fix_safety = "safe"
    VALID = (
        "import torch\nx = torch.randn(8, 4, device=device)\nm = Net().to(device)\n",
        "import torch\nx = torch.zeros(3).to(torch.float16)\ny = x.to(device)\n",
        # host data has to travel anyway: device= would not save the copy
        "import torch\nfor step in range(num_steps):\n    obs, reward, done, info = envs.step(action)\n"
        "    rewards[step] = torch.tensor(reward).to(device).view(-1)\n",
    )
    INVALID = (
        Invalid(
            "import torch\nmask = torch.zeros(8, dtype=torch.bool).to(device)\n",
            "import torch\nmask = torch.zeros(8, dtype=torch.bool, device=device)\n",
        ),
        Invalid(
            "import torch\nidx = torch.tensor([0, 1, 2]).cuda()\n",
            'import torch\nidx = torch.tensor([0, 1, 2], device="cuda")\n',
        ),
        "import torch\nnoise = torch.rand(4, 4).to(device)\n",
        "import torch\nx = torch.randn(4, 4).to(device, non_blocking=True)\n",
        # the copy of a leaf that requires grad is no leaf: device= would make it one
        "import torch\nw = torch.zeros(3, requires_grad=True).to(device)\n",
        "import torch\nbuf = torch.zeros(3, pin_memory=True).to(device)\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        for call in ctx.methods("to", "cuda"):
            inner = receiver(call)
            if not isinstance(inner, ast.Call):
                continue
            moves, device = device_of(ctx, call)
            if not moves:
                continue
            q = ctx.qualname(inner.func) or ""
            factory = q.removeprefix("torch.")
            if not q.startswith("torch.") or factory not in _FACTORIES:
                continue
            if factory == "tensor" and not (inner.args and _built_here(inner.args[0])):
                continue  # host data (an array, a reward): the copy is unavoidable
            edits: list[Edit] = []
            if (
                device is not None
                and factory in _EXACT
                and kwarg(inner, "device") is None
                and not has_star_kwargs(inner)
                and not _host_bound(inner)
                and ctx.rewritable(inner.func)
            ):
                edits = [
                    add_keyword(ctx.lines, inner, f"device={device}"),
                    remove_method_call(ctx.lines, call),
                ]
            yield Report(call, edits)
