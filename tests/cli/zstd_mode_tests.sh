#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Tests of the command-less, zstd-like mode of build/bin/splitzip
# (docs/CLI.md, Global options), one case per ctest test.
# usage: zstd_mode_tests.sh CASE SPLITZIP DATA_DIR
CASE=$1
SZ=$2
DATA=$3
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=case_lib.sh
. "$HERE/case_lib.sh" zstd-test

# Three raw inputs with names that carry no dtype (zstd users name files anything).
three() {
  cp "$DATA/layer00_k.bf16" a
  cp "$DATA/layer01_k.bf16" b
  cp "$DATA/layer00_v.bf16" c
}

# flip FILE OFFSET: inverts one byte in place.
flip() {
  python3 - "$1" "$2" <<'PY'
import sys
p, off = sys.argv[1], int(sys.argv[2])
b = bytearray(open(p, "rb").read()); b[off] ^= 0xFF; open(p, "wb").write(b)
PY
}

case_files() {
  three
  expect_rc 0 "$SZ" a b c
  for f in a b c; do
    [ -s $f.sz ] || die "$f.sz not created"
    [ -f $f ] || die "$f removed without --rm"
  done
  [ "$(grep -c ' -> ' err.txt)" -eq 3 ] || { cat err.txt; die "expected one summary line per file"; }
  # same bytes as the compress command with --dtype bf16
  expect_rc 0 "$SZ" compress --dtype bf16 -o a.cmd.sz a
  cmp -s a.sz a.cmd.sz || die "a.sz differs from 'compress --dtype bf16'"
  # an existing output fails that file only; -f overwrites
  expect_rc 2 "$SZ" a
  expect_rc 0 "$SZ" -f a
  # -o with one input, refused with several
  expect_rc 0 "$SZ" -o one.sz a
  cmp -s one.sz a.sz || die "-o output differs"
  expect_rc 1 "$SZ" -o two.sz a b
  grep -q "one input" err.txt || die "-o with two inputs: no clear message"
  [ ! -e two.sz ] || die "-o with two inputs wrote something"
  # --rm removes each input once written
  cp a r1; cp b r2
  expect_rc 0 "$SZ" --rm r1 r2
  [ ! -e r1 ] && [ ! -e r2 ] || die "--rm kept an input"
  [ -s r1.sz ] && [ -s r2.sz ] || die "--rm: outputs missing"
  # names with a dtype extension and containers keep their own dtype
  cp "$DATA/layer00_k.bf16" k.f32
  expect_rc 0 "$SZ" k.f32
  "$SZ" -l k.f32.sz | grep -q "dtype fp32" || die "k.f32 not read as fp32"
}

case_decompress_many() {
  three
  expect_rc 0 "$SZ" -q a b c
  mkdir orig && mv a b c orig/
  expect_rc 0 "$SZ" -d a.sz b.sz c.sz
  for f in a b c; do cmp -s $f orig/$f || die "-d: $f differs"; done
  expect_rc 0 "$SZ" --decompress -f -q a.sz b.sz
  cmp -s a orig/a || die "--decompress -f: a differs"
  # -c: the decoded files one after another
  "$SZ" -d -c a.sz b.sz > ab 2>err.txt || die "-d -c failed"
  cat orig/a orig/b | cmp -s - ab || die "-d -c a.sz b.sz is not a then b"
  # -c when compressing: a frame stream that decodes to the concatenation
  "$SZ" -c orig/a orig/b > ab.sz 2>err.txt || die "-c failed"
  "$SZ" -d -c ab.sz | cmp -s - ab || die "-c a b does not decode to a then b"
}

case_continue() {
  three
  expect_rc 0 "$SZ" -q a b c
  rm a b c
  # a missing middle file (exit 2): the others are still done, the code is the first failure's
  expect_rc 2 "$SZ" -d a.sz nope.sz c.sz
  [ -f a ] && [ -f c ] || die "files after the failing one were not decompressed"
  grep -q "nope.sz" err.txt || die "the failing file is not named"
  grep -q "1 of 3 files failed" err.txt || { cat err.txt; die "no count of failed files"; }
  # first failure wins: a corrupt file (3) before a missing one (2)
  cp a.sz bad.sz; flip bad.sz 1000
  rm -f a c
  expect_rc 3 "$SZ" -d bad.sz nope.sz a.sz
  [ -f a ] || die "a.sz after two failures not decompressed"
  [ ! -e bad ] || die "a corrupt input left an output"
}

