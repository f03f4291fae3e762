#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Makes every exit code of docs/CLI.md's "Exit codes" table happen and checks
# it. A code added to the table without a trigger here fails the test.
# usage: exit_codes.sh SPLITZIP DATA_DIR docs/CLI.md
set -u -o pipefail

SZ=$1
DATA=$2
DOC=$3
WORK=$(mktemp -d "${TMPDIR:-/tmp}/splitzip-exit-codes.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"

die() { echo "FAIL [exit_codes]: $*" >&2; exit 1; }

declare -A checked=()

# code WANT WHAT CMD...: runs CMD (stderr to err.txt) and checks its exit code.
code() {
  local want=$1 what=$2; shift 2
  "$@" > out.txt 2>err.txt
  local rc=$?
  [ "$rc" -eq "$want" ] || { cat err.txt >&2; die "$what: '$*' exited $rc, expected $want"; }
  checked[$want]=1
  echo "ok $want: $what"
}

cp "$DATA/layer00_k.bf16" k.bf16
cp "$DATA/layer01_k.bf16" other.bf16
"$SZ" -q k.bf16 || die "setup: compress"
python3 - <<'PY'
b = bytearray(open("k.bf16.sz", "rb").read()); b[5000] ^= 0xFF; open("bad.sz", "wb").write(b)
PY

code 0 "success" "$SZ" -t k.bf16.sz
code 1 "unknown option" "$SZ" --no-such-option k.bf16
code 1 "ambiguous --dtype fp8" "$SZ" --dtype fp8 k.bf16
code 1 "-o with several inputs" "$SZ" -o x.sz k.bf16 other.bf16
code 2 "input does not exist" "$SZ" does-not-exist
code 2 "output exists without -f" "$SZ" k.bf16
code 3 "checksum mismatch (-t)" "$SZ" -t bad.sz
code 3 "checksum mismatch (-d)" "$SZ" -d -o out.bf16 bad.sz
code 4 "verify against another original" "$SZ" verify k.bf16.sz other.bf16
code 5 "--max-size below the decoded size" "$SZ" -d --max-size 1K -o out.bf16 k.bf16.sz
code 6 "unknown backend" "$SZ" --backend no-such-backend -o x.sz k.bf16
# Out of memory: a 1 GiB frame of a sparse 4 GiB input under an 800 MB address-space limit.
truncate -s 4G sparse.bf16
if grep -q __asan_init "$SZ"; then
  # ASan reserves terabytes of address space, so ulimit -v cannot be used; its
  # allocator refuses the same 1 GiB buffer instead.
  code 7 "out of memory (asan)" env ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}allocator_may_return_null=1:max_allocation_size_mb=512" \
    "$SZ" -q --frame-size 1G -o sparse.sz sparse.bf16
else
  code 7 "out of memory" bash -c 'ulimit -v 800000 && exec "$0" -q --frame-size 1G -o sparse.sz sparse.bf16' "$SZ"
fi
rm -f sparse.bf16
# Several files: the first failure's code, the other files still done.
rm -f other.bf16.sz
code 3 "several files: first failure wins" "$SZ" -t bad.sz nope.sz k.bf16.sz

# 128+N: a run blocked on a pipe with its temp output open, then a signal.
for sig in INT TERM HUP; do
  rm -f fifo; mkfifo fifo
  "$SZ" --frame-size 4K -o sig.sz - < fifo 2>/dev/null &
  pid=$!
  exec 3>fifo
  head -c 8192 k.bf16 >&3
  i=0
  until ls -A | grep -q '\.sig\.sz\.splitzip-'; do
    i=$((i + 1)); [ $i -lt 1000 ] || die "SIG$sig: temp output never appeared"; sleep 0.01
  done
  kill -s $sig $pid
  wait $pid 2>/dev/null; rc=$?
  exec 3>&-
  want=$((128 + $(kill -l $sig)))
  [ $rc -eq $want ] || die "SIG$sig: exited $rc, expected $want"
  [ ! -e sig.sz ] && ! ls -A | grep -q '\.splitzip-' || die "SIG$sig: output or temp file left"
  checked["128+N"]=1
  echo "ok $rc: SIG$sig"
done

# Every code the table documents was made to happen above.
documented=$(sed -n '/^## Exit codes/,/^## /p' "$DOC" | sed -n 's/^| *\([0-9N+]*\) *| .*/\1/p')
[ -n "$documented" ] || die "no exit code table found in $DOC"
n=0
for c in $documented; do
  [ -n "${checked[$c]:-}" ] || die "exit code $c is documented but not tested"
  n=$((n + 1))
done
echo "PASS [exit_codes]: all $n documented exit codes checked"
