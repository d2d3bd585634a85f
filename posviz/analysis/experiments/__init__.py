"""Experiments over many orders and many texts: sweeps, swap sensitivity, position probes
and checks of published claims. Pure computation over the Engine and its backends; every
forward of a sweep goes through ``runs.run_orders``.
"""
