"""Every example answers --help (without scikit-learn installed, and without training anything),
and says in it whether it needs scikit-learn, which agrees with what its code imports."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import lucid

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted([*(ROOT / "examples").glob("*.py"), *(ROOT / "examples" / "ported").glob("*.py")])

# A child in which `import sklearn` fails as it does where scikit-learn is not installed.
NO_SKLEARN = """
import runpy, sys
class NoSklearn:
    def find_spec(self, name, path=None, target=None):
        if name == "sklearn" or name.startswith("sklearn."):
            raise ModuleNotFoundError("No module named 'sklearn'", name="sklearn")
sys.meta_path.insert(0, NoSklearn())
"""


def _child(code, *args, cwd=None):
    env = dict(os.environ, PYTHONPATH=str(Path(lucid.__file__).resolve().parents[1]), LUCID_MLX_DEVICE="cpu")
    return subprocess.run([sys.executable, "-c", NO_SKLEARN + code, *args], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=120)


def _needs_sklearn(path: Path, seen=()) -> bool:
    """What the code says: it imports sklearn, or imports a sibling example that does."""
    text = path.read_text()
    if re.search(r"^\s*(from sklearn|import sklearn)", text, re.M):
        return True
    siblings = {p.stem: p for p in path.parent.glob("*.py")} | {p.stem: p for p in (ROOT / "examples").glob("*.py")}
    used = set(re.findall(r"^\s*from (\w+) import", text, re.M)) | set(re.findall(r'"(\w+)\.py"', text))
    return any(_needs_sklearn(siblings[name], seen + (path,)) for name in used
               if name in siblings and siblings[name] not in seen + (path,))


@pytest.mark.skipif(not EXAMPLES, reason="no examples next to the tests (an installed wheel)")
@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: str(p.relative_to(ROOT / "examples")))
def test_help_works_and_states_the_scikit_learn_need(example):
    code = f"sys.argv = [{str(example)!r}, '--help']\nsys.path.insert(0, {str(example.parent)!r})\n" \
           f"runpy.run_path({str(example)!r}, run_name='__main__')"
    proc = _child(code, cwd=example.parent)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.startswith("usage:"), proc.stdout[:500]
    help_text = " ".join(proc.stdout.split())
    if _needs_sklearn(example):
        assert "Needs scikit-learn" in help_text
    else:
        assert "Needs only lucid" in help_text and "no scikit-learn" in help_text


def test_the_sklearn_examples_are_the_digits_ones():
    need = {p.name for p in EXAMPLES if _needs_sklearn(p)}
    assert need == {"quantize_digits.py", "train_digits.py", "mlp_digits.py", "cnn_training.py"}


def test_train_digits_without_scikit_learn_says_what_to_install():
    example = ROOT / "examples" / "train_digits.py"
    proc = _child(f"mod = runpy.run_path({str(example)!r})\nmod['load_data']()")
    assert proc.returncode == 1
    assert "ImportError: this example needs scikit-learn for its data: pip install scikit-learn" in proc.stderr
