"""Every pointer in the repository resolves to a file of the repository, and nothing cites what a
reader cannot follow. Scans the tracked text files (code, READMEs, docs, golden suites' notes,
scripts) for repository paths ("judge/group.h", "docs/rope.md", "[x](../docs/design.md)") and
checks each names a tracked file or folder, and that each part of a Markdown file a pointer names
by its title in quotes (`bench/README.md "CUDA"`) is in that file; and refuses citations of
documents the repository does not contain (upper-case design and math notes at the root, numbered
seeds or issues: the project's own docs/design.md and docs/rope.md hold those facts).

    /usr/bin/python3 tests/docs/check_pointers.py [REPOSITORY]

Exit 0 when every pointer resolves, 1 with one line per broken pointer (file:line: pointer), 77
(skipped) outside a git checkout.
"""
import os
import re
import subprocess
import sys

TEXT_SUFFIXES = (".md", ".h", ".cpp", ".c", ".cu", ".py", ".cmake", ".txt", ".v", ".g", ".sh", ".toml", ".json", ".in",
                 ".yaml", ".yml", ".html", "MANIFEST")
# A path into the repository: at least one folder, then a file with a known suffix or a folder
# ending in '/'. Paths under build folders, /tmp, URLs and absolute paths are not the repository's.
PATH = re.compile(r"(?<![\w./:$@{-])((?:\.\./|\./)?(?:[A-Za-z0-9_][A-Za-z0-9_.-]*/)+[A-Za-z0-9_][A-Za-z0-9_.-]*"
                  r"\.(?:md|h|cpp|c|cu|py|cmake|json|v|g|toml|sh|txt|yaml|yml|in))(?![\w/])")
NOT_OURS = ("build", "build-", "usr/", "tmp/", "proc/", "dev/", "etc/", "home/", "site-packages", "my-", "my_")
# A pointer into a Markdown file's part: the file, then the part's title in double quotes
# (bench/README.md "CUDA"), on the same line or at the start of the next line of the same comment.
SECTION = re.compile(r"(?<![\w./\"-])((?:[A-Za-z0-9_][A-Za-z0-9_.-]*/)*[A-Za-z0-9_][A-Za-z0-9_.-]*\.md),?"
                     r"[ \t]*(?:\n[ \t]*(?://|#|\*)?[ \t]*)?\"([^\s\"|][^\"\n]{1,99})\"")
FORBIDDEN = re.compile(r"\b(?:DESIGN|ROPE)\.md\b|\bseeds? 0\d\d\b|\bissues? #?\d+\b|\bIssue #?\d+\b")


def tracked(root):
    done = subprocess.run(["git", "-C", root, "ls-files"], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        print(f"skipped: {root} is not a git checkout (the tracked files are what is checked)")
        sys.exit(77)
    return [line for line in done.stdout.splitlines() if line]


def flat(text):
    return " ".join(text.split())


def missing_sections(root, name, text, known):
    """The part titles that `name` cites in a Markdown file of the repository which that file does
    not contain (whitespace and line breaks aside)."""
    found = []
    here = os.path.dirname(name)
    for match in SECTION.finditer(text):
        pointer, title = match.group(1), match.group(2)
        candidates = (os.path.normpath(pointer), os.path.normpath(os.path.join(here, pointer)))
        target = next((c for c in candidates if c in known), None)
        if target is None:
            continue  # not a file of the repository (the path check reports the ones that should be)
        with open(os.path.join(root, target), encoding="utf-8") as handle:
            if flat(title) in flat(handle.read()):
                continue
        number = text.count("\n", 0, match.start()) + 1
        found.append(f"{name}:{number}: {target} has no part {title!r}")
    return found


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".."))
    files = tracked(root)
    known = set(files)
    folders = {os.path.dirname(f) for f in files}
    for f in list(folders):
        while f:
            f = os.path.dirname(f)
            folders.add(f)
    top_level = {f.split("/")[0] for f in files if "/" in f}
    broken = []
    for name in files:
        if not name.endswith(TEXT_SUFFIXES) or name.startswith(("peers/RESULTS.md", "tests/docs/")):
            continue
        try:
            with open(os.path.join(root, name), encoding="utf-8") as handle:
                lines = handle.read().splitlines()
        except (UnicodeDecodeError, OSError):
            continue
        here = os.path.dirname(name)
        prose = name.endswith((".md", ".json", "MANIFEST", ".txt"))
        for number, line in enumerate(lines, 1):
            # In code, the comments and the strings a user reads (help text, messages); not the
            # #include lines (a library's own headers) nor paths the tests build in their folders.
            if not prose and line.lstrip().startswith("#include"):
                continue
            for match in FORBIDDEN.finditer(line):
                broken.append(f"{name}:{number}: cites {match.group(0)!r}, which the repository does not contain")
            for match in PATH.finditer(line):
                pointer = match.group(1)
                first = os.path.normpath(os.path.join(here, pointer)).split(os.sep)[0] if pointer.startswith(".") else pointer.split("/")[0]
                if first not in top_level:
                    continue  # not a path into the repository (a temporary file, a system header)
                if pointer.startswith(NOT_OURS) or "://" in line[max(0, match.start() - 12):match.start()]:
                    continue
                candidates = [os.path.normpath(pointer), os.path.normpath(os.path.join(here, pointer))]
                if any(c in known or c in folders for c in candidates):
                    continue
                broken.append(f"{name}:{number}: {pointer} is not a file of the repository")
        broken.extend(missing_sections(root, name, "\n".join(lines), known))
    for line in broken:
        print(line)
    print(f"{len(broken)} broken pointer(s) in {len(files)} tracked files" if broken else "every pointer resolves")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
