#!/usr/bin/env python3
"""Lists the import cycles between the files of one Rust crate.

An edge A -> B means file A names an item defined in file B: a `use` of it, or a path to it
(`crate::x::y`, `super::y`, `child::y`, a `crate::macro!`). A `mod b;` declaration is structure,
not an import, so a parent that only declares its children has no edge to them. Comments,
string literals and the `super` of inline test modules (`mod tests { use super::*; }`: the
file itself) are not edges. Prints every strongly connected component of more than one file
(each is one or more cycles) with the edges inside it, and exits 1 when there is one.

Usage: scripts/import-cycles.py crates/dbio/src [more src dirs...]
"""

import os
import re
import sys

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"


def strip(text):
    """Removes comments, string and char literals (keeping line structure)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    if text[i] == "\n":
                        out.append("\n")
                    i += 1
        elif c == "r" and re.match(r'r#*"', text[i:]) and (i == 0 or not re.match(r"\w", text[i - 1])):
            m = re.match(r'r(#*)"', text[i:])
            end = text.find('"' + m.group(1), i + len(m.group(0)))
            seg = text[i : end + 1 + len(m.group(1))]
            out.append('""' + "\n" * seg.count("\n"))
            i = end + 1 + len(m.group(1))
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append('""' + "\n" * text[i:j].count("\n"))
            i = j + 1
        elif c == "'" and re.match(r"'(\\.|[^\\'])'", text[i:]):
            m = re.match(r"'(\\[^']*|[^\\'])'", text[i:])
            out.append("' '")
            i += len(m.group(0))
        else:
            out.append(c)
            i += 1
    return "".join(out)


def expand_use(tree):
    """`a::{b, c::{d, self}}` -> ["a::b", "a::c::d", "a::c"]."""
    tree = re.sub(r"\s+", "", tree)
    tree = re.sub(r"\bas" + IDENT, "", tree)
    if "{" not in tree:
        return [tree]
    k = tree.index("{")
    prefix, body = tree[:k], tree[k + 1 : tree.rindex("}")]
    parts, depth, cur = [], 0, ""
    for ch in body:
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        depth += ch == "{"
        depth -= ch == "}"
        cur += ch
    parts.append(cur)
    out = []
    for p in parts:
        if not p:
            continue
        for e in expand_use(p):
            out.append(prefix[:-2] if e == "self" else prefix + e)
    return out


class Crate:
    def __init__(self, src):
        self.src = src
        self.files = {}  # module path tuple -> file (file modules only)
        self.inline = {}  # module path tuple -> file (inline modules)
        self.children = {}  # module path tuple -> set of child names
        self.macros = {}  # macro name -> file
        root = "lib.rs" if os.path.exists(os.path.join(src, "lib.rs")) else "main.rs"
        self.load((), os.path.join(src, root))

    def load(self, mpath, path):
        self.files[mpath] = path
        text = strip(open(path).read())
        self.children.setdefault(mpath, set())
        for m in re.finditer(r"macro_rules!\s*(" + IDENT + ")", text):
            self.macros[m.group(1)] = path
        base = os.path.dirname(path)
        stem = os.path.basename(path)[:-3]
        if stem not in ("lib", "main", "mod"):
            base = os.path.join(base, stem)
        self.walk_mods(mpath, text, path, base)

    def walk_mods(self, mpath, text, path, base):
        """Declared `mod x;` children (files) and inline `mod x { }` modules."""
        depth_stack = []  # (module path, brace depth at open)
        depth = 0
        cur = mpath
        tokens = re.finditer(r"\bmod\s+(" + IDENT + r")\s*([;{])|[{}]", text)
        for t in tokens:
            s = t.group(0)
            if s == "{":
                depth += 1
            elif s == "}":
                depth -= 1
                if depth_stack and depth_stack[-1][1] == depth:
                    depth_stack.pop()
                    cur = depth_stack[-1][0] if depth_stack else mpath
            else:
                name, kind = t.group(1), t.group(2)
                self.children.setdefault(cur, set()).add(name)
                child = cur + (name,)
                if kind == "{":
                    self.inline[child] = path
                    self.children.setdefault(child, set())
                    depth_stack.append((child, depth))
                    depth += 1
                    cur = child
                else:
                    sub = os.path.join(base, *cur[len(mpath) :], name)
                    for cand in (sub + ".rs", os.path.join(sub, "mod.rs")):
                        if os.path.exists(cand):
                            self.load(child, cand)
                            break

    def module_file(self, mpath):
        return self.files.get(mpath) or self.inline.get(mpath)

    def resolve(self, cur, path):
        """The file defining what `path`, written in module `cur`, names (None if outside)."""
        segs = path.split("::")
        if segs[0] in ("crate", "$crate"):
            absm, rest = (), segs[1:]
        elif segs[0] in ("super", "self"):
            absm = cur
            rest = segs
            while rest and rest[0] in ("super", "self"):
                if rest[0] == "super":
                    absm = absm[:-1]
                rest = rest[1:]
        elif segs[0] in self.children.get(cur, ()):
            absm, rest = cur, segs
        else:
            return None
        if absm == () and len(rest) == 1 and rest[0] in self.macros:
            return self.macros[rest[0]]
        full = absm + tuple(rest)
        for k in range(len(full), -1, -1):
            f = self.module_file(full[:k])
            if f:
                return f
        return None

    def edges(self):
        out = {}
        for mpath, path in self.files.items():
            text = strip(open(path).read())
            deps = out.setdefault(path, {})
            # Module context for each offset: inline modules of this file.
            spans = []
            depth, stack = 0, []
            for t in re.finditer(r"\bmod\s+(" + IDENT + r")\s*\{|[{}]", text):
                s = t.group(0)
                if s == "{":
                    depth += 1
                elif s == "}":
                    depth -= 1
                    if stack and stack[-1][1] == depth:
                        name, _, start = stack.pop()
                        spans.append((start, t.end(), name))
                else:
                    stack.append((t.group(1), depth, t.start()))
                    depth += 1

            def module_at(off):
                inner = [s for s in spans if s[0] <= off < s[1]]
                inner.sort(key=lambda s: s[0])
                return mpath + tuple(s[2] for s in inner)

            found = []
            for m in re.finditer(r"\buse\s+([^;]+);", text):
                for p in expand_use(m.group(1)):
                    found.append((m.start(), p.rstrip(":*").rstrip(":")))
            for m in re.finditer(r"(?<![\w:])(\$?" + IDENT + r"(?:::" + IDENT + r")+)(!?)", text):
                p = m.group(1) + ("" if not m.group(2) else "")
                found.append((m.start(), p))
            for m in re.finditer(r"(?<![\w:])(\$?crate)::(" + IDENT + r")!", text):
                found.append((m.start(), "crate::" + m.group(2)))
            line_of = lambda off: text.count("\n", 0, off) + 1
            for off, p in found:
                cur = module_at(off)
                f = self.resolve(cur, p)
                if f and f != path:
                    deps.setdefault(f, []).append((line_of(off), p))
        return out


def sccs(graph):
    index, low, stack, on, res, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, {}):
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
            res.append(comp)

    sys.setrecursionlimit(10000)
    for v in list(graph):
        if v not in index:
            visit(v)
    return res


def main():
    bad = False
    for src in sys.argv[1:] or ["crates/dbio/src"]:
        crate = Crate(src)
        graph = crate.edges()
        nfiles, nedges = len(graph), sum(len(d) for d in graph.values())
        comps = [sorted(c) for c in sccs(graph) if len(c) > 1]
        print(f"{src}: {nfiles} files, {nedges} file-to-file imports, {len(comps)} cycle(s)")
        for comp in comps:
            bad = True
            rel = lambda f: os.path.relpath(f, src)
            print("  cycle among: " + ", ".join(rel(f) for f in comp))
            for a in comp:
                for b, refs in sorted(graph[a].items()):
                    if b in comp:
                        line, p = refs[0]
                        more = f" (+{len(refs) - 1} more)" if len(refs) > 1 else ""
                        print(f"    {rel(a)}:{line} -> {rel(b)}  `{p}`{more}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
