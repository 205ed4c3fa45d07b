#!/usr/bin/env bash
# End-to-end test of the gltrain program (CTest: cli). Usage: cli_test.sh GLTRAIN WORKDIR
#
# Trains tiny models on CSV files generated here and on 256 Fashion-MNIST test
# images, and checks: training converges, the non-terminal progress format,
# the terminal bar, checkpoints (periodic and final), resuming continues the
# step count and ends bit-identical to an uninterrupted run, evaluate and
# predict, --info, inspect, SIGINT writing a checkpoint that evaluate loads,
# and for bad arguments and bad files the message and the exit status
# (2 usage, 1 runtime; never a crash). Checkpoints: a path that cannot be
# written is refused before training, a second run on a locked checkpoint is
# refused, a full disk or a NaN keeps the old file and says which steps are
# lost, --reset-optimizer loads another optimizer's checkpoint.
set -u
G=$(realpath "$1")
W=$(realpath -m "$2")
umount "$W/full" 2>/dev/null  # the full-disk test's tmpfs, should a killed run have left it mounted
rm -rf "$W" && mkdir -p "$W" && cd "$W" || exit 1

failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
# expect STATUS TEXT COMMAND...: runs COMMAND (stdout to out, stderr to err),
# checks its exit status and that stdout or stderr contains TEXT (fixed string).
expect() {
  local status=$1 text=$2
  shift 2
  "$@" >out 2>err
  local got=$?
  if [ "$got" != "$status" ]; then
    fail "exit $got, expected $status: $*"; sed 's/^/  stdout: /' out >&2; sed 's/^/  stderr: /' err >&2
  elif ! grep -qF -- "$text" out err; then
    fail "no '$text' in the output of: $*"; sed 's/^/  stdout: /' out >&2; sed 's/^/  stderr: /' err >&2
  fi
}
# The value of key=VALUE on the last line of file $1 that has it.
value() { grep -o "$2=[^ ]*" "$1" | tail -1 | cut -d= -f2; }

# ---- data and models --------------------------------------------------------------
# XOR of the signs of two coordinates (points at least 0.1 from the axes), with a header.
awk 'BEGIN { srand(7); print "x,y,label"; n = 0
  while (n < 200) { x = 2 * rand() - 1; y = 2 * rand() - 1
    if (x * x < 0.01 || y * y < 0.01) continue
    printf "%.4f,%.4f,%d\n", x, y, (x > 0) != (y > 0); n++ } }' > xor.csv
cat > xor.json <<'EOF'
{"description": "XOR of signs", "input": 2,
 "layers": [{"type": "dense", "units": 16, "activation": "tanh"}, {"type": "dense", "units": 2}],
 "compile": {"optimizer": {"type": "adam", "lr": 0.05}, "seed": 3},
 "fit": {"epochs": 20, "batchSize": 20}}
EOF
# A linear target without a header, the target first: t = 2a - b + 0.5.
awk 'BEGIN { srand(3); for (i = 0; i < 128; i++) { a = rand(); b = rand(); printf "%.5f,%.5f,%.5f\n", 2 * a - b + 0.5, a, b } }' > line.csv
cat > line.json <<'EOF'
{"input": 2, "layers": [{"type": "dense", "units": 1}],
 "compile": {"loss": "mse", "optimizer": {"type": "sgd", "lr": 0.3}}, "fit": {"epochs": 60, "batchSize": 16, "lossEvery": 0}}
EOF
cat > mlp.json <<'EOF'
{"input": [28, 28, 1],
 "layers": [{"type": "flatten"}, {"type": "dense", "units": 32, "activation": "relu"}, {"type": "dense", "units": 10}],
 "compile": {"optimizer": {"type": "adam", "lr": 0.002}, "seed": 5},
 "fit": {"epochs": 1, "batchSize": 32}}
EOF
FASHION=(--data fashion-mnist --split test --limit 256)

