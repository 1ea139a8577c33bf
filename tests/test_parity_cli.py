"""`python -m lucid.parity` refuses bad input before it runs, with an argparse-style message and
exit status 2, and writes its --json report in both modes (battery and --fuzz)."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import lucid
from lucid import parity


def _run(*args, env_extra=None, timeout=300):
    env = dict(os.environ, PYTHONPATH=str(Path(lucid.__file__).resolve().parents[1]))
    env.pop("LUCID_MLX_DEVICE", None)  # the command chooses: a GPU if present, else MLX's CPU backend
    env.pop(parity.INJECT_ENV, None)
    env.update(env_extra or {})
    return subprocess.run([sys.executable, "-m", "lucid.parity", *args], capture_output=True, text=True,
                          env=env, timeout=timeout)


def _refused(proc, *needles):
    assert proc.returncode == 2, (proc.returncode, proc.stdout[-2000:], proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr and proc.stdout == ""  # refused before any run
    assert "python -m lucid.parity: error:" in proc.stderr
    for needle in needles:
        assert needle in proc.stderr, proc.stderr


def test_fuzz_writes_its_json_report(tmp_path):
    out = tmp_path / "fuzz.json"
    proc = _run("--fuzz", "3", "--seed", "5", "--json", str(out))
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    data = json.loads(out.read_text())
    assert data["mode"] == "fuzz" and data["seed"] == 5 and data["configs"] == 3
    assert data["ok"] is True and data["mismatches"] == 0 and data["failures"] == []
    assert sum(r["cases"] for r in data["rows"]) == 3


@pytest.mark.parametrize("where", ["missing-folder", "directory"])
def test_an_unwritable_json_path_is_refused_before_the_run(tmp_path, where):
    path = tmp_path / "no" / "such" / "parity.json" if where == "missing-folder" else tmp_path
    proc = _run("--quick", "--json", str(path))
    _refused(proc, "argument --json", str(path), "does not exist" if where == "missing-folder" else "directory")


@pytest.mark.parametrize("args,needles", [
    (["--fuzz", "2", "--seed", "-1"], ["argument --seed", "must be >= 0, got -1"]),
    (["--fuzz", "abc"], ["argument --fuzz", "expected an integer >= 1, got 'abc'"]),
    (["--fuzz", "0"], ["argument --fuzz", "must be >= 1, got 0"]),
    (["--threads", "x"], ["argument --threads", "expected an integer >= 1, got 'x'"]),
    (["--seed", "3"], ["argument --seed", "only applies with --fuzz"]),
])
def test_bad_arguments_are_usage_errors(args, needles):
    proc = _run(*args)
    _refused(proc, *needles)
    assert "_int_at_least" not in proc.stderr and "parse value" not in proc.stderr  # no internal names


def test_an_unknown_mlx_device_names_the_variable_and_the_accepted_values():
    proc = _run("--quick", env_extra={"LUCID_MLX_DEVICE": "bogus"})
    _refused(proc, "LUCID_MLX_DEVICE='bogus'", "'cpu'", "unset")
    assert "MISMATCH" not in proc.stderr


def test_an_unknown_injected_op_names_the_known_ops():
    proc = _run("--quick", env_extra={parity.INJECT_ENV: "quantise"})
    _refused(proc, parity.INJECT_ENV, "'quantise'", "known ops: quantize, dequantize, fake_quantize")
    assert "qmatmul" in proc.stderr and "calculate_qparams" in proc.stderr


def test_injection_is_refused_with_fuzz():
    proc = _run("--fuzz", "1", env_extra={parity.INJECT_ENV: "quantize"})
    _refused(proc, parity.INJECT_ENV, "--fuzz")


def test_help_states_measured_durations():
    proc = _run("--help")
    assert proc.returncode == 0
    assert "minutes" not in proc.stdout and "about 25 s" in proc.stdout
