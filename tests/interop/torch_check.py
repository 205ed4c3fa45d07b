#!/usr/bin/env python3
"""PyTorch's side of the interop tests: gltrain's safetensors checkpoints in torch.nn.

    python3 torch_check.py <dir>      (after `interop_fixture export <dir>`)

Reads <dir>/{mlp,cnn}.safetensors with the standard library and numpy only (no
safetensors package), builds the same two models as tests/interop/interop_fixture.cpp (kMlpJson,
kCnnJson) in torch.nn, fills them with load_state_dict(strict=True) and checks that they
predict gltrain's predictions ("mlp", "cnn") for the rows "x" of
<dir>/expected.safetensors to 1e-4 (max |torch - gltrain| / max(1, max |gltrain|)).

Layouts (gltrain keeps Keras's, see include/gltrain/tfjs_layers.hpp):
  Dense kernel [in, out]            -> nn.Linear.weight [out, in]: the transpose
  Conv2D kernel [kh, kw, in, out]   -> nn.Conv2d.weight [out, in, kh, kw]: permute(3, 2, 0, 1)
  images: rows of NHWC values       -> NCHW tensors: reshape(n, h, w, c).permute(0, 3, 1, 2)
  Flatten: NHWC order               -> permute(0, 2, 3, 1) before flattening
  BatchNormalization gamma, beta, moving_mean, moving_variance, epsilon, momentum m
                                    -> weight, bias, running_mean, running_var, eps, momentum 1 - m
  padding 'same' (TensorFlow's: the odd pixel goes after) -> an explicit F.pad; average
  pooling does not count the padding, max pooling pads with -inf.
Optimizer slots ("<layer>/<param>/slot<i>") are not model weights and are skipped.
"""
import json
import math
import os
import struct
import sys
from collections import OrderedDict

try:
    import numpy as np
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
except ImportError as e:
    print(f"torch_check: {e}: needs Debian's python3-torch and python3-numpy (scripts/setup.sh installs them)",
          file=sys.stderr)
    sys.exit(1)


def read_safetensors(path):
    """{name: float32 ndarray} and the metadata of a safetensors file (F32 tensors only)."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    metadata = header.pop("__metadata__", {})
    tensors = {}
    for name, t in header.items():
        if t["dtype"] != "F32":
            raise ValueError(f"{path}: tensor {name} is {t['dtype']}, expected F32")
        begin, end = t["data_offsets"]
        values = np.frombuffer(data, dtype="<f4", count=(end - begin) // 4, offset=8 + n + begin)
        tensors[name] = values.reshape(t["shape"]).astype(np.float32)
    return tensors, metadata


def same_padding(size, k, s):
    """TensorFlow's 'same': out = ceil(size / s); the padding's odd pixel goes after."""
    total = max((math.ceil(size / s) - 1) * s + k - size, 0)
    return total // 2, total - total // 2


class NhwcRowsToNchw(nn.Module):
    def __init__(self, h, w, c):
        super().__init__()
        self.shape = (h, w, c)

    def forward(self, x):
        return x.reshape(x.shape[0], *self.shape).permute(0, 3, 1, 2)


class FlattenNhwc(nn.Module):
    def forward(self, x):
        return x.permute(0, 2, 3, 1).reshape(x.shape[0], -1)


class SamePad(nn.Module):
    """Pads an NCHW tensor as TensorFlow's 'same' does for a k x k window with stride s."""

    def __init__(self, k, s, value=0.0):
        super().__init__()
        self.k, self.s, self.value = k, s, value

    def forward(self, x):
        top, bottom = same_padding(x.shape[2], self.k, self.s)
        left, right = same_padding(x.shape[3], self.k, self.s)
        return F.pad(x, (left, right, top, bottom), value=self.value)


class AvgPoolSame(nn.Module):
    """Average pooling with 'same' padding that, like TensorFlow, averages only the pixels inside."""

    def __init__(self, k, s):
        super().__init__()
        self.pad, self.k, self.s = SamePad(k, s), k, s

    def forward(self, x):
        sums = F.avg_pool2d(self.pad(x), self.k, self.s)
        counts = F.avg_pool2d(self.pad(torch.ones_like(x[:1, :1])), self.k, self.s)
        return sums / counts