# ---- version, help, --info ------------------------------------------------------------
expect 0 "gltrain 0." "$G" --version
expect 0 "usage:" "$G" --help
expect 0 "--resume FILE" "$G" train --help
expect 0 "renderer:" "$G" --info
grep -q "fragment float mantissa: *[0-9]* bits (measured" out || fail "--info: no measured precision"
grep -q "^platform: *egl-" out || fail "--info: no EGL platform"
expect 0 "backend:                     cpu: asked for" "$G" --info --backend cpu
expect 2 "--backend: expected one of auto, gpu, cpu, got 'tpu'" "$G" --info --backend tpu
# Compute-shader kernels: llvmpipe has them (OpenGL ES 3.2); auto leaves them off on a software renderer.
expect 0 "compute kernels on: every pass runs as a compute shader" "$G" --info --compute on
expect 0 "compute kernels off: ContextOptions::compute = off" "$G" --info --compute off
expect 2 "--compute: expected one of auto, on, off, got 'gpu'" "$G" --info --compute gpu
# A device asked for by index is that device or an error listing those found, never another renderer.
expect 1 "Context: EGL device 99 (eglDevice)" "$G" --info --egl-device 99
grep -qE "[0-9]+ EGL devices? (was|were) found" err || fail "--egl-device 99: the devices found are not listed: $(cat err)"
expect 1 "Context: EGL device 99 (eglDevice)" "$G" train xor.json --data xor.csv --egl-device 99 --backend gpu
expect 1 "eglDevice 0 needs the device platform in eglPlatforms (given: surfaceless)" "$G" --info --egl-device 0 --egl-platform surfaceless

# ---- CSV: training converges; the progress lines' format ----------------------------
expect 0 "checkpoint=xor.safetensors step=200" "$G" train xor.json --data xor.csv --log-every 7
cp out xor.out
[ "$(grep -c '^step=' xor.out)" = 29 ] || fail "expected 28 lines every 7 steps and the last, got $(grep -c '^step=' xor.out)"
bad=$(grep '^step=' xor.out | grep -vE '^step=[0-9]+/200 epoch=[0-9]+/20 loss=[0-9]+\.[0-9]{4} samples/s=[0-9]+ eta=[0-9]+:[0-9]{2}$')
[ -z "$bad" ] || fail "progress lines not in the documented format: $bad"
bad=$(grep '^epoch=' xor.out | grep -vE '^epoch=[0-9]+/20 step=[0-9]+ loss=[0-9]+\.[0-9]{4} accuracy=[01]\.[0-9]{4} time=[0-9.]+s samples/s=[0-9]+$')
[ -z "$bad" ] || fail "epoch lines not in the documented format: $bad"
[ "$(grep -c '^epoch=' xor.out)" = 20 ] || fail "expected 20 epoch lines"
if grep -q $'\r' xor.out; then fail "carriage returns in non-terminal output"; fi
expect 0 "accuracy=" "$G" evaluate xor.json --checkpoint xor.safetensors --data xor.csv --label-column label
awk -v a="$(value out accuracy)" 'BEGIN { exit !(a >= 0.98) }' || fail "XOR accuracy $(value out accuracy) < 0.98"
grep -q "rows=200" out || fail "evaluate: rows=200 missing"
# predict to stdout: nothing but CSV there (messages go to stderr); its classes agree with the labels.
expect 0 "data: 200 rows" "$G" predict xor.json --checkpoint xor.safetensors --data xor.csv --label-column label
[ "$(head -1 out)" = "class,y0,y1" ] && [ "$(wc -l < out)" = 201 ] || fail "predict: not 200 CSV rows on stdout: $(head -3 out)"
right=$(paste -d, <(tail -n +2 out | cut -d, -f1) <(tail -n +2 xor.csv | cut -d, -f3) | awk -F, '$1 == $2' | wc -l)
[ "$right" -ge 196 ] || fail "predict: $right of 200 classes right"
# The bar, when asked for (stdout is a file here): redrawn with \r, ETA, samples/s.
expect 0 "checkpoint=bar.safetensors" "$G" train xor.json --data xor.csv --epochs 2 --progress bar --checkpoint bar.safetensors
grep -q $'\r''epoch 1/2 \[#*\.*\] [0-9]*/20 loss [0-9.]*  [0-9]* samples/s  ETA [0-9]*:[0-9][0-9]' out || fail "no progress bar"
# On a terminal (script(1) gives it one) the bar is the default.
script -qefc "$G train xor.json --data xor.csv --epochs 1 --checkpoint tty.safetensors" /dev/null >tty.out 2>&1 ||
  fail "train on a terminal failed: $(cat tty.out)"
