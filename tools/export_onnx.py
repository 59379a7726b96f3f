#!/usr/bin/python3
"""Exports models/austen-kjv-2m/model.bin (llama2.c "version 0" layout) to the
folder layout transformers.js loads a decoder-only Llama from:

  models/austen-kjv-2m/config.json             LlamaForCausalLM config
  models/austen-kjv-2m/generation_config.json  neutral defaults (nothing applied twice)
  models/austen-kjv-2m/tokenizer.json          BPE + byte fallback from tokenizer.model, encodes
  models/austen-kjv-2m/tokenizer_config.json   like web/model/llama2.mjs
  models/austen-kjv-2m/onnx/model.onnx         input_ids, attention_mask, position_ids,
                                               past_key_values.{i}.key/value
                                               -> logits, present.{i}.key/value

Needs Debian's python3-torch and python3-onnx. Not run by CI or `npm test`: its
output is committed, and tests/js/transformers.test.mjs checks the ONNX model's
logits (inside transformers.js's generate()) against web/model/llama2.mjs.

RoPE: llama2.c rotates adjacent pairs (2i, 2i+1) of each head, Hugging Face's
Llama rotates the two halves of a head. The rows of wq and wk are permuted here
(the same permutation as Hugging Face's Llama conversion) so the graph below is a
plain HF-convention Llama, and config.json honestly describes it.

Usage: /usr/bin/python3 tools/export_onnx.py [models/austen-kjv-2m]
"""
import json
import os
import struct
import sys

import numpy as np
import torch
from torch import nn

HEADER_INTS = 7
RMS_EPS = 1e-5
ROPE_THETA = 10000.0
OPSET = 14


def read_llama2c(path):
    with open(path, 'rb') as f:
        raw = f.read()
    dim, hidden, n_layers, n_heads, n_kv_heads, vocab, seq_len = struct.unpack('<7i', raw[:28])
    shared = vocab > 0
    vocab = abs(vocab)
    head = dim // n_heads
    kv_dim = n_kv_heads * head
    floats = np.frombuffer(raw, dtype='<f4', offset=4 * HEADER_INTS)
    off = 0

    def take(*shape):
        nonlocal off
        n = int(np.prod(shape))
        a = floats[off:off + n].reshape(shape).astype(np.float32)
        off += n
        return a

    w = {}
    w['emb'] = take(vocab, dim)
    w['rms_att'] = take(n_layers, dim)
    w['wq'] = take(n_layers, dim, dim)
    w['wk'] = take(n_layers, kv_dim, dim)
    w['wv'] = take(n_layers, kv_dim, dim)
    w['wo'] = take(n_layers, dim, dim)
    w['rms_ffn'] = take(n_layers, dim)
    w['w1'] = take(n_layers, hidden, dim)
    w['w2'] = take(n_layers, dim, hidden)
    w['w3'] = take(n_layers, hidden, dim)
    w['rms_final'] = take(dim)
    if not shared:
        raise SystemExit('export_onnx: only shared (tied) classifier weights are supported')
    cfg = dict(dim=dim, hidden=hidden, n_layers=n_layers, n_heads=n_heads, n_kv_heads=n_kv_heads,
               vocab=vocab, seq_len=seq_len, head=head, kv_dim=kv_dim)
    return cfg, w


