"""The one-way layers of python/lucid (docs/architecture.md): the import graph's
numbers, and import-linter's contract (.importlinter), checked on the source.

The source checked is the work tree's python/lucid, whichever lucid the tests
import, since the layering is a property of the code, not of an install."""
import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
SOURCE = ROOT / "python"


def _graph(root=SOURCE):
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "import_graph.py"), "--json", "--root", str(root)],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def test_largest_import_cycle_is_the_core_op_families_at_most():
    cycle = _graph()["largest_cycle"]
    assert len(cycle) <= 12, cycle
    assert all(m.startswith("lucid._ops.") for m in cycle if len(cycle) > 1), cycle


def test_few_deferred_imports_each_with_its_reason():
    g = _graph()
    assert g["deferred_imports"] <= 40
    unexplained = [f"{d['module']}:{d['line']}" for d in g["deferred"] if not d["reason"]]
    assert not unexplained, "deferred imports without a '# deferred:' reason: " + ", ".join(unexplained)


def test_nothing_inside_the_package_imports_its_root():
    assert _graph()["importers_of_root"] == []


def test_graph_counts_a_planted_cycle(tmp_path):
    # The counter itself: two modules importing each other (one at function level) are a cycle
    # of two and one deferred import without a reason.
    pkg = tmp_path / "lucid"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from . import b\n")
    (pkg / "b.py").write_text("def f():\n    from . import a\n    return a\n")
    g = _graph(tmp_path)
    assert g["largest_cycle"] == ["lucid.a", "lucid.b"]
    assert g["deferred_imports"] == 1 and not g["deferred"][0]["reason"]


def _lint(source_root):
    exe = shutil.which("lint-imports")
    if exe is None:
        pytest.skip("import-linter is not installed (pip install '.[test]' brings it)")
    env = dict(os.environ, PYTHONPATH=str(source_root))
    return subprocess.run([exe, "--config", str(ROOT / ".importlinter"), "--no-cache"], cwd=str(ROOT),
                          env=env, capture_output=True, text=True)


def test_import_linter_contract_holds():
    run = _lint(SOURCE)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]


def test_import_linter_catches_a_planted_upward_import(tmp_path):
    # _tensor (layer 2) importing nn (layer 7) must break the contract.
    shutil.copytree(SOURCE / "lucid", tmp_path / "lucid", ignore=shutil.ignore_patterns("*.so", "__pycache__"))
    tensor_py = tmp_path / "lucid" / "_tensor.py"
    tensor_py.write_text(tensor_py.read_text() + "\nfrom .nn import module as _planted  # noqa: E402\n")
    run = _lint(tmp_path)
    assert run.returncode != 0
    assert "lucid._tensor -> lucid.nn.module" in run.stdout