grep -q $'\r''epoch 1/1 \[#*\.*\] 10/10 loss' tty.out || fail "no progress bar on a terminal: $(cat -A tty.out)"
if grep -q '^step=' tty.out; then fail "plain progress lines on a terminal"; fi
# Regression on a headerless CSV whose label is the first column: loss only, no accuracy.
# The lock file a killed run left behind (its pid long gone) is taken over, and removed at the end.
echo 2147483646 > line.safetensors.lock
expect 0 "checkpoint=line.safetensors" "$G" train line.json --data line.csv --label-column 0
[ -e line.safetensors.lock ] && fail "a stale lock file was not taken over and removed"
expect 0 "loss=" "$G" evaluate line.json --checkpoint line.safetensors --data line.csv --label-column 0
# Metrics a model file asks for: on each epoch's line and evaluate's (the same weights, the
# same figure as the loss for mse).
sed 's/"loss": "mse",/"loss": "mse", "metrics": ["mae", {"type": "mse", "name": "sq"}],/' line.json > metrics.json
expect 0 " mae=" "$G" evaluate metrics.json --checkpoint line.safetensors --data line.csv --label-column 0
[ "$(value out sq)" = "$(value out loss)" ] || fail "metric sq ($(value out sq)) is not the mse loss ($(value out loss))"
expect 0 " sq=" "$G" train metrics.json --data line.csv --label-column 0 --epochs 2 --checkpoint metrics.safetensors

# The epoch callbacks. --save-best writes the best epoch's checkpoint as it improves: the
# file's step is the last best= line's. --early-stopping: a rate too small to move the
# weights, unshuffled, repeats epoch 0's loss exactly, so patience 1 stops after epoch 1
# and the run ends in epoch 0's state (8 steps).
expect 0 "best=best.safetensors epoch=" "$G" train xor.json --data xor.csv --save-best best.safetensors --checkpoint cb.safetensors
best_step=$(grep -o '^best=best.safetensors epoch=[0-9]* step=[0-9]*' out | tail -1 | grep -o '[0-9]*$')
[ -n "$best_step" ] || fail "--save-best: no best= line"
expect 0 "step=$best_step" "$G" inspect best.safetensors
sed 's/"lr": 0.3}}, "fit": {"epochs": 60, "batchSize": 16, "lossEvery": 0}/"lr": 1e-12}}, "fit": {"epochs": 60, "batchSize": 16, "shuffle": false}/' line.json > flat.json
grep -q '1e-12' flat.json || fail "flat.json was not made from line.json"
expect 0 "checkpoint=flat.safetensors step=8" "$G" train flat.json --data line.csv --label-column 0 --early-stopping 1
[ "$(grep -c '^epoch=' out)" = 2 ] || fail "--early-stopping 1: expected 2 epochs, got $(grep -c '^epoch=' out)"
expect 2 "--early-stopping" "$G" train flat.json --data line.csv --label-column 0 --early-stopping 0
expect 2 "--save-best: the path is empty" "$G" train flat.json --data line.csv --label-column 0 --save-best ""
grep -q "accuracy=" out && fail "a regression model reported accuracy"
awk -v l="$(value out loss)" 'BEGIN { exit !(l < 0.001) }' || fail "regression loss $(value out loss) >= 0.001"

