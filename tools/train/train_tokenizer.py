"""Trains the sentencepiece BPE tokenizer on the training split and writes it
both as tokenizer.model and as llama2.c's tokenizer.bin.

Settings of models/austen-kjv-2m/tokenizer.model: BPE, vocab 4096, byte
fallback, split digits, identity normalisation, character coverage 1.0,
unk 0 / BOS 1 / EOS 2 / no pad (so ids 3..258 are the byte tokens <0xNN>).
Needs Debian's python3-sentencepiece.

  python3 tools/train/train_tokenizer.py --data work/corpus --out work/model [--vocab-size 4096]
"""
import argparse
import os
import sys
import tempfile
from pathlib import Path

import sentencepiece as spm

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tokenizer_bin import write_tokenizer_bin  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--data', required=True, type=Path, help='directory with train.txt')
    ap.add_argument('--out', required=True, type=Path)
    ap.add_argument('--vocab-size', type=int, default=4096)
    ap.add_argument('--threads', type=int, default=os.cpu_count() or 2)
    a = ap.parse_args()

    docs = [d for d in (a.data / 'train.txt').read_text(encoding='utf-8').split('\0') if d.strip()]
    a.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        lines = Path(tmp) / 'spm_train.txt'
        # One paragraph (Austen) or chapter (KJV) per line: sentencepiece reads lines.
        lines.write_text('\n'.join(p for d in docs for p in d.split('\n') if p.strip()) + '\n', encoding='utf-8')
        spm.SentencePieceTrainer.train(
            input=str(lines), model_prefix=str(Path(tmp) / 'tok'), model_type='bpe',
            vocab_size=a.vocab_size, character_coverage=1.0, byte_fallback=True, split_digits=True,
            allow_whitespace_only_pieces=True, normalization_rule_name='identity',
            max_sentence_length=20000, input_sentence_size=0, num_threads=a.threads,
            unk_id=0, bos_id=1, eos_id=2, pad_id=-1, minloglevel=2)
        model_bytes = (Path(tmp) / 'tok.model').read_bytes()
    (a.out / 'tokenizer.model').write_bytes(model_bytes)
    sp = spm.SentencePieceProcessor(model_proto=model_bytes)
    write_tokenizer_bin(sp, a.out / 'tokenizer.bin')
    print(f'{a.out}/tokenizer.model and tokenizer.bin: vocab {sp.get_piece_size()}')


if __name__ == '__main__':
    main()
