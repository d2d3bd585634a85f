"""Where the texts of an experiment come from: one text, a file of texts, or the examples."""
from __future__ import annotations

from pathlib import Path

from ...errors import PosvizInputError, argument

PACKAGE = Path(__file__).resolve().parents[2]            # posviz/
# The example sentences: in the package, or in a top-level resources/ folder beside it.
SENTENCE_FILES = (PACKAGE / "resources" / "sentences.txt",
                  PACKAGE.parent / "resources" / "sentences.txt")
# The seeds random_texts draws from, recorded in the provenance's seeds as "texts": the
# paper checks' random texts (analysis.experiments.papers; fixed, so their numbers are
# the README's), and the probe's generated texts (a batch of 16 from each seed on, this
# one first; the probe draws nothing a user chooses, so it takes no --seed)
PAPER_TEXT_SEEDS = {"haviv2022": 0, "chi2023": 1}
GENERATED_SEED = 0


# A text file or standard input is read whole up to this many bytes: past it no model
# here could run the text (its maps alone: n² values a head), and /dev/urandom, read
# whole, grew to 18 GB before the system killed posviz
MAX_TEXT_BYTES = 50 * 10**6
CHUNK = 1 << 20


def read_utf8(handle, name: str) -> str:
    """A binary ``handle`` read whole, a megabyte at a time, as strict UTF-8: a byte
    that is not UTF-8 raises UnicodeDecodeError at its chunk, and more than
    MAX_TEXT_BYTES is refused (PosvizInputError naming ``name``) before it is read."""
    import codecs
    decoder, parts, size = codecs.getincrementaldecoder("utf-8")(), [], 0
    while chunk := handle.read(CHUNK):
        size += len(chunk)
        if size > MAX_TEXT_BYTES:
            raise PosvizInputError(f"{name} holds more than {MAX_TEXT_BYTES / 1e6:.0f} MB "
                                   f"of text: far longer than any text a model can run "
                                   f"here")
        parts.append(decoder.decode(chunk))
    parts.append(decoder.decode(b"", final=True))
    return "".join(parts)


def parse_texts(content: str) -> list[str]:
    """One text a line; blank lines and lines starting with '#' are left out."""
    return [line.strip() for line in content.splitlines()
            if line.strip() and not line.lstrip().startswith("#")]


def read_texts(path: str | Path, name: str = "texts") -> list[str]:
    """The texts of a file, one a line; PosvizInputError, naming the file as the
    argument ``name`` (errors.argument: ``--texts FILE`` on the command line), if it
    cannot be read or holds none."""
    file = argument(name, str(path))
    try:
        with open(path, "rb") as handle:
            content = read_utf8(handle, file)
    except UnicodeDecodeError:
        raise PosvizInputError(f"{file} is not a UTF-8 text file") from None
    except OSError as error:
        raise PosvizInputError(f"{file}: {error.strerror or error}") from None
    texts = parse_texts(content)
    if not texts:
        raise PosvizInputError(f"{file} holds no texts (one a line; '#' starts a comment)")
    return texts


def example_texts() -> list[str]:
    """The example sentences the window offers (empty if the file is missing)."""
    for path in SENTENCE_FILES:
        if path.exists():
            return parse_texts(path.read_text(encoding="utf-8"))
    return []


def random_texts(count: int, length: int, seed: int = 0, vocabulary: int = 200) -> list[str]:
    """``count`` texts of ``length`` made-up words drawn independently of their place,
    so whatever position a measurement finds comes from the model, not from the words
    (nor from the text's length)."""
    import numpy as np
    rng = np.random.default_rng(seed)
    return [" ".join(f"w{k}" for k in rng.integers(0, vocabulary, length))
            for _ in range(count)]
