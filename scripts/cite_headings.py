#!/usr/bin/env python3
"""Citations of the docs by a heading's words instead of its number.

    cite_headings.py [--write] [ROOT]

A comment (or a definition's Comment, a script's note) that points into the project's
docs names the page and the heading's words: `docs/export.md, "The lock (export-lock)"`,
so that renumbering a page never makes it lie. This finds every citation by number
(`docs/export.md §10.1`, `export.md §10.1, §10.2`, a bare `§10.1` after a page named in
the lines just above, or in a file of that page) and prints what it would become; with
--write it rewrites the files. Citations it cannot place are listed, and the exit status
is 1 while any citation by number is left (scripts/check_structure.py runs it as the
rule `citation`).
"""
import os
import re
import sys

SOURCES = (".rs", ".py", ".sh", ".json", ".yaml", ".yml", ".toml")
SKIP = {"target", "node_modules", ".git", ".venv", ".venv-sam", ".emulator", "snapshots"}
NUM = r"\d+(?:\.\d+)*"
PAGE = r"(?:docs/)?([a-z][a-z_-]*)\.md"
HEADING = re.compile(r"^#{2,6}\s+(" + NUM + r")\.?\s+(.*?)\s*$")


def headings(root):
    """page name -> {number: heading words}."""
    out = {}
    docs = os.path.join(root, "docs")
    for name in os.listdir(docs):
        if not name.endswith(".md"):
            continue
        table = {}
        for line in open(os.path.join(docs, name), encoding="utf-8"):
            m = HEADING.match(line)
            if m:
                words = m.group(2).replace("`", "").replace('"', "'").strip()
                table[m.group(1)] = words
        out[name[:-3]] = table
    return out


def words_of(table, number):
    """The heading of `number`, or of its closest numbered parent (a check `§6.4` of a
    page whose `6.4` is a numbered paragraph, not a heading)."""
    n = number.rstrip(".")
    while n:
        if n in table:
            return table[n]
        n = n.rsplit(".", 1)[0] if "." in n else ""
    return None


def files(root):
    for here, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP)
        for name in sorted(names):
            if name.endswith(SOURCES) or name == "Makefile":
                yield os.path.join(here, name)


# `docs/x.md §1.2`, `x.md §1.2, §1.3`, `x.md §§1.2-1.3`, `x.md §1.2 / §1.3`, `x.md §1.2 and §1.3`
CITED = re.compile(PAGE + r"(,)?\s*((?:§§?\s?" + NUM + r"(?:\s*(?:-|–|to)\s*§?" + NUM + r")?(?:\s*(?:,|/|and|or)\s*(?=§))?\s*)+)")
BARE = re.compile(r"§§?\s?(" + NUM + r")(?:\s*(?:-|–)\s*§?(" + NUM + r"))?")


def split_comment(path, line):
    """(code, comment) of a line: only comments are rewritten (a message a user reads
    keeps its words, and a string literal its quotes). A definition's (JSON) strings are
    all comments or names, so the whole line counts; None: no comment on the line."""
    if path.endswith(".json"):
        return "", line
    marker = "//" if path.endswith(".rs") else "#"
    stripped = line.lstrip()
    if stripped.startswith(marker):
        return "", line
    if path.endswith(".py") and not any(q in line for q in ('"', "'", "=", "(")):
        # A line inside a docstring: prose.
        return "", line
    at = line.find(" " + marker + " ")
    if at >= 0 and line[:at].count('"') % 2 == 0:
        return line[: at + 1], line[at + 1:]
    return line, None


def render(page, numbers, table):
    found = []
    for n in numbers:
        w = words_of(table, n)
        if w is None:
            return None
        if w not in found:
            found.append(w)
    return f"docs/{page}.md, " + " and ".join(f'"{w}"' for w in found)


def rewrite(path, text, heads, problems):
    own = None
    rel = os.path.basename(path)
    lines = text.split("\n")
    last_page = {}  # line index -> the page last named at or above it
    current = None
    for i, line in enumerate(lines):
        for m in re.finditer(PAGE, line):
            if m.group(1) in heads:
                current = m.group(1)
        last_page[i] = current
    out = []
    count = 0
    recent = None
    recent_line = -99
    for i, whole in enumerate(lines):
        code, line = split_comment(path, whole)
        if line is None:
            out.append(whole)
            for m in re.finditer(PAGE, whole):
                if m.group(1) in heads:
                    recent, recent_line = m.group(1), i
            continue

        def cited(m):
            nonlocal count
            page = m.group(1)
            if page not in heads:
                return m.group(0)
            numbers = [a for pair in BARE.findall(m.group(3)) for a in pair if a]
            new = render(page, numbers, heads[page])
            if new is None:
                problems.append(f"{path}:{i + 1}: {m.group(0).strip()} names no heading")
                return m.group(0)
            count += 1
            tail = m.group(3)[len(m.group(3).rstrip()):]
            return new + tail

        line = CITED.sub(cited, line)
        for m in re.finditer(PAGE, line):
            if m.group(1) in heads:
                recent, recent_line = m.group(1), i

        def bare(m):
            nonlocal count
            page = recent if i - recent_line <= 12 else None
            if page is None:
                problems.append(f"{path}:{i + 1}: {m.group(0)} names no page")
                return m.group(0)
            numbers = [x for x in m.groups() if x]
            w = [words_of(heads[page], n) for n in numbers]
            if any(x is None for x in w):
                problems.append(f"{path}:{i + 1}: {m.group(0)} names no heading of {page}.md")
                return m.group(0)
            count += 1
            return " and ".join(f'"{x}"' for x in dict.fromkeys(w))

        line = BARE.sub(bare, line)
        out.append(code + line)
    return "\n".join(out), count


def main(argv):
    write = "--write" in argv
    args = [a for a in argv if a != "--write"]
    root = args[0] if args else "."
    heads = headings(root)
    problems, changed, total = [], 0, 0
    for path in files(root):
        if os.path.relpath(path, root).startswith("docs" + os.sep):
            continue
        if os.path.basename(path) == "cite_headings.py":
            continue
        text = open(path, encoding="utf-8").read()
        json_file = path.endswith(".json")
        if json_file:
            # A definition writes the sign as an escape.
            text = text.replace("\\u00a7", "§")
        if "§" not in text:
            continue
        new, n = rewrite(path, text, heads, problems)
        if json_file:
            new, text = new.replace("§", "\\u00a7"), text.replace("§", "\\u00a7")
        total += n
        if new != text:
            changed += 1
            if write:
                # A JSON file's strings take the quotes escaped.
                if path.endswith(".json"):
                    new = escape_json_quotes(text, new)
                open(path, "w", encoding="utf-8").write(new)
    for p in problems:
        print(p)
    print(f"citations by number: {total} rewritten in {changed} files; {len(problems)} left")
    return 1 if problems or (total and not write) else 0


def escape_json_quotes(old, new):
    """In a JSON file the inserted `"words"` sit inside a string: escape them."""
    return re.sub(r'(docs/[a-z_-]+\.md, )((?:"[^"\n]*"(?: and )?)+)',
                  lambda m: m.group(1) + m.group(2).replace('"', '\\"'), new)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
