"""The built-in model's trained checkpoints: what one is (checkpoint.py), its tokenizer
(bpe.py), the corpus it learns from (corpus.py), how it is trained (train.py, ``posviz
train``), and whether a model uses the order of its context (order_use.py)."""
