#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs a command as on a host with no CUDA: no CUDA library reachable and no
# driver, then checks that none was loaded.
#   scripts/without_cuda.sh CMD [ARGS...]
# - LD_LIBRARY_PATH is cleared of CUDA directories.
# - As root (CI, the dev VM): inside a private mount namespace, every CUDA
#   directory (/usr/local/cuda*, and any CUDA entry of the loader config
#   /etc/ld.so.conf.d) is covered by an empty tmpfs, so neither the loader
#   cache nor a dlopen can reach libcudart, libcuda or libnvrtc.
# - Without root: no namespace; the LD_DEBUG check below still proves that no
#   CUDA library was loaded.
# - Always: LD_DEBUG=libs records every library the loader opened (also by
#   dlopen); any libcuda*/libcudart*/libnvrtc* among them fails the run.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 CMD [ARGS...]" >&2; exit 2; }

clean_ldpath=""
IFS=: read -ra parts <<<"${LD_LIBRARY_PATH:-}"
for p in "${parts[@]}"; do
  case "$p" in ""|*cuda*|*nvidia*) ;; *) clean_ldpath="${clean_ldpath:+$clean_ldpath:}$p" ;; esac
done

log=$(mktemp)
trap 'rm -f "$log"' EXIT

hide_dirs=()
for d in /usr/local/cuda /usr/local/cuda-* $(cat /etc/ld.so.conf.d/*.conf 2>/dev/null | grep -iE 'cuda|nvidia' || true); do
  [ -e "$d" ] || continue
  r=$(readlink -f "$d")
  [ -d "$r" ] || continue
  nested=0
  for h in "${hide_dirs[@]}"; do [[ "$r" == "$h" || "$r" == "$h"/* ]] && nested=1; done
  [ $nested -eq 1 ] || hide_dirs+=("$r")
done

run_env=(env LD_LIBRARY_PATH="$clean_ldpath" LD_DEBUG=libs LD_DEBUG_OUTPUT="$log")
set +e
if [ "$(id -u)" -eq 0 ] && command -v unshare >/dev/null; then
  echo "without_cuda: mount namespace, hiding: ${hide_dirs[*]:-(none present)}" >&2
  # shellcheck disable=SC2016
  unshare -m --propagation private bash -c '
    n=$1; shift
    for ((i = 0; i < n; i++)); do mount -t tmpfs -o ro,size=4k none "$1" || exit 97; shift; done
    exec "$@"' _ "${#hide_dirs[@]}" "${hide_dirs[@]}" "${run_env[@]}" "$@"
  rc=$?
else
  echo "without_cuda: not root, no mount namespace; relying on the LD_DEBUG check" >&2
  "${run_env[@]}" "$@"
  rc=$?
fi
set -e
if [ $rc -eq 97 ]; then echo "without_cuda: could not hide the CUDA directories" >&2; exit 1; fi
loaded=$(cat "$log"* 2>/dev/null | grep -oE 'calling init: [^ ]+' | awk '{print $3}' | sort -u || true)
rm -f "$log"*
cuda=$(echo "$loaded" | grep -E '/lib(cuda|cudart|nvrtc|nvJitLink)[^/]*$' || true)
if [ -n "$cuda" ]; then
  echo "without_cuda: FAIL: a CUDA library was loaded: $cuda" >&2
  exit 1
fi
echo "without_cuda: $(echo "$loaded" | grep -c .) libraries initialised, none from CUDA" >&2
exit $rc
