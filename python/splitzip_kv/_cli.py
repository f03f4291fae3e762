# SPDX-License-Identifier: Apache-2.0
"""The `splitzip` console script: runs the C++ CLI shipped in the wheel."""

import os
import sys


def executable() -> str:
    """Path of the bundled splitzip CLI binary."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "splitzip")


def main() -> None:
    exe = executable()
    if not os.access(exe, os.X_OK):
        sys.stderr.write(f"splitzip: the CLI binary is missing from this installation ({exe})\n")
        sys.exit(70)
    os.execv(exe, ["splitzip", *sys.argv[1:]])


if __name__ == "__main__":
    main()
