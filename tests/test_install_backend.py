"""The distribution's metadata (pyproject.toml) and the import-time message for an environment
without an MLX backend: one extra per MLX backend, no swap, and `import lucid` names the extras."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

import lucid

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = ROOT / "pyproject.toml"

# What the loader says when lucid._C's NEEDED libmlx.so is absent: the message of a real
# `import mlx.core` from a Linux mlx wheel installed without a backend.
MISSING = "libmlx.so: cannot open shared object file: No such file or directory"


def _import_lucid_without_backend(message):
    finder = (
        "import sys\n"
        "class NoBackend:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        f"        if name == 'lucid._C': raise ImportError({message!r})\n"
        "sys.meta_path.insert(0, NoBackend())\n"
        "import lucid\n")
    env = dict(os.environ, PYTHONPATH=str(Path(lucid.__file__).resolve().parents[1]))
    return subprocess.run([sys.executable, "-c", finder], capture_output=True, text=True, env=env, timeout=120)


def test_import_without_a_backend_names_the_extras():
    proc = _import_lucid_without_backend(MISSING)
    assert proc.returncode == 1
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: lucid: no MLX backend is installed")
    for extra in ('".[cpu]"', '".[cuda12]"', '".[cuda13]"', "mlx[cpu]==0.32.4"):
        assert extra in last
    assert MISSING in proc.stderr  # the loader's own message stays in the chain


def test_other_import_errors_are_not_rewritten():
    proc = _import_lucid_without_backend("some other failure")
    assert proc.returncode == 1 and "no MLX backend" not in proc.stderr
    assert "some other failure" in proc.stderr


@pytest.fixture(scope="module")
def project():
    if not PYPROJECT.exists():
        pytest.skip("no pyproject.toml next to the tests (an installed wheel)")
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    return tomllib.loads(PYPROJECT.read_text())["project"]


def test_the_distribution_name_is_our_own(project):
    assert project["name"] == "lucid-engine"  # `lucid` on the package index is another project


def test_the_base_install_pins_mlx_without_a_backend(project):
    deps = project["dependencies"]
    assert "mlx==0.32.4" in deps
    assert not any(d.startswith("mlx[") or d.startswith("mlx-") for d in deps)


def test_one_extra_per_mlx_backend_and_test_brings_the_cpu_one(project):
    extras = project["optional-dependencies"]
    assert extras["cpu"] == ["mlx[cpu]==0.32.4"]
    assert extras["cuda12"] == ["mlx[cuda12]==0.32.4"]
    assert extras["cuda13"] == ["mlx[cuda13]==0.32.4"]
    assert "mlx[cpu]==0.32.4" in extras["test"]
    assert not any(d.startswith("mlx") for d in extras["test-tools"])  # combinable with a GPU backend
    assert set(extras["test"]) - {"mlx[cpu]==0.32.4"} == set(extras["test-tools"])
