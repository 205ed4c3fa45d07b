#!/usr/bin/env python3
"""PyTorch's side of issue 39's reference model: the character transformer of
examples/models/char-transformer.json, its schedule and its corpus, trained in
PyTorch 1.13 on the CPU. Prints ms/step and the held-out loss (mean nats per
byte) at the steps asked, to compare with `gltrain train` / `gltrain evaluate`
on the same corpus (bench/CPU.md, README's table).

  python3 bench/torch_char_transformer.py CORPUS [--steps 2000] [--threads 2]
      [--eval-at 500,1000,2000] [--time-steps 50]

CORPUS: scripts/fortunes_corpus.sh's file. The model: byte embedding 256x128 +
learned positions 64x128, 2 pre-LN blocks (LayerNorm, causal self-attention 4
heads x 32 with biases, add; LayerNorm, Dense 512 GELU-tanh, Dense 128, add),
LayerNorm, Dense 256; weights normal(0, 0.02), biases 0; AdamW (0.9, 0.95),
eps 1e-8, decay 0.1 on the 2-D kernels only (not biases, norms or embeddings);
lr 3e-3, linear warm-up over 100 steps (step s: 3e-3 (s+1)/100, gltrain's
schedule.hpp), then cosine to 3e-4 at step 2000; gradients clipped to global
norm 1; batches of 32 random windows of 64 bytes from the first 90% of the text.

For speed as the issue measured it, preload the threaded OpenBLAS:
  LD_PRELOAD=/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0 \
  OMP_WAIT_POLICY=PASSIVE python3 bench/torch_char_transformer.py CORPUS
(Debian's default reference BLAS is ~15x slower.)
"""
import argparse
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB, CONTEXT, WIDTH, HEADS, KEY, HIDDEN, BLOCKS = 256, 64, 128, 4, 32, 512, 2
BATCH, LR, MIN_LR, WARMUP, TOTAL, DECAY, CLIP = 32, 3e-3, 3e-4, 100, 2000, 0.1, 1.0
LN_EPS = 1e-5  # the model file's LayerNormalization epsilon (PyTorch's default)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1 = nn.LayerNorm(WIDTH, eps=LN_EPS)
        self.q = nn.Linear(WIDTH, HEADS * KEY)
        self.k = nn.Linear(WIDTH, HEADS * KEY)
        self.v = nn.Linear(WIDTH, HEADS * KEY)
        self.o = nn.Linear(HEADS * KEY, WIDTH)
        self.ln2 = nn.LayerNorm(WIDTH, eps=LN_EPS)
        self.up = nn.Linear(WIDTH, HIDDEN)
        self.down = nn.Linear(HIDDEN, WIDTH)

    def forward(self, x, mask):
        B, T, _ = x.shape
        h = self.ln1(x)
        split = lambda t: t.view(B, T, HEADS, KEY).transpose(1, 2)  # [B, H, T, dk]
        q, k, v = split(self.q(h)), split(self.k(h)), split(self.v(h))
        s = (q @ k.transpose(-1, -2)) / math.sqrt(KEY)
        p = torch.softmax(s.masked_fill(mask[:T, :T], float('-inf')), dim=-1)
        a = (p @ v).transpose(1, 2).reshape(B, T, HEADS * KEY)
        x = x + self.o(a)
        return x + self.down(F.gelu(self.up(self.ln2(x)), approximate='tanh'))


class CharTransformer(nn.Module):
    def __init__(self):
        super().__init__()
        self.tokens = nn.Embedding(VOCAB, WIDTH)
        self.positions = nn.Parameter(torch.empty(CONTEXT, WIDTH))
        self.blocks = nn.ModuleList(Block() for _ in range(BLOCKS))
        self.ln = nn.LayerNorm(WIDTH, eps=LN_EPS)
        self.head = nn.Linear(WIDTH, VOCAB)
        self.register_buffer('mask', torch.triu(torch.ones(CONTEXT, CONTEXT, dtype=torch.bool), 1))
        for name, p in self.named_parameters():
            if name.endswith('bias'):
                nn.init.zeros_(p)
            elif '.ln' in name or name.startswith('ln'):
                nn.init.ones_(p)
            else:
                nn.init.normal_(p, 0.0, 0.02)

    def forward(self, ids):
        x = self.tokens(ids) + self.positions[:ids.shape[1]]
        for b in self.blocks:
            x = b(x, self.mask)
        return self.head(self.ln(x))


