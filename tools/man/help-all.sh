#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# help2man driver for the man page (cmake/SplitzipMan.cmake): `--help` prints
# the CLI's own help followed by every command's `--help`, `--version` passes
# through. The CLI binary is $SPLITZIP_CLI. One source: the CLI's help text.
set -eu
cli=${SPLITZIP_CLI:?set SPLITZIP_CLI to the splitzip binary}
case "${1:-}" in
  --version) exec "$cli" --version ;;
  --help)
    "$cli" --help
    for c in $("$cli" --help | sed -n 's/^  \([a-z][a-z]*\)  .*/\1/p'); do
      [ "$c" = backends ] && continue
      echo
      # A blank line before the first option line, so help2man lays the
      # options out as a list rather than folding them into the paragraph.
      "$cli" "$c" --help | awk '/^  -/ && !opts { print ""; opts = 1 } { print }'
    done
    ;;
  *) echo "usage: help-all.sh --help | --version" >&2; exit 2 ;;
esac
