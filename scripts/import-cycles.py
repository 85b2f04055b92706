#!/usr/bin/env python3
"""Lists import cycles between the files of each crate: file A `use`s an item of file B and B
(directly or through others) uses A. Module paths are resolved to files from the crate's
src/ tree; `crate::`, `super::` and `self::` paths count, inline `mod tests` blocks do not
(a test module importing its parent is not a cycle). Exits 1 when a cycle exists.

Usage: scripts/import-cycles.py [CRATE_DIR ...]   (default: every crates/*)"""
import pathlib
import re
import sys


def module_files(src):
    """module path tuple -> file"""
    mods = {}
    for f in src.rglob("*.rs"):
        rel = f.relative_to(src).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] in ("lib", "main") and len(parts) == 1:
            parts = []
        elif parts[-1] == "mod":
            parts = parts[:-1]
        mods[tuple(parts)] = f
    return mods


def strip_tests(text):
    """The file without its test module and without comments (doc links name paths too)."""
    m = re.search(r"#\[cfg\(test\)\]\s*mod tests\s*\{", text)
    text = text[: m.start()] if m else text
    return re.sub(r"//[^\n]*", "", text)


def use_paths(text):
    """Every path named in `use` items, braces expanded (one level of nesting is enough here)."""
    out = []
    for m in re.finditer(r"^\s*(?:pub(?:\([^)]*\))?\s+)?use\s+([^;]+);", text, re.M | re.S):
        body = re.sub(r"\s+", "", m.group(1))
        out.extend(expand(body))
    # fully qualified paths in code: crate::a::b::Item
    out.extend(re.findall(r"\b((?:crate|super)(?:::[A-Za-z_][A-Za-z0-9_]*)+)", text))
    return out


def expand(body):
    m = re.match(r"^(.*?)\{(.*)\}$", body)
    if not m:
        return [body]
    prefix, inner = m.group(1), m.group(2)
    items, depth, cur = [], 0, ""
    for ch in inner:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if ch == "," and depth == 0:
            items.append(cur)
            cur = ""
        else:
            cur += ch
    if cur:
        items.append(cur)
    res = []
    for it in items:
        res.extend(expand(prefix + it))
    return res


def resolve(path, here, mods):
    parts = path.split("::")
    if parts[0] == "crate":
        base, rest = [], parts[1:]
    elif parts[0] in ("super", "self"):
        base = list(here)
        rest = parts
        while rest and rest[0] in ("super", "self"):
            if rest[0] == "super":
                base = base[:-1]
            rest = rest[1:]
    else:
        return None
    cand = base + [p for p in rest if p not in ("self", "*")]
    while cand and tuple(cand) not in mods:
        cand = cand[:-1]
    return tuple(cand) if tuple(cand) in mods else None


def cycles(crate):
    src = crate / "src"
    mods = module_files(src)
    graph = {m: set() for m in mods}
    for m, f in mods.items():
        text = strip_tests(f.read_text())
        for p in use_paths(text):
            t = resolve(p, m, mods)
            # a file may import its own descendants (parent -> child is the module tree) and
            # a child its ancestors' items; only count edges between files neither of which
            # is the other's ancestor
            if t is None or t == m or t[: len(m)] == m:
                continue
            graph[m].add(t)
    # strongly connected components (Tarjan)
    index, low, on, stack, sccs, n = {}, {}, set(), [], [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                sccs.append(comp)

    sys.setrecursionlimit(10000)
    for v in graph:
        if v not in index:
            visit(v)
    return [[str(mods[m].relative_to(crate)) for m in sorted(c)] for c in sccs]


def main():
    crates = [pathlib.Path(a) for a in sys.argv[1:]] or sorted(pathlib.Path("crates").glob("*"))
    found = 0
    for c in crates:
        for comp in cycles(c):
            found += 1
            print(f"{c.name}: " + " <-> ".join(comp))
    print(f"{found} import cycle(s)")
    sys.exit(1 if found else 0)


if __name__ == "__main__":
    main()