def learning_rate(step):
    if step < WARMUP:
        return LR * (step + 1) / WARMUP
    t = min(1.0, (step - WARMUP) / max(1, TOTAL - WARMUP))
    return MIN_LR + 0.5 * (LR - MIN_LR) * (1 + math.cos(math.pi * t))


def adamw(model):
    """AdamW (0.9, 0.95), eps 1e-8, decay on the 2-D kernels only (not biases, norms or embeddings)."""
    decayed = [p for n, p in model.named_parameters() if p.dim() == 2 and n not in ('tokens.weight', 'positions')]
    others = [p for p in model.parameters() if not any(p is d for d in decayed)]
    return torch.optim.AdamW([{'params': decayed, 'weight_decay': DECAY}, {'params': others, 'weight_decay': 0.0}],
                             lr=LR, betas=(0.9, 0.95), eps=1e-8)


def train_step(model, opt, step, x, y):
    """One step at `step`'s learning rate, gradients clipped to global norm 1: the loss before it."""
    for g in opt.param_groups:
        g['lr'] = learning_rate(step)
    loss = F.cross_entropy(model(x).reshape(-1, VOCAB), y.reshape(-1))
    opt.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), CLIP)
    opt.step()
    return loss.item()


def held_out_loss(model, ids, split):
    """Mean nats per byte over the tail's consecutive windows (the last partial one left out)."""
    tail = ids[split:]
    n = (len(tail) - 1) // CONTEXT
    x = tail[:n * CONTEXT].view(n, CONTEXT)
    y = tail[1:n * CONTEXT + 1].view(n, CONTEXT)
    total = 0.0
    with torch.no_grad():
        for i in range(0, n, 256):
            logits = model(x[i:i + 256])
            total += F.cross_entropy(logits.reshape(-1, VOCAB), y[i:i + 256].reshape(-1), reduction='sum').item()
    return total / (n * CONTEXT)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('corpus')
    ap.add_argument('--steps', type=int, default=TOTAL)
    ap.add_argument('--threads', type=int, default=2)
    ap.add_argument('--eval-at', default='500,1000,2000')
    ap.add_argument('--time-steps', type=int, default=50, help='steps timed after 10 warm ones (0: all)')
    ap.add_argument('--seed', type=int, default=1)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    data = open(a.corpus, 'rb').read()
    ids = torch.tensor(list(data), dtype=torch.long)
    split = int(math.floor(0.9 * len(data)))
    print(f'corpus: {len(data)} bytes, {len(data) - split} held out; torch {torch.__version__}, {a.threads} threads')
    model = CharTransformer()
    opt = adamw(model)
    evals = {int(s) for s in a.eval_at.split(',') if s}
    gen = torch.Generator().manual_seed(a.seed)
    timed = []
    for step in range(a.steps):
        starts = torch.randint(0, split - CONTEXT - 1, (BATCH,), generator=gen)
        x = torch.stack([ids[s:s + CONTEXT] for s in starts])
        y = torch.stack([ids[s + 1:s + CONTEXT + 1] for s in starts])
        t = time.perf_counter()
        loss = train_step(model, opt, step, x, y)
        if step >= 10 and (a.time_steps == 0 or step < 10 + a.time_steps):
            timed.append(time.perf_counter() - t)
        if step % 100 == 0:
            print(f'step {step} loss {loss:.4f}', flush=True)
        if step + 1 in evals:
            print(f'step {step + 1} held-out loss {held_out_loss(model, ids, split):.4f} nats/byte', flush=True)
    if timed:
        timed.sort()
        print(f'ms/step: mean {1e3 * sum(timed) / len(timed):.1f}, median {1e3 * timed[len(timed) // 2]:.1f} '
              f'over {len(timed)} steps')


if __name__ == '__main__':
    main()
