#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz/ (the IDX, safetensors, CSV and
# model JSON parsers) with Debian's clang under AddressSanitizer + UndefinedBehaviorSanitizer
# into build-fuzz/, then fuzzes each for SECONDS (default 60) starting from the
# committed seed corpus. scripts/test.sh runs it as the CI smoke; run it longer
# by hand, e.g. `bash scripts/fuzz.sh 3600`, or one target with its own flags:
#   ./build-fuzz/idx_fuzz -jobs=2 -workers=2 build-fuzz/corpus/idx tests/fuzz/corpus/idx
# New inputs go to build-fuzz/corpus/<target> (the committed corpus is only
# read); crashes to build-fuzz/artifacts/, and the script fails naming them.
# A target with a dictionary (tests/fuzz/<target>.dict) is given it.
#   usage: scripts/fuzz.sh [SECONDS] [idx|safetensors|csv|model_config ...]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
seconds="${1:-60}"
shift || true
targets=("$@")
((${#targets[@]})) || targets=(idx safetensors csv model_config)
out="$root/build-fuzz"
mkdir -p "$out/artifacts"

CXX_FUZZ="${CXX_FUZZ:-clang++}"
# -fno-sanitize-recover: any undefined behaviour aborts the run, so it counts as a crash.
flags=(-std=c++17 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -Iinclude)
for t in "${targets[@]}"; do
  src="tests/fuzz/${t}_fuzz.cpp"
  [ -f "$src" ] || { echo "fuzz.sh: no target $t ($src)" >&2; exit 2; }
  extra=()
  # The IDX reader gunzips natively: fuzz that path too.
  [ "$t" = idx ] && extra=(-DGLTRAIN_HAVE_ZLIB=1 -lz)
  bin="$out/${t}_fuzz"
  deps=("$src" include/gltrain/*.hpp)
  if [ ! -x "$bin" ] || [ -n "$(find "${deps[@]}" -newer "$bin" 2>/dev/null | head -1)" ]; then
    echo "fuzz.sh: building $bin"
    "$CXX_FUZZ" "${flags[@]}" "$src" -o "$bin" "${extra[@]}"
  fi
done

status=0
for t in "${targets[@]}"; do
  corpus="$out/corpus/$t"
  mkdir -p "$corpus"
  echo "fuzz.sh: $t for ${seconds}s (seeds: tests/fuzz/corpus/$t)"
  log="$out/$t.log"
  dict=()
  [ -f "tests/fuzz/$t.dict" ] && dict=(-dict="tests/fuzz/$t.dict")
  # -timeout: one input taking over 10 s is a hang; -rss_limit_mb keeps a
  # decompression bomb from taking the machine (the parsers cap their memory far lower).
  if ! "$out/${t}_fuzz" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
      "${dict[@]}" -artifact_prefix="$out/artifacts/${t}-" "$corpus" "tests/fuzz/corpus/$t" >"$log" 2>&1; then
    echo "fuzz.sh: $t FAILED; the input that failed is in $out/artifacts/ (replay: $out/${t}_fuzz <file>)"
    grep -E "ERROR|runtime error|SUMMARY|Test unit written" "$log" | head -20 || true
    tail -30 "$log"
    status=1
    continue
  fi
  grep -E "^stat::number_of_executed_units|^Done" "$log" | tr '\n' ' '
  echo
done
exit $status
