"""Every ```python block of README.md and docs/*.md runs as written.

Each document's blocks run in order in one namespace (a later block may use an
earlier one's names), in a child process with LUCID_MLX_DEVICE=cpu, a timeout
and a memory limit, from a scratch folder (a block that writes a file writes
it there). A block that cannot run here is marked in the document, just before
its fence, with a visible comment ``<!-- not-run: reason -->``; the reason is
required and the skipped blocks are counted. Blocks in other languages
(bash, text) and unlabelled blocks (formulas, layouts) are not run; an
unlabelled block that imports or calls lucid is reported, so no Python hides
there.
"""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import lucid

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))] if (ROOT / "docs").is_dir() else []
FENCE = re.compile(r"^(?P<indent>[ \t]*)```(?P<lang>[^\s`]*)[^\n]*$")
NOT_RUN = re.compile(r"<!--\s*not-run:\s*(?P<reason>.*?)\s*-->")
MEMORY_LIMIT = 2 << 30  # bytes of address space for the child (MLX reserves little up front)


def blocks(path: Path):
    """(line number, language, source, not-run reason or None) of every fenced block."""
    lines = path.read_text().split("\n")
    out, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, start = m.group("indent"), i
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith("```"):
            j += 1
        body = "\n".join(line[len(indent):] if line.startswith(indent) else line for line in lines[i + 1:j])
        k = start - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        note = NOT_RUN.search(lines[k]) if k >= 0 else None
        out.append((start + 1, m.group("lang"), body, note.group("reason") if note else None))
        i = j + 1
    return out


def _python_docs():
    return [p for p in DOCS if any(lang == "python" for _, lang, _, _ in blocks(p))]


RUNNER = r"""
import json, resource, sys, traceback
limit = int(sys.argv[2])
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
namespace = {"__name__": "__main__"}
for line, source in json.load(open(sys.argv[1])):
    try:
        exec(compile(source, f"<{sys.argv[3]}:{line}>", "exec"), namespace)
    except BaseException:
        print(f"BLOCK FAILED at {sys.argv[3]} line {line}:", file=sys.stderr)
        traceback.print_exc()
        sys.exit(1)
print("ok")
"""


@pytest.mark.skipif(not DOCS, reason="no docs next to the tests (an installed wheel)")
def test_no_python_hides_in_an_unlabelled_block():
    # Unlabelled fences hold formulas, layouts and shell lines; one that imports or calls
    # lucid is Python and must say so, so that it runs here.
    looks_like_python = re.compile(r"^\s*(import |from \S+ import )|\blucid\.\w+\(|\bQ\.\w+\(", re.M)
    hidden = [f"{p.name}:{line}" for p in DOCS for line, lang, body, _ in blocks(p)
              if not lang and looks_like_python.search(body)]
    assert not hidden, f"unlabelled blocks that look like Python (label them ```python): {hidden}"


@pytest.mark.skipif(not DOCS, reason="no docs next to the tests (an installed wheel)")
def test_not_run_marks_give_a_reason_and_are_counted():
    marked = [(p.name, line, reason) for p in DOCS for line, lang, _, reason in blocks(p) if reason is not None]
    assert all(reason for _, _, reason in marked), marked
    ran = sum(1 for p in DOCS for _, lang, _, reason in blocks(p) if lang == "python" and reason is None)
    print(f"\n{ran} python blocks run, {len(marked)} marked not-run: {marked}")
    assert ran > 0


@pytest.mark.parametrize("doc", _python_docs(), ids=lambda p: p.name)
def test_python_blocks_run(doc, tmp_path):
    runnable = [(line, body) for line, lang, body, reason in blocks(doc) if lang == "python" and reason is None]
    if not runnable:
        pytest.skip("every python block of this document is marked not-run")
    (tmp_path / "blocks.json").write_text(json.dumps(runnable))
    (tmp_path / "runner.py").write_text(RUNNER)
    env = dict(os.environ, PYTHONPATH=str(Path(lucid.__file__).resolve().parents[1]), LUCID_MLX_DEVICE="cpu",
               OMP_NUM_THREADS="2")
    proc = subprocess.run([sys.executable, "runner.py", "blocks.json", str(MEMORY_LIMIT), doc.name],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert proc.returncode == 0 and proc.stdout.strip().endswith("ok"), proc.stderr[-4000:]
