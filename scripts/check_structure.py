#!/usr/bin/env python3
"""The workspace's shape rules (docs/README.md, "The shape of the code"), checked.

    check_structure.py [--report] [ROOT]

Rules, each over the source files of every crate (`<crate>/src/**.rs`; an inline
`#[cfg(test)] mod ... {` block at a file's end is not counted, test binaries neither):

  circle     no file reaches itself through the files it imports (`crate::`, `super::`,
             `self::` paths, in `use` items, inline and in doc comments; a path names the file of its
             longest module prefix; lib.rs, main.rs and mod.rs only declare, and are
             left out)
  view       in core, only files under core/src/view/ name `crate::view`
  file       a file holds at most 900 lines
  function   a function's body holds at most 120 lines

Prints one line per breach and a count per rule; the exit status is 1 if any rule is
breached (with --report, always 0).
"""
import os
import re
import sys

MAX_FILE = 900
MAX_FN = 120
SKIP = {"target", "tests", "benches", "examples", "node_modules", ".git"}


def source_files(root):
    """(crate, path relative to src, absolute path) of every source file."""
    for crate in sorted(os.listdir(root)):
        src = os.path.join(root, crate, "src")
        if not (os.path.isdir(src) and os.path.isfile(os.path.join(root, crate, "Cargo.toml"))):
            continue
        for here, dirs, names in os.walk(src):
            dirs[:] = sorted(d for d in dirs if d not in SKIP)
            for name in sorted(names):
                if name.endswith(".rs"):
                    full = os.path.join(here, name)
                    yield crate, os.path.relpath(full, src), full


def without_tests(text):
    """The text before a trailing `#[cfg(test)] mod name {` block."""
    found = re.search(r"^#\[cfg\(test\)\]\s*\n(\s*#\[[^\]]*\]\s*\n)*\s*(pub(\([^)]*\))?\s+)?mod\s+\w+\s*\{", text, re.M)
    return text[: found.start()] if found else text


