"""The Experiments tab: its controls, the job they describe, and the figure that draws a
sweep, a swap map, a probe, a paper check, encodings compared and the trained checkpoints'
labs (also drawn off screen for the API and ``posviz compare --out``)."""