def mlp():
    """interop_fixture.cpp's kMlpJson; module names are gltrain's layer names."""
    return nn.Sequential(OrderedDict([
        ("dense_0", nn.Linear(784, 64)), ("relu_0", nn.ReLU()),
        ("dropout_1", nn.Dropout(0.2)),
        ("dense_2", nn.Linear(64, 32)), ("tanh_2", nn.Tanh()),
        ("batch_normalization_3", nn.BatchNorm1d(32, eps=1e-3, momentum=1 - 0.5)),
        ("dense_4", nn.Linear(32, 16)), ("leaky_relu_4", nn.LeakyReLU(0.1)),
        ("dense_5", nn.Linear(16, 10)),
        ("softmax_6", nn.Softmax(dim=1)),
    ]))


def cnn():
    """interop_fixture.cpp's kCnnJson."""
    return nn.Sequential(OrderedDict([
        ("input", NhwcRowsToNchw(28, 28, 1)),
        ("conv2d_0_pad", SamePad(3, 1)), ("conv2d_0", nn.Conv2d(1, 8, 3)), ("relu_0", nn.ReLU()),
        ("batch_normalization_1", nn.BatchNorm2d(8, eps=1e-3, momentum=1 - 0.5)),
        ("max_pool2d_2_pad", SamePad(3, 2, -math.inf)), ("max_pool2d_2", nn.MaxPool2d(3, 2)),
        ("conv2d_3_pad", SamePad(3, 2)), ("conv2d_3", nn.Conv2d(8, 12, 3, stride=2)), ("tanh_3", nn.Tanh()),
        ("average_pool2d_4", AvgPoolSame(2, 2)),
        ("batch_normalization_5", nn.BatchNorm2d(12, eps=1e-3, momentum=1 - 0.5)),
        ("conv2d_6", nn.Conv2d(12, 8, 3)), ("softplus_6", nn.Softplus()),
        ("flatten_7", FlattenNhwc()),
        ("dense_8", nn.Linear(32, 16)), ("sigmoid_8", nn.Sigmoid()),
        ("dense_9", nn.Linear(16, 10)),
    ]))


class Residual(nn.Module):
    """interop_fixture.cpp's kResidualJson: d0 -> d1, their sum -> head (logits)."""

    def __init__(self):
        super().__init__()
        self.d0, self.d1, self.head = nn.Linear(784, 32), nn.Linear(32, 32), nn.Linear(32, 10)

    def forward(self, x):
        h = torch.tanh(self.d0(x))
        return self.head(h + torch.relu(self.d1(h)))

    def state_from_gltrain(self, checkpoint):
        return state_dict_from_gltrain(self, checkpoint)

    def loss(self, x, labels):
        return F.cross_entropy(self(x), labels.reshape(-1).long())


class AttentionBlock(nn.Module):
    """interop_fixture.cpp's kAttentionJson with attention written out (no nn.MultiheadAttention, whose
    weights are laid out otherwise): token embeddings plus learned positions, queries, keys and values per
    head, softmax(Q K^T / sqrt(dk)) with the causal mask, the heads side by side through the output
    projection, a residual add and logits at each step."""

    def __init__(self, vocab=19, features=12, positions=9, heads=2, key_dim=8, value_dim=5):
        super().__init__()
        self.heads, self.key_dim, self.value_dim = heads, key_dim, value_dim
        self.tok = nn.Embedding(vocab, features)
        self.pos = nn.Parameter(torch.zeros(positions, features))
        self.query, self.key = nn.Linear(features, heads * key_dim), nn.Linear(features, heads * key_dim)
        self.value, self.output = nn.Linear(features, heads * value_dim), nn.Linear(heads * value_dim, features)
        self.head = nn.Linear(features, vocab)

    def forward(self, ids):
        b, t = ids.shape
        x = self.tok(ids) + self.pos[:t]
        split = lambda y, d: y.view(b, t, self.heads, d).transpose(1, 2)  # [b, heads, t, d]
        q, k = split(self.query(x), self.key_dim), split(self.key(x), self.key_dim)
        v = split(self.value(x), self.value_dim)
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.key_dim)
        scores = scores.masked_fill(torch.triu(torch.ones(t, t, dtype=torch.bool), 1), float("-inf"))
        o = (scores.softmax(-1) @ v).transpose(1, 2).reshape(b, t, self.heads * self.value_dim)
        return self.head(x + self.output(o))

    def state_from_gltrain(self, checkpoint):
        """Keras's attention variables ([features, heads, size] kernels) as the Linear layers' weights."""
        get = lambda name: torch.from_numpy(checkpoint[name])
        state = {"tok.weight": get("tok/embeddings"), "pos": get("pos/embeddings"),
                 "head.weight": get("head/kernel").t(), "head.bias": get("head/bias")}
        for module, variable in (("query", "query"), ("key", "key"), ("value", "value"),
                                 ("output", "attention_output")):
            kernel = get(f"att/{variable}/kernel")
            kernel = kernel.reshape(-1, kernel.shape[-1]) if variable == "attention_output" else \
                kernel.reshape(kernel.shape[0], -1)
            state[f"{module}.weight"] = kernel.t()
            state[f"{module}.bias"] = get(f"att/{variable}/bias").reshape(-1)
        return state

    def loss(self, x, labels):
        logits = self(x.long())
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.long().reshape(-1))


