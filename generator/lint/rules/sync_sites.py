"""Where a training step (or an evaluation batch) waits for the GPU, found once per file for
the sync rules (`.sync`, PTT036 of `.loop`). No rules here.

Each *site* is a node that makes the host wait (``.item()``, a copy to the host, a Python
number or condition made from a device tensor, formatting one, an explicit synchronisation,
a helper of this file that reads ``.item()``), the rule it belongs to and the statement
that holds it. A statement is reported once, by the most specific rule (`PRIORITY`: the
``.item()`` of ``x.cpu().item()`` is PTT020's, not PTT021's); a block of consecutive
statements that each wait is reported once, at its first statement (after the first wait
the GPU is idle, so the others cost nothing more). Loops whose model lives on the host (a
CPU baseline in a file that trains elsewhere on CUDA) have no sites.
"""

from __future__ import annotations

import ast
import weakref
from collections.abc import Iterator
from dataclasses import dataclass, field

from generator.lint.analysis import Context
from generator.lint.rules.devices import (
    device_names_of,
    is_eval_loop,
    on_host,
    targets,
    tensor_value,
)
from generator.lint.rules.waits import classify, helper_item, reads_item, scalar, statement_of
from generator.lint.syntax import (
    LOOPS,
    SCOPES,
    iter_region,
    last_name,
    method_name,
    receiver,
    root_name,
)
from generator.lint.training import Loop

#: When one statement holds several waits, the rule that reports it.
PRIORITY = ("PTT052", "PTT024", "PTT020", "PTT022", "PTT021", "PTT023", "PTT036")


@dataclass
class Site:
    """One wait for the GPU: ``rule`` reports it at ``node``; ``stmt`` holds it."""

    rule: str
    node: ast.AST
    stmt: ast.stmt
    variant: str | None = None
    args: dict[str, str] = field(default_factory=dict)


_CACHE: weakref.WeakKeyDictionary[Context, dict[str, list[Site]]] = weakref.WeakKeyDictionary()


def sites(ctx: Context, rule: str) -> list[Site]:
    """The sites ``rule`` reports in ``ctx``, in source order."""
    found = _CACHE.get(ctx)
    if found is None:
        found = _CACHE[ctx] = _all_sites(ctx)
    return found.get(rule, [])


# --- the sites of a file ---------------------------------------------------------------------


def _nested_loop(ctx: Context, node: ast.AST, outer: Loop) -> bool:
    """Whether ``node`` sits in a loop nested in ``outer`` (a per-sample loop of a step)."""
    for anc in ctx.ancestors(node):
        if anc is outer or isinstance(anc, SCOPES):
            return False
        if isinstance(anc, LOOPS):
            return True
    return False


def _branch(ctx: Context, node: ast.AST, if_node: ast.If) -> str | None:
    """``"body"`` or ``"orelse"``: the branch of ``if_node`` that holds ``node``."""
    child: ast.AST = node
    for anc in ctx.ancestors(node):
        if anc is if_node:
            if child in if_node.body:
                return "body"
            return "orelse" if child in if_node.orelse else None
        child = anc
    return None


