"""The shape of the code, read from its imports (a small walk over the AST of code/treckit): no import cycles, no
import from a lower layer to a higher one, function-level imports only of the heavy dependencies that
treckit.dependencies lists, no private name imported from another module, and a root of at most 8 modules.

docs/architecture.md draws the same layers; LAYERS below is their one declaration."""
from __future__ import annotations

import ast
import functools
import re
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import pytest

CODE = Path(__file__).resolve().parents[1] / "code"

# Lowest first: a module may import its own layer and the layers below it, never one above.  A module belongs to
# the layer of the longest prefix that names it ("treckit" names the package's __init__ only: its version, and the
# public API's names, which it loads from treckit.api on first use, unseen by an import statement).
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("core", ("treckit", "treckit.console", "treckit.thresholds", "treckit.fast", "treckit.ids",
              "treckit.dependencies")),
    ("model", ("treckit.model",)),
    ("ranking", ("treckit.ranking",)),
    ("inputs", ("treckit.inputs",)),
    ("measures", ("treckit.measures",)),
    ("engines", ("treckit.engines",)),
    ("output", ("treckit.output", "treckit.qrels")),
    ("analyses", ("treckit.compare", "treckit.testsets", "treckit.retrieval", "treckit.report")),
    ("public", ("treckit.api", "treckit.stages")),
    ("front", ("treckit.cli", "treckit.service", "treckit.__main__")),
)
ROOT_MODULES_AT_MOST = 8


@dataclass(frozen=True)
class Import:
    importer: str          # the module holding the import statement
    target: str            # the module imported: a treckit module, or a third-party / standard module's full name
    name: str | None       # the name taken with ``from target import name`` (None for ``import target``)
    in_function: bool
    line: int

    @property
    def internal(self) -> bool:
        return self.target == "treckit" or self.target.startswith("treckit.")


