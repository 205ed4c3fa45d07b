#!/usr/bin/env python3
"""Doxygen input filter: gltrain's headers document with plain // comments.

- A run of whole-line // comments directly above a declaration becomes a ///
  comment (its documentation). Comments followed by a blank line, a preprocessor
  line, a closing brace or a namespace stay ordinary comments (file headers,
  section notes).
- A trailing // comment after a member or enumerator (code ending in ';' or ',')
  becomes ///<.
- A member line declaring several variables (`int rows, cols;  // ...`) is
  split, for Doxygen only, into one declaration each with the same text, since
  Doxygen documents only one declarator of a list.
- `enum Kind { ... } kind;` gets the comment above for the variable too.
- '<' in documentation is escaped, so that `<canvas>` is text, not HTML.
Lines are neither added nor removed, so warnings point at the real line.
Usage (Doxygen's INPUT_FILTER): doxygen_filter.py FILE
"""
import re
import sys

lines = open(sys.argv[1], encoding='utf-8').read().split('\n')
whole = re.compile(r'^(\s*)//(?![/!])\s?(.*)$')


def doc(text):
    return text.replace('<', '\\<').replace('*/', '* /')


def comment_start(line):
    """Index of the first // outside a string or character literal, or -1."""
    quote = None
    k = 0
    while k < len(line):
        ch = line[k]
        if quote:
            if ch == '\\':
                k += 2
                continue
            if ch == quote:
                quote = None
        elif ch in '"\'':
            quote = ch
        elif line.startswith('//', k):
            return k
        k += 1
    return -1


def declarators(code):
    """`T a = 1, b;` -> (T, ['a = 1', 'b']) when code is a declaration of several names."""
    if not code.endswith(';') or '(' in code.split('=')[0] or re.match(r'\s*(return|using|typedef|enum|friend)\b', code):
        return None
    parts, depth, cur = [], 0, ''
    for ch in code[:-1]:
        if ch in '([{<':
            depth += 1
        elif ch in ')]}>':
            depth -= 1
        if ch == ',' and depth == 0:
            parts.append(cur)
            cur = ''
        else:
            cur += ch
    parts.append(cur)
    if len(parts) < 2:
        return None
    m = re.match(r'^(\s*[\w:<>,\s\*&]*?[\w>\*&])\s+(\w+\s*(=.*|\{.*\})?)$', parts[0])
    if not m or not all(re.match(r'^\s*\w+\s*(=.*|\{.*\})?$', p) for p in parts[1:]):
        return None
    return m.group(1), [m.group(2).strip()] + [p.strip() for p in parts[1:]]


out = list(lines)
pending = None  # the text of a /// run just above
i = 0
while i < len(lines):
    line = lines[i]
    if whole.match(line):
        j = i
        while j < len(lines) and whole.match(lines[j]):
            j += 1
        nxt = lines[j].strip() if j < len(lines) else ''
        pending = None
        if nxt and not nxt.startswith(('#', '}', 'namespace')):
            texts = []
            for k in range(i, j):
                m = whole.match(lines[k])
                out[k] = f'{m.group(1)}/// {doc(m.group(2))}'
                texts.append(m.group(2))
            pending = ' '.join(texts)
        i = j
        continue
    k = comment_start(line)
    code = (line[:k] if k >= 0 else line).rstrip()
    text = line[k + 2:].strip() if k >= 0 and not line.startswith('///', k) else None
    split = declarators(code.strip()) if code.strip() else None
    if pending and not text and re.match(r'\s*enum\s+\w+\s*\{.*\}\s*\w+.*;$', code):
        out[i] = f'{code} /**< {doc(pending)} */'  # `enum Kind {...} kind;`: the comment is both's
    elif split and (text or pending):
        indent = re.match(r'\s*', code).group(0)
        note = doc(text or pending)
        out[i] = indent + ' '.join(f'{split[0].strip()} {d}; /**< {note} */' for d in split[1])
    elif text is not None and code.strip() and code[-1] in ';,':
        out[i] = f'{code}{line[len(code):k]}///< {doc(text)}'
    pending = None
    i += 1
sys.stdout.write('\n'.join(out))