def _loop_sites(ctx: Context, loop: Loop) -> Iterator[Site]:
    names = device_names_of(ctx, loop)
    found: dict[ast.AST, tuple[bool, str, str | None, dict[str, str]]] = {}
    ifs: list[ast.If] = []
    for node, every in ctx.flow.every_step(
        loop,
        set(names),
        skip=lambda s: s is not loop and isinstance(s, LOOPS) and is_eval_loop(ctx, s),
    ):
        if node in found:
            if every:
                found[node] = (True, *found[node][1:])
            continue
        if isinstance(node, ast.If) and every and node.orelse:
            ifs.append(node)
        kind = classify(ctx, node, names)
        args: dict[str, str] = {}
        if kind is None and isinstance(node, ast.Call):
            helper = ctx.loops.helper_of(node)
            item = helper_item(ctx, helper) if helper is not None else None
            if helper is not None and item is not None:
                kind = ("PTT020", "helper")
                args = {"helper": helper.name, "line": str(item.lineno)}
        if kind is not None:
            found[node] = (every, kind[0], kind[1], args)
    # an if/else whose two branches both wait runs one of those waits on every step
    for if_node in ifs:
        branches: dict[str, list[ast.AST]] = {"body": [], "orelse": []}
        for node, (every, *_) in found.items():
            if not every and (which := _branch(ctx, node, if_node)) is not None:
                branches[which].append(node)
        if branches["body"] and branches["orelse"]:
            for node in branches["body"] + branches["orelse"]:
                found[node] = (True, *found[node][1:])
    sites: list[Site] = []
    for node, (every, rule, variant, args) in found.items():
        stmt = statement_of(ctx, node)
        if not every or stmt is None:
            continue
        if rule == "PTT022" and _nested_loop(ctx, node, loop):
            variant = "sample"
        sites.append(Site(rule, node, stmt, variant, args))
    synced = [getattr(s.node, "lineno", 0) for s in sites if s.rule == "PTT052"]
    for site in sites:
        line = getattr(site.node, "lineno", 0)
        if site.rule != "PTT052" and any(s < line for s in synced):
            continue  # the step already waited for the GPU: these reads are free
        yield site


def _step_function_sites(ctx: Context) -> Iterator[Site]:
    """``.item()`` in a step function that nothing in this file calls by name (a closure
    handed to a trainer, ``perform_train_step_fn``): it runs once per step."""
    called = {last_name(c.func) for c in ctx.by_type[ast.Call] if isinstance(c, ast.Call)}
    for func in ctx.functions.values():
        if func.name in called or "step" not in func.name.lower():
            continue
        if not ctx.loops.helper_trains(func):
            continue
        for node in iter_region(func.body):
            if reads_item(ctx, node) and (stmt := statement_of(ctx, node)) is not None:
                yield Site("PTT020", node, stmt)


def _numeric_start(ctx: Context, scope: list[ast.stmt], name: str) -> bool:
    """Whether ``name`` starts as a number in ``scope`` (``total = 0``, ``a, b = 0, 0.0``)."""
    for node in iter_region(scope, conditional=True):
        if not isinstance(node, ast.Assign):
            continue
        for target in node.targets:
            if isinstance(target, ast.Name) and target.id == name:
                return isinstance(node.value, ast.Constant) and isinstance(
                    node.value.value, int | float
                )
            if isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple):
                for t, v in zip(target.elts, node.value.elts, strict=False):
                    if isinstance(t, ast.Name) and t.id == name:
                        return isinstance(v, ast.Constant) and isinstance(v.value, int | float)
    return False


def _terms(node: ast.AST) -> list[ast.AST]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub | ast.Mult | ast.Div):
        return [*_terms(node.left), *_terms(node.right)]
    return [node]


def _copied(ctx: Context, term: ast.AST, names: frozenset[str]) -> bool:
    """A tensor copied to the host: ``x.cpu().numpy()``, ``x.tolist()``, ``float(x)``."""
    if not isinstance(term, ast.Call):
        return False
    if method_name(term) in {"numpy", "tolist", "cpu"}:
        inner = receiver(term)
        if isinstance(inner, ast.Call) and method_name(inner) == "cpu":
            return True  # `x.cpu().numpy()`: a tensor copied, whatever x is called
        return root_name(inner) in names or tensor_value(ctx, inner, names)
    return scalar(ctx, term, names)


def _number_read(ctx: Context, value: ast.AST, names: frozenset[str]) -> bool:
    """A number read from the GPU: ``x.item()``, ``float(x)``, arithmetic on one, or one in
    a NumPy array (``np.array([loss.item() * n])``)."""
    if isinstance(value, ast.Call) and (ctx.qualname(value.func) or "").startswith("numpy."):
        elts = [
            e for a in value.args for e in (a.elts if isinstance(a, ast.List | ast.Tuple) else [a])
        ]
        return any(_number_read(ctx, e, names) for e in elts)
    return any(
        reads_item(ctx, t) or (isinstance(t, ast.Call) and scalar(ctx, t, names))
        for t in _terms(value)
    )


