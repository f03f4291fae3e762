#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# SPDX licence identifiers in source headers.
#   scripts/spdx.sh --check   list tracked sources without one; exit 1 if any
#   scripts/spdx.sh --fix     add "SPDX-License-Identifier: Apache-2.0" to them
# Sources: C/C++/CUDA, Python, shell, CMake. Data, golden files, docs and the
# fuzz corpus carry none. SPDX_SKIP (regex on the path) leaves files out.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:---check}
tag="SPDX-License-Identifier: Apache-2.0"
skip=${SPDX_SKIP:-^$}
missing=()
while IFS= read -r f; do
  [ -f "$f" ] || continue
  [[ "$f" =~ $skip ]] && continue
  head -n 5 "$f" | grep -q "SPDX-License-Identifier:" && continue
  missing+=("$f")
done < <(git ls-files -- '*.c' '*.cc' '*.cpp' '*.h' '*.hpp' '*.cu' '*.cuh' '*.py' '*.pyi' '*.sh' \
           '*.cmake' '*CMakeLists.txt' '*.in' | grep -vE '^(tests/fuzz/corpus|tests/golden|data)/')

if [ "$mode" = "--fix" ]; then
  for f in "${missing[@]}"; do
    case "$f" in
      *.c|*.h|*.h.in) line="/* $tag */" ;;
      *.cc|*.cpp|*.hpp|*.cu|*.cuh) line="// $tag" ;;
      *) line="# $tag" ;;
    esac
    if head -n 1 "$f" | grep -q '^#!'; then
      sed -i "1a $line" "$f"
    else
      sed -i "1i $line" "$f"
    fi
    echo "spdx: added to $f"
  done
  exit 0
fi
if ((${#missing[@]})); then
  printf 'spdx: no SPDX-License-Identifier in %s\n' "${missing[@]}"
  echo "spdx: ${#missing[@]} files; run scripts/spdx.sh --fix"
  exit 1
fi
echo "spdx: every source carries an SPDX identifier"
