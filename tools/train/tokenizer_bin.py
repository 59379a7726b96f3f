"""Writes a sentencepiece model as llama2.c's tokenizer.bin: uint32 max token
length, then per id a float32 score, a uint32 byte length and the UTF-8 bytes.
BOS/EOS are stored as "\\n<s>\\n" / "\\n</s>\\n" and '\u2581' as a space, as
llama2.c's tokenizer.py does; byte-fallback pieces stay "<0xNN>"."""
import struct


def write_tokenizer_bin(sp, path):
    pieces = []
    for i in range(sp.get_piece_size()):
        t = sp.id_to_piece(i)
        if i == sp.bos_id():
            t = '\n<s>\n'
        elif i == sp.eos_id():
            t = '\n</s>\n'
        t = t.replace('\u2581', ' ')
        pieces.append((t.encode('utf-8'), sp.get_score(i)))
    max_len = max(len(b) for b, _ in pieces)
    with open(path, 'wb') as f:
        f.write(struct.pack('<I', max_len))
        for b, score in pieces:
            f.write(struct.pack('<fI', score, len(b)))
            f.write(b)


if __name__ == '__main__':
    import argparse
    import sentencepiece as spm
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument('model', help='tokenizer.model (sentencepiece)')
    ap.add_argument('out', help='tokenizer.bin to write')
    a = ap.parse_args()
    write_tokenizer_bin(spm.SentencePieceProcessor(model_file=a.model), a.out)
