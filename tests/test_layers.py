"""lsmsim's layers import only downwards: the engine (the modules at the package root, and
the plug-in packages policies, device_models, scenarios) imports nothing from the layers
above it, and no two subpackages import each other.

Every import is counted, including those inside functions and under TYPE_CHECKING, so the
layering holds for a reader of the code, not only at import time. The exceptions are the
package's front doors: `lsmsim/__init__.py`, whose `import_trace` loads the traces layer on
first use, and `lsmsim/__main__.py` (`python -m lsmsim`), which runs the command line.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import networkx

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "lsmsim"

# Lowest first: a layer may import from itself and from the layers before it.
LAYERS = ("engine", "traces", "plot", "sweeps", "fidelity", "explain", "cli")
PLUG_INS = {"policies": ROOT / "policies", "device_models": ROOT / "device_models",
            "scenarios": ROOT / "scenarios"}


def _layer_of_module(dotted: str) -> str:
    """The layer of `lsmsim.x.y`: its subpackage if it is in one, else the engine."""
    parts = dotted.split(".")
    if len(parts) > 1 and parts[1] in LAYERS:
        return parts[1]
    return "engine"


def _source_files() -> dict[Path, str]:
    """{file: layer} for every module of lsmsim and of its plug-in packages."""
    files = {}
    for path in PACKAGE.rglob("*.py"):
        relative = path.relative_to(PACKAGE).parts
        if relative in (("__init__.py",), ("__main__.py",)):
            continue  # the front doors
        files[path] = relative[0] if len(relative) > 1 and relative[0] in LAYERS else "engine"
    for name, folder in PLUG_INS.items():
        for path in folder.rglob("*.py"):
            # An experiment file states claims with the sweeps layer's claim types.
            experiments = folder / "experiments"
            files[path] = "sweeps" if experiments in path.parents else "engine"
    return files


def _imported(path: Path, typing_too: bool = True) -> list[tuple[int, str]]:
    """(line, dotted name) of every lsmsim module `path` imports, wherever the import is
    (without `typing_too`, those under `if TYPE_CHECKING:` aside)."""
    tree = ast.parse(path.read_text(), str(path))
    typing_only = set()
    if not typing_too:
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.dump(node.test):
                typing_only |= {id(inner) for inner in ast.walk(node)}
    names = []
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            names += [(node.lineno, a.name) for a in node.names if a.name.startswith("lsmsim.")]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "lsmsim":
                names += [(node.lineno, f"lsmsim.{a.name}") for a in node.names]
            elif node.module.startswith("lsmsim."):
                names.append((node.lineno, node.module))
    return names


def test_every_import_goes_down_the_layers():
    wrong = []
    for path, layer in sorted(_source_files().items()):
        for line, name in _imported(path):
            target = _layer_of_module(name)
            if LAYERS.index(target) > LAYERS.index(layer):
                wrong.append(f"{path.relative_to(ROOT)}:{line} ({layer}) imports {name} ({target})")
    assert not wrong, "imports that go up a layer:\n" + "\n".join(wrong)


def _module_name(path: Path) -> str:
    """`lsmsim.x.y` of a source file (plug-in folders by their installed names)."""
    for name, folder in (("lsmsim", PACKAGE), *((f"lsmsim.{n}", f) for n, f in PLUG_INS.items())):
        if folder in path.parents:
            parts = path.relative_to(folder).with_suffix("").parts
            return ".".join((name,) + (parts[:-1] if parts[-1] == "__init__" else parts))
    raise AssertionError(path)


def test_no_module_imports_itself_through_others():
    """No import cycle between modules, within a layer too (imports only for type checking
    aside: they never run)."""
    files = _source_files()
    modules = {_module_name(path): path for path in files}
    graph = networkx.DiGraph()
    for name, path in modules.items():
        for _, imported in _imported(path, typing_too=False):
            while imported and imported not in modules:  # `from lsmsim.x import name`
                imported = imported.rpartition(".")[0]
            if imported not in ("", "lsmsim", name):
                graph.add_edge(name, imported)
    cycles = sorted(" -> ".join(cycle) for cycle in networkx.simple_cycles(graph))
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def test_each_layer_is_a_subpackage_that_installs():
    listed = set()
    for line in (ROOT / "setup.cfg").read_text().split("packages =", 1)[1].splitlines()[1:]:
        if not line.startswith("    "):
            break
        listed.add(line.strip())
    assert {f"lsmsim.{layer}" for layer in LAYERS if layer != "engine"} <= listed
    found = {".".join(("lsmsim",) + p.parent.relative_to(PACKAGE).parts)
             for p in PACKAGE.rglob("__init__.py") if "__pycache__" not in p.parts}
    assert found <= listed, f"subpackages missing from setup.cfg packages: {found - listed}"


def test_a_simulation_loads_no_layer_above_the_engine():
    """The static check above, confirmed at run time: simulating and writing a run's files
    imports nothing from traces, plot, sweeps, fidelity, explain or cli."""
    script = (
        "import sys, tempfile, lsmsim\n"
        "result = lsmsim.simulate('fillrandom', device='nvme', duration_s=5)\n"
        "result.write(tempfile.mkdtemp())\n"
        f"layers = {LAYERS[1:]!r}\n"
        "print(sorted(m for m in sys.modules if m.split('.')[:2][-1] in layers"
        " and m.startswith('lsmsim.')))\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True, cwd=ROOT).stdout
    assert out.strip() == "[]", out
