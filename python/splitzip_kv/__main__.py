# SPDX-License-Identifier: Apache-2.0
"""``python -m splitzip_kv``: the splitzip CLI shipped in the wheel."""

from ._cli import main

if __name__ == "__main__":  # importing the module (stubtest does) must not run the CLI
    main()
