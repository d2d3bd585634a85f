"""The model panel: which model runs and how it loads (source, weights, precision,
progress), one field per option of the built-in model, and a real model's facts."""