case_pipes() {
  three
  expect_rc 0 "$SZ" -q a
  cat a.sz | "$SZ" -d > y 2>err.txt || { cat err.txt; die "cat a.sz | splitzip -d failed"; }
  cmp -s y a || die "cat a.sz | splitzip -d > y: not byte-identical"
  cat a | "$SZ" > x.sz 2>err.txt || { cat err.txt; die "cat a | splitzip failed"; }
  [ ! -s err.txt ] || { cat err.txt; die "stdin to stdout printed to stderr without -v"; }
  cmp -s x.sz a.sz || die "cat a | splitzip differs from splitzip a"
  "$SZ" -d < x.sz | cmp -s - a || die "round trip through pipes"
  # '-' is stdin too; -o names the output
  cat a | "$SZ" -o p.sz - 2>err.txt || die "- with -o"
  cmp -s p.sz a.sz || die "- -o p.sz differs"
  # stdin is bf16 by default: --dtype changes that
  cat a | "$SZ" --dtype fp16 > h.sz 2>/dev/null || die "--dtype fp16 on stdin"
  "$SZ" -l h.sz | grep -q "dtype fp16" || die "--dtype on stdin ignored"
  "$SZ" -l x.sz | grep -q "dtype bf16" || die "stdin not read as bf16"
  # any bytes round-trip (random data, not bf16 at all)
  head -c 100000 /dev/urandom > rnd
  cat rnd | "$SZ" | "$SZ" -d | cmp -s - rnd || die "random bytes do not round-trip"
}

case_list() {
  three
  expect_rc 0 "$SZ" -q a b
  "$SZ" -l a.sz b.sz > list.txt 2>err.txt || die "-l failed"
  grep -q "^a.sz: 1 frame(s)" list.txt && grep -q "^b.sz: 1 frame(s)" list.txt || { cat list.txt; die "-l listing"; }
  "$SZ" inspect a.sz > one.txt
  "$SZ" --list a.sz | cmp -s - one.txt || die "-l differs from inspect"
  cat a.sz | "$SZ" -l > piped.txt || die "-l on stdin"
  grep -q "frame 0" piped.txt || die "-l on stdin lists no frame"
  expect_rc 1 "$SZ" -l -o x a.sz
}

case_test() {
  three
  expect_rc 0 "$SZ" -q a b
  expect_rc 0 "$SZ" -t a.sz b.sz
  [ "$(grep -c OK err.txt)" -eq 2 ] || { cat err.txt; die "-t prints OK per file"; }
  ls > before.txt
  expect_rc 0 "$SZ" --test -q a.sz
  ls | cmp -s - before.txt || die "-t wrote a file"
  [ ! -s err.txt ] || die "-t -q printed something"
  cat a.sz | "$SZ" -t || die "-t on stdin"
  # one flipped payload byte: the checksum catches it (exit 3), nothing is written
  cp a.sz bad.sz; flip bad.sz 5000
  expect_rc 3 "$SZ" -t bad.sz
  grep -q "CHECKSUM_MISMATCH" err.txt || { cat err.txt; die "-t on a corrupt file: no checksum error"; }
  expect_rc 3 "$SZ" -t a.sz bad.sz b.sz
  [ "$(grep -c OK err.txt)" -eq 2 ] || die "-t did not go on past the corrupt file"
  # a truncated file
  head -c 1000 a.sz > short.sz
  expect_rc 3 "$SZ" -t short.sz
  expect_rc 1 "$SZ" -t --codebook x a.sz
}

case_terminal() {
  local T="$HERE/tty_run.py"
  # the helper really gives a terminal
  python3 "$T" stdout python3 -c 'import os, sys; sys.exit(0 if os.isatty(1) else 9)' || die "tty_run.py gives no terminal"
  three
  # compressed data to a terminal: refused, exit 1, nothing on the terminal
  python3 "$T" stdout "$SZ" < a > tty.out 2>err.txt; rc=$?
  [ $rc -eq 1 ] || { cat err.txt; die "compressed output to a terminal exited $rc, expected 1"; }
  grep -q "refusing to write compressed data to a terminal" err.txt || die "no clear terminal message"
  [ ! -s tty.out ] || die "something reached the terminal"
  python3 "$T" stdout "$SZ" -c a > tty.out 2>err.txt; [ $? -eq 1 ] || die "-c to a terminal not refused"
  # -f allows it; decompressed data may go to a terminal
  python3 "$T" stdout "$SZ" -f < a > tty.out 2>err.txt || die "-f to a terminal refused"
  [ -s tty.out ] || die "-f wrote nothing"
  "$SZ" -q a
  python3 "$T" stdout "$SZ" -d < a.sz > tty.out 2>err.txt || die "decompressing to a terminal refused"
  # no FILE and stdin a terminal: refused (exit 1) instead of waiting for typing
  python3 "$T" stdin "$SZ" > /dev/null 2>err.txt; rc=$?
  [ $rc -eq 1 ] || die "stdin a terminal: exited $rc, expected 1"
  grep -q "stdin is a terminal" err.txt || die "stdin a terminal: no clear message"
  python3 "$T" stdin "$SZ" -d > /dev/null 2>err.txt; [ $? -eq 1 ] || die "-d with stdin a terminal not refused"
  # with a FILE a terminal stdin does not matter
  python3 "$T" stdin "$SZ" -q -f a > /dev/null 2>err.txt || { cat err.txt; die "a FILE with stdin a terminal"; }
}