def blank_literals(text, keep_comments=False):
    """The text with comments (unless kept), strings and chars replaced by spaces
    (newlines kept), so that braces and paths inside them count for nothing."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if keep_comments and (text.startswith("//", i) or text.startswith("/*", i)):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(text[i:j])
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "r" and re.match(r'r#*"', text[i:i + 10]) and not (i and (text[i - 1].isalnum() or text[i - 1] == "_")):
            hashes = re.match(r"r(#*)\"", text[i:]).group(1)
            end = text.find('"' + hashes, i + len(hashes) + 2)
            j = n if end < 0 else end + 1 + len(hashes)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "'":
            m = re.match(r"'(\\.[^']*|[^\\'])'", text[i:])
            if m:
                out.append(" " * len(m.group(0)))
                i += len(m.group(0))
            else:  # a lifetime
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def module_of(rel):
    parts = rel[:-3].split(os.sep)
    if parts[0] == "bin":
        return None
    if parts[-1] in ("lib", "main"):
        return ()
    if parts[-1] == "mod":
        return tuple(parts[:-1])
    return tuple(parts)


def use_paths(code):
    """Every `crate::`/`super::`/`self::` path the code names, brace lists expanded."""

    def expand(body):
        body = re.sub(r"\s+", "", body)
        m = re.match(r"^(.*?)\{(.*)\}$", body)
        if not m:
            return [body]
        head, inner, parts, depth, cur = m.group(1), m.group(2), [], 0, ""
        for ch in inner:
            if ch == "," and depth == 0:
                parts.append(cur)
                cur = ""
                continue
            depth += (ch == "{") - (ch == "}")
            cur += ch
        parts.append(cur)
        return [head + x for p in parts if p for x in expand(p)]

    found = []
    for m in re.finditer(r"\buse\s+((?:crate|super|self)::[^;]*);", code):
        found += expand(m.group(1))
    rest = re.sub(r"\buse\s+[^;]*;", "", code)
    found += re.findall(r"\b((?:crate|super|self)(?:::\w+)+)", rest)
    return found


def resolve(path, module, is_root):
    """The absolute module path a `crate::`/`super::`/`self::` path names."""
    segs = path.split("::")
    # A file's own module is its parent for `super` unless the file is a mod.rs/lib.rs.
    base = list(module)
    if segs[0] == "crate":
        base, segs = [], segs[1:]
    elif segs[0] == "self":
        segs = segs[1:]
    while segs and segs[0] == "super":
        base = base[:-1]
        segs = segs[1:]
    return tuple(base + segs)


def circles(root):
    files = {}  # (crate, module) -> display path
    code = {}
    for crate, rel, full in source_files(root):
        module = module_of(rel)
        if module is None:
            continue
        files[(crate, module)] = os.path.relpath(full, root)
        # A doc link (`[crate::x]`) is a dependency too: comments are kept.
        code[(crate, module)] = blank_literals(without_tests(open(full, encoding="utf-8").read()), keep_comments=True)
    roots = {k for k, p in files.items() if os.path.basename(p) in ("lib.rs", "main.rs", "mod.rs")}
    edges = {k: set() for k in files}
    for (crate, module), text in code.items():
        if (crate, module) in roots:
            continue
        for path in use_paths(text):
            target = resolve(path, module, False)
            while target and (crate, target) not in files:
                target = target[:-1]
            key = (crate, target)
            if key in files and key != (crate, module) and key not in roots:
                edges[(crate, module)].add(key)
    # Tarjan's strongly connected components, iteratively.
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]

    def visit(start):
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on.add(start)
        while work:
            node, it = work[-1]
            step = next(it, None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = counter[0]
                    counter[0] += 1
                    stack.append(step)
                    on.add(step)
                    work.append((step, iter(sorted(edges[step]))))
                elif step in on:
                    low[node] = min(low[node], index[step])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    top = stack.pop()
                    on.discard(top)
                    comp.append(top)
                    if top == node:
                        break
                if len(comp) > 1:
                    out.append(sorted(files[k] for k in comp))

    for k in sorted(edges):
        if k not in index:
            visit(k)
    return sorted(out)


def long_functions(text):
    """(name, first line, lines) of every function whose body passes MAX_FN lines."""
    code = blank_literals(text)
    found = []
    for m in re.finditer(r"\bfn\s+(\w+)", code):
        # The body opens at the first `{` after the signature, unless a `;` comes first
        # (a declaration without a body).
        i, depth_paren = m.end(), 0
        while i < len(code):
            ch = code[i]
            if ch in "(<[":
                depth_paren += 1
            elif ch in ")>]":
                depth_paren -= 1
            elif ch == ";" and depth_paren <= 0:
                i = -1
                break
            elif ch == "{" and depth_paren <= 0:
                break
            i += 1
        if i < 0 or i >= len(code):
            continue
        depth, j = 0, i
        while j < len(code):
            if code[j] == "{":
                depth += 1
            elif code[j] == "}":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        first = code.count("\n", 0, i) + 1
        last = code.count("\n", 0, j) + 1
        if last - first + 1 > MAX_FN:
            found.append((m.group(1), code.count("\n", 0, m.start()) + 1, last - first + 1))
    return found


def main(argv):
    report = "--report" in argv
    args = [a for a in argv if a != "--report"]
    root = args[0] if args else "."
    breaches = {"circle": [], "view": [], "file": [], "function": []}
    for c in circles(root):
        breaches["circle"].append("circle: " + ", ".join(c))
    for crate, rel, full in source_files(root):
        shown = os.path.relpath(full, root)
        text = without_tests(open(full, encoding="utf-8").read())
        lines = text.count("\n")
        if lines > MAX_FILE:
            breaches["file"].append(f"file: {shown} holds {lines} lines (at most {MAX_FILE})")
        if crate == "core" and not rel.startswith("view" + os.sep) and rel != "lib.rs":
            if re.search(r"\bcrate::view\b", blank_literals(text)):
                breaches["view"].append(f"view: {shown} names crate::view (only core/src/view/ may)")
        for name, line, n in long_functions(text):
            breaches["function"].append(f"function: {shown}:{line} {name} holds {n} lines (at most {MAX_FN})")
    total = 0
    for rule, found in breaches.items():
        for line in found:
            print(line)
        total += len(found)
    print("; ".join(f"{rule}: {len(found)}" for rule, found in breaches.items()))
    return 1 if total and not report else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
