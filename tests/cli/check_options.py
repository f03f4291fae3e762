#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The CLI's options, three ways, must agree: `splitzip --help` and each
`splitzip COMMAND --help` (the source), docs/CLI.md and the man page
generated from the help text (splitzip.1).

    check_options.py SPLITZIP_BINARY docs/CLI.md build/man/splitzip.1
"""
import re
import subprocess
import sys

OPT = re.compile(r"(?<![\w-])--?[A-Za-z][A-Za-z0-9-]*")
TOP = "(global)"


def help_options(text):
    """Options of a help text: lines that start (after indentation) with '-';
    the option column ends at the first run of two spaces."""
    opts = set()
    for line in text.splitlines():
        if not line.startswith(" ") or not line.lstrip().startswith("-"):
            continue
        term = re.split(r"\s{2,}", line.strip(), maxsplit=1)[0]
        opts.update(OPT.findall(term))
    return opts


def from_help(cli):
    def run(*args):
        return subprocess.run([cli, *args], check=True, capture_output=True, text=True).stdout

    top = run("--help")
    by_cmd = {TOP: help_options(top)}
    for cmd in re.findall(r"^  ([a-z]+)  ", top, flags=re.M):
        if cmd == "backends":
            by_cmd[cmd] = set()  # takes no options
            continue
        by_cmd[cmd] = help_options(run(cmd, "--help"))
    return by_cmd


def from_docs(path):
    """Options in the first cell of the option tables, per `### \\`cmd\\``
    section; '## Global options' holds the top-level ones."""
    by_cmd, cur = {}, None
    for line in open(path, encoding="utf-8"):
        m = re.match(r"^### `([a-z]+)`", line)
        if m:
            cur = m.group(1)
            by_cmd.setdefault(cur, set())
            continue
        if re.match(r"^## Global options", line):
            cur = TOP
            by_cmd.setdefault(cur, set())
            continue
        if line.startswith("## "):
            cur = None
            continue
        if cur is None or not line.startswith("| `-"):
            continue
        first = line.split("|")[1]
        for code in re.findall(r"`([^`]*)`", first):
            by_cmd[cur].update(OPT.findall(code))
    return by_cmd


def from_man(path):
    """Option terms of the man page: text lines (not requests) that start
    with an option, as help2man writes them (after .TP, or in a list),
    roff escapes removed."""
    opts = set()
    for line in open(path, encoding="utf-8").read().splitlines():
        if line.startswith((".", "'")):
            continue
        term = re.sub(r"\\f[BIRP]", "", line).replace("\\-", "-").strip()
        if term.startswith("-"):
            term = re.split(r"\s{2,}", term, maxsplit=1)[0]
            opts.update(OPT.findall(term))
    return opts


def main():
    cli, docs, man = sys.argv[1:4]
    helps = from_help(cli)
    documented = from_docs(docs)
    errors = []
    for cmd in sorted(set(helps) | set(documented)):
        h, d = helps.get(cmd), documented.get(cmd)
        if h is None:
            errors.append(f"docs/CLI.md documents command {cmd!r}, which --help does not list")
            continue
        if d is None:
            errors.append(f"docs/CLI.md has no section for {cmd!r} (### `{cmd}`)")
            continue
        if h - d:
            errors.append(f"{cmd}: in --help but not in docs/CLI.md: {' '.join(sorted(h - d))}")
        if d - h:
            errors.append(f"{cmd}: in docs/CLI.md but not in --help: {' '.join(sorted(d - h))}")
    all_help = set().union(*helps.values())
    in_man = from_man(man)
    if all_help - in_man:
        errors.append(f"in --help but not in the man page: {' '.join(sorted(all_help - in_man))}")
    if in_man - all_help:
        errors.append(f"in the man page but not in --help: {' '.join(sorted(in_man - all_help))}")
    for e in errors:
        print("FAIL:", e)
    if errors:
        return 1
    print(f"ok: {len(all_help)} options over {len(helps)} help texts agree with docs/CLI.md and {man}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
