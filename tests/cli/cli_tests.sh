#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# CLI tests for build/bin/splitzip, one case per ctest test.
# usage: cli_tests.sh CASE SPLITZIP DATA_DIR
# Each case runs in a fresh temp directory and fails (exit 1) with a message
# on the first broken expectation.
CASE=$1
SZ=$2
DATA=$3
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=case_lib.sh
. "$HERE/case_lib.sh" cli-test

json_field() {  # json_field FILE EXPR: evaluates EXPR on the parsed JSON as `j`
  python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1"
}

case_roundtrip_bundled() {
  local n=0
  for src in "$DATA"/*.bf16 "$DATA"/*.f32; do
    local f; f=$(basename "$src")
    cp "$src" "$f"
    expect_rc 0 "$SZ" compress "$f"
    [ -f "$f.sz" ] || die "$f.sz not written"
    [ -f "$f" ] || die "input $f was removed"
    mv "$f" "$f.orig"
    expect_rc 0 "$SZ" decompress "$f.sz"
    cmp -s "$f" "$f.orig" || die "$f does not round-trip byte-exactly"
    # Ratio within 0.2% of the prediction bytes/(residual+0.5+3e)
    # (2/(1.5+3e) for bf16), after the header and escape-count overhead.
    "$SZ" inspect --json "$f.sz" > info.json || die "inspect $f.sz"
    json_field info.json "abs(j['ratio']/j['predicted_ratio']-1) < 0.002 and j['mode']=='coded' and j['checksum']" \
      | grep -qx True || die "$f: ratio $(json_field info.json "j['ratio']") not within 0.2% of $(json_field info.json "j['predicted_ratio']")"
    n=$((n + 1))
  done
  [ "$n" -eq 12 ] || die "expected 12 bundled files, found $n"
}

case_refuse_overwrite() {
  cp "$DATA/layer01_k.bf16" k.bf16
  expect_rc 0 "$SZ" compress k.bf16
  cp k.bf16.sz before.sz
  expect_rc 2 "$SZ" compress --no-checksum k.bf16
  expect_err "exists (use -f"
  cmp -s k.bf16.sz before.sz || die "existing output was modified without -f"
  expect_rc 0 "$SZ" compress -f --no-checksum k.bf16
  cmp -s k.bf16.sz before.sz && die "-f did not overwrite"
  # decompress refuses too
  expect_rc 2 "$SZ" decompress k.bf16.sz
  expect_err "exists"
  cmp -s k.bf16 "$DATA/layer01_k.bf16" || die "decompress clobbered its target"
  expect_rc 0 "$SZ" decompress -f -o k.bf16 k.bf16.sz
  cmp -s k.bf16 "$DATA/layer01_k.bf16" || die "forced decompress wrong"
  # the input is kept by default, removed only with --rm
  [ -f k.bf16 ] || die "input removed"
  expect_rc 0 "$SZ" compress -f --rm k.bf16
  [ ! -e k.bf16 ] || die "--rm did not remove the input"
  expect_rc 0 "$SZ" decompress k.bf16.sz
  [ -f k.bf16.sz ] || die "decompress removed its input without --rm"
  # an existing device is written in place, never renamed over
  expect_rc 0 "$SZ" decompress -o /dev/null k.bf16.sz
  expect_rc 0 "$SZ" compress -f -o /dev/null k.bf16.sz --dtype bf16
  [ -c /dev/null ] || die "/dev/null is no longer a device"
  # output == input is refused even with -f
  expect_rc 1 "$SZ" compress -f --dtype bf16 -o k.bf16 k.bf16
  cmp -s k.bf16 "$DATA/layer01_k.bf16" || die "input clobbered"
}

case_stdin_stdout() {
  local src="$DATA/layer02_v.bf16"
  "$SZ" compress --dtype bf16 - < "$src" > a.sz 2>err.txt || { cat err.txt; die "compress stdin->stdout"; }
  "$SZ" decompress - < a.sz > a.out 2>err.txt || { cat err.txt; die "decompress stdin->stdout"; }
  cmp -s a.out "$src" || die "stdin/stdout round trip differs"
  # the same bytes as compressing the file
  cp "$src" f.bf16
  expect_rc 0 "$SZ" compress f.bf16
  cmp -s a.sz f.bf16.sz || die "stdin frame differs from file frame"
  # -o - / - with explicit names, and several frames from a stream
  cat "$src" | "$SZ" compress --dtype bf16 --frame-size 100000 -o - - > b.sz || die "compress -o -"
  [ "$("$SZ" inspect --json b.sz | python3 -c 'import json,sys; print(json.load(sys.stdin)["frame_count"])')" -eq 6 ] \
    || die "expected 6 frames of <=100000 bytes"
  "$SZ" decompress -o - b.sz | cmp -s - "$src" || die "multi-frame stdin stream differs"
  # stdin needs a dtype; odd-sized stdin is invalid and leaves no output
  expect_rc 1 "$SZ" compress - -o x.sz < "$src"
  expect_err "needs --dtype"
  head -c 1001 "$src" > odd.bin
  expect_rc 3 "$SZ" compress --dtype bf16 -o x.sz - < odd.bin
  expect_err "not a multiple of 2"
  expect_no_leftovers x.sz
  # empty input is one empty frame and decodes to nothing
  expect_rc 0 "$SZ" compress --dtype bf16 -o e.sz - < /dev/null
  expect_rc 0 "$SZ" decompress -o e.out e.sz
  [ -f e.out ] && [ ! -s e.out ] || die "empty round trip"
}

case_inspect_json() {
  cp "$DATA/layer03_k.bf16" k.bf16
  expect_rc 0 "$SZ" compress k.bf16
  "$SZ" inspect --json k.bf16.sz > one.json || die "inspect --json"
  [ "$(wc -l < one.json)" -eq 1 ] || die "--json is not one line"
  json_field one.json "j['n_elems']==262144 and j['dtype']=='bf16' and j['frame_count']==1 and 0<=j['escape_rate']<0.01 and j['ratio']>1.3 and len(j['codebook'])==16 and j['chunk_size']==1024" \
    | grep -qx True || { cat one.json; die "single-frame JSON fields"; }
  # format v2: 524288 bytes = 8 checksum blocks of 64 KiB
  json_field one.json "j['version']==2 and j['checksum'] and j['checksum_kind']=='xxh3-blocks' and j['checksum_block_size']==65536 and j['checksum_blocks']==8" \
    | grep -qx True || { cat one.json; die "v2 checksum fields"; }
  expect_rc 0 "$SZ" compress --no-checksum -o nc.sz k.bf16
  "$SZ" inspect --json nc.sz > nc.json || die "inspect --json nc.sz"
  json_field nc.json "j['version']==2 and not j['checksum'] and j['checksum_kind']=='none' and j['checksum_block_size'] is None and j['checksum_blocks']==0" \
    | grep -qx True || { cat nc.json; die "v2 fields without checksum"; }
  cat k.bf16.sz k.bf16.sz > two.sz
  "$SZ" inspect --json two.sz > two.json || die "inspect --json two frames"
  json_field two.json "j['frame_count']==2 and len(j['frames'])==2 and j['n_elems']==2*262144 and j['frames'][1]['offset']==j['frames'][0]['frame_size']" \
    | grep -qx True || { cat two.json; die "two-frame JSON fields"; }
  "$SZ" inspect k.bf16.sz > text.txt || die "inspect text"
  grep -q "elements 262144, escapes" text.txt || die "inspect text lacks counts"
  grep -q "ratio 1.3" text.txt || die "inspect text lacks ratio"
  grep -q "version 2," text.txt || die "inspect text lacks the version"
  grep -q "checksum xxh3 [0-9a-f]\{16\} over 8 block(s) of 65536 bytes" text.txt || { cat text.txt; die "inspect text lacks checksum blocks"; }
}

case_verify() {
  cp "$DATA/layer04_k.bf16" k.bf16
  cp "$DATA/layer04_v.bf16" v.bf16
  expect_rc 0 "$SZ" compress k.bf16
  "$SZ" verify k.bf16.sz k.bf16 > out.txt 2>err.txt || { cat err.txt; die "verify of a good frame failed"; }
  grep -q "^OK" out.txt || die "verify prints no OK"
  # every available backend re-creates the same bitstream
  for b in $("$SZ" backends | awk '$2=="available"{print $1}'); do
    expect_rc 0 "$SZ" verify --backend "$b" k.bf16.sz k.bf16
  done
  expect_rc 6 "$SZ" verify --backend no-such-backend k.bf16.sz k.bf16
  expect_err "UNKNOWN_BACKEND"
  # wrong original
  expect_rc 4 "$SZ" verify k.bf16.sz v.bf16
  expect_err "MISMATCH"
  # tampered payload byte: the checksum (or a format rule) rejects it
  python3 -c "
import sys; b = bytearray(open('k.bf16.sz','rb').read()); b[1000] ^= 0x01; open('t.sz','wb').write(b)"
  "$SZ" verify t.sz k.bf16 2>err.txt && die "verify accepted a tampered frame"
  expect_err "frame 0"
  # a frame without checksum whose residual byte was changed decodes, but
  # to other data: verify must see the mismatch
  expect_rc 0 "$SZ" compress --no-checksum -o nc.sz k.bf16
  python3 -c "
b = bytearray(open('nc.sz','rb').read()); b[100] ^= 0x01; open('nct.sz','wb').write(b)"
  expect_rc 4 "$SZ" verify nct.sz k.bf16
  expect_err "MISMATCH: decoded data differs"
  # stored frames (random bits do not compress) verify too
  head -c 65536 /dev/urandom > r.bf16
  expect_rc 0 "$SZ" compress r.bf16
  "$SZ" inspect --json r.bf16.sz | grep -q '"mode":"stored"' || die "random data not stored"
  expect_rc 0 "$SZ" verify r.bf16.sz r.bf16
  # a frame stored because a user codebook misses every exponent (the
  # dynamic codebook would code this data) still verifies
  python3 -c "
import struct
open('far.bf16','wb').write(struct.pack('<4096H', *[(200 << 7) | (i * 37 & 0x7f) | ((i & 1) << 15) for i in range(4096)]))"
  expect_rc 0 "$SZ" calibrate -o k.szcb k.bf16
  expect_rc 0 "$SZ" compress --codebook k.szcb -o far.sz far.bf16
  "$SZ" inspect --json far.sz | grep -q '"mode":"stored"' || die "far.bf16 with the K codebook is not stored"
  expect_rc 0 "$SZ" compress -o far_dyn.sz far.bf16
  "$SZ" inspect --json far_dyn.sz | grep -q '"mode":"coded"' || die "far.bf16 with its own codebook is not coded"
  expect_rc 0 "$SZ" verify far.sz far.bf16
  expect_rc 0 "$SZ" verify far_dyn.sz far.bf16
}

case_unknown_backend() {
  cp "$DATA/layer00_k.bf16" k.bf16
  expect_rc 6 "$SZ" compress --backend no-such-backend k.bf16
  expect_err "UNKNOWN_BACKEND"
  expect_no_leftovers k.bf16.sz
}

case_corrupt() {
  cp "$DATA/layer00_k.bf16" k.bf16
  expect_rc 0 "$SZ" compress -o k.sz k.bf16
  corrupt() {  # corrupt OUT OFFSET XOR
    python3 -c "
import sys; b = bytearray(open('k.sz','rb').read()); b[int(sys.argv[2], 0)] ^= int(sys.argv[3], 0); open(sys.argv[1],'wb').write(b)" "$@"
  }
  corrupt magic.sz 0 0xff
  expect_rc 3 "$SZ" decompress magic.sz
  expect_err "BAD_MAGIC"
  expect_no_leftovers magic
  corrupt hdr.sz 20 0x10
  expect_rc 3 "$SZ" decompress hdr.sz
  expect_err "HEADER_CORRUPT"
  expect_no_leftovers hdr
  corrupt payload.sz 5000 0x40
  expect_rc 3 "$SZ" decompress payload.sz
  expect_err "frame 0 at offset 0"
  expect_no_leftovers payload
  head -c 200000 k.sz > trunc.sz
  expect_rc 3 "$SZ" decompress trunc.sz
  expect_err "TRUNCATED"
  expect_no_leftovers trunc
  # a good frame followed by a bad one: nothing is written at all
  cat k.sz payload.sz > mixed.sz
  expect_rc 3 "$SZ" decompress mixed.sz
  expect_err "frame 1"
  expect_no_leftovers mixed
  # trailing garbage after a whole frame
  { cat k.sz; printf 'junk'; } > tail.sz
  expect_rc 3 "$SZ" decompress tail.sz
  expect_err "TRUNCATED"
  expect_no_leftovers tail
  # inspect reports a bad header the same way
  expect_rc 3 "$SZ" inspect hdr.sz
  expect_err "HEADER_CORRUPT"
}

case_max_size() {
  cp "$DATA/layer00_v.bf16" v.bf16
  expect_rc 0 "$SZ" compress v.bf16
  expect_rc 5 "$SZ" decompress --max-size 524287 v.bf16.sz
  expect_err "LIMIT_EXCEEDED"
  expect_no_leftovers v.bf16.out
  [ -f v.bf16 ] || die "input vanished"
  rm v.bf16
  expect_rc 5 "$SZ" decompress --max-size 1K v.bf16.sz
  expect_no_leftovers v.bf16
  expect_rc 0 "$SZ" decompress --max-size 512K v.bf16.sz
  cmp -s v.bf16 "$DATA/layer00_v.bf16" || die "round trip at the exact limit"
  expect_rc 1 "$SZ" decompress --max-size lots v.bf16.sz
  # a forged (format v1) header claiming 2^50 elements is refused from the
  # header alone
  python3 "$HERE/frame_tools.py" bomb v.bf16.sz bomb.sz || die "frame_tools.py bomb"
  expect_rc 3 "$SZ" inspect bomb.sz
  expect_err "TRUNCATED"
  expect_rc 3 "$SZ" decompress bomb.sz
  expect_no_leftovers bomb
}

case_npy() {
  python3 "$HERE/make_containers.py" . "$DATA/layer01_v.bf16" "$DATA/layer02_k.f32" || die "make_containers.py"
  rt() {  # rt FILE RAW [opts...]: compress FILE, decompress to the same file
    local f=$1 raw=$2; shift 2
    expect_rc 0 "$SZ" compress "$@" -o "$f.sz" "$f"
    expect_rc 0 "$SZ" decompress -o "$f.out" "$f.sz"
    cmp -s "$f.out" "$f" || die "$f does not come back byte for byte"
    expect_rc 0 "$SZ" verify "$f.sz" "$f" "$@"
    # the payload is the raw elements, at the end of the file
    tail -c "$(stat -c %s "$raw")" "$f.out" | cmp -s - "$raw" || die "$f payload differs from $raw"
  }
  rt f16.npy f16.raw
  rt f32.npy f32.raw
  rt bf16_v2.npy bf16.raw
  rt bf16_named.npy bf16.raw
  rt bf16_u2.npy bf16.raw --dtype bf16
  rt e5m2.npy e5m2.raw
  "$SZ" inspect --json f16.npy.sz | grep -q '"dtype":"fp16"' || die "f16.npy not fp16"
  "$SZ" inspect --json bf16_v2.npy.sz | grep -q '"dtype":"bf16"' || die "<V2 npy not bf16"
  "$SZ" inspect --json e5m2.npy.sz | grep -q '"dtype":"fp8_e5m2"' || die "e5m2 npy dtype"
  # default names: x.npy -> x.npy.sz -> x.npy (the same file)
  cp f16.npy keep.npy
  rm -f f16.npy.sz
  expect_rc 0 "$SZ" compress f16.npy
  [ -f f16.npy.sz ] || die "default output for f16.npy should be f16.npy.sz"
  rm f16.npy
  expect_rc 0 "$SZ" decompress f16.npy.sz
  cmp -s f16.npy keep.npy || die "f16.npy does not come back"
  rt empty.npy /dev/null
  # rejected inputs
  expect_rc 3 "$SZ" compress bf16_u2.npy
  expect_err "say which dtype with --dtype"
  expect_rc 3 "$SZ" compress --dtype fp16 f32.npy
  expect_err "is fp32 but --dtype fp16"
  expect_rc 3 "$SZ" compress short.npy
  expect_err "needs 6002 data bytes"
  expect_rc 3 "$SZ" compress bigendian.npy
  expect_err "big-endian"
  expect_rc 3 "$SZ" compress badlen.npy
  expect_err "runs past the end"
  expect_no_leftovers short.npy.sz bigendian.npy.sz badlen.npy.sz
}

case_safetensors() {
  python3 "$HERE/make_containers.py" . "$DATA/layer01_v.bf16" "$DATA/layer02_k.f32" || die "make_containers.py"
  for t in layer0.k:bf16 layer0.v:f32 layer0.h:f16; do
    local name=${t%%:*} raw=${t##*:}.raw
    expect_rc 0 "$SZ" compress --tensor "$name" -o "$name.sz" model.safetensors
    expect_rc 0 "$SZ" decompress -o "$name.out" "$name.sz"
    cmp -s "$name.out" "$raw" || die "tensor $name differs from $raw"
    expect_rc 0 "$SZ" verify --tensor "$name" "$name.sz" model.safetensors
  done
  # default name: model.<tensor>.<dtype>.sz
  expect_rc 0 "$SZ" compress --tensor layer0.k model.safetensors
  [ -f model.layer0.k.bf16.sz ] || die "default safetensors output name"
  # without --tensor the whole file comes back (payload at an odd offset)
  expect_rc 0 "$SZ" compress -o s.sz single.safetensors
  expect_rc 0 "$SZ" decompress -o s.out s.sz
  cmp -s s.out single.safetensors || die "single-tensor file differs"
  expect_rc 0 "$SZ" compress model.safetensors
  [ -f model.safetensors.sz ] || die "default output for a whole file should be model.safetensors.sz"
  expect_rc 0 "$SZ" decompress -o model.out model.safetensors.sz
  cmp -s model.out model.safetensors || die "model.safetensors does not come back"
  # rejected inputs
  expect_rc 3 "$SZ" compress --dtype bf16 -o x.sz model.safetensors
  expect_err "keeps each tensor's dtype"
  # commands that want one tensor still ask for a name
  expect_rc 3 "$SZ" calibrate -o cb.szcb model.safetensors
  expect_err "pick one with --tensor"
  expect_rc 3 "$SZ" bench --seconds 0.01 model.safetensors
  expect_err "pick one with --tensor"
  expect_rc 3 "$SZ" compress --tensor nope model.safetensors
  expect_err "no tensor 'nope'"
  expect_rc 3 "$SZ" compress --tensor ids model.safetensors
  expect_err "dtype I32"
  expect_rc 3 "$SZ" compress --tensor layer0.k --dtype fp16 model.safetensors
  expect_rc 3 "$SZ" compress badoff.safetensors
  expect_err "data_offsets"
  expect_rc 3 "$SZ" compress --tensor a overlap.safetensors
  expect_err "gap or overlap"
  expect_rc 3 "$SZ" compress hugehdr.safetensors
  expect_err "header length"
  expect_rc 1 "$SZ" compress --tensor x f16.raw --dtype fp16
  expect_no_leftovers badoff.sz overlap.a.bf16.sz
}

case_calibrate() {
  cp "$DATA"/layer0*_k.bf16 .
  expect_rc 0 "$SZ" calibrate --dtype bf16 -o k.szcb layer0*_k.bf16
  [ "$(stat -c %s k.szcb)" -eq 32 ] || die "codebook file is not 32 bytes"
  head -c 4 k.szcb | grep -q SZCB || die "codebook magic"
  expect_rc 2 "$SZ" calibrate -o k.szcb layer00_k.bf16
  expect_err "exists"
  for f in layer0*_k.bf16; do
    expect_rc 0 "$SZ" compress --codebook k.szcb -o "$f.cb.sz" "$f"
    expect_rc 0 "$SZ" decompress -o "$f.out" "$f.cb.sz"
    cmp -s "$f.out" "$f" || die "$f differs with a calibrated codebook"
    expect_rc 0 "$SZ" verify "$f.cb.sz" "$f"
  done
  # frames carry the calibrated codebook, in the file's order
  python3 - <<'PY' || die "frame codebook != calibrated codebook"
import json, subprocess, sys, os
cb = open('k.szcb', 'rb').read()
want = list(cb[8:8 + cb[6]])
got = json.loads(subprocess.check_output([os.environ['SZ'], 'inspect', '--json', 'layer03_k.bf16.cb.sz']))['codebook']
sys.exit(0 if got == want else 1)
PY
  # the codebook must match the input dtype
  expect_rc 1 "$SZ" compress --codebook k.szcb --dtype fp16 -o x.sz layer00_k.bf16
  expect_err "is for bf16"
  # a damaged codebook file is refused
  python3 -c "b=bytearray(open('k.szcb','rb').read()); b[10]^=1; open('bad.szcb','wb').write(b)"
  expect_rc 3 "$SZ" compress --codebook bad.szcb -o x.sz layer00_k.bf16
  expect_no_leftovers x.sz
}

case_tables() {
  cp "$DATA"/layer0*_k.bf16 "$DATA"/layer0*_v.bf16 .
  # a table set from other layers than the ones compressed
  expect_rc 0 "$SZ" calibrate --mode capacity -o k.szct layer00_k.bf16 layer01_k.bf16
  expect_err "table set "
  head -c 4 k.szct | grep -q SZCT || die "table set magic"
  expect_rc 0 "$SZ" calibrate --mode capacity --table-count 4 -o k4.szct layer00_k.bf16
  # the default is one table (docs/DESIGN.md 7a): a set of 4 is larger
  [ "$(stat -c %s k4.szct)" -gt "$(stat -c %s k.szct)" ] || die "--table-count 4 is not larger than the default"
  expect_rc 1 "$SZ" calibrate --mode capacity --table-count 3 -o k3.szct layer00_k.bf16
  expect_err "power of 2"
  expect_rc 1 "$SZ" calibrate --table-count 4 -o k.szcb layer00_k.bf16
  expect_err "capacity only"
  id=$(python3 -c "import struct; b=open('k.szct','rb').read(); print('%016x' % struct.unpack('<Q', b[-8:])[0])")
  local src=layer03_k.bf16
  # --tables implies --mode capacity; frames name the set (inspect shows its id)
  expect_rc 0 "$SZ" compress --tables k.szct -o t.sz "$src"
  "$SZ" inspect --json t.sz > t.json || die "inspect t.sz"
  json_field t.json "j['tables_id']=='$id' and j['coding']=='capacity' and j['version']==3" | grep -qx True ||
    die "inspect: $(cat t.json)"
  "$SZ" inspect t.sz | grep -q "tables: set $id" || die "inspect text lacks the set id"
  expect_rc 0 "$SZ" compress --mode capacity -o own.sz "$src"
  "$SZ" inspect --json own.sz > own.json
  json_field own.json "j['tables_id'] is None and j['version']==2" | grep -qx True || die "own tables: $(cat own.json)"
  # decoding needs the set: the message names the id and the flag
  expect_rc 1 "$SZ" decompress -o t.out t.sz
  expect_err "MISSING_TABLES"
  expect_err "$id"
  expect_err "--tables FILE"
  expect_no_leftovers t.out
  expect_rc 1 "$SZ" decompress --tables k4.szct -o t.out t.sz
  expect_err "$id"
  expect_rc 0 "$SZ" decompress --tables k4.szct --tables k.szct -o t.out t.sz
  cmp -s t.out "$src" || die "$src differs through its table set"
  expect_rc 0 "$SZ" verify --tables k.szct t.sz "$src"
  expect_rc 1 "$SZ" verify t.sz "$src"
  expect_err "MISSING_TABLES"
  # the command-less mode takes --tables both ways
  expect_rc 0 "$SZ" -q --tables k.szct -o z.sz "$src"
  cmp -s z.sz t.sz || die "splitzip --tables differs from compress --tables"
  expect_rc 0 "$SZ" -d -q --tables k.szct -o z.out z.sz
  cmp -s z.out "$src" || die "splitzip -d --tables"
  expect_rc 1 "$SZ" -t z.sz
  expect_err "MISSING_TABLES"
  # --tables with the fast mode, a set for another dtype, damaged and missing set files
  expect_rc 1 "$SZ" compress --tables k.szct --mode fast -o x.sz "$src"
  expect_err "capacity mode"
  expect_rc 1 "$SZ" compress --tables k.szct -1 -o x.sz "$src"
  expect_err "capacity mode"
  expect_rc 1 "$SZ" compress --tables k.szct --dtype fp16 -o x.sz "$src"
  expect_err "is for bf16"
  python3 -c "b=bytearray(open('k.szct','rb').read()); b[20]^=1; open('bad.szct','wb').write(b)"
  expect_rc 3 "$SZ" compress --tables bad.szct -o x.sz "$src"
  expect_err "not a valid table set file"
  expect_rc 0 "$SZ" calibrate -q -o k.szcb layer00_k.bf16
  expect_rc 3 "$SZ" decompress --tables k.szcb -o x.out t.sz
  expect_err "BAD_MAGIC"
  expect_rc 2 "$SZ" compress --tables absent.szct -o x.sz "$src"
  expect_no_leftovers x.sz x.out
  # bench with the set: capacity rows by default
  expect_rc 0 "$SZ" bench --tables k.szct --seconds 0.05 --backend reference --frame-size 32K --json "$src" > b.json
  json_field b.json "j['tables']=='k.szct' and all(r['mode']=='capacity' and r['roundtrip_ok'] for r in j['results'])" |
    grep -qx True || die "bench --tables: $(cat b.json)"
}

case_concat() {
  cp "$DATA/layer00_k.bf16" a.bf16
  cp "$DATA/layer02_v.f32" b.f32
  expect_rc 0 "$SZ" compress a.bf16
  expect_rc 0 "$SZ" compress b.f32
  cat a.bf16.sz b.f32.sz a.bf16.sz > all.sz
  cat a.bf16 b.f32 a.bf16 > all.want
  expect_rc 0 "$SZ" decompress -o all.out all.sz
  cmp -s all.out all.want || die "concatenated frames do not decode to the concatenation"
  expect_rc 0 "$SZ" verify all.sz all.want
  "$SZ" inspect all.sz | grep -q "3 frame(s)" || die "inspect does not see 3 frames"
}

case_signal() {
  # Raw stdin is streamed frame by frame: after the first frames the tool
  # blocks on the pipe with its temp output open. SIGTERM must remove it.
  for sig in TERM INT; do
    rm -f fifo; mkfifo fifo
    "$SZ" compress --dtype bf16 --frame-size 4K -o out.sz - < fifo 2>/dev/null &
    local pid=$!
    exec 3>fifo
    head -c 8192 "$DATA/layer00_k.bf16" >&3
    local i=0
    until ls -A | grep -q '\.out\.sz\.splitzip-'; do
      i=$((i + 1)); [ $i -lt 500 ] || die "temp output never appeared"; sleep 0.01
    done
    kill -s $sig $pid
    wait $pid; local rc=$?
    exec 3>&-
    [ $rc -ne 0 ] || die "killed compress exited 0"
    expect_no_leftovers out.sz
  done
}

case_usage() {
  # No command: a word is a file to compress (zstd's habit), stdin without one.
  expect_rc 2 "$SZ" frobnicate
  expect_err "cannot open"
  expect_rc 1 "$SZ" --frobnicate
  expect_err "unknown option"
  expect_rc 0 "$SZ" --help
  for c in calibrate compress decompress inspect verify bench; do
    "$SZ" $c --help | grep -q "usage: splitzip $c" || die "$c --help"
  done
  expect_rc 1 "$SZ" compress --bogus x
  expect_err "unknown option"
  expect_rc 1 "$SZ" compress --dtype bf17 x
  expect_err "unknown dtype"
  expect_rc 1 "$SZ" compress --dtype fp8 x  # E4M3 or E5M2: never guessed
  expect_err "fp8_e4m3 or fp8_e5m2"
  expect_rc 1 "$SZ" compress --chunk-log2 5 --dtype bf16 x
  expect_rc 1 "$SZ" compress --checksum --no-checksum --dtype bf16 x
  expect_rc 2 "$SZ" compress --dtype bf16 does-not-exist
  expect_err "cannot open"
  cp "$DATA/layer00_k.bf16" k.data
  expect_rc 1 "$SZ" compress k.data
  expect_err "pass --dtype"
  expect_rc 0 "$SZ" compress --dtype bf16 --chunk-log2 6 k.data
  "$SZ" inspect --json k.data.sz | grep -q '"chunk_log2":6' || die "--chunk-log2 ignored"
  expect_rc 0 "$SZ" verify k.data.sz k.data
}

case_mode() {
  cp "$DATA/layer00_k.bf16" k.data
  cp "$DATA/layer00_k.bf16" f.data
  expect_rc 1 "$SZ" compress --mode turbo --dtype bf16 k.data
  expect_err "fast or capacity"
  expect_rc 0 "$SZ" compress --mode capacity --dtype bf16 k.data
  expect_rc 0 "$SZ" compress --mode fast --dtype bf16 f.data
  [ "$(od -An -tu1 -j49 -N1 k.data.sz | tr -d ' ')" = 1 ] || die "--mode capacity: header byte 49 is not 1"
  [ "$(od -An -tu1 -j49 -N1 f.data.sz | tr -d ' ')" = 0 ] || die "--mode fast: header byte 49 is not 0"
  [ "$(stat -c %s k.data.sz)" -lt "$(stat -c %s f.data.sz)" ] || die "capacity frame not smaller than fast"
  expect_rc 0 "$SZ" verify k.data.sz k.data
  expect_rc 0 "$SZ" decompress -o back.data k.data.sz
  cmp -s back.data "$DATA/layer00_k.bf16" || die "capacity round trip differs"
  # A capacity frame's header bytes 16..23 hold its coded exponent bytes,
  # not escapes: inspect, verify and compress -v say so (they once showed
  # them as an escape count of ~35% and a predicted ratio of 0.80).
  "$SZ" inspect --json k.data.sz > cap.json || die "inspect capacity frame"
  json_field cap.json "j['coding']=='capacity' and j['mode']=='coded' and j['escape_count'] is None and \
    j['escape_rate'] is None and j['predicted_ratio'] is None and j['codebook']==[] and \
    2 < j['exponent_bits_per_elem'] < 4 and j['exponent_bytes'] > 0 and j['ratio'] > 1.4" | grep -qx True ||
    die "inspect --json of a capacity frame: $(cat cap.json)"
  "$SZ" inspect --json f.data.sz > fast.json || die "inspect fast frame"
  json_field fast.json "j['coding']=='fast' and j['exponent_bytes'] is None and j['escape_count'] >= 0" |
    grep -qx True || die "inspect --json of a fast frame: $(cat fast.json)"
  "$SZ" inspect k.data.sz > cap.txt || die "inspect capacity frame (text)"
  grep -q "mode coded (capacity)" cap.txt && grep -q "exponent bytes" cap.txt && ! grep -q "escapes" cap.txt ||
    { cat cap.txt >&2; die "inspect text of a capacity frame"; }
  cat k.data.sz f.data.sz > both.sz
  "$SZ" inspect --json both.sz > both.json || die "inspect a capacity + fast stream"
  json_field both.json "j['exponent_bytes']==j['frames'][0]['exponent_bytes'] and \
    j['escape_count']==j['frames'][1]['escape_count']" | grep -qx True || die "stream totals: $(cat both.json)"
  expect_rc 0 "$SZ" verify -v k.data.sz k.data
  grep -q "capacity" err.txt || { cat err.txt >&2; die "verify -v does not name the capacity coding"; }
  rm -f k.data.sz
  expect_rc 0 "$SZ" compress -v --mode capacity --dtype bf16 k.data
  grep -q "exponents [0-9.]* bits each" err.txt && ! grep -q "escapes" err.txt ||
    { cat err.txt >&2; die "compress -v of capacity frames reports escapes"; }
}

case_bench() {
  cp "$DATA/layer00_k.bf16" k.bf16
  "$SZ" bench --seconds 0.05 --json k.bf16 > b.json 2>err.txt || { cat err.txt; die "bench failed"; }
  json_field b.json "j['memcpy_gbps']>0 and len(j['results'])>=1 and all(r['roundtrip_ok'] and r['encode_gbps']>0 and r['decode_gbps']>0 and r['ratio']>1.3 for r in j['results'])" \
    | grep -qx True || { cat b.json; die "bench JSON"; }
  "$SZ" bench --seconds 0.05 --backend reference --checksum k.bf16 > b.txt || die "bench text"
  grep -q "^memcpy" b.txt && grep -q "^reference" b.txt || { cat b.txt; die "bench table"; }
  expect_rc 6 "$SZ" bench --seconds 0.05 --backend no-such k.bf16
  # compress's defaults (checksum on), both modes, page sizes
  "$SZ" bench --seconds 0.01 --backend reference --mode fast,capacity --frame-size 32K,whole --json k.bf16 \
    > b.json || die "bench --mode --frame-size"
  python3 -c 'import json,sys; j=json.load(open("b.json")); r=j["results"]
assert j["checksum"] is True, j
assert [(x["mode"], x["frames"] > 1) for x in r] == [("fast", True), ("fast", False), ("capacity", True), ("capacity", False)], r
assert all(x["roundtrip_ok"] for x in r), r
assert r[2]["ratio"] > r[0]["ratio"], r' || { cat b.json; die "bench modes JSON"; }
  "$SZ" bench --seconds 0.01 --no-checksum --json k.bf16 | grep -q '"checksum": *false' || die "bench --no-checksum"
  expect_rc 1 "$SZ" bench --mode turbo k.bf16
  expect_rc 1 "$SZ" bench --frame-size 1 k.bf16
}

case_empty_stream() {
  # A stream of zero bytes is a valid stream of zero frames and decodes to
  # zero bytes, at every entry point.
  : > e.sz
  : > e.bin
  expect_rc 0 "$SZ" decompress e.sz
  [ -f e ] && [ ! -s e ] || die "empty stream did not decode to an empty file"
  "$SZ" decompress - < e.sz > e.out 2>err.txt || { cat err.txt; die "empty stream on stdin"; }
  [ ! -s e.out ] || die "empty stream on stdin wrote bytes"
  "$SZ" inspect e.sz > e.txt 2>err.txt || { cat err.txt; die "inspect of an empty stream"; }
  grep -q "^e.sz: 0 frame(s), 0 bytes$" e.txt || { cat e.txt; die "inspect text of an empty stream"; }
  "$SZ" inspect --json e.sz > e.json 2>err.txt || { cat err.txt; die "inspect --json of an empty stream"; }
  json_field e.json "j['frame_count']==0 and j['frames']==[] and j['decoded_size']==0 and j['n_elems']==0" \
    | grep -qx True || { cat e.json; die "inspect --json of an empty stream"; }
  "$SZ" verify e.sz e.bin > v.txt 2>err.txt || { cat err.txt; die "verify of an empty stream"; }
  grep -q "^OK: .*0 frame(s), 0 bytes" v.txt || { cat v.txt; die "verify of an empty stream prints no OK"; }
  # ...but it is not the decoding of a non-empty original
  printf 'ab' > ab.bf16
  expect_rc 4 "$SZ" verify e.sz ab.bf16
  expect_err "MISMATCH"
  # an empty input compresses to one frame of 0 elements, not to 0 bytes
  expect_rc 0 "$SZ" compress --dtype bf16 -o z.sz e.bin
  [ -s z.sz ] || die "compress of empty input wrote no frame"
  "$SZ" inspect --json z.sz | grep -q '"frame_count":1' || die "empty input is not one frame"
  # an empty stream after a frame changes nothing; a partial header does
  head -c 10 z.sz > part.sz
  expect_rc 3 "$SZ" decompress part.sz
  expect_err "TRUNCATED"
  expect_no_leftovers part
}

case_verify_corrupt_block() {
  # 4 checksum blocks of 64 KiB: 131072 bf16 values
  head -c 262144 "$DATA/layer01_k.bf16" > k.bf16
  expect_rc 0 "$SZ" compress k.bf16
  "$SZ" inspect --json k.bf16.sz > k.json
  json_field k.json "j['mode']=='coded' and j['checksum_blocks']==4" | grep -qx True || { cat k.json; die "k.bf16.sz layout"; }
  # The residual-byte stream starts at frame byte 64 and holds one byte per
  # bf16 value: flipping a mantissa bit of value 70000 changes original
  # bytes 140000..140001, in block 2 = [131072, 196608).
  python3 -c "
b = bytearray(open('k.bf16.sz','rb').read()); b[64 + 70000] ^= 0x01; open('t.sz','wb').write(b)"
  expect_rc 3 "$SZ" verify t.sz k.bf16
  expect_err "frame 0 at offset 0: decode failed: CHECKSUM_MISMATCH"
  expect_err "checksum block 2 of 4 is corrupt (original bytes \[131072, 196608) of this frame, \[131072, 196608) of the decoded stream)"
  expect_rc 3 "$SZ" decompress -o t.out t.sz
  expect_err "checksum block 2 of 4 is corrupt"
  expect_no_leftovers t.out
  # The last, short block and a frame later in a stream: 100000 bytes =
  # blocks [0, 65536) and [65536, 100000); value 49000 is in block 1.
  head -c 100000 "$DATA/layer02_v.bf16" > s.bf16
  expect_rc 0 "$SZ" compress s.bf16
  python3 -c "
b = bytearray(open('s.bf16.sz','rb').read()); b[64 + 49000] ^= 0x01; open('s_bad.sz','wb').write(b)"
  cat k.bf16.sz s_bad.sz > two.sz
  cat k.bf16 s.bf16 > two.bf16
  expect_rc 3 "$SZ" verify two.sz two.bf16
  expect_err "frame 1 at offset $(stat -c %s k.bf16.sz): decode failed: CHECKSUM_MISMATCH"
  expect_err "checksum block 1 of 2 is corrupt (original bytes \[65536, 100000) of this frame, \[327680, 362144) of the decoded stream)"
  # the untouched stream still verifies
  cat k.bf16.sz s.bf16.sz > good.sz
  expect_rc 0 "$SZ" verify good.sz two.bf16
}

case_v1_frames() {
  # Format v1 frames (XXH64 checks, no block checks) still inspect, decode
  # and verify. They are made from v2 frames by frame_tools.py.
  head -c 200000 "$DATA/layer03_v.bf16" > k.bf16
  head -c 65536 /dev/urandom > r.bf16
  expect_rc 0 "$SZ" compress -o k2.sz k.bf16
  expect_rc 0 "$SZ" compress --no-checksum -o k2nc.sz k.bf16
  expect_rc 0 "$SZ" compress -o r2.sz r.bf16
  python3 "$HERE/frame_tools.py" to-v1 k2.sz k1.sz k.bf16 || die "to-v1 k2.sz"
  python3 "$HERE/frame_tools.py" to-v1 k2nc.sz k1nc.sz || die "to-v1 k2nc.sz"
  python3 "$HERE/frame_tools.py" to-v1 r2.sz r1.sz r.bf16 || die "to-v1 r2.sz"
  "$SZ" inspect --json r1.sz | grep -q '"mode":"stored"' || die "random data not stored"
  "$SZ" inspect --json k1.sz > k1.json || die "inspect of a v1 frame"
  json_field k1.json "j['version']==1 and j['mode']=='coded' and j['checksum'] and j['checksum_kind']=='xxh64' and j['checksum_block_size'] is None and j['checksum_blocks']==0" \
    | grep -qx True || { cat k1.json; die "v1 inspect fields"; }
  "$SZ" inspect k1.sz | grep -q "version 1, .*" || die "v1 inspect text"
  "$SZ" inspect k1.sz | grep -q "checksum xxh64 [0-9a-f]\{16\}$" || die "v1 inspect checksum"
  [ "$(stat -c %s k1.sz)" -lt "$(stat -c %s k2.sz)" ] || die "v1 frame not smaller (no stream 7)"
  for f in k1 k1nc r1; do
    local want=k.bf16; [ $f = r1 ] && want=r.bf16
    expect_rc 0 "$SZ" decompress -o $f.out $f.sz
    cmp -s $f.out $want || die "$f.sz does not decode to $want"
    "$SZ" verify $f.sz $want > v.txt 2>err.txt || { cat err.txt; die "verify $f.sz"; }
    grep -q "^OK: .*1 format v1 frame(s) decoded identically but not re-encoded" v.txt || { cat v.txt; die "verify $f.sz note"; }
  done
  # v1 and v2 frames in one stream
  cat k1.sz k2.sz r1.sz > mix.sz
  cat k.bf16 k.bf16 r.bf16 > mix.bf16
  expect_rc 0 "$SZ" decompress -o mix.out mix.sz
  cmp -s mix.out mix.bf16 || die "mixed v1/v2 stream"
  "$SZ" verify mix.sz mix.bf16 | grep -q "2 format v1 frame(s)" || die "verify of a mixed stream"
  # a v1 content checksum covers all bytes: a mismatch names no block
  python3 -c "
b = bytearray(open('k1.sz','rb').read()); b[64 + 5000] ^= 0x01; open('k1bad.sz','wb').write(b)"
  expect_rc 3 "$SZ" verify k1bad.sz k.bf16
  expect_err "CHECKSUM_MISMATCH"
  grep -q "checksum block" err.txt && die "a v1 frame has no checksum blocks"
  # a v1 header with a v2 field set is refused
  python3 -c "
import sys; sys.path.insert(0, '$HERE'); import frame_tools as t
b = bytearray(open('k1nc.sz','rb').read()); h = b[:64]; h[50] = 16; t.seal_v1(h); b[:64] = h
open('k1rsv.sz','wb').write(b)"
  expect_rc 3 "$SZ" inspect k1rsv.sz
  expect_err "RESERVED_BITS"
}

# INPUT_MB N OUT: N copies of the bundled bf16 files (5 MiB each) in OUT.
make_big() {
  local i
  : > "$2"
  for i in $(seq "$1"); do cat "$DATA"/*.bf16 >> "$2"; done
}

case_stream_threads() {
  # 10 bundled files = 5 MiB = 10 frames of 2^18 elements (the default).
  cat "$DATA"/*.bf16 > kv.bf16
  expect_rc 0 "$SZ" compress -o t1.sz kv.bf16
  "$SZ" inspect --json t1.sz > t1.json || die "inspect t1.sz"
  json_field t1.json "j['frame_count']==10 and all(f['n_elems']==262144 for f in j['frames']) and j['ratio']>=1.329" \
    | grep -qx True || { cat t1.json; die "default frames are not 10 x 262144 elements at ratio >= 1.329"; }
  # -T N writes the same bytes for any N, also with a short last frame
  for t in 2 3 0; do
    expect_rc 0 "$SZ" compress -T $t -o t$t.sz kv.bf16
    cmp -s t1.sz t$t.sz || die "-T $t output differs from -T 1"
  done
  expect_rc 0 "$SZ" compress --threads 1 --frame-size 300000 -o s1.sz kv.bf16
  expect_rc 0 "$SZ" compress -T3 --frame-size 300000 -o s3.sz kv.bf16
  cmp -s s1.sz s3.sz || die "-T3 with a short last frame differs from -T1"
  [ "$("$SZ" inspect --json s1.sz | python3 -c 'import json,sys; print(json.load(sys.stdin)["frame_count"])')" -eq 18 ] \
    || die "5 MiB in frames of 300000 bytes should be 18 frames"
  # stdin, -c and -o - give the file's bytes
  "$SZ" compress --dtype bf16 -T2 -c - < kv.bf16 > c.sz || die "compress -c from stdin"
  cmp -s c.sz t1.sz || die "compress -c from stdin differs"
  cat kv.bf16 | "$SZ" compress --dtype bf16 -T3 -o - - > p.sz || die "compress from a pipe"
  cmp -s p.sz t1.sz || die "compress from a pipe differs"
  "$SZ" compress -c kv.bf16 > c2.sz || die "compress -c FILE"
  cmp -s c2.sz t1.sz || die "compress -c FILE differs"
  [ ! -e kv.bf16.sz ] || die "-c also wrote a file"
  expect_rc 1 "$SZ" compress -c -o x.sz kv.bf16
  expect_err "conflict"
  # decompress: every N, file or pipe, -c or -o
  for t in 1 2 3; do
    expect_rc 0 "$SZ" decompress -T $t -o d$t.out t1.sz
    cmp -s d$t.out kv.bf16 || die "decompress -T $t differs"
    cat s1.sz | "$SZ" decompress -T $t -c - > p$t.out 2>err.txt || { cat err.txt; die "decompress -T $t from a pipe"; }
    cmp -s p$t.out kv.bf16 || die "decompress -T $t from a pipe differs"
  done
  "$SZ" decompress -c t1.sz > dc.out || die "decompress -c"
  cmp -s dc.out kv.bf16 || die "decompress -c differs"
  [ ! -e t1 ] || die "decompress -c also wrote a file"
  # frames from several compress runs and a v2 stream of mixed sizes
  cat t1.sz s1.sz > ts.sz
  cat kv.bf16 kv.bf16 > kv2.bf16
  expect_rc 0 "$SZ" decompress -T2 -o ts.out ts.sz
  cmp -s ts.out kv2.bf16 || die "mixed-size stream differs"
  expect_rc 1 "$SZ" compress -T 9999 kv.bf16
  expect_rc 1 "$SZ" compress --sync --no-sync kv.bf16
  expect_rc 0 "$SZ" compress --no-sync -f -o ns.sz kv.bf16
  cmp -s ns.sz t1.sz || die "--no-sync changed the bytes"
}

case_stream_big_frames() {
  # Frames over 16 MiB go through the pipeline one at a time.
  make_big 4 big.bf16
  expect_rc 0 "$SZ" compress -T2 --frame-size 18M -o big.sz big.bf16
  [ "$("$SZ" inspect --json big.sz | python3 -c 'import json,sys; print(json.load(sys.stdin)["frame_count"])')" -eq 2 ] \
    || die "20 MiB in 18M frames should be 2 frames"
  expect_rc 0 "$SZ" compress -T1 --frame-size 18M -o big1.sz big.bf16
  cmp -s big.sz big1.sz || die "big frames differ between -T1 and -T2"
  for t in 1 2; do
    expect_rc 0 "$SZ" decompress -T $t -o big$t.out big.sz
    cmp -s big$t.out big.bf16 || die "big frames -T $t round trip"
    cat big.sz | "$SZ" decompress -T $t - > bigp$t.out || die "big frames from a pipe"
    cmp -s bigp$t.out big.bf16 || die "big frames from a pipe differ"
  done
  # big and small frames in one stream
  expect_rc 0 "$SZ" compress -o small.sz big.bf16
  cat big.sz small.sz big.sz > mix.sz
  cat big.bf16 big.bf16 big.bf16 > mix.bf16
  cat mix.sz | "$SZ" decompress -T3 - > mix.out || die "mixed big/small stream"
  cmp -s mix.out mix.bf16 || die "mixed big/small stream differs"
}

case_stream_errors() {
  cat "$DATA"/layer0[01]_*.bf16 > kv.bf16  # 4 frames
  expect_rc 0 "$SZ" compress -o kv.sz kv.bf16
  local f1; f1=$("$SZ" inspect --json kv.sz | python3 -c 'import json,sys; print(json.load(sys.stdin)["frames"][1]["offset"])')
  # a corrupt payload byte in frame 1, from a pipe into a file: exit 3, the
  # error names frame 1, no output file
  python3 -c "
import sys; b = bytearray(open('kv.sz','rb').read()); b[$f1 + 64 + 7000] ^= 1; open('bad.sz','wb').write(b)"
  cat bad.sz | "$SZ" decompress -T2 -o bad.out - 2>err.txt; local rc=$?
  [ $rc -eq 3 ] || { cat err.txt; die "corrupt frame 1 from a pipe exited $rc"; }
  expect_err "frame 1 at offset $f1"
  expect_no_leftovers bad.out
  # the same from a regular file, where N workers each read, decode and
  # write frames: the first failure wins, the other workers stop (no hang)
  for t in 2 3; do
    timeout 60 "$SZ" decompress -T$t -o bad.out bad.sz 2>err.txt; rc=$?
    [ $rc -eq 3 ] || { cat err.txt; die "corrupt frame 1 of a file, -T$t, exited $rc"; }
    expect_err "frame 1 at offset $f1"
    expect_no_leftovers bad.out
  done
  # to stdout the exit code says it failed
  cat bad.sz | "$SZ" decompress - > /dev/null 2>err.txt && die "corrupt stream to stdout exited 0"
  expect_err "CHECKSUM_MISMATCH"
  # a bad header in frame 2 of a file: nothing is written at all
  python3 -c "
import json, subprocess
o = json.loads(subprocess.check_output(['$SZ', 'inspect', '--json', 'kv.sz']))['frames'][2]['offset']
b = bytearray(open('kv.sz','rb').read()); b[o] ^= 0xff; open('hdr.sz','wb').write(b)"
  expect_rc 3 "$SZ" decompress -o hdr.out hdr.sz
  expect_err "frame 2 at offset .*BAD_MAGIC"
  expect_no_leftovers hdr.out
  # truncated pipe stream and trailing bytes
  head -c $((f1 + 1000)) kv.sz | "$SZ" decompress -o tr.out - 2>err.txt
  [ $? -eq 3 ] || die "truncated pipe stream not exit 3"
  expect_err "frame 1 at offset $f1: TRUNCATED"
  expect_no_leftovers tr.out
  { cat kv.sz; printf 'xyz'; } | "$SZ" decompress -o tb.out - 2>err.txt
  [ $? -eq 3 ] || die "trailing bytes from a pipe not exit 3"
  expect_err "(3 trailing bytes): TRUNCATED"
  expect_no_leftovers tb.out
  # --max-size from a pipe: refused at the frame that crosses it
  cat kv.sz | "$SZ" decompress --max-size 1M -o ms.out - 2>err.txt
  [ $? -eq 5 ] || { cat err.txt; die "--max-size from a pipe not exit 5"; }
  expect_err "LIMIT_EXCEEDED"
  expect_no_leftovers ms.out
  cat kv.sz | "$SZ" decompress --max-size 2M -o ok.out - || die "--max-size at the exact total"
  cmp -s ok.out kv.bf16 || die "--max-size exact total differs"
  # an odd-sized raw file is refused before an output exists
  head -c 1001 kv.bf16 > odd.bf16
  expect_rc 3 "$SZ" compress odd.bf16
  expect_err "not a multiple of 2"
  expect_no_leftovers odd.bf16.sz
}

case_stream_containers() {
  # A container file's payload is read from the file frame by frame (files:
  # pread per worker; stdout: one read() stream); a tensor followed by other
  # tensors must stop at its own end.
  python3 "$HERE/make_containers.py" . "$DATA/layer01_v.bf16" "$DATA/layer02_k.f32" || die "make_containers.py"
  for t in layer0.k:bf16 layer0.v:f32 layer0.h:f16; do
    local name=${t%%:*} raw=${t##*:}.raw
    expect_rc 0 "$SZ" compress --tensor "$name" --frame-size 8K -T2 -o "$name.sz" model.safetensors
    "$SZ" compress --tensor "$name" --frame-size 8K -c model.safetensors > "$name.c.sz" || die "compress -c $name"
    cmp -s "$name.sz" "$name.c.sz" || die "$name: file and stdout outputs differ"
    expect_rc 0 "$SZ" decompress -T3 -o "$name.out" "$name.sz"
    cmp -s "$name.out" "$raw" || die "tensor $name differs from $raw"
    # the same frames as compressing the raw elements
    expect_rc 0 "$SZ" compress --dtype "${t##*:}" --frame-size 8K -o "$name.raw.sz" "$raw"
    cmp -s "$name.sz" "$name.raw.sz" || die "$name: container frames differ from raw frames"
  done
  expect_rc 0 "$SZ" compress --frame-size 8K -o npy.sz bf16_v2.npy
  "$SZ" compress --frame-size 8K -c bf16_v2.npy > npy.c.sz || die "compress -c npy"
  cmp -s npy.sz npy.c.sz || die "npy: file and stdout outputs differ"
  expect_rc 0 "$SZ" decompress -o npy.out npy.sz
  cmp -s npy.out bf16_v2.npy || die "npy differs"
  # the payload at an odd offset (single.safetensors) needs no aligned copy
  expect_rc 0 "$SZ" compress --frame-size 1K -o s.sz single.safetensors
  expect_rc 0 "$SZ" decompress -o s.out s.sz
  cmp -s s.out single.safetensors || die "single-tensor file differs"
}

case_kill() {
  # A kill in the middle of a run leaves nothing under the final name and
  # never removes the input, even with --rm. SIGTERM also removes the temp
  # file; SIGKILL cannot be caught, so its temp file may stay.
  local mb=4 sig tries
  for sig in TERM KILL; do
    tries=0
    while :; do
      tries=$((tries + 1)); [ $tries -le 4 ] || die "compress always finished before the kill"
      make_big $mb in.bf16
      cp in.bf16 want.bf16
      rm -f .out.sz.splitzip-*
      "$SZ" compress --rm -T1 --frame-size 64K -o out.sz in.bf16 2>/dev/null &
      local pid=$! seen=0 f
      while kill -0 $pid 2>/dev/null; do
        for f in .out.sz.splitzip-*; do [ -s "$f" ] && seen=1; done
        [ $seen -eq 1 ] && break
      done
      if [ $seen -eq 1 ] && kill -s $sig $pid 2>/dev/null; then
        wait $pid; local rc=$?
        if [ ! -e out.sz ]; then
          [ $rc -ne 0 ] || die "killed compress exited 0"
          break
        fi
        die "SIG$sig: out.sz exists after a kill (rc $rc)"
      fi
      wait $pid
      rm -f out.sz
      mb=$((mb * 4))  # finished first: try a bigger input
    done
    [ ! -e out.sz ] || die "SIG$sig left out.sz"
    [ -f in.bf16 ] || die "SIG$sig: the input was removed"
    cmp -s in.bf16 want.bf16 || die "SIG$sig: the input changed"
    if [ $sig = TERM ]; then
      expect_no_leftovers out.sz
    fi
    rm -f .out.sz.splitzip-*
  done
  # a finished run with --rm removes the input only after the output is whole
  cat "$DATA"/layer00_k.bf16 > small.bf16
  expect_rc 0 "$SZ" compress --rm small.bf16
  [ ! -e small.bf16 ] || die "--rm kept the input"
  expect_rc 0 "$SZ" decompress small.bf16.sz
  cmp -s small.bf16 "$DATA"/layer00_k.bf16 || die "--rm round trip"
}

case_containers() {
  # .npy and whole .safetensors files come back byte for byte (sha256):
  # the first frame's tensor descriptor holds the file's header verbatim.
  python3 "$HERE/make_containers.py" . "$DATA/layer01_v.bf16" "$DATA/layer02_k.f32" || die "make_containers.py"
  local f sum
  for f in f16.npy f32.npy bf16_v2.npy bf16_named.npy e5m2.npy fortran.npy scalar.npy empty.npy \
           model.safetensors single.safetensors mixed.safetensors; do
    sum=$(sha256sum < "$f")
    expect_rc 0 "$SZ" compress "$f"
    [ -f "$f.sz" ] || die "$f: default output $f.sz not written"
    mv "$f" "$f.orig"
    expect_rc 0 "$SZ" decompress "$f.sz"
    [ "$(sha256sum < "$f")" = "$sum" ] || die "$f: sha256 differs after the round trip"
    expect_rc 0 "$SZ" verify "$f.sz" "$f"
    # stdin -> stdout both ways
    "$SZ" compress --format "${f##*.}" - < "$f" > p.sz || die "$f: compress from stdin"
    cmp -s p.sz "$f.sz" || die "$f: stdin frames differ from file frames"
    cat "$f.sz" | "$SZ" decompress - > p.out || die "$f: decompress from stdin"
    [ "$(sha256sum < p.out)" = "$sum" ] || die "$f: sha256 differs through stdin/stdout"
  done
  # the descriptor: what it records
  "$SZ" inspect --json fortran.npy.sz > i.json || die "inspect fortran"
  json_field i.json "(j['tensor']['container'], j['tensor']['shape'], j['tensor']['dtype'])" \
    | grep -qx "('npy', \[100, 30\], 'fp32')" || die "fortran.npy descriptor: $(cat i.json)"
  "$SZ" inspect --json mixed.safetensors.sz > i.json || die "inspect mixed"
  json_field i.json "([f['dtype'] for f in j['frames']], j['frames'][0]['tensor']['container'])" \
    | grep -qx "(\['bf16', 'fp16', 'fp32', 'fp8_e5m2', 'fp8_e5m2'\], 'safetensors')" \
    || die "mixed.safetensors frames: $(cat i.json)"
  # --tensor keeps its meaning: one tensor, raw elements out
  expect_rc 0 "$SZ" compress --tensor v -o v.sz mixed.safetensors
  expect_rc 0 "$SZ" decompress -o v.out v.sz
  cmp -s v.out f32.raw || die "--tensor output is not the raw elements"
  "$SZ" inspect --json v.sz | grep -q '"tensor":null' || die "--tensor frames carry a descriptor"

  # A multi-frame stream carries the descriptor once, in its first frame.
  expect_rc 0 "$SZ" compress --frame-size 1K -o multi.sz f32.npy
  "$SZ" inspect --json multi.sz > i.json || die "inspect multi"
  json_field i.json "j['frame_count'] > 5 and j['frames'][0]['tensor'] is not None and all(f['tensor'] is None for f in j['frames'][1:])" \
    | grep -qx True || die "only the first frame may carry the descriptor: $(cat i.json)"
  expect_rc 0 "$SZ" decompress -T3 -o multi.out multi.sz
  cmp -s multi.out f32.npy || die "multi-frame npy differs"
  cat multi.sz | "$SZ" decompress -T2 - > multi.out || die "multi-frame npy from stdin"
  cmp -s multi.out f32.npy || die "multi-frame npy from stdin differs"
  expect_rc 0 "$SZ" verify multi.sz f32.npy
  expect_rc 4 "$SZ" verify multi.sz f16.npy

  # Concatenated streams decode to the concatenation of their files, a raw
  # stream included (FORMAT.md 7 and docs/CLI.md).
  expect_rc 0 "$SZ" compress --dtype fp16 -o raw.sz f16.raw
  cat f16.npy.sz multi.sz raw.sz mixed.safetensors.sz > cat.sz
  expect_rc 0 "$SZ" decompress -o cat.out cat.sz
  cat f16.npy f32.npy f16.raw mixed.safetensors | cmp -s - cat.out || die "concatenated streams"
  # A container stream cut at a frame boundary is incomplete: exit 3.
  python3 - "$SZ" <<'PY' || die "cut multi.sz"
import json, subprocess, sys
j = json.loads(subprocess.check_output([sys.argv[1], "inspect", "--json", "multi.sz"]))
last = j["frames"][-1]["offset"]
open("cut.sz", "wb").write(open("multi.sz", "rb").read()[:last])
PY
  expect_rc 3 "$SZ" decompress -o cut.out cut.sz
  expect_err "before the end of the payload"
  expect_no_leftovers cut.out
  cat cut.sz | "$SZ" decompress -o cut.out - 2>err.txt && die "a cut container stream from stdin exited 0"
  expect_no_leftovers cut.out
  # ... and so is a container whose frames are followed by another container
  # before its payload is complete.
  cat cut.sz f16.npy.sz > cut2.sz
  expect_rc 3 "$SZ" decompress -o cut.out cut2.sz
  expect_err "new container starts"

  # A damaged or truncated descriptor: exit 3, no output file.
  python3 -c "
import sys; b = bytearray(open('f16.npy.sz','rb').read()); i = b.find(b\"'descr'\"); assert i > 0
b[i + 2] ^= 0x20; open('bad.sz','wb').write(b)" || die "corrupt descriptor"
  expect_rc 3 "$SZ" decompress -o bad.out bad.sz
  expect_err "HEADER_CORRUPT"
  expect_no_leftovers bad.out
  expect_rc 3 "$SZ" decompress -o bad.out - < bad.sz
  expect_no_leftovers bad.out
  expect_rc 3 "$SZ" inspect bad.sz
  head -c $(( $(stat -c %s f16.npy.sz) - 16 )) f16.npy.sz > short.sz
  expect_rc 3 "$SZ" decompress -o bad.out short.sz
  expect_err "TRUNCATED"
  expect_no_leftovers bad.out
  cat short.sz | "$SZ" decompress -o bad.out - 2>err.txt; [ $? -eq 3 ] || die "truncated descriptor from stdin"
  expect_no_leftovers bad.out
}

case_hardening() {
  make_big 1 big.bf16
  expect_rc 0 "$SZ" compress --frame-size 64K -o big.sz big.bf16
  # A file size limit (SIGXFSZ) is a write error: exit 2, no temp file.
  ( ulimit -f 100; "$SZ" decompress -f -o x big.sz ) 2>err.txt
  local rc=$?
  [ $rc -eq 2 ] || { cat err.txt >&2; die "decompress over ulimit -f exited $rc, expected 2"; }
  grep -q "File too large" err.txt || { cat err.txt >&2; die "no EFBIG message"; }
  expect_no_leftovers x
  ( ulimit -f 100; "$SZ" compress -f -o y.sz big.bf16 ) 2>err.txt
  rc=$?
  [ $rc -eq 2 ] || die "compress over ulimit -f exited $rc, expected 2"
  expect_no_leftovers y.sz
  # Endless junk on a pipe or device stops at the first header, in bounded
  # memory and time (ulimit -v: 512 MiB of address space). ASan reserves
  # terabytes of address space, so there its own limits bound the process
  # instead: no allocation over 512 MiB, RSS under 1 GiB (shadow included).
  local asan=0 memlim="ulimit -v 524288"
  grep -q __asan_init "$SZ" && { asan=1; memlim=":"; }
  local asan_opts="${ASAN_OPTIONS:+$ASAN_OPTIONS:}max_allocation_size_mb=512:hard_rss_limit_mb=1024"
  local cmd
  for cmd in "decompress - < /dev/urandom" "decompress - < /dev/zero" "inspect /dev/zero" "inspect - < /dev/urandom" \
             "verify /dev/zero big.bf16" "verify - big.bf16 < /dev/urandom"; do
    ( $memlim; ASAN_OPTIONS=$asan_opts timeout 20 bash -c "\"$SZ\" $cmd > /dev/null" ) 2>err.txt
    rc=$?
    [ $rc -eq 3 ] || { cat err.txt >&2; die "'$cmd' exited $rc, expected 3"; }
  done
  # A valid header announcing a frame far larger than what follows, on a
  # pipe: TRUNCATED once the input ends, never a read of the announced size.
  python3 "$HERE/frame_tools.py" bomb big.sz bomb.sz || die "frame_tools.py bomb"
  ( $memlim; cat bomb.sz | ASAN_OPTIONS=$asan_opts timeout 20 "$SZ" inspect - > /dev/null ) 2>err.txt
  rc=$?
  [ $rc -eq 3 ] || { cat err.txt >&2; die "inspect of a lying header exited $rc"; }
  # inspect and verify stream: peak RSS stays small for a 256 MiB input.
  # (Not under ASan: its shadow memory and quarantine are in the RSS; the
  # same case runs in the plain build.)
  [ $asan -eq 1 ] && return 0
  truncate -s 256M zeros.bf16
  expect_rc 0 "$SZ" compress -T2 -o zeros.sz zeros.bf16
  local what kb
  for what in "inspect zeros.sz" "verify zeros.sz zeros.bf16" "decompress -c zeros.sz"; do
    /usr/bin/time -f "%M" -o rss.txt "$SZ" $what > /dev/null 2>err.txt || { cat err.txt >&2; die "$what failed"; }
    kb=$(tail -1 rss.txt)
    [ "$kb" -le 65536 ] || die "$what: peak RSS $kb KB over 64 MB"
  done
}

# The output keeps the input's permission bits and times (and owner and
# group where the process may set them), both ways, as zstd does; the
# umask does not widen it. stdin input gets the usual 0666 & ~umask.
case_metadata() {
  local mode f out
  for mode in 600 640 444; do
    f=k$mode.bf16
    cp "$DATA/layer01_k.bf16" "$f"
    chmod "$mode" "$f"
    touch -d '2001-02-03 04:05:06.123456789' "$f"
    (umask 000; expect_rc 0 "$SZ" compress "$f")
    [ "$(stat -c %a "$f.sz")" = "$mode" ] || die "compress: $f.sz is $(stat -c %a "$f.sz"), input $mode"
    [ "$(stat -c %y "$f.sz")" = "$(stat -c %y "$f")" ] || die "compress: $f.sz mtime $(stat -c %y "$f.sz") != $(stat -c %y "$f")"
    out=d$mode.bf16
    (umask 000; expect_rc 0 "$SZ" decompress -o "$out" "$f.sz")
    [ "$(stat -c %a "$out")" = "$mode" ] || die "decompress: $out is $(stat -c %a "$out"), input $mode"
    [ "$(stat -c %y "$out")" = "$(stat -c %y "$f")" ] || die "decompress: $out mtime differs"
    cmp -s "$out" "$DATA/layer01_k.bf16" || die "$out does not round-trip"
  done
  # The command-less mode and -f over an existing file keep them too.
  cp "$DATA/layer01_k.bf16" z.bf16
  chmod 600 z.bf16
  expect_rc 0 "$SZ" -q z.bf16
  [ "$(stat -c %a z.bf16.sz)" = 600 ] || die "zstd mode: z.bf16.sz is $(stat -c %a z.bf16.sz)"
  touch other.sz && chmod 644 other.sz
  expect_rc 0 "$SZ" compress -f -o other.sz z.bf16
  [ "$(stat -c %a other.sz)" = 600 ] || die "-f: other.sz is $(stat -c %a other.sz)"
  # Owner and group, where this process may set them (root).
  if [ "$(id -u)" = 0 ]; then
    cp "$DATA/layer01_k.bf16" o.bf16
    chown 1:2 o.bf16
    chmod 640 o.bf16
    expect_rc 0 "$SZ" compress o.bf16
    [ "$(stat -c '%u:%g %a' o.bf16.sz)" = "1:2 640" ] || die "owner/group not kept: $(stat -c '%u:%g %a' o.bf16.sz)"
  fi
  # stdin: no input file, so the usual mode.
  (umask 022; "$SZ" compress --dtype bf16 -o s.sz - < "$DATA/layer01_k.bf16") || die "stdin compress failed"
  [ "$(stat -c %a s.sz)" = 644 ] || die "stdin: s.sz is $(stat -c %a s.sz)"
  expect_no_leftovers
}

# Every command takes the short options that mean something to it and names
# the ones it does not take; a level word (-3) is never a file name.
case_short_options() {
  cp "$DATA/layer00_k.bf16" k.bf16
  expect_rc 0 "$SZ" compress -q k.bf16
  [ ! -s err.txt ] || die "compress -q printed"
  expect_rc 1 "$SZ" compress -q -v -f k.bf16
  expect_err "-q and -v conflict"
  expect_rc 0 "$SZ" decompress -q -f -o k.back k.bf16.sz
  [ ! -s err.txt ] && cmp -s k.back k.bf16 || die "decompress -q"
  "$SZ" verify -q -T2 k.bf16.sz k.bf16 > out.txt 2>err.txt || die "verify -q -T2"
  [ ! -s out.txt ] && [ ! -s err.txt ] || die "verify -q printed"
  expect_rc 0 "$SZ" calibrate -q -o k.szcb k.bf16
  [ ! -s err.txt ] && [ -s k.szcb ] || die "calibrate -q"
  "$SZ" bench -T1 --seconds 0.01 k.bf16 > /dev/null 2>err.txt || { cat err.txt; die "bench -T1"; }
  # Not taken: named, with where it belongs.
  local cmd o taken
  for cmd in compress decompress inspect verify bench calibrate; do
    case $cmd in
      compress | decompress) taken="-c -o -f -k -q -v -T" ;;
      inspect) taken="" ;;
      verify) taken="-T -q -v" ;;
      bench) taken="-T" ;;
      calibrate) taken="-o -f -q" ;;
    esac
    for o in -z -d -l -t -r -V -c -o -f -k -q -v -T; do
      case " $taken " in *" $o "*) continue ;; esac
      expect_rc 1 "$SZ" $cmd $o k.bf16.sz
      expect_err "$cmd: option $o (--[a-z]*) is not taken by $cmd"
    done
  done
  expect_rc 1 "$SZ" compress -d k.bf16
  expect_err "use \`splitzip decompress IN.sz\` or \`splitzip -d IN.sz\`"
  expect_rc 1 "$SZ" compress -r .
  expect_err "splitzip -r DIR"
  for cmd in decompress inspect verify bench calibrate; do
    expect_rc 1 "$SZ" $cmd -3 k.bf16.sz
    expect_err "'-3' is a compression level, which $cmd does not take"
  done
  expect_rc 1 "$SZ" compress --bogus k.bf16
  expect_err "unknown option '--bogus'"
}

# Item 7 of issue 31: defects found by an adversarial pass.
case_defects() {
  local G="$HERE/../golden-errors/capacity"
  # A lying block index or stream size in a capacity frame: BAD_CODE, in
  # words that fit both modes.
  for f in index_sum_differs stream_sizes_exceed_block; do
    expect_rc 3 "$SZ" decompress -o x.out "$G/$f.bin"
    expect_err "BAD_CODE (invalid exponent code"
    ! grep -q "outside the codebook" err.txt || die "$f: BAD_CODE described as a fast-mode code"
  done
  # An empty stream names no backend it did not use.
  : > empty.sz
  expect_rc 0 "$SZ" -d -f empty.sz
  grep -q "backend none (no frames)" err.txt && ! grep -q "backend ?" err.txt || { cat err.txt; die "empty stream: backend"; }
  "$SZ" verify empty.sz empty > out.txt || die "verify of an empty stream"
  grep -q "backend none (no frames)" out.txt || { cat out.txt; die "verify of an empty stream: backend"; }
  python3 - <<'PY' || die "making the safetensors files"
import json, struct
def st(path, tensors, pad=b"", meta=None):
    h, blob = {}, b""
    if meta is not None:
        h["__metadata__"] = meta
    for name, dtype, shape, payload in tensors:
        h[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(blob), len(blob) + len(payload)]}
        blob += payload
    text = json.dumps(h, separators=(",", ":")).encode() + pad
    open(path, "wb").write(struct.pack("<Q", len(text)) + text + blob)
t = [("w", "BF16", [2, 3], bytes(range(12)))]
st("nul.safetensors", t, pad=b"\0" * 5)
st("nuljunk.safetensors", t, pad=b"\0junk")
st("spaces.safetensors", t, pad=b" " * 5)
st("bighdr.safetensors", t, meta={"m": "x" * (17 << 20)})
# 100k tiny tensors of mixed dtypes; the first one is 2-d.
many = [("first", "BF16", [3, 4], bytes(range(24)))]
for i in range(100000):
    dt = ("BF16", "F32", "I64", "F16")[i % 4]
    w = {"BF16": 2, "F32": 4, "I64": 8, "F16": 2}[dt]
    many.append(("t%d" % i, dt, [2], bytes((i + j) & 255 for j in range(2 * w))))
st("many.safetensors", many)
PY
  # NUL bytes are not JSON and not safetensors padding (spaces are).
  for f in nul nuljunk; do
    expect_rc 3 "$SZ" compress $f.safetensors
    expect_err "NUL byte"
    expect_no_leftovers $f.safetensors.sz
  done
  expect_rc 0 "$SZ" compress spaces.safetensors
  expect_rc 0 "$SZ" decompress -o spaces.back spaces.safetensors.sz
  cmp -s spaces.back spaces.safetensors || die "space-padded header does not come back"
  # A header over 16 MiB: the command and the file are named.
  expect_rc 3 "$SZ" compress bighdr.safetensors
  expect_err "^splitzip: compress: bighdr.safetensors: the container header is"
  expect_rc 3 "$SZ" -q bighdr.safetensors
  expect_err "compress: bighdr.safetensors: the container header is"
  expect_no_leftovers bighdr.safetensors.sz
  # 100k tensors: right bytes both ways (the time is bench/cli/safetensors_many.sh's).
  expect_rc 0 "$SZ" compress many.safetensors
  expect_rc 0 "$SZ" decompress -o many.back many.safetensors.sz
  cmp -s many.back many.safetensors || die "100k tensors do not come back"
  "$SZ" inspect --json many.safetensors.sz > many.json || die "inspect many"
  # The descriptor: the first tensor's dtype and name, its element count as
  # one dim (FORMAT.md 4.8); the JSON header keeps its shape [3, 4].
  json_field many.json "j['frame_count']==100001 and j['frames'][0]['tensor']['shape']==[12] and \
    j['frames'][0]['tensor']['name']=='first' and j['frames'][0]['tensor']['dtype']=='bf16' and \
    j['frames'][0]['tensor']['container']=='safetensors'" | grep -qx True || die "descriptor of many.safetensors"
  # .npy of rank 9: one dim, the element count; the header keeps the shape.
  python3 - <<'PY' || die "making rank9.npy"
import struct
shape = (1, 2, 1, 2, 1, 2, 1, 2, 3)
h = "{'descr': '<f2', 'fortran_order': False, 'shape': (%s), }" % "".join("%d, " % d for d in shape)
h += " " * ((-(10 + len(h) + 1)) % 64) + "\n"
open("rank9.npy", "wb").write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h.encode() + bytes(2 * 48))
PY
  expect_rc 0 "$SZ" compress rank9.npy
  "$SZ" inspect --json rank9.npy.sz > r9.json || die "inspect rank9"
  json_field r9.json "j['tensor']['shape']==[48] and j['tensor']['total_elems']==48" | grep -qx True ||
    die "rank-9 descriptor: $(cat r9.json)"
  expect_rc 0 "$SZ" decompress -o rank9.back rank9.npy.sz
  cmp -s rank9.back rank9.npy || die "rank9.npy does not come back"
}

# fp8 (issue 30): .npy as numpy + ml_dtypes write it, .safetensors F8_E4M3 /
# F8_E5M2 coded as fp8, and capacity x fp8_e4m3 (format v3, FORMAT.md
# 4.6.7): a whole file codes every tensor, e4m3 too, in the capacity mode;
# an e4m3 input alone round-trips in a v3 frame.
case_fp8() {
  python3 "$HERE/make_containers.py" . "$DATA/layer01_v.bf16" "$DATA/layer02_k.f32" || die "make_containers.py"
  rt() {
    expect_rc 0 "$SZ" compress -f -o "$1.sz" "$1"
    expect_rc 0 "$SZ" decompress -f -o "$1.back" "$1.sz"
    cmp -s "$1.back" "$1" || die "$1 does not come back"
  }
  rt e4m3_v1.npy
  "$SZ" inspect --json e4m3_v1.npy.sz | grep -q '"dtype":"fp8_e4m3"' || die "'<V1' npy is not fp8_e4m3"
  rt e5m2_f1.npy
  "$SZ" inspect --json e5m2_f1.npy.sz | grep -q '"dtype":"fp8_e5m2"' || die "'<f1' npy is not fp8_e5m2"
  expect_rc 0 "$SZ" compress -f --dtype fp8_e5m2 -o v1_as_e5m2.sz e4m3_v1.npy
  "$SZ" inspect --json v1_as_e5m2.sz | grep -q '"dtype":"fp8_e5m2"' || die "--dtype does not override '<V1'"
  expect_rc 3 "$SZ" compress -f --dtype fp8_e4m3 -o x.sz e5m2_f1.npy
  expect_err "is fp8_e5m2 but --dtype fp8_e4m3"
  # safetensors: each fp8 tensor in its own dtype
  expect_rc 0 "$SZ" compress -f --tensor layers.0.k -o k.sz fp8.safetensors
  "$SZ" inspect --json k.sz | grep -q '"dtype":"fp8_e4m3"' || die "F8_E4M3 tensor not coded as fp8_e4m3"
  expect_rc 0 "$SZ" decompress -f -o k.out k.sz
  cmp -s k.out e4m3.raw || die "F8_E4M3 tensor differs"
  rt fp8.safetensors
  # --mode capacity on the whole file: every tensor in the capacity mode, no note
  expect_rc 0 "$SZ" compress -f --mode capacity -o cap.sz fp8.safetensors
  [ ! -s err.txt ] || { cat err.txt >&2; die "capacity on fp8.safetensors printed a note"; }
  expect_rc 0 "$SZ" decompress -f -o cap.back cap.sz
  cmp -s cap.back fp8.safetensors || die "fp8.safetensors (capacity) does not come back"
  "$SZ" inspect --json cap.sz > cap.json || die "inspect cap.sz"
  json_field cap.json "sorted((f['dtype'], f['coding']) for f in j['frames'] if f['n_elems'] > 0) ==     [('bf16', 'capacity'), ('fp8_e4m3', 'capacity'), ('fp8_e5m2', 'capacity')]" | grep -qx True ||
    die "capacity safetensors frames: $(cat cap.json)"
  # one e4m3 tensor alone, and raw e4m3: v3 capacity frames that round-trip
  expect_rc 0 "$SZ" compress -f --mode capacity --tensor layers.0.k -o k2.sz fp8.safetensors
  expect_rc 0 "$SZ" decompress -f -o k2.out k2.sz
  cmp -s k2.out e4m3.raw || die "F8_E4M3 tensor (capacity) differs"
  expect_rc 0 "$SZ" compress -f --mode capacity --dtype fp8_e4m3 -o r.sz e4m3.raw
  "$SZ" inspect --json r.sz > r.json || die "inspect r.sz"
  json_field r.json "(j['version'], j['coding']) == (3, 'capacity')" | grep -qx True ||
    die "e4m3 capacity frame: $(cat r.json)"
  expect_rc 0 "$SZ" decompress -f -o r.back r.sz
  cmp -s r.back e4m3.raw || die "e4m3.raw (capacity) does not come back"
  expect_rc 0 "$SZ" verify r.sz e4m3.raw
}

export SZ
declare -F "case_$CASE" > /dev/null || die "no such case"
"case_$CASE"
echo "PASS [$CASE]"
