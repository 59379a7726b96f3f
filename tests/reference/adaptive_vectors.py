#!/usr/bin/env python3
"""The worked examples of tests/native/test_stage_adaptive.cc, computed apart
from the library: each rule written from its source in float64 Python.
  p-less / p-less-norm: Tan, Wu, Howard 2025, arXiv 2509.23234
  Top-H:                Baghaei Potraghloo et al., NeurIPS 2025, arXiv 2509.02510
  adaptive-p:           llama.cpp PR 17927 (llama_sampler_init_adaptive_p)
Run: python3 tests/reference/adaptive_vectors.py"""
import math


def p_less(p, norm):
    s = sum(x * x for x in p)
    v = len(p)
    cut = (v * s - 1) / (v - 1) if norm else s
    kept = [x for x in p if x >= cut]
    z = sum(kept)
    return cut, [x / z for x in kept]


def entropy(q):
    z = sum(q)
    return -sum(x / z * math.log(x / z) for x in q if x > 0)


def top_h(p, alpha):
    bound = alpha * entropy(p)
    k = 1
    prefix_entropies = []
    while k < len(p):
        h = entropy(p[:k + 1])
        prefix_entropies.append(h)
        if h > bound:
            break
        k += 1
    z = sum(p[:k])
    return bound, prefix_entropies, [x / z for x in p[:k]]


def adaptive(p, adapted):
    logits = [5 - 10 * d * d / (1 + d) for d in (abs(x - adapted) / 0.3 for x in p)]
    m = max(logits)
    e = [math.exp(x - m) for x in logits]
    z = sum(e)
    return [x / z for x in e]


if __name__ == '__main__':
    for p in ([0.35, 0.3, 0.2, 0.15], [0.5, 0.2, 0.15, 0.1, 0.05]):
        print('p-less', p, p_less(p, False), 'norm', p_less(p, True))
    for a in (0.3, 0.5, 0.8, 1.0):
        print('top-h', a, top_h([0.4, 0.25, 0.15, 0.1, 0.06, 0.04], a))
    print('adaptive-p target 0.3', adaptive([0.5, 0.3, 0.2], 0.3))
    ws, tw = 0.3 / (1 - 0.9), 1 / (1 - 0.9)
    ws, tw = 0.5 + 0.9 * ws, 1 + 0.9 * tw
    a = min(1, max(0, 2 * 0.3 - ws / tw))
    print('after p 0.5: ws', ws, 'tw', tw, 'adapted', a, adaptive([0.5, 0.3, 0.2], a))
