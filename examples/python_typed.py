# SPDX-License-Identifier: Apache-2.0
"""A typed use of the Python package, checked by mypy against the stubs the
wheel ships (scripts/python_test.sh). Runs as a script too:

    python examples/python_typed.py data/kv/stories260k/layer00_k.bf16
"""
import sys
from typing import Dict, List, Optional

import numpy as np

import splitzip_kv


def roundtrip(path: str, codebook: Optional[splitzip_kv.Codebook] = None) -> float:
    raw = np.fromfile(path, dtype=np.uint16)
    frame: bytes = splitzip_kv.compress(raw, codebook, dtype="bf16", checksum=True)
    info: Dict[str, object] = splitzip_kv.frame_info(frame)
    back = splitzip_kv.decompress(frame)
    if back.view(np.uint16).tobytes() != raw.tobytes():
        raise SystemExit(f"{path}: round trip differs")
    out = np.empty(splitzip_kv.compress_bound("bf16", raw.size), dtype=np.uint8)
    res: splitzip_kv.Result = splitzip_kv.compress_into(raw, out, dtype="bf16")
    size: int = res.size
    assert size > 0
    print(f"{path}: {raw.nbytes} -> {len(frame)} bytes via {res.backend}, dtype {info['dtype']}")
    return raw.nbytes / len(frame)


def main(paths: List[str]) -> int:
    version: str = splitzip_kv.__version__
    avail: Dict[str, bool] = splitzip_kv.backends()
    for name in avail:
        why: Optional[str] = splitzip_kv.backend_unavailable_reason(name)
        print(f"splitzip_kv {version}: {name}: {why or 'available'}")
    cb = splitzip_kv.calibrate([np.fromfile(p, dtype=np.uint16) for p in paths], dtype="bf16")
    ratios = [roundtrip(p, cb) for p in paths]
    print(f"mean ratio {sum(ratios) / len(ratios):.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["data/kv/stories260k/layer00_k.bf16"]))
