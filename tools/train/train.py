"""Trains the austen-kjv-2m Llama on CPU with Debian's python3-torch.

The recipe (models/austen-kjv-2m/README.md): AdamW (betas 0.9/0.95, weight
decay 0.1 on matrices only), batch 8 x 256 tokens, gradient clip 1.0, a cosine
learning-rate decay over the run's length (minutes or steps). The committed
model is two such runs: 35 minutes at 2e-3 -> 1e-4, then 75 more minutes from
that checkpoint at 1e-3 -> 3e-5 (--init). Every document starts with BOS;
batches are random windows of the concatenated training tokens. Reports the
held-out cross-entropy (random 8 x 256 windows of heldout.txt) at the end.

  python3 tools/train/train.py --data work/corpus --tokenizer work/model/tokenizer.model \
      --out work/phase1.pt --minutes 35 --lr 2e-3 --lr-min 1e-4
  python3 tools/train/train.py ... --init work/phase1.pt --out work/phase2.pt --minutes 75 --lr 1e-3 --lr-min 3e-5
"""
import argparse
import math
import sys
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np
import sentencepiece as spm
import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent))
from llama import Config, Llama  # noqa: E402


def token_stream(path, sp):
    """BOS + the ids of every NUL-separated document, concatenated (uint16)."""
    docs = [d for d in path.read_text(encoding='utf-8').split('\0') if d.strip()]
    ids = []
    for d in docs:
        ids.append(sp.bos_id())
        ids.extend(sp.encode(d))
    return np.asarray(ids, dtype=np.uint16)


def windows(stream, batch, seq, gen):
    starts = torch.randint(0, len(stream) - seq - 1, (batch,), generator=gen).tolist()
    xy = torch.from_numpy(np.stack([stream[s:s + seq + 1].astype(np.int64) for s in starts]))
    return xy[:, :-1], xy[:, 1:]


@torch.no_grad()
def heldout_loss(model, stream, n_windows, batch, seq, seed):
    model.eval()
    gen = torch.Generator().manual_seed(seed)
    total = 0.0
    for _ in range(n_windows):
        x, y = windows(stream, batch, seq, gen)
        total += F.cross_entropy(model(x).flatten(0, 1), y.flatten()).item()
    model.train()
    return total / n_windows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--data', required=True, type=Path, help='directory with train.txt and heldout.txt')
    ap.add_argument('--tokenizer', required=True, type=Path, help='tokenizer.model')
    ap.add_argument('--out', required=True, type=Path, help='checkpoint to write (.pt)')
    ap.add_argument('--init', type=Path, help='checkpoint to continue from (weights only)')
    ap.add_argument('--minutes', type=float, help='train for this long (the cosine spans it)')
    ap.add_argument('--steps', type=int, help='or for this many steps')
    ap.add_argument('--lr', type=float, default=2e-3)
    ap.add_argument('--lr-min', type=float, default=1e-4)
    ap.add_argument('--warmup', type=int, default=50, help='linear warm-up steps (not with --init)')
    ap.add_argument('--batch', type=int, default=8)
    ap.add_argument('--seq', type=int, default=256, help='training window (<= the model seq_len)')
    ap.add_argument('--dim', type=int, default=192)
    ap.add_argument('--hidden-dim', type=int, default=512)
    ap.add_argument('--layers', type=int, default=4)
    ap.add_argument('--heads', type=int, default=4)
    ap.add_argument('--seq-len', type=int, default=256, help='model context (the RoPE table length)')
    ap.add_argument('--eval-windows', type=int, default=40)
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--threads', type=int, default=0, help='torch threads (0: torch default)')
    a = ap.parse_args()
    if (a.minutes is None) == (a.steps is None):
        ap.error('give exactly one of --minutes, --steps')
    if a.threads:
        torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)

    sp = spm.SentencePieceProcessor(model_file=str(a.tokenizer))
    train = token_stream(a.data / 'train.txt', sp)
    held = token_stream(a.data / 'heldout.txt', sp)
    print(f'tokens: {len(train)} train, {len(held)} held out; vocab {sp.get_piece_size()}')

    if a.init:
        ck = torch.load(a.init)
        cfg = Config(**ck['config'])
        model = Llama(cfg)
        model.load_state_dict(ck['model'])
        warmup = 0
    else:
        cfg = Config(dim=a.dim, hidden_dim=a.hidden_dim, n_layers=a.layers, n_heads=a.heads,
                     n_kv_heads=a.heads, vocab_size=sp.get_piece_size(), seq_len=a.seq_len)
        model = Llama(cfg)
        warmup = a.warmup
    if cfg.vocab_size != sp.get_piece_size():
        raise SystemExit(f'model vocab {cfg.vocab_size} != tokenizer vocab {sp.get_piece_size()}')
    seq = min(a.seq, cfg.seq_len)
    held_seq = min(seq, len(held) - 2)
    print(f'model: {sum(p.numel() for p in model.parameters()) / 1e6:.2f} M parameters, {asdict(cfg)}')

    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{'params': decay, 'weight_decay': 0.1}, {'params': no_decay, 'weight_decay': 0.0}],
                            lr=a.lr, betas=(0.9, 0.95))
    gen = torch.Generator().manual_seed(a.seed)
    t0 = time.time()
    step, seen, ema = 0, 0, None

    def progress():
        return (time.time() - t0) / (60 * a.minutes) if a.minutes is not None else step / a.steps

    while progress() < 1:
        frac = min(progress(), 1.0)
        lr = a.lr_min + 0.5 * (a.lr - a.lr_min) * (1 + math.cos(math.pi * frac))
        if step < warmup:
            lr *= (step + 1) / warmup
        for g in opt.param_groups:
            g['lr'] = lr
        x, y = windows(train, a.batch, seq, gen)
        loss = F.cross_entropy(model(x).flatten(0, 1), y.flatten())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        step += 1
        seen += x.numel()
        ema = loss.item() if ema is None else 0.98 * ema + 0.02 * loss.item()
        if step % 50 == 0 or step == 1:
            print(f'step {step}  loss {ema:.3f}  lr {lr:.2e}  {time.time() - t0:.0f} s', flush=True)

    a.out.parent.mkdir(parents=True, exist_ok=True)
    torch.save({'config': asdict(cfg), 'model': model.state_dict(), 'steps': step, 'tokens_seen': seen}, a.out)
    ce = heldout_loss(model, held, a.eval_windows, a.batch, held_seq, seed=0)
    print(f'{step} steps, {seen / 1e6:.2f} M tokens seen in {(time.time() - t0) / 60:.1f} min; '
          f'held-out cross-entropy {ce:.3f} nats/token (perplexity {math.exp(ce):.1f}); wrote {a.out}')


if __name__ == '__main__':
    main()
