# SPDX-License-Identifier: Apache-2.0
# Shared by the CLI test scripts (sourced): a fresh work directory per case,
# and the checks every case uses. Needs CASE set; $1 names the directory.
set -u -o pipefail

WORK=$(mktemp -d "${TMPDIR:-/tmp}/splitzip-$1.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"

die() { echo "FAIL [$CASE]: $*" >&2; exit 1; }

# expect_rc WANT CMD...: runs CMD, stderr to err.txt, checks its exit code.
expect_rc() {
  local want=$1; shift
  "$@" 2>err.txt
  local rc=$?
  [ "$rc" -eq "$want" ] || { cat err.txt >&2; die "'$*' exited $rc, expected $want"; }
}

# expect_err PATTERN: the last command's stderr is one line matching PATTERN.
expect_err() {
  grep -q -- "$1" err.txt || { cat err.txt >&2; die "stderr lacks '$1'"; }
  [ "$(wc -l < err.txt)" -le 1 ] || { cat err.txt >&2; die "error message is not one line"; }
}

# No output and no temp file may survive a failed run.
expect_no_leftovers() {
  for f in "$@"; do [ ! -e "$f" ] || die "$f left behind"; done
  if ls -A | grep -q '\.splitzip-'; then ls -A >&2; die "temp file left behind"; fi
}