# ---- IDX: checkpoints, resume, evaluate, predict -------------------------------------
# On each engine (named: the automatic choice on a software renderer comes from a
# timing, and GPU and CPU round differently): 1 epoch, resumed for a second, is
# bit-identical to 2 epochs.
for engine in gpu cpu; do
  E=(--backend "$engine")
  expect 0 "checkpoint=a.safetensors step=8" "$G" train mlp.json "${FASHION[@]}" "${E[@]}" --checkpoint a.safetensors --every 3
  grep -q "^backend: $engine" out || fail "--backend $engine: $(grep '^backend:' out)"
  grep -q "^checkpoint=a.safetensors step=3$" out && grep -q "^checkpoint=a.safetensors step=6$" out || fail "--every 3: no checkpoints at steps 3 and 6"
  expect 0 "resumed: a.safetensors at step 8" "$G" train mlp.json "${FASHION[@]}" "${E[@]}" --resume a.safetensors --epochs 2 \
    --checkpoint b.safetensors --log-every 1
  [ "$(grep -m1 '^step=' out | cut -d' ' -f1)" = "step=9/16" ] || fail "resume: the first step is not 9/16: $(grep -m1 '^step=' out)"
  grep -q "^checkpoint=b.safetensors step=16$" out || fail "resume: no final checkpoint at step 16"
  expect 0 "step=16" "$G" inspect b.safetensors
  grep -q "^tensor dense_1/kernel F32 \[784,32\]$" out || fail "inspect: no dense_1/kernel [784,32]"
  expect 0 "checkpoint=c.safetensors step=16" "$G" train mlp.json "${FASHION[@]}" "${E[@]}" --epochs 2 --checkpoint c.safetensors
  cmp -s b.safetensors c.safetensors || fail "--backend $engine: 1 epoch + resume for 1 more is not bit-identical to 2 epochs"
done
expect 0 "nothing to do" "$G" train mlp.json "${FASHION[@]}" --resume c.safetensors --epochs 2

# A full disk: the old checkpoint stays whole, and the message says which steps are lost. A
# file-size limit (ulimit -f, SIGXFSZ ignored: write() fails with EFBIG) works for anyone; a
# 400 KiB tmpfs, which holds the 300 KiB checkpoint but not a second copy, needs mount(8) rights.
cp c.safetensors fsize.safetensors
expect 1 "steps 17..24 are not saved; fsize.safetensors still holds step 16" \
  bash -c 'trap "" XFSZ; ulimit -f 100; exec "$@"' - "$G" train mlp.json "${FASHION[@]}" --resume fsize.safetensors --epochs 3 --every 4
grep -q "warning: .*File too large; steps 17..20 are not saved; .*the next save is at step 24" err || fail "--every: no warning for a failed save: $(cat err)"
cmp -s c.safetensors fsize.safetensors || fail "a failed save changed the old checkpoint"
[ -z "$(ls fsize.safetensors.* 2>/dev/null)" ] || fail "a failed save left files behind: $(ls fsize.safetensors.*)"
mkdir -p full
if mount -t tmpfs -o size=400k tmpfs full 2>/dev/null; then
  trap 'umount "$W/full" 2>/dev/null' EXIT
  cp c.safetensors full/c.safetensors
  expect 1 "steps 17..24 are not saved; full/c.safetensors still holds step 16" "$G" train mlp.json "${FASHION[@]}" --resume full/c.safetensors --epochs 3
  grep -q "No space left on device" err || fail "full disk: the reason is not given: $(cat err)"
  cmp -s c.safetensors full/c.safetensors || fail "full disk: the old checkpoint changed"
  [ "$(ls full)" = c.safetensors ] || fail "full disk: files left behind: $(ls full)"
  umount full
else
  echo "cli_test: skipped the full-disk test on a tmpfs (mount -t tmpfs is not allowed here)"
fi

# A checkpoint holding NaN is never written (the test hook puts one in): the old file stays.
cp xor.safetensors nan.safetensors
expect 1 "checkpoint nan.safetensors not written at step 220: tensor 'dense_0/kernel' holds NaN (element 0); steps 201..220 are not saved; nan.safetensors still holds step 200" \
  env GLTRAIN_TEST_NAN_IN_CHECKPOINT=1 "$G" train xor.json --data xor.csv --resume nan.safetensors --epochs 22
cmp -s xor.safetensors nan.safetensors || fail "a NaN checkpoint replaced the old one"