def repeat_steps(directory, name, model, lr, limit):
    """gltrain's first SGD steps of <name>, repeated in PyTorch from the same weights and batches: each
    step's loss and the weights after them agree to `limit`. Returns the number of failures."""
    init, _ = read_safetensors(f"{directory}/{name}_init.safetensors")
    after, _ = read_safetensors(f"{directory}/{name}_steps.safetensors")
    data, _ = read_safetensors(f"{directory}/{name}_data.safetensors")
    model.load_state_dict(model.state_from_gltrain(init), strict=True)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    x, labels = torch.from_numpy(data["x"]), torch.from_numpy(data["labels"])
    want = data["losses"].reshape(-1)
    batch = x.shape[0] // len(want)
    losses = []
    for step in range(len(want)):
        rows = slice(step * batch, (step + 1) * batch)
        optimizer.zero_grad()
        loss = model.loss(x[rows], labels[rows])
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    failures = 0
    loss_error = relative_error(np.array(losses), want)
    ok = loss_error <= limit
    failures += not ok
    print(f"{'ok  ' if ok else 'FAIL'} {name} block: PyTorch's {len(want)} SGD steps from gltrain's initial weights "
          f"give its losses ({', '.join(f'{v:.4f}' for v in losses)}): error {loss_error:.3g} (limit {limit:g})")
    initial = {k: v.numpy() for k, v in model.state_from_gltrain(init).items()}
    expected = {k: v.numpy() for k, v in model.state_from_gltrain(after).items()}
    state = {k: v.detach().numpy() for k, v in model.state_dict().items()}
    weight_error = max(relative_error(state[k], expected[k]) for k in expected)
    moved = max(relative_error(expected[k], initial[k]) for k in expected)
    ok = weight_error <= limit and moved > 1e-3
    failures += not ok
    print(f"{'ok  ' if ok else 'FAIL'} {name} block: the weights after them are gltrain's: error {weight_error:.3g} "
          f"(limit {limit:g}; the steps moved them by {moved:.3g})")
    return failures


def transformer_state_dict(model, checkpoint):
    """bench/torch_char_transformer.py's CharTransformer filled from a gltrain checkpoint of
    examples/models/char-transformer.json: MultiHeadAttention's Keras kernels [F, H, dk] and
    [H, dv, F] are nn.Linear weights [H*dk, F] and [F, H*dv] transposed and flattened."""
    get = lambda name: torch.from_numpy(checkpoint[name])
    state = {"tokens.weight": get("tokens/embeddings"), "positions": get("positions/embeddings"),
             "ln.weight": get("final_ln/gamma"), "ln.bias": get("final_ln/beta"),
             "head.weight": get("logits/kernel").t(), "head.bias": get("logits/bias"),
             "mask": model.mask}
    for i in range(len(model.blocks)):
        b, g = f"blocks.{i}", f"block{i + 1}"
        for ln in ("ln1", "ln2"):
            state[f"{b}.{ln}.weight"] = get(f"{g}_{ln}/gamma")
            state[f"{b}.{ln}.bias"] = get(f"{g}_{ln}/beta")
        for mine, keras in (("q", "query"), ("k", "key"), ("v", "value")):
            kernel = get(f"{g}_attention/{keras}/kernel")          # [F, H, dk]
            state[f"{b}.{mine}.weight"] = kernel.reshape(kernel.shape[0], -1).t()
            state[f"{b}.{mine}.bias"] = get(f"{g}_attention/{keras}/bias").reshape(-1)
        out = get(f"{g}_attention/attention_output/kernel")         # [H, dv, F]
        state[f"{b}.o.weight"] = out.reshape(-1, out.shape[-1]).t()
        state[f"{b}.o.bias"] = get(f"{g}_attention/attention_output/bias")
        for mine in ("up", "down"):
            state[f"{b}.{mine}.weight"] = get(f"{g}_{mine}/kernel").t()
            state[f"{b}.{mine}.bias"] = get(f"{g}_{mine}/bias")
    return state