def module_files(code: Path = CODE) -> dict[str, Path]:
    out = {}
    for path in sorted((code / "treckit").rglob("*.py")):
        parts = list(path.relative_to(code).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def from_module(node: ast.ImportFrom, package: str) -> str:
    """The module a ``from ... import`` statement in ``package`` imports from, relative ones resolved."""
    if not node.level:
        return node.module or ""
    parts = package.split(".")
    return ".".join(parts[:len(parts) - node.level + 1] + ([node.module] if node.module else []))


def imports_of(module: str, path: Path, modules: dict[str, Path]) -> list[Import]:
    """Every import statement of ``module`` (those under ``if TYPE_CHECKING:`` are never executed: left out), each
    ``from package import submodule`` as an import of the submodule."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[Import] = []

    def resolve(base: str, name: str | None) -> str:
        if not (base == "treckit" or base.startswith("treckit.")):
            return base
        target = f"{base}.{name}" if name and f"{base}.{name}" in modules else base
        while target not in modules:
            target = target.rpartition(".")[0]
        return target

    def walk(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                continue
            inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.Import):
                found.extend(Import(module, resolve(a.name, None), None, in_function, child.lineno) for a in child.names)
            elif isinstance(child, ast.ImportFrom):
                base = from_module(child, package)
                found.extend(Import(module, resolve(base, a.name), a.name, in_function, child.lineno)
                             for a in child.names)
            walk(child, inner)

    walk(ast.parse(path.read_text(encoding="utf-8")), False)
    return found


def all_imports(code: Path = CODE) -> list[Import]:
    modules = module_files(code)
    return [imp for name, path in modules.items() for imp in imports_of(name, path, modules)]


def layer_of(module: str) -> int:
    best, best_len = None, -1
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            covers = module == prefix or (prefix != "treckit" and module.startswith(prefix + "."))
            if covers and len(prefix) > best_len:
                best, best_len = index, len(prefix)
    if best is None:
        raise AssertionError(f"{module} is in no layer: add it to LAYERS (and to docs/architecture.md)")
    return best


def import_cycles(imports: list[Import]) -> list[list[str]]:
    """The strongly connected groups of two modules or more (Tarjan), imports inside functions included."""
    graph: dict[str, set[str]] = defaultdict(set)
    for imp in imports:
        if imp.internal and imp.target != imp.importer:
            graph[imp.importer].add(imp.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while (w := stack.pop()) != v:
                on_stack.discard(w)
                group.append(w)
            on_stack.discard(v)
            if group:
                groups.append(sorted(group + [v]))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        for v in sorted(graph):
            if v not in index:
                connect(v)
    finally:
        sys.setrecursionlimit(limit)
    return groups


def upward_imports(imports: list[Import]) -> list[str]:
    return [f"{i.importer}:{i.line} ({LAYERS[layer_of(i.importer)][0]}) imports {i.target} "
            f"({LAYERS[layer_of(i.target)][0]})"
            for i in imports if i.internal and layer_of(i.target) > layer_of(i.importer)]


def private_imports(imports: list[Import]) -> list[str]:
    return [f"{i.importer}:{i.line} imports {i.name} from {i.target}" for i in imports
            if i.internal and i.target != i.importer and i.name and i.name.startswith("_")
            and not i.name.startswith("__")]


def _bound_modules(tree: ast.AST, package: str, modules: dict[str, Path]) -> dict[str, str]:
    """{name: treckit module} of the names a file's imports bind to a treckit module (``import treckit.x as m``,
    ``from treckit.x import module``, ``from . import module``; a bare ``import treckit.x`` binds ``treckit``)."""
    bound: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == "treckit" or a.name.startswith("treckit."):
                    bound[a.asname or "treckit"] = a.name if a.asname else "treckit"
        elif isinstance(node, ast.ImportFrom):
            base = from_module(node, package)
            bound.update({a.asname or a.name: f"{base}.{a.name}" for a in node.names
                          if f"{base}.{a.name}" in modules})
    return bound


def private_reaches(path: Path, module: str | None, modules: dict[str, Path]) -> list[str]:
    """Where a file reads or sets another treckit module's private name: ``module._name``, or ``module`` and
    ``"_name"`` handed to setattr, getattr or monkeypatch.setattr (``module``: a name its imports bind to a treckit
    module, or a dotted path through one); and, outside the library (whose imports another test walks), where
    it imports one (``from treckit.x import _name``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = "" if module is None else module if path.name == "__init__.py" else module.rpartition(".")[0]
    bound = _bound_modules(tree, package, modules)

    def resolve(node: ast.AST) -> str | None:
        if isinstance(node, ast.Name):
            return bound.get(node.id)
        if isinstance(node, ast.Attribute):
            parent = resolve(node.value)
            return f"{parent}.{node.attr}" if parent and f"{parent}.{node.attr}" in modules else None
        return None

    def private(name: str) -> bool:
        return name.startswith("_") and not name.startswith("__")

    found = []
    for node in ast.walk(tree):
        target = name = None
        if module is None and isinstance(node, ast.ImportFrom) and not node.level:       # a script's or a test's
            taken = [a.name for a in node.names if private(a.name)]
            if (node.module or "").split(".")[0] == "treckit" and taken:
                found.append(f"{path.name}:{node.lineno} imports {', '.join(taken)} from {node.module}")
        if isinstance(node, ast.Attribute) and private(node.attr):
            target, name = resolve(node.value), node.attr
        elif (isinstance(node, ast.Call) and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)
              and isinstance(node.args[1].value, str) and private(node.args[1].value)):
            target, name = resolve(node.args[0]), node.args[1].value
        if target is not None and target != module:
            found.append(f"{path.name}:{node.lineno} reaches {target}.{name}")
    return found


def root_modules(code: Path = CODE) -> list[str]:
    return sorted(p.stem for p in (code / "treckit").glob("*.py") if p.stem not in ("__init__", "__main__"))


IMPORTS = all_imports()