# The issue-36 data loss: resuming a good checkpoint of a ReLU model with a learning
# rate that blows up (Adam or SGD at 1e20: weights whose next loss is NaN) stops with
# exit 1 on either backend, and the checkpoint it leaves holds the weights that gave the
# last finite loss: it evaluates to a finite loss (before, the weights that gave the NaN
# were written over the user's checkpoint and evaluated to NaN). Adam's first step at
# 1e20 already gives NaN, so its run ends where it started.
sed 's/"tanh"/"relu"/' xor.json > relu.json
sed 's/"type": "adam"/"type": "sgd"/' relu.json > relu_sgd.json
for model in relu relu_sgd; do
  expect 0 "checkpoint=$model.safetensors" "$G" train $model.json --data xor.csv --checkpoint $model.safetensors
  expect 0 "loss=" "$G" evaluate $model.json --checkpoint $model.safetensors --data xor.csv
  before=$(value out loss)
  sed 's/"lr": 0.05/"lr": 1e20/' $model.json > hot.json
  for engine in gpu cpu; do
    cp $model.safetensors hot.safetensors
    expect 1 "the last good weights are in hot.safetensors" "$G" train hot.json --data xor.csv --resume hot.safetensors \
      --epochs 30 --backend $engine
    expect 0 "loss=" "$G" evaluate $model.json --checkpoint hot.safetensors --data xor.csv
    after=$(value out loss)
    echo "$after" | grep -qE '^[0-9]+\.[0-9]+$' || fail "$model at lr 1e20 on $engine: the stopped run left loss=$after"
    [ $model = relu_sgd ] || [ "$after" = "$before" ] || fail "$model at lr 1e20 on $engine: loss=$after, its start had $before"
  done
done

# Adam's state into an RMSProp model: refused, unless --reset-optimizer takes the weights alone.
sed 's/"type": "adam"/"type": "rmsprop"/; s/"lr": 0.05/"lr": 0.01/' xor.json > xor_rms.json
expect 1 "its optimizer state is adam's, the model trains with rmsprop" "$G" train xor_rms.json --data xor.csv --resume xor.safetensors --checkpoint rms.safetensors
[ -e rms.safetensors ] && fail "a refused resume wrote a checkpoint"
expect 0 "resumed: xor.safetensors's weights, the optimizer afresh at step 0 (--reset-optimizer)" \
  "$G" train xor_rms.json --data xor.csv --resume xor.safetensors --checkpoint rms.safetensors --reset-optimizer --epochs 2
grep -q "^checkpoint=rms.safetensors step=20$" out || fail "--reset-optimizer: no checkpoint at step 20"
expect 0 "optimizer=rmsprop" "$G" inspect rms.safetensors
expect 0 "accuracy=" "$G" evaluate xor_rms.json --checkpoint rms.safetensors --data xor.csv
expect 0 "rows=256" "$G" evaluate mlp.json --checkpoint c.safetensors "${FASHION[@]}"
awk -v a="$(value out accuracy)" 'BEGIN { exit !(a > 0.5) }' || fail "Fashion-MNIST accuracy $(value out accuracy) <= 0.5 after 16 steps"
expect 0 "predictions: 5 rows written to p.csv" "$G" predict mlp.json --checkpoint c.safetensors --data fashion-mnist --limit 5 --output p.csv
[ "$(head -1 p.csv)" = "class,y0,y1,y2,y3,y4,y5,y6,y7,y8,y9" ] || fail "predict: header $(head -1 p.csv)"
[ "$(wc -l < p.csv)" = 6 ] || fail "predict: $(wc -l < p.csv) lines, expected 6"
grep -qvE '^[0-9],(-?[0-9.e+-]+,){9}-?[0-9.e+-]+$' <(tail -n +2 p.csv) && fail "predict: malformed rows: $(cat p.csv)"