def pairs_to_halves(w, n_heads):
    """Rows (2i, 2i+1) of each head -> rows (i, i + head/2): pair rotation becomes half rotation."""
    out_dim, in_dim = w.shape
    return w.reshape(n_heads, out_dim // n_heads // 2, 2, in_dim).transpose(0, 2, 1, 3).reshape(out_dim, in_dim)


class Llama(nn.Module):
    def __init__(self, cfg, w):
        super().__init__()
        self.cfg = cfg
        p = lambda a: nn.Parameter(torch.from_numpy(np.ascontiguousarray(a)), requires_grad=False)
        self.emb = p(w['emb'])
        L = cfg['n_layers']
        # Linear weights stored transposed ([in, out]) so the graph is x @ W with no runtime Transpose.
        self.rms_att = nn.ParameterList([p(w['rms_att'][l]) for l in range(L)])
        self.wq = nn.ParameterList([p(pairs_to_halves(w['wq'][l], cfg['n_heads']).T) for l in range(L)])
        self.wk = nn.ParameterList([p(pairs_to_halves(w['wk'][l], cfg['n_kv_heads']).T) for l in range(L)])
        self.wv = nn.ParameterList([p(w['wv'][l].T) for l in range(L)])
        self.wo = nn.ParameterList([p(w['wo'][l].T) for l in range(L)])
        self.rms_ffn = nn.ParameterList([p(w['rms_ffn'][l]) for l in range(L)])
        self.w1 = nn.ParameterList([p(w['w1'][l].T) for l in range(L)])
        self.w2 = nn.ParameterList([p(w['w2'][l].T) for l in range(L)])
        self.w3 = nn.ParameterList([p(w['w3'][l].T) for l in range(L)])
        self.rms_final = p(w['rms_final'])
        head = cfg['head']
        inv = 1.0 / (ROPE_THETA ** (np.arange(0, head, 2, dtype=np.float64) / head))
        self.register_buffer('inv_freq', torch.from_numpy(inv.astype(np.float32)), persistent=False)

    @staticmethod
    def rmsnorm(x, weight):
        return weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + RMS_EPS))

    @staticmethod
    def rotate_half(x):
        h = x.shape[-1] // 2
        return torch.cat((-x[..., h:], x[..., :h]), dim=-1)

    def forward(self, input_ids, attention_mask, position_ids, *past):
        cfg = self.cfg
        H, KV, hd = cfg['n_heads'], cfg['n_kv_heads'], cfg['head']
        B, S = input_ids.shape[0], input_ids.shape[1]
        P = past[0].shape[2]
        x = self.emb[input_ids]                                   # [B, S, D]

        freqs = position_ids.unsqueeze(-1).to(torch.float32) * self.inv_freq  # [B, S, hd/2]
        ang = torch.cat((freqs, freqs), dim=-1).unsqueeze(1)      # [B, 1, S, hd]
        cos, sin = ang.cos(), ang.sin()

        # Key j is visible to query i (absolute position P + i) when j <= P + i and not padding.
        qpos = torch.arange(S, device=x.device).unsqueeze(1) + P
        kpos = torch.arange(P + S, device=x.device).unsqueeze(0)
        visible = (kpos <= qpos).unsqueeze(0).unsqueeze(0) & attention_mask.bool().unsqueeze(1).unsqueeze(1)
        neg = torch.tensor(torch.finfo(torch.float32).min)
        scale = 1.0 / float(np.sqrt(hd))

        present = []
        for l in range(cfg['n_layers']):
            h = self.rmsnorm(x, self.rms_att[l])
            q = (h @ self.wq[l]).view(B, S, H, hd).transpose(1, 2)
            k = (h @ self.wk[l]).view(B, S, KV, hd).transpose(1, 2)
            v = (h @ self.wv[l]).view(B, S, KV, hd).transpose(1, 2)
            q = q * cos + self.rotate_half(q) * sin
            k = k * cos + self.rotate_half(k) * sin
            k = torch.cat((past[2 * l], k), dim=2)
            v = torch.cat((past[2 * l + 1], v), dim=2)
            present += [k, v]
            if KV != H:
                k = k.repeat_interleave(H // KV, dim=1)
                v = v.repeat_interleave(H // KV, dim=1)
            att = (q @ k.transpose(-1, -2)) * scale
            att = torch.where(visible, att, neg).softmax(-1)
            o = (att @ v).transpose(1, 2).reshape(B, S, H * hd)
            x = x + o @ self.wo[l]
            h = self.rmsnorm(x, self.rms_ffn[l])
            x = x + (nn.functional.silu(h @ self.w1[l]) * (h @ self.w3[l])) @ self.w2[l]
        x = self.rmsnorm(x, self.rms_final)
        logits = x @ self.emb.t()                                  # tied classifier: one copy of E
        return (logits, *present)


def read_sentencepiece(path):
    """(piece, score, type) per id from a sentencepiece ModelProto, read from the protobuf wire format
    (field 1: repeated SentencePiece {1: piece, 2: score, 3: type}); no sentencepiece module needed."""
    raw = open(path, 'rb').read()

    def varint(b, i):
        r = s = 0
        while True:
            c = b[i]
            i += 1
            r |= (c & 0x7f) << s
            s += 7
            if c < 0x80:
                return r, i

    def fields(b):
        i = 0
        while i < len(b):
            key, i = varint(b, i)
            f, wire = key >> 3, key & 7
            if wire == 0:
                v, i = varint(b, i)
            elif wire == 1:
                v, i = b[i:i + 8], i + 8
            elif wire == 2:
                n, i = varint(b, i)
                v, i = b[i:i + n], i + n
            elif wire == 5:
                v, i = b[i:i + 4], i + 4
            else:
                raise SystemExit(f'export_onnx: unexpected protobuf wire type {wire}')
            yield f, v

    pieces = []
    for f, v in fields(raw):
        if f == 1:
            d = dict(fields(v))
            pieces.append((d[1].decode('utf-8'), struct.unpack('<f', d.get(2, bytes(4)))[0], d.get(3, 1)))
    return pieces


def tokenizer_json(pieces):
    """A Hugging Face tokenizer.json (BPE with byte fallback) that encodes like web/model/llama2.mjs
    (llama2.c): a dummy-prefix space, spaces as U+2581, then merges in piece-score order. The merge
    list is every split of every normal piece into two pieces, ranked by the merged piece's score."""
    NORMAL, UNKNOWN, CONTROL, BYTE = 1, 2, 3, 6
    vocab = {p: i for i, (p, _, _) in enumerate(pieces)}
    merges = []
    for i, (p, score, kind) in enumerate(pieces):
        if kind != NORMAL or len(p) < 2:
            continue
        for cut in range(1, len(p)):
            a, b = p[:cut], p[cut:]
            if a in vocab and b in vocab and pieces[vocab[a]][2] == NORMAL and pieces[vocab[b]][2] == NORMAL:
                merges.append((-score, i, vocab[a], vocab[b], a, b))
    merges.sort()
    special = [{'id': i, 'content': p, 'single_word': False, 'lstrip': False, 'rstrip': False,
                'normalized': False, 'special': True}
               for i, (p, _, kind) in enumerate(pieces) if kind in (UNKNOWN, CONTROL)]
    bos = pieces[1][0]
    return {
        'version': '1.0',
        'truncation': None,
        'padding': None,
        'added_tokens': special,
        'normalizer': {'type': 'Sequence', 'normalizers': [
            {'type': 'Prepend', 'prepend': '\u2581'},
            {'type': 'Replace', 'pattern': {'String': ' '}, 'content': '\u2581'},
        ]},
        'pre_tokenizer': None,
        'post_processor': {
            'type': 'TemplateProcessing',
            'single': [{'SpecialToken': {'id': bos, 'type_id': 0}}, {'Sequence': {'id': 'A', 'type_id': 0}}],
            'pair': [{'SpecialToken': {'id': bos, 'type_id': 0}}, {'Sequence': {'id': 'A', 'type_id': 0}},
                     {'SpecialToken': {'id': bos, 'type_id': 1}}, {'Sequence': {'id': 'B', 'type_id': 1}}],
            'special_tokens': {bos: {'id': bos, 'ids': [1], 'tokens': [bos]}},
        },
        'decoder': {'type': 'Sequence', 'decoders': [
            {'type': 'Replace', 'pattern': {'String': '\u2581'}, 'content': ' '},
            {'type': 'ByteFallback'},
            {'type': 'Fuse'},
            {'type': 'Strip', 'content': ' ', 'start': 1, 'stop': 0},
        ]},
        'model': {
            'type': 'BPE', 'dropout': None, 'unk_token': pieces[0][0], 'continuing_subword_prefix': None,
            'end_of_word_suffix': None, 'fuse_unk': True, 'byte_fallback': True, 'ignore_merges': False,
            'vocab': vocab,
            'merges': [[a, b] for *_, a, b in merges],
        },
    }


def write_json(path, obj):
    with open(path, 'w') as f:
        json.dump(obj, f, indent=2)
        f.write('\n')


def main():
    folder = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..', 'models', 'austen-kjv-2m')
    cfg, w = read_llama2c(os.path.join(folder, 'model.bin'))
    model = Llama(cfg, w).eval()

    L, KV, hd = cfg['n_layers'], cfg['n_kv_heads'], cfg['head']
    B, S, P = 2, 3, 2
    input_ids = torch.tensor([[1, 300, 301], [1, 400, 401]], dtype=torch.int64)
    attention_mask = torch.ones(B, P + S, dtype=torch.int64)
    position_ids = torch.arange(P, P + S, dtype=torch.int64).unsqueeze(0).repeat(B, 1)
    past = [torch.zeros(B, KV, P, hd) for _ in range(2 * L)]

    in_names = ['input_ids', 'attention_mask', 'position_ids']
    out_names = ['logits']
    axes = {
        'input_ids': {0: 'batch_size', 1: 'sequence_length'},
        'attention_mask': {0: 'batch_size', 1: 'total_sequence_length'},
        'position_ids': {0: 'batch_size', 1: 'sequence_length'},
        'logits': {0: 'batch_size', 1: 'sequence_length'},
    }
    for l in range(L):
        for kind in ('key', 'value'):
            in_names.append(f'past_key_values.{l}.{kind}')
            out_names.append(f'present.{l}.{kind}')
            axes[in_names[-1]] = {0: 'batch_size', 2: 'past_sequence_length'}
            axes[out_names[-1]] = {0: 'batch_size', 2: 'total_sequence_length'}

    os.makedirs(os.path.join(folder, 'onnx'), exist_ok=True)
    out = os.path.join(folder, 'onnx', 'model.onnx')
    with torch.no_grad():
        torch.onnx.export(model, (input_ids, attention_mask, position_ids, *past), out,
                          input_names=in_names, output_names=out_names, dynamic_axes=axes,
                          opset_version=OPSET, do_constant_folding=False)

    import onnx
    m = onnx.load(out)
    onnx.checker.check_model(m)
    print(f'{out}: {os.path.getsize(out)} bytes, {len(m.graph.initializer)} initializers')

    write_json(os.path.join(folder, 'config.json'), {
        'architectures': ['LlamaForCausalLM'],
        'model_type': 'llama',
        'vocab_size': cfg['vocab'],
        'hidden_size': cfg['dim'],
        'intermediate_size': cfg['hidden'],
        'num_hidden_layers': L,
        'num_attention_heads': cfg['n_heads'],
        'num_key_value_heads': KV,
        'head_dim': hd,
        'max_position_embeddings': cfg['seq_len'],
        'rms_norm_eps': RMS_EPS,
        'rope_theta': ROPE_THETA,
        'hidden_act': 'silu',
        'tie_word_embeddings': True,
        'attention_bias': False,
        'mlp_bias': False,
        'bos_token_id': 1,
        'eos_token_id': 2,
        'torch_dtype': 'float32',
        'transformers.js_config': {'dtype': 'fp32'},
    })
    pieces = read_sentencepiece(os.path.join(folder, 'tokenizer.model'))
    with open(os.path.join(folder, 'tokenizer.json'), 'w', encoding='utf-8') as f:
        json.dump(tokenizer_json(pieces), f, ensure_ascii=False, separators=(',', ':'))
    write_json(os.path.join(folder, 'tokenizer_config.json'), {
        'tokenizer_class': 'LlamaTokenizer',
        'bos_token': pieces[1][0], 'eos_token': pieces[2][0], 'unk_token': pieces[0][0],
        'add_bos_token': True, 'add_eos_token': False,
        'model_max_length': cfg['seq_len'],
        'clean_up_tokenization_spaces': False,
    })
    # Neutral: transformers.js must not penalise, warp or truncate on its own
    # (the bregman-decoders logits processor does all of that).
    write_json(os.path.join(folder, 'generation_config.json'), {
        'bos_token_id': 1,
        'eos_token_id': 2,
        'do_sample': False,
    })


if __name__ == '__main__':
    main()
