#!/usr/bin/env python3
"""Checks every relative link in README.md and docs/**/*.md.

    check_links.py [ROOT]      ROOT: the repository (default: two levels up)
    check_links.py --self-test checks that the checker itself finds broken links

A link is broken when its file (or folder) does not exist inside ROOT, or
when it names an #anchor that no heading of the Markdown file it points to
gives, derived as GitHub derives heading anchors. Links with a scheme
(https:, mailto:...) are not checked. Prints one line per broken link,
FILE:LINE: TARGET: why, and exits 1 if there is one, else 0.
"""
import os
import re
import sys
import tempfile
import unicodedata
from urllib.parse import unquote

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
ATX = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
# [text](target "title"), ![alt](target), [text](<target>)
INLINE = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(\s*(<[^>]*>|[^\s)]+)(?:\s+[\"'(][^)]*)?\s*\)")
REFDEF = re.compile(r"^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)")
HTML_ID = re.compile(r"<a\s[^>]*(?:name|id)\s*=\s*[\"']([^\"']+)[\"']", re.I)
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def prose_lines(text):
    """(line number, line) outside fenced code blocks and indented code."""
    fence = None
    prev_blank = True
    in_indented = False
    for n, line in enumerate(text.splitlines(), 1):
        m = FENCE.match(line)
        if fence:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = None
            continue
        if m:
            fence = m.group(1)
            continue
        blank = not line.strip()
        if (line.startswith("    ") or line.startswith("\t")) and (prev_blank or in_indented):
            in_indented = True
            continue
        if not blank:
            in_indented = False
        prev_blank = blank
        yield n, line


def anchor_of(heading):
    """The anchor GitHub gives a heading: its text, lower case, without
    punctuation but hyphens and underscores, spaces made hyphens."""
    text = CODE_SPAN.sub(lambda m: m.group(2).strip(), heading)
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # links: their text
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML tags
    text = re.sub(r"(\*+|_+)(\S(?:.*?\S)?)\1", r"\2", text)  # emphasis
    out = []
    for ch in text.lower():
        if ch in " -_" or unicodedata.category(ch)[0] in "LMN":
            out.append("-" if ch == " " else ch)
    return "".join(out)


def anchors(path, cache={}):
    if path not in cache:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        seen = {}
        found = set()
        prev = None
        for _, line in prose_lines(text):
            m = ATX.match(line)
            heading = m.group(2) if m else None
            if heading is None and prev and prev.strip() and SETEXT.match(line) \
                    and not ATX.match(prev):
                heading = prev.strip()
            if heading is not None:
                base = anchor_of(heading)
                n = seen.get(base, 0)
                seen[base] = n + 1
                found.add(base if n == 0 else f"{base}-{n}")
            for m in HTML_ID.finditer(line):
                found.add(m.group(1))
            prev = line
        cache[path] = found
    return cache[path]


def links(text):
    for n, line in prose_lines(text):
        bare = CODE_SPAN.sub("", line)
        for m in INLINE.finditer(bare):
            yield n, m.group(1)
        m = REFDEF.match(bare)
        if m:
            yield n, m.group(1)


def check_file(root, path):
    errors = []
    with open(path, encoding="utf-8") as f:
        text = f.read()
    rel = os.path.relpath(path, root)
    for n, target in links(text):
        target = target.strip("<>")
        if SCHEME.match(target) or target.startswith("//"):
            continue
        file_part, _, anchor = target.partition("#")
        file_part = unquote(file_part.split("?")[0])
        dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) \
            if file_part else path
        where = f"{rel}:{n}: {target}:"
        if os.path.relpath(dest, root).startswith(".."):
            errors.append(f"{where} leaves the repository")
        elif not os.path.exists(dest):
            errors.append(f"{where} no such file")
        elif anchor and dest.endswith(".md"):
            if unquote(anchor) not in anchors(dest):
                errors.append(f"{where} no heading gives #{anchor} in "
                              f"{os.path.relpath(dest, root)}")
    return errors


def pages(root):
    found = [os.path.join(root, "README.md")]
    for folder, dirs, files in os.walk(os.path.join(root, "docs")):
        dirs.sort()
        found += [os.path.join(folder, f) for f in sorted(files) if f.endswith(".md")]
    return [p for p in found if os.path.isfile(p)]


def check(root):
    root = os.path.abspath(root)
    errors = []
    checked = pages(root)
    for path in checked:
        errors += check_file(root, path)
    return checked, errors


def self_test():
    """A tree with one link of each kind, good and broken: the checker must
    pass the good ones and name each broken one."""
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "docs"))
        with open(os.path.join(root, "README.md"), "w") as f:
            f.write("# T\n\n[a](docs/a.md) [b](docs/a.md#the-gpu_timing-option) "
                    "[c](#t) [d](https://example.com/x.md) `[e](nope.md)`\n\n"
                    "    [f](nope.md)\n\n"
                    "[g](docs/missing.md) [h](docs/a.md#nowhere) [i](#t-1)\n")
        with open(os.path.join(root, "docs", "a.md"), "w") as f:
            f.write("# A\n\n## The `GPU_TIMING` option!\n\n```\n# not a heading\n```\n\n"
                    "[j](../README.md#t) [k](a.md#a) [l](../../outside.md) "
                    "[m](#not-a-heading)\n")
        _, errors = check(root)
        want = ["README.md:7: docs/missing.md:", "README.md:7: docs/a.md#nowhere:",
                "README.md:7: #t-1:", "docs/a.md:9: ../../outside.md:",
                "docs/a.md:9: #not-a-heading:"]
        got = [e.split(" ", 2)[0] + " " + e.split(" ", 2)[1] for e in errors]
        if sorted(got) != sorted(want):
            print("self-test failed: expected\n  " + "\n  ".join(want) +
                  "\ngot\n  " + "\n  ".join(errors))
            return 1
    print("self-test: every broken link found, no good one reported")
    return 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if len(argv) > 2 or (len(argv) == 2 and argv[1].startswith("-")):
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    root = argv[1] if len(argv) == 2 else os.path.join(os.path.dirname(__file__), "..", "..")
    checked, errors = check(root)
    for e in errors:
        print(e)
    print(f"{len(checked)} pages, {len(errors)} broken links")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
