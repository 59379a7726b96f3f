"""The austen-kjv-2m architecture in plain torch, and the llama2.c "version 0"
model.bin layout (read and write).

The forward pass is the one web/model/llama2.mjs runs (models/austen-kjv-2m/
README.md): pre-norm blocks with RMSNorm (eps 1e-5), causal multi-head
attention with RoPE on pairs (2i, 2i+1) of each head, a SwiGLU feed-forward,
no biases, and an output layer tied to the token embedding.
"""
import math
import struct
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class Config:
    dim: int = 192
    hidden_dim: int = 512
    n_layers: int = 4
    n_heads: int = 4
    n_kv_heads: int = 4
    vocab_size: int = 4096
    seq_len: int = 256
    norm_eps: float = 1e-5
    rope_theta: float = 10000.0


class RMSNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rope_tables(head_size, seq_len, theta):
    """cos and sin [seq_len, head_size / 2]: the angle of pair i at position t
    is t * theta^(-2i / head_size). Also written into model.bin (legacy)."""
    freqs = 1.0 / (theta ** (torch.arange(0, head_size, 2)[: head_size // 2].float() / head_size))
    angles = torch.outer(torch.arange(seq_len).float(), freqs)
    return torch.cos(angles), torch.sin(angles)


def apply_rope(x, cos, sin):
    """x [batch, seq, heads, head_size]; rotates the pairs (2i, 2i+1)."""
    xr = x.float().reshape(*x.shape[:-1], -1, 2)
    a, b = xr[..., 0], xr[..., 1]
    c = cos[None, :, None, :]
    s = sin[None, :, None, :]
    return torch.stack((a * c - b * s, a * s + b * c), dim=-1).flatten(-2).type_as(x)


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        assert cfg.n_kv_heads == cfg.n_heads, 'grouped-query attention is not used by this recipe'
        self.n_heads = cfg.n_heads
        self.head_size = cfg.dim // cfg.n_heads
        self.attention_norm = RMSNorm(cfg.dim, cfg.norm_eps)
        self.wq = nn.Linear(cfg.dim, cfg.dim, bias=False)
        self.wk = nn.Linear(cfg.dim, cfg.dim, bias=False)
        self.wv = nn.Linear(cfg.dim, cfg.dim, bias=False)
        self.wo = nn.Linear(cfg.dim, cfg.dim, bias=False)
        self.ffn_norm = RMSNorm(cfg.dim, cfg.norm_eps)
        self.w1 = nn.Linear(cfg.dim, cfg.hidden_dim, bias=False)
        self.w2 = nn.Linear(cfg.hidden_dim, cfg.dim, bias=False)
        self.w3 = nn.Linear(cfg.dim, cfg.hidden_dim, bias=False)

    def forward(self, x, cos, sin):
        B, T, D = x.shape
        n = self.attention_norm(x)
        q = apply_rope(self.wq(n).view(B, T, self.n_heads, self.head_size), cos, sin)
        k = apply_rope(self.wk(n).view(B, T, self.n_heads, self.head_size), cos, sin)
        v = self.wv(n).view(B, T, self.n_heads, self.head_size)
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))
        att = (q @ k.transpose(-2, -1)) / math.sqrt(self.head_size)
        mask = torch.triu(torch.ones(T, T, dtype=torch.bool, device=x.device), diagonal=1)
        att = F.softmax(att.masked_fill(mask, float('-inf')), dim=-1)
        x = x + self.wo((att @ v).transpose(1, 2).reshape(B, T, D))
        n = self.ffn_norm(x)
        return x + self.w2(F.silu(self.w1(n)) * self.w3(n))


class Llama(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.tok_embeddings = nn.Embedding(cfg.vocab_size, cfg.dim)
        self.layers = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layers))
        self.norm = RMSNorm(cfg.dim, cfg.norm_eps)
        self.output = nn.Linear(cfg.dim, cfg.vocab_size, bias=False)
        self.output.weight = self.tok_embeddings.weight  # tied (positive vocab in the header)
        cos, sin = rope_tables(cfg.dim // cfg.n_heads, cfg.seq_len, cfg.rope_theta)
        self.register_buffer('rope_cos', cos, persistent=False)
        self.register_buffer('rope_sin', sin, persistent=False)
        self.apply(self._init)
        # GPT-2-style scaled init of the residual projections.
        for name, p in self.named_parameters():
            if name.endswith('wo.weight') or name.endswith('w2.weight'):
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * cfg.n_layers))

    @staticmethod
    def _init(m):
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, mean=0.0, std=0.02)

    def forward(self, tokens):
        T = tokens.shape[1]
        x = self.tok_embeddings(tokens)
        for layer in self.layers:
            x = layer(x, self.rope_cos[:T], self.rope_sin[:T])
        return self.output(self.norm(x))


# llama2.c "version 0": 7 int32 then float32 arrays, each group over all layers.
def _groups(model):
    L = model.layers
    yield model.tok_embeddings.weight
    for name in ('attention_norm', 'wq', 'wk', 'wv', 'wo', 'ffn_norm', 'w1', 'w2', 'w3'):
        for layer in L:
            yield getattr(layer, name).weight
    yield model.norm.weight


def write_llama2c(model, path):
    cfg = model.cfg
    with open(path, 'wb') as f:
        f.write(struct.pack('<7i', cfg.dim, cfg.hidden_dim, cfg.n_layers, cfg.n_heads, cfg.n_kv_heads,
                            cfg.vocab_size, cfg.seq_len))
        for w in _groups(model):
            f.write(w.detach().float().contiguous().cpu().numpy().astype('<f4').tobytes())
        # The legacy RoPE tables (readers may recompute them instead).
        cos, sin = rope_tables(cfg.dim // cfg.n_heads, cfg.seq_len, cfg.rope_theta)
        f.write(cos.numpy().astype('<f4').tobytes())
        f.write(sin.numpy().astype('<f4').tobytes())


def read_llama2c(path):
    """A Llama with the weights of a version-0 model.bin (tied output only)."""
    import numpy as np
    data = open(path, 'rb').read()
    dim, hidden, layers, heads, kv_heads, vocab, seq_len = struct.unpack_from('<7i', data, 0)
    if vocab <= 0:
        raise ValueError('an untied output layer (negative vocab size) is not supported by this recipe')
    model = Llama(Config(dim, hidden, layers, heads, kv_heads, vocab, seq_len))
    floats = np.frombuffer(data, dtype='<f4', offset=28)
    o = 0
    with torch.no_grad():
        for w in _groups(model):
            n = w.numel()
            if o + n > floats.size:
                raise ValueError(f'{path}: truncated')
            w.copy_(torch.from_numpy(floats[o:o + n].copy()).view_as(w))
            o += n
    return model
