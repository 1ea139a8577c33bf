#!/usr/bin/env python3
"""The import graph of python/lucid, from the source (nothing is imported).

Every explicit import of a lucid module counts, at module level or inside a
function ("deferred"). An edge goes to the module named: ``from lucid.nn
import functional`` names ``lucid.nn.functional``, ``from lucid.nn import
Linear`` names ``lucid.nn``. Python's implicit import of parent packages is
not an edge (every module would import ``lucid``).

    python scripts/import_graph.py [--json] [--root python]

prints the module count, the largest import cycle (a strongly connected
component) and its members, and every deferred import, marking those without
a reason. A deferred import states its reason in a comment beginning
``# deferred:`` on its own line or the line above it (docs/architecture.md).
"""
from __future__ import annotations

import argparse
import ast
import json
import os
import sys

PACKAGE = "lucid"
MARKER = "# deferred:"


def find_modules(root: str) -> dict[str, str]:
    """Module name -> file path for every .py file under root/lucid."""
    mods = {}
    for d, _, files in os.walk(os.path.join(root, PACKAGE)):
        for f in files:
            if f.endswith(".py"):
                path = os.path.join(d, f)
                name = os.path.relpath(path, root)[:-3].replace(os.sep, ".")
                mods[name[: -len(".__init__")] if name.endswith(".__init__") else name] = path
    mods[PACKAGE + "._C"] = None  # the C++ extension: a leaf
    return mods


def _resolve(name: str, mods) -> str | None:
    while name and name not in mods:
        name = name.rpartition(".")[0]
    return name or None


def imports_of(module: str, path: str, mods):
    """(target module, line, deferred, has reason) for each lucid import in the file."""
    source = open(path, encoding="utf-8").read()
    lines = source.splitlines()
    is_package = path.endswith("__init__.py")
    base = module if is_package else module.rpartition(".")[0]
    out = []

    def reason(lineno):
        here = lines[lineno - 1]
        above = lines[lineno - 2].strip() if lineno >= 2 else ""
        return MARKER in here or above.startswith(MARKER)

    def visit(node, deferred):
        for child in ast.iter_child_nodes(node):
            inner = deferred or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.Import):
                targets = [a.name for a in child.names if a.name.split(".")[0] == PACKAGE]
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    b = base
                    for _ in range(child.level - 1):
                        b = b.rpartition(".")[0]
                    src = b + ("." + child.module if child.module else "")
                else:
                    src = child.module or ""
                targets = []
                if src.split(".")[0] == PACKAGE:
                    for a in child.names:
                        full = f"{src}.{a.name}"
                        targets.append(full if full in mods else src)
            else:
                visit(child, inner)
                continue
            seen = set()
            for t in targets:
                r = _resolve(t, mods)
                if r and r != module and r not in seen:
                    seen.add(r)
                    out.append((r, child.lineno, inner, reason(child.lineno)))
    visit(ast.parse(source, path), False)
    return out


def largest_cycle(edges: dict[str, set]) -> list[str]:
    """The largest strongly connected component (Tarjan, iterative)."""
    index, low, on, stack, best = {}, {}, set(), [], []
    counter = 0
    for start in edges:
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > len(best):
                        best = comp
    return sorted(best)


def analyse(root: str) -> dict:
    mods = find_modules(root)
    edges = {m: set() for m in mods}
    deferred = []
    for m, path in mods.items():
        if path is None:
            continue
        for target, line, is_deferred, has_reason in imports_of(m, path, mods):
            edges[m].add(target)
            if is_deferred:
                deferred.append({"module": m, "line": line, "imports": target, "reason": has_reason})
    cycle = largest_cycle(edges)
    # One deferred statement naming several modules counts once.
    statements = {(d["module"], d["line"]) for d in deferred}
    return {"modules": len(mods) - 1, "largest_cycle": cycle, "deferred_imports": len(statements),
            "deferred": deferred, "importers_of_root": sorted(m for m in mods if PACKAGE in edges[m])}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    result = analyse(args.root)
    if args.json:
        json.dump(result, sys.stdout, indent=1)
        print()
        return 0
    print(f"modules: {result['modules']}")
    print(f"largest import cycle: {len(result['largest_cycle'])} modules")
    for m in result["largest_cycle"]:
        print(f"  {m}")
    print(f"deferred imports: {result['deferred_imports']} "
          f"({sum(not d['reason'] for d in result['deferred'])} names without a '{MARKER}' reason)")
    for d in result["deferred"]:
        print(f"  {'  ' if d['reason'] else '! '}{d['module']}:{d['line']} -> {d['imports']}")
    if result["importers_of_root"]:
        print("modules importing the root package:", ", ".join(result["importers_of_root"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