# ---- bad arguments: usage errors, exit 2 ---------------------------------------------
expect 2 "usage:" "$G"
expect 2 "gltrain: unknown command 'frobnicate'" "$G" frobnicate
expect 2 "gltrain train: unknown option '--bogus'" "$G" train xor.json --data xor.csv --bogus
# Numbers are checked whole, in 64 bits, before they are narrowed: never wrapped, never cut short.
expect 2 "gltrain train: --epochs: 0 is out of range (1 to 2147483647)" "$G" train xor.json --data xor.csv --epochs 0
expect 2 "gltrain train: --epochs: 3000000000 is out of range (1 to 2147483647)" "$G" train xor.json --data xor.csv --epochs 3000000000
expect 2 "gltrain train: --epochs: 4294967297 is out of range (1 to 2147483647)" "$G" train xor.json --data xor.csv --epochs 4294967297
expect 2 "gltrain train: --epochs: expected an integer from 1 to 2147483647, got '2x'" "$G" train xor.json --data xor.csv --epochs 2x
expect 2 "gltrain train: --epochs: expected an integer from 1 to 2147483647, got ' 2'" "$G" train xor.json --data xor.csv --epochs " 2"
expect 2 "gltrain train: --batch: 3000000000 is out of range (1 to 2147483647)" "$G" train xor.json --data xor.csv --batch 3000000000
expect 2 "gltrain train: --every: 99999999999999999999 is out of range (1 to 9223372036854775807)" "$G" train xor.json --data xor.csv --every 99999999999999999999
expect 2 "gltrain train: --log-every: -1 is out of range (1 to 9223372036854775807)" "$G" train xor.json --data xor.csv --log-every -1
expect 2 "gltrain train: --limit: 4294967296 is out of range (1 to 2147483647)" "$G" train xor.json --data xor.csv --limit 4294967296
expect 2 "gltrain train: --scale: 1e39 is out of range (-3.4e38 to 3.4e38)" "$G" train xor.json --data xor.csv --scale 1e39
expect 2 "gltrain train: --scale: expected a number, got 'nan'" "$G" train xor.json --data xor.csv --scale nan
expect 2 "gltrain evaluate: --batch: -3000000000 is out of range (1 to 2147483647)" "$G" evaluate xor.json --checkpoint xor.safetensors --data xor.csv --batch -3000000000
expect 2 "gltrain predict: --batch: 2147483648 is out of range (1 to 2147483647)" "$G" predict xor.json --checkpoint xor.safetensors --data xor.csv --batch 2147483648
expect 2 "gltrain info: --egl-device: 4294967296 is out of range (0 to 2147483647)" "$G" --info --egl-device 4294967296
expect 2 "gltrain train: --reset-optimizer is for --resume FILE" "$G" train xor.json --data xor.csv --reset-optimizer
expect 2 "gltrain train: --batch needs a value" "$G" train xor.json --data xor.csv --batch
expect 2 "gltrain train: --epochs is given twice" "$G" train xor.json --data xor.csv --epochs 1 --epochs 2
expect 2 "gltrain train: no model file" "$G" train --data xor.csv
expect 2 "gltrain train: no data" "$G" train xor.json
expect 2 "--progress: expected one of auto, bar, lines, got 'fancy'" "$G" train xor.json --data xor.csv --progress fancy
expect 2 "--label-column are for CSV files" "$G" train mlp.json --data fashion-mnist --label-column 0
expect 2 "not fashion-mnist, a directory of IDX files or a *.csv file" "$G" train xor.json --data xor.json
expect 2 "gltrain evaluate: --checkpoint FILE is required" "$G" evaluate xor.json --data xor.csv

