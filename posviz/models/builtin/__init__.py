"""The built-in instrumented transformer (transformer.py) and the Backend that runs it
(backend.py), on random weights or a trained checkpoint's."""