# ---------------------------------------------------------------- the walk sees what it must
def test_the_walk_sees_imports_of_every_kind(tmp_path):
    """A made-up package with one import of each kind: the walk resolves them, and finds its cycle, its upward
    import, its private import and its function-level import."""
    pkg = tmp_path / "treckit"
    (pkg / "inputs").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "model.py").write_text("from .inputs import sources\n")                      # model -> inputs: upward
    (pkg / "inputs" / "__init__.py").write_text("")
    (pkg / "inputs" / "sources.py").write_text(
        "from __future__ import annotations\nfrom typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from ..model import Never\n"
        "def f():\n    import pandas\n    from ..model import _private\n")            # back to model: a cycle
    found = all_imports(tmp_path)
    internal = {(i.importer, i.target, i.name, i.in_function) for i in found if i.internal}
    assert internal == {("treckit.model", "treckit.inputs.sources", "sources", False),
                        ("treckit.inputs.sources", "treckit.model", "_private", True)}
    assert ("treckit.inputs.sources", "pandas", None, True) in {(i.importer, i.target, i.name, i.in_function)
                                                                for i in found}
    assert import_cycles(found) == [["treckit.inputs.sources", "treckit.model"]]
    assert upward_imports(found) == ["treckit.model:1 (model) imports treckit.inputs.sources (inputs)"]
    assert private_imports(found) == ["treckit.inputs.sources:7 imports _private from treckit.model"]
    assert root_modules(tmp_path) == ["model"]


def test_every_module_has_a_layer():
    modules = module_files()
    assert len(modules) > 50 and len(IMPORTS) > 300
    for module in modules:
        layer_of(module)


# ---------------------------------------------------------------- the rules
def test_no_import_cycles():
    cycles = import_cycles(IMPORTS)
    assert not cycles, "import cycles (imports inside functions included):\n" + "\n".join(map(str, cycles))


def test_no_upward_imports():
    upward = upward_imports(IMPORTS)
    assert not upward, "imports from a lower layer to a higher one:\n" + "\n".join(upward)


def test_lazy_third_party_imports_are_the_listed_heavy_dependencies():
    """An import inside a function (for start-up speed, or of an optional extra) is of a dependency that
    treckit.dependencies lists, with why it is loaded late."""
    from treckit.dependencies import LAZY
    stdlib = set(sys.stdlib_module_names) | {"__future__"}
    unlisted = sorted({f"{i.importer}:{i.line} imports {i.target}" for i in IMPORTS
                       if i.in_function and not i.internal and i.target.split(".")[0] not in stdlib
                       and i.target.split(".")[0] not in LAZY})
    assert not unlisted, "list these in treckit.dependencies.LAZY, or import them at the top:\n" + "\n".join(unlisted)
    used = {i.target.split(".")[0] for i in IMPORTS if not i.internal}
    assert not set(LAZY) - used, f"treckit.dependencies lists modules no code imports: {set(LAZY) - used}"


def test_numpy_and_pyarrow_are_deferred_not_imported_at_the_top_of_a_module():
    """numpy and pyarrow are bound at a module's top with treckit.dependencies.deferred (their code runs on first
    use), never imported there: every command's module imports the library, and its --help runs neither."""
    from treckit.dependencies import DEFERRED
    eager = sorted(f"{i.importer}:{i.line} imports {i.target}" for i in IMPORTS
                   if not i.in_function and i.target.split(".")[0] in DEFERRED)
    assert not eager, "bind these with treckit.dependencies.deferred (np = deferred(\"numpy\")):\n" + "\n".join(eager)


def test_no_function_level_imports_of_treckit_modules():
    """Every import of a treckit module is at the top of its module; the CLI loads a command's module only when
    the command runs through one table (treckit.cli.main.COMMANDS), not through imports inside functions."""
    inner = [f"{i.importer}:{i.line} imports {i.target}" for i in IMPORTS if i.in_function and i.internal]
    assert not inner, f"{len(inner)} imports of treckit modules inside functions:\n" + "\n".join(inner)


def test_no_private_names_reached_across_modules():
    """No attribute access to another module's private names, in the library, the staged scripts, the tests and the
    benchmarks: what another module needs is public (a test's seam included)."""
    modules = module_files()
    files = [(path, name) for name, path in modules.items()]
    files += [(path, None) for folder in (CODE / "evaluation", CODE.parent / "tests", CODE.parent / "bench")
              for path in sorted(folder.rglob("*.py"))]
    reaching = [r for path, name in files for r in private_reaches(path, name, modules)]
    assert not reaching, "private names of other modules reached (make them public, or move the caller):\n" \
        + "\n".join(reaching)