def _accumulated(node: ast.AST) -> tuple[list[ast.AST], str | None] | None:
    """The values a statement accumulates and the accumulator: ``x += v``, ``x = x + v``,
    ``meter.update(v, n)``, ``values.append(v)``, ``d[k] = v``."""
    if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add):
        return [node.value], root_name(node.target)
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        target = node.targets[0]
        if isinstance(target, ast.Subscript):
            return [node.value], None
        if (
            isinstance(target, ast.Name)
            and isinstance(node.value, ast.BinOp)
            and isinstance(node.value.op, ast.Add)
            and any(isinstance(t, ast.Name) and t.id == target.id for t in _terms(node.value))
        ):
            return [node.value], target.id
    if isinstance(node, ast.Call) and method_name(node) in {"update", "append"}:
        values: list[ast.AST] = [
            *node.args[:1],
            *(k.value for k in node.keywords if k.arg not in {"n", None}),
        ]
        return (values, None) if values else None
    return None


def _eval_sites(ctx: Context, loop: Loop) -> Iterator[Site]:
    """Metrics summed on the host on every batch of an evaluation loop (PTT036), and Python
    numbers made from tensor elements per sample (PTT022)."""
    names = device_names_of(ctx, loop)
    scope = ctx.scope_body(loop)
    region = [n for n, every in ctx.flow.every_step(loop, set(names)) if every]
    synced = [
        n.lineno
        for n in region
        if isinstance(n, ast.Call) and classify(ctx, n, names) == ("PTT052", None)
    ]
    read: set[str] = set()  # names bound to a number read from the GPU in this iteration
    for node in iter_region(loop.body, conditional=True):
        if isinstance(node, ast.Assign) and _number_read(ctx, node.value, names):
            read |= targets(node)
    for node in region:
        if any(s < getattr(node, "lineno", 0) for s in synced):
            continue  # an explicit synchronize already waited in this batch
        if (
            isinstance(node, ast.Call)
            and scalar(ctx, node, names)
            and _nested_loop(ctx, node, loop)
        ):
            if (stmt := statement_of(ctx, node)) is not None:
                yield Site("PTT022", node, stmt, "sample")
            continue
        acc = _accumulated(node)
        if acc is None:
            continue
        values, accumulator = acc
        stmt = statement_of(ctx, node)
        if stmt is None:
            continue
        terms = [t for v in values for t in _terms(v)]
        direct = [t for t in terms if reads_item(ctx, t)]
        numeric = accumulator is not None and _numeric_start(ctx, scope, accumulator)
        if not direct and numeric:
            direct = [t for t in terms if _copied(ctx, t, names)]
        if direct:
            yield Site("PTT036", direct[0], stmt)
        elif not isinstance(node, ast.Assign) or accumulator is not None:
            if any(isinstance(t, ast.Name) and t.id in read for v in values for t in _terms(v)):
                yield Site("PTT036", stmt, stmt)  # `v = x.item()`, then `total += v`


Path = list[tuple[list[ast.stmt], int]]


def _path(ctx: Context, stmt: ast.stmt) -> Path:
    """The blocks (statement lists) that hold ``stmt``, outermost first, up to the loop or
    function around it, with its index (or its container's) in each."""
    out: Path = []
    node: ast.AST = stmt
    while (parent := ctx.parent(node)) is not None:
        block: list[ast.stmt] | None = next(
            (
                b
                for name in ("body", "orelse", "finalbody")
                if isinstance(b := getattr(parent, name, None), list) and node in b
            ),
            None,
        )
        if block is None or not isinstance(node, ast.stmt):
            break
        out.append((block, block.index(node)))
        if isinstance(parent, (*LOOPS, *SCOPES, ast.ExceptHandler)):
            break
        node = parent
    return list(reversed(out))


