#!/usr/bin/env python3
# PyTorch's figures for bench/GPU.md's step rows (issue 41), measured in the
# same run as gltrain's: the MLPs of bench_steps (784-2048-2048-10, batch 512)
# and W1 (784-256-128-10, batch 128), ReLU, softmax cross-entropy, Adam 1e-3,
# fp32 with the data on the GPU, the loss read every 10 steps as bench_steps
# does by default; and W2, bench_compare_native's CNN (conv 8@5x5 ReLU, max pool
# 2, conv 16@5x5 ReLU, max pool 2, dense 10, Adam, batch 64), its loss read every
# step as w2_step_ms_loss1 does. Eager, and the whole step (forward, backward,
# Adam) captured once as a CUDA graph and replayed. Prints one line per model and mode:
#   torch model=784-2048-2048-10 batch=512 mode=eager median_ms=... mean_ms=...
# Usage: python3 bench/torch_mlp.py [--steps 1000]
import argparse
import statistics
import time

import torch


def model_of(sizes):
    layers = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        layers += [torch.nn.Linear(a, b), torch.nn.ReLU()]
    return torch.nn.Sequential(*layers[:-1]).cuda()


def cnn():
    # W2 on 28x28x1 images (channels first: PyTorch's layout).
    n = torch.nn
    return n.Sequential(n.Unflatten(1, (1, 28, 28)), n.Conv2d(1, 8, 5), n.ReLU(), n.MaxPool2d(2), n.Conv2d(8, 16, 5),
                        n.ReLU(), n.MaxPool2d(2), n.Flatten(), n.Linear(16 * 4 * 4, 10)).cuda()


def run(sizes, batch, steps, graph, net=None, loss_every=10):
    torch.manual_seed(0)
    net = net or model_of(sizes)
    opt = torch.optim.Adam(net.parameters(), lr=1e-3, capturable=graph)
    rows = 60000
    x = torch.rand(rows, sizes[0], device="cuda")
    y = torch.arange(rows, device="cuda") % sizes[-1]
    loss_fn = torch.nn.CrossEntropyLoss()
    bx = torch.empty(batch, sizes[0], device="cuda")
    by = torch.empty(batch, dtype=torch.long, device="cuda")

    def step():
        opt.zero_grad(set_to_none=False)
        loss = loss_fn(net(bx), by)
        loss.backward()
        opt.step()
        return loss

    # Warm-up (and, for the graph, capture on a side stream as PyTorch's docs do).
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            bx.copy_(x[:batch])
            by.copy_(y[:batch])
            step()
    torch.cuda.current_stream().wait_stream(s)
    if graph:
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            static_loss = step()
    torch.cuda.synchronize()
    per_epoch = rows // batch
    times = []
    last = time.perf_counter()
    for i in range(steps):
        r0 = (i % per_epoch) * batch
        bx.copy_(x[r0 : r0 + batch])
        by.copy_(y[r0 : r0 + batch])
        if graph:
            g.replay()
            loss = static_loss
        else:
            loss = step()
        if (i + 1) % loss_every == 0:
            loss.item()
        now = time.perf_counter()
        times.append((now - last) * 1e3)
        last = now
    torch.cuda.synchronize()
    steady = times[1:]
    return statistics.median(steady), statistics.fmean(steady)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=1000)
    a = p.parse_args()
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name()}")
    for sizes, batch in (([784, 2048, 2048, 10], 512), ([784, 256, 128, 10], 128)):
        for graph in (False, True):
            med, mean = run(sizes, batch, a.steps, graph)
            name = "-".join(map(str, sizes))
            mode = "cuda-graph" if graph else "eager"
            print(f"torch model={name} batch={batch} mode={mode} median_ms={med:.3f} mean_ms={mean:.3f}", flush=True)
    for graph in (False, True):
        torch.manual_seed(0)
        med, mean = run([784, 10], 64, a.steps, graph, net=cnn(), loss_every=1)
        mode = "cuda-graph" if graph else "eager"
        print(f"torch model=W2-cnn batch=64 mode={mode} loss_every=1 median_ms={med:.3f} mean_ms={mean:.3f}", flush=True)


if __name__ == "__main__":
    main()