def test_the_private_reach_walk_sees_every_kind(tmp_path):
    """A made-up package: an attribute of a module bound by each kind of import, a dotted path, and a name handed to
    monkeypatch.setattr; its own private names and a non-module's are not reaches."""
    pkg = tmp_path / "treckit"
    (pkg / "inputs").mkdir(parents=True)
    for f in ("__init__.py", "inputs/__init__.py", "inputs/sources.py"):
        (pkg / f).write_text("")
    (pkg / "model.py").write_text(
        "from .inputs import sources\nimport treckit.inputs.sources as tio\nimport treckit\n_own = 1\nclass C:\n"
        "    _x = 1\nsources._cache\ntio._cache.clear()\ntreckit.inputs.sources._cache\n_own\nC._x\n"
        "def f(monkeypatch):\n    monkeypatch.setattr(sources, '_cache', {})\n    monkeypatch.setattr(C, '_x', 2)\n")
    modules = module_files(tmp_path)
    assert sorted(private_reaches(pkg / "model.py", "treckit.model", modules)) == sorted(
        f"model.py:{n} reaches treckit.inputs.sources._cache" for n in (7, 8, 9, 13))


def _path_changes(path: Path) -> list[str]:
    """Where a file changes sys.path (``sys.path.insert``, ``.append``, ``sys.path[...] =``), with the text of it."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        call = isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and ast.unparse(node.func.value) == "sys.path" and node.func.attr in ("insert", "append", "extend")
        assign = isinstance(node, ast.Assign) and any("sys.path" in ast.unparse(t) for t in node.targets)
        if call or assign:
            found.append(f"{path.relative_to(CODE.parent)}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_scripts_and_benchmarks_import_the_installed_package():
    """The staged scripts and the benchmarks change no sys.path (a benchmark reaches its fellows' helpers as the
    bench package's, run with python -m bench.NAME); no test program puts code/ on it; the library never reads its
    caller's frame."""
    scripts = [p for folder in (CODE / "evaluation", CODE.parent / "bench") for p in sorted(folder.rglob("*.py"))]
    assert [c for p in scripts for c in _path_changes(p)] == []
    tests = sorted((CODE.parent / "tests").rglob("*.py"))
    assert [c for p in tests for c in _path_changes(p) if "code" in c.partition(": ")[2]] == []
    frames = [f"{p.relative_to(CODE)}" for p in (CODE / "treckit").rglob("*.py") if "_getframe" in p.read_text()]
    assert frames == []


# The entry points of treckit's processes: the only modules that tune a process (console/process.py's tuning), each
# with which process it starts.
ENTRY_POINTS = {
    "treckit.cli.main": "the CLI's main",
    "treckit.stages": "run_script, the staged scripts' main",
    "treckit.service.workers": "a service worker's start-up and request loop",
    "treckit.engines.dask": "the start-up of the workers of a cluster treckit starts",
}
TUNING = {"prepare_process", "native_library_defaults", "keep_freed_memory", "defer_pandas",
          "defer_pandas_when_pyarrow_loads", "give_back_freed_memory", "give_memory_back_when_freed"}


def test_processes_are_tuned_only_at_their_entry_points():
    """The allocator's settings, the import blocker and giving memory back are console/process.py's, used by the
    entry points only; the library says where it let go of memory (memory_freed) and leaves the rest to them."""
    tuned = sorted(f"{i.importer}:{i.line} imports {i.name}" for i in IMPORTS
                   if i.target == "treckit.console.process" and i.name in TUNING and i.importer not in ENTRY_POINTS)
    assert not tuned, "process tuning outside the entry points:\n" + "\n".join(tuned)
    words = ("ctypes", "mallopt", "malloc_trim", "release_unused", "meta_path")
    elsewhere = sorted(f"{name}: {word}" for name, path in module_files().items() if name != "treckit.console.process"
                       for word in words if word in path.read_text(encoding="utf-8"))
    assert not elsewhere, elsewhere


def test_the_library_never_puts_a_module_in_sys_modules():
    """Lazy imports are treckit's own stand-ins (treckit.dependencies.deferred), never registered as another
    library's module."""
    found = []
    for name, path in module_files().items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets = node.targets if isinstance(node, ast.Assign) else []
            calls = [node] if isinstance(node, ast.Call) else []
            if any(ast.unparse(t).startswith("sys.modules[") for t in targets) or any(
                    ast.unparse(c.func) in ("sys.modules.setdefault", "sys.modules.update") for c in calls):
                found.append(f"{name}:{node.lineno}")
    assert not found, found


# a private part of another library the library may use, each wrapped in one function of treckit.fast with a public
# fallback the differential fuzz also runs, and the benchmark figure that earned it (>= 2x, issue #32): none today
PRIVATE_THIRD_PARTY: dict[str, str] = {}


def _private(dotted: str) -> bool:
    return any(p.startswith("_") and not p.startswith("__") for p in dotted.split("."))


def third_party_private_uses(files: dict[str, Path], imports: list[Import]) -> list[str]:
    """Where the library imports a private module or name of a library that is not Python's own (``pyarrow._compute``,
    ``from numpy import _core``), or reads a private attribute of a name bound to one (``pa._x``, ``np._core``;
    a name bound with deferred("numpy") included)."""
    found = [f"{i.importer}:{i.line} imports {i.target}{'.' + i.name if i.name else ''}" for i in imports
             if not i.internal and i.target.split(".")[0] not in sys.stdlib_module_names
             and (_private(i.target) or _private(i.name or ""))]
    for module, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        bound = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                bound.update({a.asname or a.name.split(".")[0]: a.name for a in node.names})
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                bound.update({a.asname or a.name: f"{node.module}.{a.name}" for a in node.names})
            elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) \
                    and ast.unparse(node.value.func) == "deferred" and node.value.args \
                    and isinstance(node.value.args[0], ast.Constant):
                bound.update({t.id: node.value.args[0].value for t in node.targets if isinstance(t, ast.Name)})
        outside = {k: v for k, v in bound.items() if not v.startswith("treckit")
                   and v.split(".")[0] not in sys.stdlib_module_names and v.split(".")[0] != "__future__"}
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in outside \
                    and _private(node.attr):
                found.append(f"{module}:{node.lineno} reads {outside[node.value.id]}.{node.attr}")
    return sorted(f for f in found if not any(f.endswith(f" {name}") for name in PRIVATE_THIRD_PARTY))