case_quiet_verbose() {
  three
  expect_rc 0 "$SZ" a
  [ -s err.txt ] || die "no summary line by default"
  expect_rc 0 "$SZ" -q -f a b
  [ ! -s err.txt ] || { cat err.txt; die "-q printed to stderr"; }
  expect_rc 0 "$SZ" -q -d -f a.sz
  [ ! -s err.txt ] || die "-q -d printed to stderr"
  # -q still reports errors
  expect_rc 2 "$SZ" -q nope
  grep -q "nope" err.txt || die "-q hid an error"
  # -v says when raw stdin was read as bf16, and gives the summary for stdout
  cat a | "$SZ" -v > v.sz 2>err.txt || die "-v on stdin"
  grep -q "stdin: raw input with no dtype given or in its name: read as bf16" err.txt || { cat err.txt; die "-v does not report the bf16 default"; }
  grep -q "ratio" err.txt || die "-v on stdin: no summary"
  cat a | "$SZ" -v --dtype bf16 > v.sz 2>err.txt || die "-v --dtype"
  ! grep -q "read as bf16" err.txt || die "bf16 default reported although --dtype was given"
  "$SZ" -v -f a 2>err.txt || die "-v a"
  grep -q "a: raw input with no dtype" err.txt || die "-v does not report the bf16 default for a raw file"
  "$SZ" -v -f "$DATA/layer00_k.bf16" -o k.sz 2>err.txt || die "-v k.bf16"
  ! grep -q "read as bf16" err.txt || die "bf16 default reported for a .bf16 name"
  expect_rc 1 "$SZ" -q -v a
}

case_options() {
  three
  # fp8 is ambiguous: the message names both
  expect_rc 1 "$SZ" --dtype fp8 a
  grep -q "fp8_e4m3" err.txt && grep -q "fp8_e5m2" err.txt || { cat err.txt; die "--dtype fp8: names not given"; }
  expect_rc 1 "$SZ" compress --dtype fp8 a
  grep -q "fp8_e4m3 or fp8_e5m2" err.txt || die "compress --dtype fp8"
  expect_rc 1 "$SZ" -d -l a.sz
  expect_rc 1 "$SZ" -d --codebook x a.sz
  grep -q -- "--codebook does not apply" err.txt || die "option for another operation: no clear message"
  expect_rc 1 "$SZ" --max-size 1G a
  expect_rc 1 "$SZ" --bogus a
  # conflicts are one message, not one per file
  expect_rc 1 "$SZ" -k --rm a b
  [ "$(wc -l < err.txt)" -eq 1 ] && grep -q "conflict" err.txt || { cat err.txt; die "-k --rm"; }
  expect_rc 1 "$SZ" -c -o x.sz a
  # compress options pass through
  expect_rc 0 "$SZ" -q --chunk-log2 6 --no-checksum --mode capacity -T2 -o opt.sz a
  "$SZ" inspect --json opt.sz > opt.json
  python3 -c "import json,sys; j=json.load(open('opt.json')); sys.exit(0 if j['chunk_log2']==6 and not j['checksum'] else 1)" \
    || die "options not passed to compress"
  [ "$(od -An -tu1 -j49 -N1 opt.sz | tr -d ' ')" = 1 ] || die "--mode capacity not passed"
  expect_rc 5 "$SZ" -d --max-size 1K -o big opt.sz
  expect_rc 0 "$SZ" -V
  "$SZ" -V | grep -q "frame format" || die "-V"
  "$SZ" --help | grep -q -- "--decompress" || die "--help lists no -d"
  # a file named like a command is reached with a path
  cp a verify
  expect_rc 0 "$SZ" -q ./verify
  [ -s verify.sz ] || die "./verify not compressed"
}

