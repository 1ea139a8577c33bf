"""``lucid.save`` as a file writer: errors name the path the caller gave (never the temporary
file it writes through), and the checkpoint gets the mode any new file gets (0o666 & ~umask)."""
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

import lucid


def test_a_missing_folder_names_the_given_path(tmp_path):
    path = tmp_path / "no" / "such" / "ckpt.safetensors"
    with pytest.raises(FileNotFoundError) as info:
        lucid.save({"w": lucid.tensor([1.0])}, path)
    assert info.value.filename == str(path)
    assert str(path) in str(info.value) and ".lucid-save" not in str(info.value)
    assert not (tmp_path / "no").exists()


def test_a_directory_path_is_refused_by_name(tmp_path):
    with pytest.raises(IsADirectoryError) as info:
        lucid.save(lucid.tensor([1.0]), tmp_path)
    assert info.value.filename == str(tmp_path) and ".lucid-save" not in str(info.value)
    assert os.listdir(tmp_path) == []  # no temporary file left behind


def test_a_folder_that_is_a_file_is_refused_by_name(tmp_path):
    (tmp_path / "f").write_text("x")
    path = tmp_path / "f" / "ckpt.safetensors"
    with pytest.raises(FileNotFoundError) as info:
        lucid.save(lucid.tensor([1.0]), path)
    assert info.value.filename == str(path) and "not a directory" in str(info.value)


@pytest.mark.skipif(os.name != "posix", reason="POSIX file modes")
@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_the_file_mode_follows_the_umask(tmp_path, umask):
    # The umask is process-wide: set it in a child so this process and its threads are untouched.
    path, reference = tmp_path / "ckpt.safetensors", tmp_path / "plain.txt"
    code = (f"import os, lucid; os.umask({umask}); "
            f"lucid.save({{'w': lucid.tensor([1.0, 2.0])}}, {str(path)!r}); "
            f"open({str(reference)!r}, 'w').close()")
    env = dict(os.environ, PYTHONPATH=str(Path(lucid.__file__).resolve().parents[1]))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    mode = stat.S_IMODE(path.stat().st_mode)
    assert mode == 0o666 & ~umask
    assert mode == stat.S_IMODE(reference.stat().st_mode)  # the same as a file written with open()
    assert lucid.load(path)["w"].tolist() == [1.0, 2.0]
    assert sorted(os.listdir(tmp_path)) == ["ckpt.safetensors", "plain.txt"]
