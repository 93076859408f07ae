"""The package's type information against the package itself (scripts/test.sh runs mypy over tests/python
and python/loom with these stubs): loom/__init__.pyi is what packaging/gen_stub.py makes from the
installed namespace today, and loom/_core.pyi names exactly what the C extension defines."""
import ast
import os
import subprocess
import sys

import pytest

import loom
from loom import _core

REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
PKG = os.path.dirname(loom.__file__)


def _stub_names(path):
    tree = ast.parse(open(path).read())
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.ImportFrom) and not (node.module or "").startswith(("typing", "collections")):
            names |= {a.asname or a.name for a in node.names}
    return names


def test_core_stub_matches_the_extension():
    stub = os.path.join(PKG, "_core.pyi")
    assert os.path.exists(stub), "the installed package lacks _core.pyi"
    declared = _stub_names(stub) - {"Operand", "Shape", "Handle"}  # the stub's own aliases
    defined = {n for n in dir(_core) if not n.startswith("__")}
    assert declared - defined == set(), "_core.pyi declares names the extension does not define"
    assert defined - declared == set(), "the extension defines names _core.pyi lacks: add them to python/loom/_core.pyi"


def test_namespace_stub_is_current():
    gen = os.path.join(REPO, "packaging", "gen_stub.py")
    if not os.path.exists(gen):
        pytest.skip("not run from a source tree")
    with open(os.path.join(PKG, "__init__.pyi")) as f:
        installed = f.read()
    r = subprocess.run([sys.executable, gen, "-"], capture_output=True, text=True, cwd=os.path.dirname(PKG))
    assert r.returncode == 0, r.stderr
    with open(os.path.join(REPO, "python", "loom", "__init__.pyi")) as f:
        committed = f.read()
    assert r.stdout == committed, ("python/loom/__init__.pyi is stale (the loom namespace changed): rerun "
                                   "`.venv/bin/python packaging/gen_stub.py` and commit the result")
    assert installed == committed, "the installed package's __init__.pyi is not the source tree's: reinstall"


def test_stub_names_every_public_name():
    declared = _stub_names(os.path.join(PKG, "__init__.pyi"))
    public = {n for n in dir(loom) if not n.startswith("_")}
    assert public - declared == set()
