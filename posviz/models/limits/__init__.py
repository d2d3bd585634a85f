"""What a run may ask before anything large is loaded or allocated: the one check every
entry point passes (guard.py) and the memory a comparison needs (memory.py)."""
