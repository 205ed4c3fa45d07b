#!/usr/bin/env bash
# Inputs that lie or never end, against the gltrain program (CTest:
# cli_lying_inputs). Usage: lying_inputs_test.sh GLTRAIN WORKDIR
#
# Checks that each is refused with a message naming the file and the reason,
# exit status 1, in bounded time and memory:
# - a 1 MB gzip bomb whose IDX header declares 10^6 images of 32x32 (1.024 GB
#   of zeros follow) for a model taking 28x28: refused at its header (before,
#   5.09 GB and 41 s went by before "1024 values per row, model takes 784");
# - labels whose header declares a million labels for ten images;
# - /dev/zero, a FIFO with no writer and a directory as data, /dev/zero as the
#   model: refused unopened (before, /dev/zero was read until memory ran out
#   and opening the FIFO waited for a writer for ever);
# - a CSV cell holding a NUL byte: the message shows it escaped (before, it
#   was cut at the NUL).
# Every command runs under `timeout` with its address space capped at 4 GiB;
# its peak resident memory is measured by /usr/bin/time when installed.
set -u
G=$(realpath "$1")
W=$2
rm -rf "$W" && mkdir -p "$W" && cd "$W" || exit 1

failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
# check STATUS TEXT MAX_SECONDS MAX_MB COMMAND...: runs COMMAND (stdout to
# out, stderr to err) and checks its exit status, that its output contains
# TEXT (a fixed string), its wall time and its peak resident memory.
check() {
  local status=$1 text=$2 max_s=$3 max_mb=$4
  shift 4
  local t0 t1 got rss_kb=0
  t0=$(date +%s%N)
  if [ -x /usr/bin/time ]; then
    (ulimit -v $((4 * 1024 * 1024)); exec timeout 60 /usr/bin/time -f "%M" -o rss "$@" >out 2>err)
    got=$?
    rss_kb=$(tail -1 rss 2>/dev/null || echo 0)
  else
    (ulimit -v $((4 * 1024 * 1024)); exec timeout 60 "$@" >out 2>err)
    got=$?
  fi
  t1=$(date +%s%N)
  local ms=$(((t1 - t0) / 1000000))
  local shown="$* (${ms} ms, ${rss_kb} KB peak)"
  if [ "$got" != "$status" ]; then
    fail "exit $got, expected $status: $shown"; sed 's/^/  stdout: /' out >&2; sed 's/^/  stderr: /' err >&2
  elif ! grep -qF -- "$text" out err; then
    fail "no '$text' in the output of: $shown"; sed 's/^/  stdout: /' out >&2; sed 's/^/  stderr: /' err >&2
  elif [ "$ms" -gt $((max_s * 1000)) ]; then
    fail "took ${ms} ms, more than ${max_s} s: $shown"
  elif [ "$rss_kb" -gt $((max_mb * 1024)) ]; then
    fail "peak memory ${rss_kb} KB, more than ${max_mb} MB: $shown"
  else
    echo "ok: $shown"
  fi
}

# ---- files -------------------------------------------------------------------------
cat > mlp.json <<'EOF'
{"input": [28, 28, 1], "layers": [{"type": "flatten"}, {"type": "dense", "units": 10}]}
EOF
# IDX headers: magic 0x00000803 (unsigned bytes, rank 3) and 10^6 = 0x000F4240, 32, 32;
# magic 0x00000801 (rank 1) and 10^6 labels; ten 28x28 images.
printf '\0\0\10\3\0\17\102\100\0\0\0\40\0\0\0\40' | gzip -c > bomb.gz
# 1.024e9 zeros as 64 gzip members of 16e6 zeros (one compressed, repeated: fast to make).
head -c 16000000 /dev/zero | gzip -c > zeros.gz
for _ in $(seq 64); do cat zeros.gz; done >> bomb.gz
{ printf '\0\0\10\1\0\17\102\100'; head -c 1000000 /dev/zero; } | gzip -c > labels.gz
{ printf '\0\0\10\3\0\0\0\12\0\0\0\34\0\0\0\34'; head -c 7840 /dev/zero; } > ten-images-idx3-ubyte
size=$(stat -c %s bomb.gz)
[ "$size" -lt 2000000 ] || fail "bomb.gz is $size bytes, expected about 1 MB"
mkfifo images.fifo rows.csv
mkdir dir
printf 'a,b,label\n1,x\0y,0\n' > nul.csv
printf 'a,b,label\n1,2,0\n3,4,1\n' > ok.csv
cat > xor.json <<'EOF'
{"input": 2, "layers": [{"type": "dense", "units": 2}]}
EOF

# ---- checks ------------------------------------------------------------------------
B="--backend cpu"  # no GL context: the data are read the same way, and the baseline memory is small
check 1 "IDX bomb.gz (gunzipped): its header (bytes 0..15) gives 1000000x32x32: 1024 values per image, but the model (input [28, 28, 1]) takes 784" \
  5 300 "$G" train mlp.json --images bomb.gz --labels labels.gz $B
check 1 "IDX labels.gz has 1000000 labels (its header, bytes 4..7) but ten-images-idx3-ubyte has 10 images (counts must match)" \
  5 300 "$G" train mlp.json --images ten-images-idx3-ubyte --labels labels.gz $B
check 1 "IDX /dev/zero: is a character device, not a regular file" 5 300 "$G" train mlp.json --images /dev/zero --labels labels.gz $B
check 1 "IDX images.fifo: is a FIFO (named pipe), not a regular file" 5 300 "$G" train mlp.json --images images.fifo --labels labels.gz $B
check 1 "IDX dir: is a directory, not a regular file" 5 300 "$G" train mlp.json --images dir --labels labels.gz $B
check 1 "CSV rows.csv: is a FIFO (named pipe), not a regular file" 5 300 "$G" train xor.json --data rows.csv $B
check 1 "model config /dev/zero: is a character device, not a regular file" 5 300 "$G" train /dev/zero --data ok.csv $B
check 1 "checkpoint /dev/zero: is a character device, not a regular file" 5 300 "$G" train xor.json --data ok.csv --resume /dev/zero --checkpoint out.safetensors $B
check 1 "nul.csv:2:3: field 2 (b) 'x\\0y' is not a number" 5 300 "$G" train xor.json --data nul.csv $B

if [ "$failures" -gt 0 ]; then
  echo "lying_inputs_test: $failures failure(s)" >&2
  exit 1
fi
echo "lying_inputs_test: all checks passed"