def transformer_steps(directory):
    """gltrain's first AdamW steps of the reference character transformer on each engine, repeated in
    PyTorch from the same initial weights and batches (bench/torch_char_transformer.py's model,
    optimizer groups, schedule and clipping): each step's loss agrees to 1e-4 relative."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
    import torch_char_transformer as ref
    init, _ = read_safetensors(f"{directory}/transformer_init.safetensors")
    data, _ = read_safetensors(f"{directory}/transformer_data.safetensors")
    torch.manual_seed(0)
    model = ref.CharTransformer()
    model.load_state_dict(transformer_state_dict(model, init), strict=True)
    optimizer = ref.adamw(model)
    x = torch.from_numpy(data["x"]).long()
    y = torch.from_numpy(data["y"]).long()
    steps = data["losses_cpu"].size
    batch = x.shape[0] // steps
    losses = []
    for step in range(steps):
        rows = slice(step * batch, (step + 1) * batch)
        losses.append(ref.train_step(model, optimizer, step, x[rows], y[rows]))
    failures = 0
    for engine in ("cpu", "gpu"):
        want = data[f"losses_{engine}"].reshape(-1)
        error = float(np.max(np.abs(np.array(losses) - want) / np.abs(want)))
        ok = error <= 1e-4
        failures += not ok
        print(f"{'ok  ' if ok else 'FAIL'} char transformer: PyTorch's {steps} AdamW steps (batch {batch} x "
              f"{x.shape[1]}) from gltrain's initial weights give its {engine} engine's losses "
              f"({want[0]:.4f} .. {want[-1]:.4f}): relative error {error:.3g} (limit 1e-4)")
    return failures


def state_dict_from_gltrain(model, checkpoint):
    """The torch state dict of `model` from a gltrain checkpoint, by module name = gltrain layer name."""
    state = {}
    for name, module in model.named_modules():
        get = lambda variable: torch.from_numpy(checkpoint[f"{name}/{variable}"])
        if isinstance(module, nn.Linear):
            state[f"{name}.weight"] = get("kernel").t()                 # [in, out] -> [out, in]
            state[f"{name}.bias"] = get("bias")
        elif isinstance(module, nn.Conv2d):
            state[f"{name}.weight"] = get("kernel").permute(3, 2, 0, 1)  # HWIO -> OIHW
            state[f"{name}.bias"] = get("bias")
        elif isinstance(module, (nn.BatchNorm1d, nn.BatchNorm2d)):
            state[f"{name}.weight"] = get("gamma")
            state[f"{name}.bias"] = get("beta")
            state[f"{name}.running_mean"] = get("moving_mean")
            state[f"{name}.running_var"] = get("moving_variance")
            state[f"{name}.num_batches_tracked"] = torch.tensor(0)
    return state


def relative_error(got, want):
    return float(np.max(np.abs(got - want)) / max(1.0, float(np.max(np.abs(want)))))


def main():
    if len(sys.argv) != 2:
        print("usage: python3 torch_check.py <dir>", file=sys.stderr)
        return 2
    directory = sys.argv[1]
    expected, _ = read_safetensors(f"{directory}/expected.safetensors")
    x = torch.from_numpy(expected["x"])
    print(f"torch {torch.__version__}, numpy {np.__version__}")
    failures = 0
    for name, build in (("mlp", mlp), ("cnn", cnn)):
        checkpoint, metadata = read_safetensors(f"{directory}/{name}.safetensors")
        model = build()
        model.load_state_dict(state_dict_from_gltrain(model, checkpoint), strict=True)
        used = {k for k in checkpoint if "/slot" not in k}
        loaded = {f"{m}/{v}" for m, mod in model.named_modules()
                  for v in (("kernel", "bias") if isinstance(mod, (nn.Linear, nn.Conv2d)) else
                            ("gamma", "beta", "moving_mean", "moving_variance")
                            if isinstance(mod, (nn.BatchNorm1d, nn.BatchNorm2d)) else ())}
        if used != loaded:
            print(f"FAIL {name}.safetensors: weights not mapped: {sorted(used ^ loaded)}")
            failures += 1
            continue
        model.eval()
        with torch.no_grad():
            y = model(x).numpy()
        error = relative_error(y, expected[name])
        ok = error <= 1e-4
        failures += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {name}.safetensors (step {metadata.get('step')}) in torch.nn predicts what "
              f"gltrain predicted: error {error:.3g} (limit 1e-4)")
    failures += repeat_steps(directory, "residual", Residual(), lr=0.05, limit=1e-4)
    failures += repeat_steps(directory, "attention", AttentionBlock(), lr=0.5, limit=1e-5)
    failures += transformer_steps(directory)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
