# SPDX-License-Identifier: Apache-2.0
"""Runs the code examples of README.md and docs/*.md marked runnable, so a
renamed function or option fails CI (issue 31).

Marking an example: put the HTML comment ``<!-- runnable -->`` on the line
right before its fence (indentation ignored; it renders as nothing)::

    <!-- runnable -->
    ```python
    ...
    ```

Fence languages: ``python`` (run with this interpreter), ``sh`` / ``bash``
(``bash -euo pipefail``, with this venv's ``bin`` first on PATH, so
``splitzip`` is the wheel's CLI) and ``c`` (compiled with ``cc`` against
``build/`` when the library is built there, else skipped). Each example runs
alone in a fresh temporary directory whose ``data`` links to the repository's
``data/`` (the bundled KV in ``data/kv``), so examples cannot see each other
or write into the checkout. Unmarked blocks are never run.
"""

import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
MARK = re.compile(r"^\s*<!--\s*runnable\s*-->\s*$")
FENCE = re.compile(r"^(\s*)```(\w+)\s*$")
LANGS = {"python": "python", "py": "python", "sh": "sh", "bash": "sh", "c": "c"}


def _examples():
    files = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    out = []
    for path in files:
        lines = path.read_text(encoding="utf-8").splitlines()
        i = 0
        while i < len(lines):
            m = FENCE.match(lines[i]) if i > 0 and MARK.match(lines[i - 1]) else None
            if m is None:
                i += 1
                continue
            indent, lang = m.group(1), m.group(2)
            start = i + 1
            j = start
            while j < len(lines) and lines[j].strip() != "```":
                j += 1
            if j == len(lines):
                raise AssertionError(f"{path.name}:{i + 1}: runnable example has no closing fence")
            body = "\n".join(l[len(indent):] if l.startswith(indent) else l for l in lines[start:j])
            if lang not in LANGS:
                raise AssertionError(f"{path.name}:{i + 1}: runnable example in unknown language {lang!r}")
            out.append(pytest.param(LANGS[lang], body, id=f"{path.relative_to(ROOT)}:{i + 1}"))
            i = j + 1
    return out


EXAMPLES = _examples()


def test_some_examples_are_marked():
    assert len(EXAMPLES) >= 3


def _workdir(tmp_path):
    (tmp_path / "data").symlink_to(ROOT / "data")
    return tmp_path


@pytest.mark.parametrize("lang,code", EXAMPLES)
def test_example(lang, code, tmp_path):
    wd = _workdir(tmp_path)
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), env.get("PATH", "")])
    if lang == "python":
        cmd = [sys.executable, "-c", code]
    elif lang == "sh":
        cmd = ["bash", "-euo", "pipefail", "-c", code]
    else:
        lib = ROOT / "build" / "lib"
        cc = shutil.which("cc")
        if cc is None or not any(lib.glob("libsplitzip.so*")):
            pytest.skip("C examples need cc and the library built in build/ (cmake --build build)")
        (wd / "example.c").write_text(code)
        subprocess.run([cc, "-std=c11", "-I", str(ROOT / "include"), "example.c", "-L", str(lib),
                        "-lsplitzip", f"-Wl,-rpath,{lib}", "-o", "example"], cwd=wd, check=True)
        cmd = [str(wd / "example")]
    r = subprocess.run(cmd, cwd=wd, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"exit {r.returncode}\n--- stdout\n{r.stdout[-3000:]}\n--- stderr\n{r.stderr[-3000:]}"
