#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The house rules of user/ (docs/layout.md), measured from the source:

  folders  the folders' include graph has no cycle: no folder includes,
           directly or through others, a folder that includes it back, so the
           folders stack in layers and no include runs from a lower one up;
  files    no file is over 800 lines;
  funcs    no function is over 120 lines (a top-level '{' to its '}').

Usage: layout_check.py ROOT RULE   (RULE: folders, files or funcs)
Prints one line per breach and exits 1 when there is one; `folders` also
prints the layers, lowest first. Brace counting skips comments, strings and
character literals, so a '{' written as data does not open a function."""
import os
import re
import sys

MAX_FILE_LINES = 800
MAX_FUNC_LINES = 120
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def sources(user):
    for d in sorted(os.listdir(user)):
        folder = os.path.join(user, d)
        if not os.path.isdir(folder):
            continue
        for f in sorted(os.listdir(folder)):
            if f.endswith(('.c', '.h')):
                yield d, f, open(os.path.join(folder, f), encoding='utf-8', errors='replace').read()


def strip_literals(src):
    src = re.sub(r'/\*.*?\*/', lambda m: '\n' * m.group(0).count('\n'), src, flags=re.S)
    src = re.sub(r'//[^\n]*', '', src)
    src = re.sub(r"'(\\.|[^'\\\n])*'", "' '", src)
    return re.sub(r'"(\\.|[^"\\\n])*"', '""', src)


def folder_graph(user):
    folders = {d for d in os.listdir(user) if os.path.isdir(os.path.join(user, d))}
    edges = {d: set() for d in folders}
    for d, f, src in sources(user):
        for inc in INCLUDE.findall(src):
            top = inc.split('/')[0]
            if '/' in inc and top in folders and top != d:
                edges[d].add(top)
    return edges


def layers(edges):
    """Folders in layers (a folder sits one above the highest it includes),
    or None and the folders left on a cycle."""
    placed, order = {}, []
    while len(placed) < len(edges):
        ready = [d for d in edges if d not in placed and edges[d] <= set(placed)]
        if not ready:
            return None, sorted(d for d in edges if d not in placed)
        for d in ready:
            placed[d] = 1 + max((placed[e] for e in edges[d]), default=-1)
        order += ready
    by = {}
    for d, n in placed.items():
        by.setdefault(n, []).append(d)
    return [sorted(by[n]) for n in sorted(by)], []


def cycle_through(edges, left):
    """One cycle among the folders left, for the message."""
    start = left[0]
    path, seen, d = [start], {start}, start
    while True:
        d = sorted(e for e in edges[d] if e in left)[0]
        if d in seen:
            return path[path.index(d):] + [d]
        path.append(d)
        seen.add(d)


def check_folders(user):
    edges = folder_graph(user)
    stack, left = layers(edges)
    if stack is None:
        print('folder cycle: ' + ' -> '.join(cycle_through(edges, left)))
        return 1
    for n, row in enumerate(stack):
        print(f'layer {n}: ' + ' '.join(row))
    return 0


def check_files(user):
    bad = 0
    for d, f, src in sources(user):
        n = src.count('\n')
        if n > MAX_FILE_LINES:
            print(f'user/{d}/{f}: {n} lines (at most {MAX_FILE_LINES})')
            bad = 1
    return bad


def check_funcs(user):
    bad = 0
    for d, f, src in sources(user):
        lines = strip_literals(src).split('\n')
        depth, start, name = 0, None, '?'
        for i, line in enumerate(lines):
            if depth == 0 and line.startswith('{') and i > 0:
                start = i
                j = i - 1
                while j > 0 and '(' not in lines[j]:
                    j -= 1
                m = re.search(r'(\w+)\s*\(', lines[j])
                name = m.group(1) if m else '?'
            depth += line.count('{') - line.count('}')
            if depth == 0 and start is not None:
                if i - start - 1 > MAX_FUNC_LINES:
                    print(f'user/{d}/{f}: {name}() is {i - start - 1} lines (at most {MAX_FUNC_LINES})')
                    bad = 1
                start = None
    return bad


if __name__ == '__main__':
    if len(sys.argv) != 3 or sys.argv[2] not in ('folders', 'files', 'funcs'):
        sys.exit('usage: layout_check.py ROOT folders|files|funcs')
    user = os.path.join(sys.argv[1], 'user')
    sys.exit({'folders': check_folders, 'files': check_files, 'funcs': check_funcs}[sys.argv[2]](user))