def test_other_libraries_through_their_public_api_only():
    """No private module, name or attribute of numpy, pyarrow or any other library (Python's own aside): a private
    call must earn a >= 2x benchmark figure, and then sits in treckit.fast behind one function (PRIVATE_THIRD_PARTY)."""
    found = third_party_private_uses(module_files(), IMPORTS)
    assert not found, "use the library's public API:\n" + "\n".join(found)


def test_the_third_party_walk_sees_every_kind(tmp_path):
    pkg = tmp_path / "treckit"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "m.py").write_text("import pyarrow as pa\nimport pyarrow._compute\nfrom numpy import _core\n"
                              "np = deferred('numpy')\n\n\ndef f():\n    import pyarrow.compute as pc\n"
                              "    return pa._x, np._y, pc.call_function, pc._z, sys._getframe\n")
    files = module_files(tmp_path)
    imports = [i for name, path in files.items() for i in imports_of(name, path, files)]
    found = third_party_private_uses(files, imports)
    assert found == ["treckit.m:2 imports pyarrow._compute", "treckit.m:3 imports numpy._core",
                     "treckit.m:9 reads numpy._y", "treckit.m:9 reads pyarrow._x", "treckit.m:9 reads pyarrow.compute._z"]


def test_no_private_names_imported_across_modules():
    private = private_imports(IMPORTS)
    assert not private, "private names imported from another module (make them public, or move the caller):\n" \
        + "\n".join(private)


def test_the_root_holds_few_modules():
    root = root_modules()
    assert len(root) <= ROOT_MODULES_AT_MOST, f"{len(root)} modules at the root of treckit/: {root}"


# ---------------------------------------------------------------- small functions
COMPLEXITY_AT_MOST = 20
# Line parsers, whose branches are the grammar's cases (one function keeps a hot loop in one frame): allowed above
# the limit, each with why.
PARSERS = {
    "inputs/formats/ndeval.py:_read_part": "ndeval's own line rules, one branch per case its C reader has",
    "testsets/topics.py:read_query_records": "a queries file's line rules: a JSON line (its id fields, QUEST's "
                                             "numbered lines) or a TSV line (two fields, a header on line 1)",
}


# Functions being split by another change of issue #32 (item 6), each with where.
BEING_SPLIT = {
}


