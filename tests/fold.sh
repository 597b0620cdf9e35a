#!/usr/bin/env bash
# Folds stand-alone test files into the one integration test binary
# (tests/tests.rs, `autotests = false` in Cargo.toml).
#
#   bash tests/fold.sh            # every tests/*.rs that is not yet a module
#   bash tests/fold.sh FILE...    # only these
#
# tests/AREA_TOPIC.rs becomes tests/AREA/TOPIC.rs (`git mv`, so history
# follows) when the area tests/AREA/ exists; otherwise it stays where it is.
# Either way a `mod` line is added (to tests/AREA/mod.rs or tests/tests.rs)
# and the old per-binary headers are rewritten to the shared modules:
#   #[path = "common/sandbox.rs"] mod common;  ->  use crate::common::sandbox as common;
#   mod agents_support;                       ->  use crate::agents_support;
#   mod layers_support;                       ->  use crate::layers_support;
# The test `structure::every_test_file_is_compiled` fails while a file is
# left over.
set -euo pipefail
cd "$(dirname "$0")"

rewrite_headers() {
  perl -0pi -e '
    s/#\[path\s*=\s*"common\/(\w+)\.rs"\]\s*\n\s*mod common;/use crate::common::$1 as common;/g;
    s/^mod (\w+_support|common);$/use crate::$1;/mg;
  ' "$1"
}

add_mod() { # add_mod FILE NAME: `mod NAME;` into FILE, kept sorted with its siblings
  local file=$1 name=$2
  grep -qx "mod $name;" "$file" && return 0
  printf 'mod %s;\n' "$name" >>"$file"
  # Sort the block of plain `mod x;` lines, leave everything else in place.
  perl -0pi -e '
    s{((?:^mod \w+;\n)+)}{join("", sort split(/(?<=\n)/, $1))}me
  ' "$file"
}

files=("$@")
if [ ${#files[@]} -eq 0 ]; then
  for f in *.rs; do
    [ "$f" = tests.rs ] && continue
    grep -qx "mod ${f%.rs};" tests.rs && continue
    files+=("$f")
  done
fi

for f in "${files[@]}"; do
  f=${f#tests/}
  base=${f%.rs}
  area=${base%%_*}
  topic=${base#*_}
  if [ "$area" != "$base" ] && [ -f "$area/mod.rs" ]; then
    if [ -e "$area/$topic.rs" ]; then
      echo "fold.sh: $area/$topic.rs exists; fold $f by hand" >&2
      exit 1
    fi
    git mv "$f" "$area/$topic.rs" 2>/dev/null || mv "$f" "$area/$topic.rs"
    rewrite_headers "$area/$topic.rs"
    add_mod "$area/mod.rs" "$topic"
    echo "fold.sh: $f -> tests/$area/$topic.rs"
  else
    rewrite_headers "$f"
    add_mod tests.rs "$base"
    echo "fold.sh: $f -> module $base of tests/tests.rs"
  fi
done