def _trivial(stmts: list[ast.stmt]) -> bool:
    """Statements that launch no GPU work: no call at all (``n += 1``, ``x = a / b``)."""
    return not any(isinstance(n, ast.Call) for s in stmts for n in ast.walk(s))


def _quiet_between(first: Path, second: Path) -> bool:
    """Whether nothing but trivial statements runs between two sites, given their paths."""
    k = 0
    while (
        k < len(first)
        and k < len(second)
        and first[k][0] is second[k][0]
        and first[k][1] == second[k][1]
    ):
        k += 1
    if k == len(first) and k <= len(second):  # the second sits inside the first's statement
        return all(_trivial(block[:i]) for block, i in second[k:])
    if k == len(first) or k == len(second) or first[k][0] is not second[k][0]:
        return False  # different branches, or different loops
    block, a = first[k]
    b = second[k][1]
    if a > b or not _trivial(block[a + 1 : b]):
        return False
    after_first = all(_trivial(blk[i + 1 :]) for blk, i in first[k + 1 :])
    before_second = all(_trivial(blk[:i]) for blk, i in second[k + 1 :])
    headers = [blk[i] for blk, i in second[k : len(second) - 1]]
    tests_quiet = all(
        not isinstance(h, ast.If | ast.While) or _trivial([ast.Expr(h.test)]) for h in headers
    )
    return after_first and before_second and tests_quiet


def _fold(ctx: Context, chosen: list[Site]) -> list[Site]:
    """Keep the first site of each run of waits with nothing but trivial statements between
    them (a logging block): after the first wait the GPU is idle, the others are free."""
    ordered = sorted(chosen, key=lambda s: (s.stmt.lineno, s.stmt.col_offset))
    out: list[Site] = []
    previous: Path | None = None
    for site in ordered:
        path = _path(ctx, site.stmt)
        if previous is not None and _quiet_between(previous, path):
            previous = path
            continue
        out.append(site)
        previous = path
    return out


#: Other frameworks: a file that imports one of these and not torch trains with their tensors.
_OTHER_FRAMEWORKS = {"mxnet", "tensorflow", "jax", "paddle", "oneflow", "mindspore"}


def _other_framework(ctx: Context) -> bool:
    tops = {q.split(".")[0] for q in ctx.imports.values()}
    return bool(tops & _OTHER_FRAMEWORKS) and "torch" not in tops


def _all_sites(ctx: Context) -> dict[str, list[Site]]:
    if _other_framework(ctx):
        return {}  # MXNet or JAX arrays: their reads are not torch's to judge
    per_stmt: dict[ast.stmt, list[Site]] = {}

    def add(site: Site) -> None:
        per_stmt.setdefault(site.stmt, []).append(site)

    for loop in ctx.loops.training_loops:
        if not on_host(ctx, loop):
            for site in _loop_sites(ctx, loop):
                add(site)
    for site in _step_function_sites(ctx):
        add(site)
    training = set(ctx.loops.training_loops)
    for kind in (ast.For, ast.While):
        for node in ctx.by_type[kind]:
            assert isinstance(node, ast.For | ast.While)
            if node not in training and is_eval_loop(ctx, node):
                for site in _eval_sites(ctx, node):
                    add(site)
    rank = {rule: i for i, rule in enumerate(PRIORITY)}
    chosen = [
        min(
            found,
            key=lambda s: (
                rank[s.rule],
                getattr(s.node, "lineno", 0),
                getattr(s.node, "col_offset", 0),
            ),
        )
        for found in per_stmt.values()
    ]
    out: dict[str, list[Site]] = {}
    for site in sorted(_fold(ctx, chosen), key=lambda s: (s.stmt.lineno, s.stmt.col_offset)):
        out.setdefault(site.rule, []).append(site)
    return out
