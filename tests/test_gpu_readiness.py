"""GPU readiness (issue 7): the CUDA install path is declared, TF32 is off unless the user
asks for it, and neither the parity command (--require-gpu) nor the suite (LUCID_REQUIRE_GPU=1)
falls back to MLX's CPU backend when a GPU is required; conftest only chooses that backend
where no GPU exists."""
import os
import pathlib
import re
import subprocess
import sys
import textwrap

import pytest

import lucid

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _env(**changes):
    env = dict(os.environ)
    # The lucid this process imported (the work tree in development, site-packages in CI).
    env["PYTHONPATH"] = str(pathlib.Path(lucid.__file__).resolve().parents[1]) + os.pathsep + env.get("PYTHONPATH", "")
    for k, v in changes.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    return env


def _py(code, **env):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=_env(**env))


def test_tf32_is_off_by_default_after_import():
    out = _py("import os, lucid; print(os.environ['MLX_ENABLE_TF32'])", MLX_ENABLE_TF32=None)
    assert out.returncode == 0 and out.stdout.strip() == "0", out.stderr
    assert os.environ["MLX_ENABLE_TF32"] in ("0", "1")  # this process imported lucid too


def test_tf32_set_by_the_user_is_kept():
    out = _py("import os, lucid; print(os.environ['MLX_ENABLE_TF32'])", MLX_ENABLE_TF32="1")
    assert out.returncode == 0 and out.stdout.strip() == "1", out.stderr


def test_tf32_is_set_before_mlx_loads():
    # lucid/__init__.py sets the variable before anything imports lucid._C (which loads libmlx):
    # a fresh interpreter records the variable at the moment lucid._C starts to load.
    probe = textwrap.dedent("""
        import importlib.abc, os, sys
        seen = []
        class Probe(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name == "lucid._C":
                    seen.append(os.environ.get("MLX_ENABLE_TF32"))
                return None
        sys.meta_path.insert(0, Probe())
        import lucid
        print(seen)
    """)
    env = {k: v for k, v in os.environ.items() if k != "MLX_ENABLE_TF32"}
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['0']"


def test_choose_stream_never_overrides_a_real_gpu():
    env = {}
    assert lucid.gpu.choose_stream(env, gpu_present=lambda: True) == "" and env == {}


def test_choose_stream_falls_back_only_without_a_gpu():
    env = {}
    note = lucid.gpu.choose_stream(env, gpu_present=lambda: False)
    assert env == {"LUCID_MLX_DEVICE": "cpu"} and "no GPU" in note


def test_choose_stream_keeps_the_callers_choice():
    env = {"LUCID_MLX_DEVICE": "cpu"}
    lucid.gpu.choose_stream(env, gpu_present=lambda: True)
    assert env == {"LUCID_MLX_DEVICE": "cpu"}
    env = {"LUCID_MLX_DEVICE": "gpu"}
    lucid.gpu.choose_stream(env, gpu_present=lambda: False)
    assert env == {"LUCID_MLX_DEVICE": "gpu"}


def test_choose_stream_does_not_fall_back_when_a_gpu_is_required():
    env = {"LUCID_REQUIRE_GPU": "1"}
    assert lucid.gpu.choose_stream(env, gpu_present=lambda: False) == ""
    assert "LUCID_MLX_DEVICE" not in env
    assert lucid.gpu.gpu_required({"LUCID_REQUIRE_GPU": "1"})
    assert not lucid.gpu.gpu_required({"LUCID_REQUIRE_GPU": "0"}) and not lucid.gpu.gpu_required({})


def test_require_gpu_matches_the_backend():
    if lucid.gpu.backend() in ("metal", "cuda"):
        assert lucid.gpu.require_gpu() == lucid.gpu.backend()
    else:
        with pytest.raises(RuntimeError, match="GPU is required"):
            lucid.gpu.require_gpu()


def test_parity_require_gpu_fails_without_one():
    proc = subprocess.run([sys.executable, "-m", "lucid.parity", "--quick", "--require-gpu"], capture_output=True,
                          text=True, timeout=300, env=_env(LUCID_MLX_DEVICE=None))
    real = _py("import lucid; print(lucid.gpu.is_available())", LUCID_MLX_DEVICE=None).stdout.strip() == "True"
    if real:
        assert proc.returncode == 0, proc.stdout + proc.stderr
    else:
        assert proc.returncode == 2 and "GPU is required" in proc.stderr and "fingerprint" not in proc.stdout


def test_suite_with_require_gpu_fails_without_one(tmp_path):
    (tmp_path / "test_one.py").write_text("def test_ok():\n    pass\n")
    (tmp_path / "conftest.py").write_text((ROOT / "tests" / "conftest.py").read_text())
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path,
                          env=_env(LUCID_MLX_DEVICE=None, LUCID_REQUIRE_GPU="1"))
    real = _py("import lucid; print(lucid.gpu.is_available())", LUCID_MLX_DEVICE=None).stdout.strip() == "True"
    if real:
        assert proc.returncode == 0, proc.stdout + proc.stderr
    else:
        assert proc.returncode != 0 and "LUCID_REQUIRE_GPU" in proc.stdout + proc.stderr
        assert "1 passed" not in proc.stdout


def test_cuda_extras_and_gpu_check_script_exist():
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert 'cuda13 = ["mlx[cuda13]==0.32.4"]' in pyproject and 'cuda12 = ["mlx[cuda12]==0.32.4"]' in pyproject
    script = ROOT / "scripts" / "gpu-check"
    assert os.access(script, os.X_OK)
    text = script.read_text()
    for needed in ("--require-gpu", "--full", "LUCID_REQUIRE_GPU=1", "lucid.gpu.backend()", "fingerprint",
                   '".[cuda${CUDA},test-tools]"'):
        assert needed in text, needed
    # One backend per environment, chosen by the extra: no uninstall / force-reinstall swap.
    assert "pip uninstall" not in text and "--force-reinstall" not in text
    assert subprocess.run(["bash", "-n", str(script)]).returncode == 0
    docs = (ROOT / "docs" / "parity.md").read_text()
    assert "scripts/gpu-check" in docs and '".[cuda13]"' in docs and "MLX_ENABLE_TF32" in docs
    assert "pip install lucid" not in docs and "lucid[cuda]" not in docs  # `lucid` on the index is another project


def test_docs_cite_no_path_outside_the_project():
    # Docs name files relative to the repository: no checkout location (this one's, whatever
    # it is) and no absolute path under a home, temp or scratch directory of some machine.
    checkout = str(ROOT.resolve().parent)
    absolute = re.compile(r"(^|[^\w.:/])/(home|Users|root|tmp|opt|mnt|work|srv|var)/")
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = doc.read_text()
        assert checkout + "/" not in text, doc.name
        assert not absolute.search(text), (doc.name, absolute.search(text))


def test_is_metal_names_the_metal_backend_only():
    assert lucid.zeros(2).is_metal is False
    if lucid.gpu.is_available():
        assert lucid.zeros(2, device="gpu").is_metal is (lucid.gpu.backend() == "metal")
