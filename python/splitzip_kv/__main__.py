# SPDX-License-Identifier: Apache-2.0
"""``python -m splitzip_kv``: the splitzip CLI shipped in the wheel."""

from ._cli import main

main()