# ---- bad files: runtime errors naming the file, exit 1 --------------------------------
expect 1 "gltrain train: model config missing.json: cannot open" "$G" train missing.json --data xor.csv
expect 1 "gltrain train: --data missing.csv: No such file or directory" "$G" train xor.json --data missing.csv
printf '{"input": 2, "layers": [\n  {"type": "dense", "units": 2},\n' > truncated.json
expect 1 "truncated.json: invalid JSON: parse error at line 3" "$G" train truncated.json --data xor.csv
printf '{"input": 2, "layers": [{"type": "dense", "units": 4}, {"type": "dense", "units": -3}]}' > badlayer.json
expect 1 "badlayer.json: layers[1].units: expected a positive integer, got -3" "$G" train badlayer.json --data xor.csv
printf '{"input": 2, "layers": [{"type": "dense", "units": 2}], "fit": {"epoch": 3}}' > typo.json
expect 1 "typo.json: fit.epoch: unknown key" "$G" train typo.json --data xor.csv
printf 'x,y,label\n0.1,0.2,1\n0.3,x1,0\n' > broken.csv
expect 1 "broken.csv:3:5: field 2 (y) 'x1' is not a number" "$G" train xor.json --data broken.csv
printf 'x,y,label\n0.1,0.2,1\n0.3,0.4\n' > ragged.csv
expect 1 "ragged.csv:3: 2 fields, expected 3 (as on line 1)" "$G" train xor.json --data ragged.csv
printf 'x,y,label\n0.1,0.2,7\n' > badlabel.csv
expect 1 "badlabel.csv:2:9: field 3 (label): label 7 is out of range 0..1" "$G" train xor.json --data badlabel.csv
printf '1,2,3,0\n' > wide.csv
expect 1 "has 3 values per row, the model (xor.json: input [2]) takes 2" "$G" train xor.json --data wide.csv
printf 'x,y,label\n0.1,0.2,1\n' > onerow.csv
# One row in batches of 20: a step of that row an epoch; with dropRemainder, nothing to train on.
expect 0 "training: 2 epochs of 1 steps (batch 20)" "$G" train xor.json --data onerow.csv --epochs 2 --checkpoint onerow.safetensors
sed 's/"batchSize": 20}/"batchSize": 20, "dropRemainder": true}/' xor.json > xor_drop.json
expect 1 "batchSize 20 is larger than the 1 training rows, and dropRemainder leaves out a short batch" "$G" train xor_drop.json --data onerow.csv
expect 1 "tensor 'dense_0/kernel' has shape [2, 1], the model needs [2, 16]" "$G" evaluate xor.json --checkpoint line.safetensors --data xor.csv
head -c 100 xor.safetensors > cut.safetensors
expect 1 "cut.safetensors" "$G" evaluate xor.json --checkpoint cut.safetensors --data xor.csv
expect 1 "checkpoint gone.safetensors: cannot open" "$G" train xor.json --data xor.csv --resume gone.safetensors
expect 1 "--checkpoint nodir/x.safetensors: cannot write in nodir/: No such file or directory" "$G" train xor.json --data xor.csv --checkpoint nodir/x.safetensors
# A checkpoint path that could only fail at the end is refused before training.
mkdir -p outdir
expect 1 "--checkpoint outdir: is a directory (name a file in it, e.g. outdir/model.safetensors)" "$G" train xor.json --data xor.csv --checkpoint outdir
grep -q "^training:" out && fail "--checkpoint outdir: trained before refusing"
# (A FIFO of our own, not /dev/null: a program without the check, run as root, would rename over it.)
mkfifo fifo.safetensors
expect 1 "--checkpoint fifo.safetensors: is not a regular file" "$G" train xor.json --data xor.csv --checkpoint fifo.safetensors
expect 1 "IDX" "$G" train mlp.json --images xor.csv --labels xor.csv

# ---- SIGINT: the step finishes, a checkpoint is written atomically, exit 130 -----------
"$G" train xor.json --data xor.csv --epochs 100000 --log-every 1 --checkpoint int.safetensors >int.out 2>int.err &
pid=$!
for _ in $(seq 1 600); do grep -q '^step=' int.out 2>/dev/null && break; sleep 0.1; done
if grep -q '^step=' int.out; then
  # The checkpoint is locked: a second run writing it is refused at once, before it trains.
  expect 1 "checkpoint int.safetensors is in use by process $pid (which holds int.safetensors.lock)" \
    "$G" train xor.json --data xor.csv --checkpoint int.safetensors
  grep -q "^training:" out && fail "a second run on a locked checkpoint trained"
  kill -INT "$pid"
  wait "$pid"
  status=$?
  [ "$status" = 130 ] || fail "SIGINT: exit $status, expected 130"
  grep -q "interrupted (SIGINT) after step [0-9]* of 1000000; checkpoint written to int.safetensors" int.err ||
    fail "SIGINT: no message: $(cat int.err)"
  step=$(grep -o 'after step [0-9]*' int.err | grep -o '[0-9]*')
  grep -q "^checkpoint=int.safetensors step=$step$" int.out || fail "SIGINT: no checkpoint line for step $step"
  [ -z "$(ls int.safetensors.* 2>/dev/null)" ] || fail "SIGINT: a temporary or lock file was left behind: $(ls int.safetensors.*)"
  expect 0 "step=$step" "$G" inspect int.safetensors
  expect 0 "checkpoint: int.safetensors (step $step)" "$G" evaluate xor.json --checkpoint int.safetensors --data xor.csv
