"""The text the built-in model is trained on, in sections, with a held-out part.

Two sources:

- ``kjv``: the King James Version of the Bible (1611), whose copyright has expired (the
  Debian package's copyright file says so; in the United Kingdom the Crown still
  licenses its printing), as the Debian package bible-kjv prints it:
  ``bible -f "Gen1:1-Rev22:21"``, one verse a line after its reference ("Ge1:1 In the
  beginning ..."). A section is a chapter, its verses one running text.
- a text file: a section is a paragraph (paragraphs are separated by blank lines).

A section is running text, its line breaks read as spaces: a word at the start of a
verse is tokenized as the same word typed anywhere in a sentence.

The held-out part is never seen by the tokenizer nor the model, and the held-out
perplexity is measured on it. Of the King James text, whole books are held out
(``HELD_OUT_BOOKS``: a narrative, a poem, a gospel and a prophecy whose word 8-grams
rarely occur elsewhere: 0.14 % of theirs occur in the training books, where one chapter
in 20 shared 3.7 %); of a text file, one paragraph in ``HELD_OUT_EVERY``. A training
record says how many of the held-out word 8-grams occur in the training text
(``ngram_overlap``).
"""
from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...errors import PosvizInputError, argument

KJV = "kjv"
KJV_TITLE = "the King James Version of the Bible (1611), from the Debian package bible-kjv"
KJV_RANGE = "Gen1:1-Rev22:21"
VERSE = re.compile(r"^(\d?[A-Za-z]+)(\d+):(\d+) (.*)$")   # book, chapter, verse, text
HELD_OUT_BOOKS = ("Est", "Job", "John", "Rev")   # as ``bible -f`` names them
HELD_OUT_EVERY = 20              # of a text file's paragraphs:
HELD_OUT_AT = 9                  # the 10th of every 20
OVERLAP_WORDS = 8                # the n of the word n-grams ngram_overlap counts
WORDS = re.compile(r"\w+")


@dataclass(frozen=True)
class Corpus:
    """A corpus's sections, split into the part trained on and the part held out."""

    name: str                    # "kjv" or the file's path
    title: str                   # what the training record calls it
    short: str                   # the same in a few words
    sections: tuple[str, ...]
    held: tuple[bool, ...]       # per section: is it held out?
    rule: str                    # which sections are held out, in words

    @property
    def train(self) -> list[str]:
        return [s for s, held in zip(self.sections, self.held) if not held]

    @property
    def held_out(self) -> list[str]:
        return [s for s, held in zip(self.sections, self.held) if held]

    def describe(self) -> dict:
        return {"corpus": self.name, "title": self.title, "short": self.short,
                "sections": len(self.sections),
                "held_out_sections": len(self.held_out), "held_out_rule": self.rule,
                "held_out_8gram_overlap": ngram_overlap(self.train, self.held_out),
                "characters": sum(len(s) for s in self.sections)}


def ngram_overlap(train: list[str], held_out: list[str], n: int = OVERLAP_WORDS) -> float:
    """The share of the held-out text's word n-grams (each occurrence, words case-folded)
    that also occur in the training text: how much of it a model could have memorised."""
    def grams(sections):
        for section in sections:
            words = WORDS.findall(section.casefold())
            yield from zip(*(words[k:] for k in range(n)))
    seen = set(grams(train))
    held = list(grams(held_out))
    return sum(gram in seen for gram in held) / max(len(held), 1)


def kjv_chapters(listing: str) -> list[tuple[str, str]]:
    """``bible -f`` output -> (book, chapter's verses in one running text) a chapter,
    references left out."""
    chapters: dict[tuple[str, str], list[str]] = {}
    for line in listing.splitlines():
        match = VERSE.match(line.strip())
        if match:
            book, chapter, _, text = match.groups()
            chapters.setdefault((book, chapter), []).append(text.strip())
    return [(book, " ".join(verses)) for (book, _), verses in chapters.items()]


def kjv_sections(listing: str) -> list[str]:
    """``bible -f`` output -> one section a chapter (kjv_chapters without the books)."""
    return [text for _, text in kjv_chapters(listing)]


def paragraphs(text: str) -> list[str]:
    """A text's paragraphs (separated by blank lines), each one running text."""
    return [" ".join(block.split()) for block in re.split(r"\n\s*\n", text)
            if block.strip()]


def read_kjv() -> str:
    """The whole King James text as ``bible`` prints it."""
    program = shutil.which("bible")
    if program is None:
        raise PosvizInputError(f"the King James text needs the Debian package bible-kjv "
                               f"(apt-get install bible-kjv), or give {argument('corpus')} "
                               f"a text file")
    result = subprocess.run([program, "-f", KJV_RANGE], capture_output=True, text=True,
                            timeout=120)
    if result.returncode != 0 or not result.stdout.strip():
        raise PosvizInputError(f"bible -f {KJV_RANGE} failed: "
                               f"{result.stderr.strip() or 'no output'}")
    return result.stdout


def read_corpus(source: str) -> Corpus:
    """The corpus ``source`` names: "kjv", or a UTF-8 text file."""
    if source == KJV:
        chapters = kjv_chapters(read_kjv())
        return Corpus(KJV, KJV_TITLE, "the King James Bible",
                      tuple(text for _, text in chapters),
                      tuple(book in HELD_OUT_BOOKS for book, _ in chapters),
                      f"the books {', '.join(HELD_OUT_BOOKS)} (bible -f's names)")
    path = Path(source)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PosvizInputError(f"{path}: no such corpus file (or "
                               f"{argument('corpus', 'kjv')})") from None
    except UnicodeDecodeError:
        raise PosvizInputError(f"{path} is not a UTF-8 text file") from None
    sections = paragraphs(text)
    if len(sections) <= HELD_OUT_AT:
        raise PosvizInputError(f"{path} has {len(sections)} paragraphs; at least "
                               f"{HELD_OUT_AT + 1} are needed, one of them held out")
    return Corpus(str(path), f"the text file {path.name}", path.name, tuple(sections),
                  tuple(i % HELD_OUT_EVERY == HELD_OUT_AT for i in range(len(sections))),
                  f"paragraph i (from 0) where i % {HELD_OUT_EVERY} == {HELD_OUT_AT}")


def token_stream(tokenizer, sections: list[str]) -> np.ndarray:
    """(N,) int64: each section's token ids, each followed by the end-of-text token."""
    ids: list[int] = []
    for encoded in tokenizer.encode_batch(list(sections)):
        ids.extend(encoded)
        ids.append(tokenizer.end_id)
    return np.asarray(ids, dtype=np.int64)


def token_counts(ids: np.ndarray, vocab: int) -> np.ndarray:
    """(V,) how often each token occurs in ``ids``."""
    return np.bincount(ids, minlength=vocab)


def unigram_perplexity(counts: np.ndarray, targets: np.ndarray) -> float:
    """exp of the mean negative log-probability of ``targets`` under the unigram model
    of ``counts`` (add-one smoothed): the baseline that knows no context at all."""
    counts = np.asarray(counts, dtype=np.float64) + 1.0
    log_p = np.log(counts / counts.sum())                                # (V,)
    return float(np.exp(-log_p[np.asarray(targets)].mean()))
