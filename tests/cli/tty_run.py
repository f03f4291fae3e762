#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Runs a command with its stdin or stdout on a new pseudo-terminal, so the
CLI's isatty() checks meet a real terminal in a test.

    tty_run.py stdin|stdout CMD...

The other descriptors are inherited. What CMD writes to the terminal is
copied to our stdout; the exit status is CMD's (124 if it ran past 60 s,
for instance because it read a terminal it should have refused)."""
import os
import pty
import select
import subprocess
import sys
import time


def main():
    which, cmd = sys.argv[1], sys.argv[2:]
    master, slave = pty.openpty()
    kw = {"stdin": slave} if which == "stdin" else {"stdout": slave}
    proc = subprocess.Popen(cmd, **kw)
    os.close(slave)
    out = b""
    deadline = time.monotonic() + 60
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            proc.kill()
            proc.wait()
            sys.stdout.buffer.write(out)
            return 124
        ready, _, _ = select.select([master], [], [], min(left, 0.2))
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: every slave end is closed
                break
            if not chunk:
                break
            out += chunk
        elif proc.poll() is not None:
            break
    rc = proc.wait()
    sys.stdout.buffer.write(out)
    return rc


if __name__ == "__main__":
    sys.exit(main())
