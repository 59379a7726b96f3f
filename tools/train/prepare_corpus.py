"""Builds the austen-kjv-2m corpus from Debian packages and splits it.

Sources (install: apt-get install r-cran-janeaustenr bible-kjv bible-kjv-text):
  - Jane Austen's six novels from r-cran-janeaustenr (read with Rscript),
    cut into documents of about 1.5 KB at paragraph boundaries;
  - the King James Bible from bible-kjv (the `bible` program over
    bible-kjv-text's data), one document per chapter, "Book N" first.
A seeded shuffle holds out 2% of the documents. Writes OUT/train.txt and
OUT/heldout.txt, documents separated by NUL (the layout of
models/austen-kjv-2m/heldout.txt).

  python3 tools/train/prepare_corpus.py --out work/corpus [--max-docs N]
"""
import argparse
import random
import subprocess
from pathlib import Path

KJV_BOOKS = [
    'Genesis', 'Exodus', 'Leviticus', 'Numbers', 'Deuteronomy', 'Joshua', 'Judges', 'Ruth', '1 Samuel',
    '2 Samuel', '1 Kings', '2 Kings', '1 Chronicles', '2 Chronicles', 'Ezra', 'Nehemiah', 'Esther', 'Job',
    'Psalms', 'Proverbs', 'Ecclesiastes', 'Song of Solomon', 'Isaiah', 'Jeremiah', 'Lamentations',
    'Ezekiel', 'Daniel', 'Hosea', 'Joel', 'Amos', 'Obadiah', 'Jonah', 'Micah', 'Nahum', 'Habakkuk',
    'Zephaniah', 'Haggai', 'Zechariah', 'Malachi', 'Matthew', 'Mark', 'Luke', 'John', 'Acts', 'Romans',
    '1 Corinthians', '2 Corinthians', 'Galatians', 'Ephesians', 'Philippians', 'Colossians',
    '1 Thessalonians', '2 Thessalonians', '1 Timothy', '2 Timothy', 'Titus', 'Philemon', 'Hebrews',
    'James', '1 Peter', '2 Peter', '1 John', '2 John', '3 John', 'Jude', 'Revelation',
]


def austen_documents(target_chars):
    """Paragraphs of each novel (janeaustenr's wrapped lines joined), packed
    into documents of at least target_chars, one paragraph per line."""
    r = subprocess.run(
        ['Rscript', '-e', 'library(janeaustenr); b <- austen_books(); '
         'cat(paste0(as.character(b$book), "\\t", b$text), sep = "\\n")'],
        check=True, capture_output=True, text=True, encoding='utf-8')
    books = {}
    for line in r.stdout.split('\n'):
        if '\t' in line:
            book, text = line.split('\t', 1)
            books.setdefault(book, []).append(text)
    if len(books) != 6:
        raise SystemExit(f'expected six Austen novels, found {sorted(books)}')
    docs = []
    for lines in books.values():
        paragraphs, cur = [], []
        for text in lines + ['']:
            if text.strip():
                cur.append(text.strip())
            elif cur:
                paragraphs.append(' '.join(cur))
                cur = []
        doc = []
        for p in paragraphs:
            doc.append(p)
            if sum(len(x) + 1 for x in doc) >= target_chars:
                docs.append('\n'.join(doc))
                doc = []
        if doc:
            docs.append('\n'.join(doc))
    return docs


def kjv_documents():
    """One document per chapter: "Book N" then its verses joined by spaces."""
    r = subprocess.run(['bible', '-f', 'Gen1:1-Rev22:21'], check=True, capture_output=True,
                       text=True, encoding='utf-8', env={'COLUMNS': '100000'})
    chapters, order = {}, []
    for line in r.stdout.split('\n'):
        ref, _, verse = line.partition(' ')
        if ':' not in ref or not verse:
            continue
        head = ref.split(':')[0]                   # e.g. "Ge1", "1Co13"
        i = len(head)
        while head[i - 1].isdigit():
            i -= 1
        abbrev, chapter = head[:i], int(head[i:])
        if abbrev not in order:
            order.append(abbrev)
        chapters.setdefault((abbrev, chapter), []).append(verse.strip())
    if len(order) != len(KJV_BOOKS):
        raise SystemExit(f'expected {len(KJV_BOOKS)} books from `bible`, found {len(order)}')
    names = dict(zip(order, KJV_BOOKS))
    return [f'{names[a]} {c}\n' + ' '.join(v) for (a, c), v in chapters.items()]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--out', required=True, type=Path)
    ap.add_argument('--seed', type=int, default=1234)
    ap.add_argument('--heldout', type=float, default=0.02, help='fraction of documents held out')
    ap.add_argument('--doc-chars', type=int, default=1500, help='target Austen document size')
    ap.add_argument('--max-docs', type=int, default=0, help='keep only this many documents (smoke runs)')
    a = ap.parse_args()

    docs = austen_documents(a.doc_chars) + kjv_documents()
    print(f'{len(docs)} documents, {sum(len(d) for d in docs) / 1e6:.2f} M characters')
    rng = random.Random(a.seed)
    rng.shuffle(docs)
    if a.max_docs:
        docs = docs[:a.max_docs]
    n_held = max(1, round(len(docs) * a.heldout))
    held, train = docs[:n_held], docs[n_held:]
    a.out.mkdir(parents=True, exist_ok=True)
    for name, part in (('train.txt', train), ('heldout.txt', held)):
        (a.out / name).write_text(''.join(d + '\0' for d in part), encoding='utf-8')
        print(f'{a.out / name}: {len(part)} documents, {sum(len(d) for d in part) / 1e6:.2f} M characters')


if __name__ == '__main__':
    main()