else
  kill "$pid" 2>/dev/null
  fail "SIGINT: training printed no step line within 60 s: $(cat int.err)"
fi

# ---- text: byte tokens for a sequence model ----------------------------------------
# A repeated sentence: a tiny Embedding -> Dense -> LayerNormalization -> Dense model learns its next bytes.
for i in $(seq 40); do printf 'the quick brown fox jumps over the lazy dog. '; done > text.txt
cat > text.json <<'JSON'
{"input": [8], "layers": [{"type": "embedding", "inputDim": 256, "outputDim": 12},
  {"type": "dense", "units": 16, "activation": "gelu"}, {"type": "layernormalization"}, {"type": "dense", "units": 256}],
 "compile": {"loss": "sequence_softmax_cross_entropy", "optimizer": {"type": "adam", "lr": 0.02}},
 "fit": {"epochs": 6, "batchSize": 16}}
JSON
expect 0 "text: 1620 bytes to train on, 180 held out; 202 train windows of 8 bytes" "$G" train text.json \
  --data text:text.txt --backend cpu --checkpoint text.safetensors
grep -q "validation: 22 held-out windows" out || fail "text: the held-out windows do not validate"
grep -qE "^epoch=6/6 .*val_loss=[0-9.]+" out || fail "text: no val_loss in the epoch lines: $(grep '^epoch=6' out)"
first=$(grep -o '^epoch=1/6 .*loss=[0-9.]*' out | grep -o 'loss=[0-9.]*' | cut -d= -f2)
last=$(grep -o '^epoch=6/6 .*loss=[0-9.]*' out | grep -o 'loss=[0-9.]*' | cut -d= -f2)
awk -v a="$first" -v b="$last" 'BEGIN { exit !(b < 0.7 * a) }' || fail "text: the loss did not fall ($first -> $last)"
expect 0 "test windows of 8 bytes" "$G" evaluate text.json --checkpoint text.safetensors --data text:text.txt --backend cpu
# --steps: that many steps of fresh windows (30 x 16 drawn, none trained twice), one epoch cut to them.
expect 0 "training: 1 epoch of 30 steps (batch 16), steps 1 to 30" "$G" train text.json --data text:text.txt \
  --backend cpu --steps 30 --checkpoint steps.safetensors
grep -q "480 train windows of 8 bytes" out || fail "--steps 30: not 30 x 16 windows: $(grep '^data:' out)"
expect 0 "nothing to do" "$G" train text.json --data text:text.txt --backend cpu --steps 30 --resume steps.safetensors
# generate: greedy writes the one byte that follows c and k in the sentence (the model sees a
# byte at a time); a seed gives the same bytes twice.
expect 0 "checkpoint: text.safetensors" "$G" generate text.json --checkpoint text.safetensors --prompt "the quic" \
  --length 2 --temperature 0 --backend cpu
[ "$(cat out)" = "the quick " ] || fail "generate: greedy gave '$(cat out)', not 'the quick '"
"$G" generate text.json --checkpoint text.safetensors --prompt "the " --length 30 --seed 4 --backend cpu >gen1 2>/dev/null
"$G" generate text.json --checkpoint text.safetensors --prompt "the " --length 30 --seed 4 --backend cpu >gen2 2>/dev/null
cmp -s gen1 gen2 && [ "$(wc -c < gen1)" = 35 ] || fail "generate: seed 4 twice gave '$(cat gen1)' and '$(cat gen2)'"
expect 1 "generate: temperature must be finite and >= 0" "$G" generate text.json --checkpoint text.safetensors \
  --prompt "the" --temperature -1 --backend cpu
expect 2 "--prompt TEXT is required" "$G" generate text.json --checkpoint text.safetensors
expect 1 "the model must read [context] token ids" "$G" generate xor.json --checkpoint xor.safetensors --prompt x \
  --backend cpu
expect 2 "not a regular file" "$G" train text.json --data text:.
expect 1 "text trains a model of an input [context]" "$G" train xor.json --data text:text.txt --backend cpu

if [ "$failures" != 0 ]; then
  echo "cli_test: $failures failure(s)" >&2
  exit 1
fi
echo "cli_test: all checks passed"
