#!/usr/bin/env python3
"""The longest function bodies in C++ sources: a table for issue 41's "none over 60 lines".

Usage: bench/function_lengths.py [--over N] [--top K] DIR_OR_FILE...

A function is a top-level `{ ... }` block (at namespace depth, not inside a class or another
function) whose opening line ends a signature: it has a `(` and is not a namespace, class,
struct, enum or initializer. Member functions defined inside a class body are counted too (the
class's own braces are skipped). Lines are counted from the signature's first line to the closing
brace. A reading aid, not a parser: string literals and comments are stripped first, raw
strings with braces inside them may miscount.
"""
import argparse
import os
import re
import sys

BLOCK_KEYWORDS = re.compile(r"\b(namespace|class|struct|enum|union)\b")


def strip(text):
    """Text with comments, string and character literals blanked (newlines kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif text.startswith('R"', i):
            m = re.match(r'R"([^(]*)\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = ")" + m.group(1) + '"'
            j = text.find(end, i + m.end())
            j = n if j < 0 else j + len(end)
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(path):
    """(name, first line, line count) of each function in `path`."""
    text = strip(open(path, encoding="utf-8", errors="replace").read())
    line_of = []  # line number of each character
    line = 1
    for c in text:
        line_of.append(line)
        line += c == "\n"
    found = []
    stack = []  # one (kind, name, first line) per open brace; kind: function, scope, other
    head_start = 0  # where the text since the last ; { } starts
    for i, c in enumerate(text):
        if c == "{":
            head = text[head_start:i]
            kind = "other"
            if all(k != "function" for k, _, _ in stack):
                if BLOCK_KEYWORDS.search(head) or not head.strip():
                    kind = "scope"
                elif "(" in head and not head.rstrip().endswith("="):
                    kind = "function"
            if kind == "function":
                m = re.search(r"([~\w:<>]+)\s*\(", " ".join(head.split()))
                first = line_of[head_start + len(head) - len(head.lstrip())]
                stack.append(("function", m.group(1) if m else "?", first))
            else:
                stack.append((kind, None, line_of[i]))
            head_start = i + 1
        elif c == "}":
            if stack:
                kind, name, first = stack.pop()
                if kind == "function":
                    found.append((name, first, line_of[i] - first + 1))
            head_start = i + 1
        elif c == ";" and all(k != "function" for k, _, _ in stack):
            head_start = i + 1
    return found


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--over", type=int, default=60)
    ap.add_argument("--top", type=int, default=10)
    args = ap.parse_args()
    rows = []
    for p in args.paths:
        files = [p] if os.path.isfile(p) else sorted(
            os.path.join(d, f) for d, _, fs in os.walk(p) for f in fs if f.endswith((".cc", ".h")))
        for f in files:
            rows += [(n, f, first, count) for n, first, count in functions(f)]
    rows.sort(key=lambda r: (-r[3], r[1], r[2]))
    over = [r for r in rows if r[3] > args.over]
    print(f"| lines | function | where |\n|---:|---|---|")
    for n, f, first, count in rows[: args.top]:
        print(f"| {count} | {n} | {f}:{first} |")
    print(f"\n{len(rows)} functions, {len(over)} over {args.over} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
