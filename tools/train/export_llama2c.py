"""Exports a train.py checkpoint as llama2.c "version 0" model.bin (the layout
web/model/llama2.mjs reads; see models/austen-kjv-2m/README.md), and with
--tokenizer also writes tokenizer.bin beside it.

  python3 tools/train/export_llama2c.py work/phase2.pt work/model/model.bin \
      [--tokenizer work/model/tokenizer.model]
  python3 tools/train/export_llama2c.py --check models/austen-kjv-2m/model.bin
      (reads a model.bin, prints its logits after the reference prompt, and
       re-exports it to check the round trip is byte-identical)
"""
import argparse
import sys
import tempfile
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from llama import Config, Llama, read_llama2c, write_llama2c  # noqa: E402

REFERENCE_IDS = [1, 722, 352, 261, 1539, 348, 4023, 1161, 741, 3864]  # models/austen-kjv-2m/TRAINING.txt


def check(path):
    model = read_llama2c(path).eval()
    with torch.no_grad():
        logits = model(torch.tensor([REFERENCE_IDS]))[0, -1]
    top = logits.topk(5)
    print('top 5 after the reference prompt:', ' '.join(f'{i} {v:.5f}' for i, v in zip(top.indices.tolist(), top.values.tolist())))
    print('logits[0..4]:', ', '.join(f'{v:.5f}' for v in logits[:5].tolist()))
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / 'model.bin'
        write_llama2c(model, out)
        same = out.read_bytes() == Path(path).read_bytes()
    print('re-export byte-identical:', same)
    return same


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('checkpoint', nargs='?', type=Path)
    ap.add_argument('out', nargs='?', type=Path)
    ap.add_argument('--tokenizer', type=Path, help='tokenizer.model: also write tokenizer.bin beside OUT')
    ap.add_argument('--check', type=Path, metavar='MODEL_BIN')
    a = ap.parse_args()
    if a.check:
        sys.exit(0 if check(a.check) else 1)
    if not a.checkpoint or not a.out:
        ap.error('give CHECKPOINT OUT, or --check MODEL_BIN')
    ck = torch.load(a.checkpoint)
    model = Llama(Config(**ck['config']))
    model.load_state_dict(ck['model'])
    a.out.parent.mkdir(parents=True, exist_ok=True)
    write_llama2c(model, a.out)
    print(f'wrote {a.out} ({a.out.stat().st_size} bytes)')
    if a.tokenizer:
        import sentencepiece as spm
        from tokenizer_bin import write_tokenizer_bin
        write_tokenizer_bin(spm.SentencePieceProcessor(model_file=str(a.tokenizer)), a.out.parent / 'tokenizer.bin')
        print(f'wrote {a.out.parent / "tokenizer.bin"}')


if __name__ == '__main__':
    main()