@functools.lru_cache(maxsize=1)
def complexities() -> dict[str, int]:
    """Each function's and method's cyclomatic complexity, as radon measures it, a function defined inside another
    (a closure) on its own: {"file:Class.name": value, "file:outer.inner": value}."""
    visitors = pytest.importorskip("radon.visitors", reason="radon measures complexity (the dev extra)")
    out = {}

    def add(where: str, name: str, function) -> None:
        out[f"{where}:{name}"] = function.complexity
        for inner in function.closures:
            add(where, f"{name}.{inner.name}", inner)

    for path in sorted((CODE / "treckit").rglob("*.py")):
        visitor = visitors.ComplexityVisitor.from_code(path.read_text(encoding="utf-8"))
        where = str(path.relative_to(CODE / "treckit"))
        for f in visitor.functions:
            add(where, f.name, f)
        for c in visitor.classes:
            for m in c.methods:
                add(where, f"{c.name}.{m.name}", m)
    return out


def test_a_closure_is_measured_on_its_own(tmp_path, monkeypatch):
    """radon counts a function defined inside another apart from it: the walk lists it under its own name."""
    visitors = pytest.importorskip("radon.visitors", reason="radon measures complexity (the dev extra)")
    code = "def outer():\n    def inner(x):\n        if x:\n            return 1\n        return 2\n    return inner\n"
    [outer] = visitors.ComplexityVisitor.from_code(code).functions
    assert outer.complexity == 1 and [(c.name, c.complexity) for c in outer.closures] == [("inner", 2)]


def test_no_function_above_complexity_20():
    over = sorted(f"{name} ({value})" for name, value in complexities().items()
                  if value > COMPLEXITY_AT_MOST and name not in PARSERS and name not in BEING_SPLIT)
    assert not over, f"{len(over)} functions above complexity {COMPLEXITY_AT_MOST}: {over}"


def test_every_listed_parser_exists_and_needs_its_exemption():
    values = complexities()
    stale = sorted(name for name in {**PARSERS, **BEING_SPLIT} if values.get(name, 0) <= COMPLEXITY_AT_MOST)
    assert not stale, f"listed as parsers above {COMPLEXITY_AT_MOST}, but absent or not above it: {stale}"


# ---------------------------------------------------------------- small modules
MODULE_LINES_AT_MOST = 600
# Modules being split by another change of issue #32 (item 6), each with where.
LONG_MODULES_BEING_SPLIT = {
    "measures/registry.py": "#32 item 6",
}


def test_no_library_module_above_600_lines():
    lengths = {str(p.relative_to(CODE / "treckit")): len(p.read_text(encoding="utf-8").splitlines())
               for p in (CODE / "treckit").rglob("*.py")}
    over = sorted(f"{name} ({n})" for name, n in lengths.items()
                  if n > MODULE_LINES_AT_MOST and name not in LONG_MODULES_BEING_SPLIT)
    assert not over, f"modules above {MODULE_LINES_AT_MOST} lines (split them by concern): {over}"
    stale = sorted(name for name in LONG_MODULES_BEING_SPLIT if lengths.get(name, 0) <= MODULE_LINES_AT_MOST)
    assert not stale, f"listed as too long, but absent or within {MODULE_LINES_AT_MOST} lines: {stale}"


def test_every_optional_dependency_names_the_extra_that_installs_it():
    import tomllib

    from treckit.dependencies import EXTRA_OF, LAZY, OPTIONAL
    assert set(EXTRA_OF) == {m for m, (kind, _) in LAZY.items() if kind == OPTIONAL}
    extras = tomllib.loads((CODE.parent / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert set(EXTRA_OF.values()) <= set(extras)
    for module, extra in EXTRA_OF.items():
        assert f"treckit[{extra}]" in LAZY[module][1], module        # its reason names the same extra


def test_tests_share_helpers_through_the_helpers_module_not_conftest():
    """conftest.py holds fixtures; what tests share besides them is imported from tests/helpers.py."""
    tests = Path(__file__).resolve().parent
    reaching = [str(p.relative_to(tests)) for p in tests.rglob("*.py")
                if re.search(r"^\s*(from conftest import|import conftest)", p.read_text(), re.M)]
    assert reaching == []
