"""What other tools write, read by posviz: a GGUF file's header (gguf_header.py) and byte-
level BPE pieces as the text they stand for (pieces.py)."""