# zstd's level words map to the two modes and are never file names.
case_levels() {
  three
  expect_rc 0 "$SZ" compress --dtype bf16 --mode fast -o fast.ref a
  expect_rc 0 "$SZ" compress --dtype bf16 --mode capacity -o cap.ref a
  local i=0 w
  for w in -1 -2 -3 --fast --fast=7 "--ultra -3"; do
    i=$((i + 1))
    expect_rc 0 "$SZ" -q $w -o f$i.sz a
    cmp -s f$i.sz fast.ref || die "'$w' is not --mode fast"
  done
  for w in -4 -9 -19 -22 "--ultra -22" "-3 -19" -19q; do
    i=$((i + 1))
    expect_rc 0 "$SZ" -q $w -o c$i.sz a
    cmp -s c$i.sz cap.ref || die "'$w' is not --mode capacity"
  done
  # the compress command takes them too, and --mode agreeing with them
  expect_rc 0 "$SZ" compress --dtype bf16 -19 --mode capacity -o c.cmd.sz a
  cmp -s c.cmd.sz cap.ref || die "compress -19"
  expect_rc 0 "$SZ" compress --dtype bf16 -1 -o f.cmd.sz a
  cmp -s f.cmd.sz fast.ref || die "compress -1"
  # refused, once, before any file
  for w in -0 -23 --fast=0 --fast=x; do
    expect_rc 1 "$SZ" $w a b
    [ "$(wc -l < err.txt)" -eq 1 ] || { cat err.txt; die "'$w': not one message"; }
    [ ! -e b.sz ] || die "'$w' compressed b"
  done
  expect_rc 1 "$SZ" -19 --mode fast a
  expect_err "'-19' (--mode capacity) and --mode fast conflict"
  expect_rc 1 "$SZ" compress --dtype bf16 -2 --mode capacity a
  expect_err "compress: '-2' (--mode fast) and --mode capacity conflict"
  expect_rc 0 "$SZ" -q a
  expect_rc 1 "$SZ" -d -3 a.sz
  expect_err "'-3' is a compression level: it does not apply to -d"
  expect_rc 1 "$SZ" -t -19 a.sz
  # a file named -3 is a file after "--", or as the value of -o
  cp a ./-3
  expect_rc 0 "$SZ" -q -- -3
  [ -s ./-3.sz ] || die "-- -3 not compressed"
  expect_rc 0 "$SZ" -q -o -3.out -- -3
  expect_rc 0 "$SZ" -q -f -o -3 a
  cmp -s ./-3 a.sz || die "-o -3: the level word was not -o's value"
  "$SZ" --help | grep -q -- "--fast\[=N\]" || die "--help lists no levels"
}

# -r: every regular file below a directory, as zstd -r.
case_recursive() {
  mkdir -p tree/sub/deep tree/empty
  cp "$DATA/layer00_k.bf16" tree/a
  cp "$DATA/layer01_k.bf16" tree/sub/b.bf16
  cp "$DATA/layer00_v.bf16" tree/sub/deep/c
  echo junk > tree/sub/old.sz
  ln -s ../a tree/sub/link
  mkdir orig && cp -r tree orig/
  expect_rc 0 "$SZ" -q -r tree
  for f in a sub/b.bf16 sub/deep/c; do [ -s tree/$f.sz ] || die "-r: $f.sz missing"; done
  [ ! -e tree/sub/old.sz.sz ] || die "-r compressed a .sz file"
  [ ! -e tree/sub/link.sz ] || die "-r followed a symbolic link"
  "$SZ" -l tree/sub/b.bf16.sz | grep -q "dtype bf16" || die "-r: b.bf16 not read as bf16"
  # -v names what it skips
  expect_rc 0 "$SZ" -v -f -r tree/sub
  grep -q "old.sz: already has the .sz suffix -- skipped" err.txt || { cat err.txt; die "-r -v: skip not named"; }
  # -t, -l and -d take only *.sz: old.sz fails, the others pass
  expect_rc 3 "$SZ" -t -r tree
  [ "$(grep -c ': OK' err.txt)" -eq 3 ] && grep -q "1 of 4 files failed" err.txt || { cat err.txt; die "-t -r"; }
  rm tree/sub/old.sz
  expect_rc 0 "$SZ" -t -r tree
  "$SZ" -l -r tree > list.txt || die "-l -r"
  [ "$(grep -c 'frame(s)' list.txt)" -eq 3 ] || die "-l -r lists $(grep -c 'frame(s)' list.txt) files"
  rm tree/a tree/sub/b.bf16 tree/sub/deep/c
  expect_rc 0 "$SZ" -q -d -r tree
  for f in a sub/b.bf16 sub/deep/c; do cmp -s tree/$f orig/tree/$f || die "-d -r: $f differs"; done
  # a plain FILE next to a directory; nothing to do is exit 0
  cp orig/tree/a plain
  expect_rc 0 "$SZ" -q -f -r plain tree/empty
  [ -s plain.sz ] || die "-r: a plain file was not compressed"
  expect_rc 0 "$SZ" -r tree/empty
  grep -q "found no file" err.txt || die "-r on an empty directory: no note"
  # without -r a directory is an error, as before
  expect_rc 2 "$SZ" tree
  expect_err "is a directory"
  expect_rc 1 "$SZ" -r -o one.sz tree
  expect_err "one input"
}

export SZ
declare -F "case_$CASE" > /dev/null || die "no such case"
"case_$CASE"
echo "PASS [$CASE]"
