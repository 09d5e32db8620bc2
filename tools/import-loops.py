#!/usr/bin/env python3
"""Import loops of a crate: `tools/import-loops.py codegen/src`.

Builds the file-level graph of `use` paths (`crate::`, `super::`, `self::`
and declared child modules; lib.rs, the facade of mod lines and re-exports,
aside): an edge from a file to the file that defines the module a path
names. Prints every loop of more than one file and every pair of files that
import each other."""
import os, re, sys
root = sys.argv[1]
files = {}
for d, _, fs in os.walk(root):
    for f in fs:
        if f.endswith('.rs'):
            p = os.path.relpath(os.path.join(d, f), root)
            files[p] = open(os.path.join(d, f)).read()
def module_of(p):
    parts = p[:-3].split('/')
    if parts[-1] in ('mod', 'lib'):
        parts = parts[:-1]
    return parts
def file_of(mod):
    if not mod:
        return 'lib.rs'
    a = '/'.join(mod) + '.rs'
    b = '/'.join(mod) + '/mod.rs'
    return a if a in files else b if b in files else None
def resolve(p, path):
    segs = path.split('::')
    mod = module_of(p)
    if segs[0] == 'crate':
        base, segs = [], segs[1:]
    elif segs[0] in ('super', 'self'):
        base = mod[:]
        # a non-mod file's `self` is itself; `super` is its parent
        while segs and segs[0] in ('super', 'self'):
            if segs[0] == 'super':
                base = base[:-1]
            segs = segs[1:]
    else:
        return None
    best = file_of(base)
    cur = base[:]
    for s in segs:
        cur = cur + [s]
        f = file_of(cur)
        if f is None:
            break
        best = f
    return best
edges = {p: set() for p in files}
for p, text in files.items():
    text = re.sub(r'#\[cfg\(test\)\]\s*mod tests\s*\{.*', '', text, flags=re.S)
    text = re.sub(r'//.*', '', text)
    children = re.findall(r'^\s*(?:pub(?:\([a-z]+\))?\s+)?mod\s+([a-z_0-9]+)\s*;', text, flags=re.M)
    alt = '|'.join(['crate', 'super', 'self'] + children)
    pattern = r'(?<![A-Za-z0-9_:])((?:' + alt + r')(?:::[A-Za-z_][A-Za-z0-9_]*)*)(::\{[^}]*\})?'
    for m in re.finditer(pattern, text):
        path = m.group(1)
        if '::' not in path and not m.group(2):
            continue
        if m.group(2):
            # `prefix::{a, b::c}`: each item names a path below the prefix.
            for item in re.findall(r'[A-Za-z_][A-Za-z0-9_:]*', m.group(2)):
                full = path + '::' + item
                if full.split('::')[0] in children:
                    full = 'self::' + full
                t = resolve(p, full)
                if t and t != p and t != 'lib.rs' and p != 'lib.rs':
                    edges[p].add(t)
            continue
        if path.split('::')[0] in children:
            path = 'self::' + path
        t = resolve(p, path)
        # lib.rs is the facade (mod lines and re-exports): not a module
        # anyone depends on for its own code.
        if t and t != p and t != 'lib.rs' and p != 'lib.rs':
            edges[p].add(t)
# Tarjan
index, low, stack, on, sccs, i = {}, {}, [], set(), [], [0]
def strong(v):
    index[v] = low[v] = i[0]; i[0] += 1; stack.append(v); on.add(v)
    for w in edges[v]:
        if w not in index:
            strong(w); low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        c = []
        while True:
            w = stack.pop(); on.discard(w); c.append(w)
            if w == v: break
        sccs.append(c)
sys.setrecursionlimit(10000)
for v in sorted(files):
    if v not in index:
        strong(v)
loops = [sorted(c) for c in sccs if len(c) > 1]
for c in loops:
    print(f"loop of {len(c)} files: {' '.join(c)}")
pairs = sorted({tuple(sorted((a, b))) for a in edges for b in edges[a] if a in edges[b]})
for a, b in pairs:
    print(f"imports each other: {a} <-> {b}")
print(f"{len(loops)} loops, {len(pairs)} mutual pairs")
