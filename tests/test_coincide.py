"""Which curves of a figure are one line on screen: every pair within the tolerance,
though within a tolerance closeness is not transitive."""
import numpy as np

from posviz.gui.plots.coincide import coinciding, coinciding_words


def test_every_pair_within_the_tolerance_is_named_though_closeness_is_not_transitive():
    """The README's trained comparison at layer 3: sinusoidal 0.2521 and RoPE 0.2579 are
    2.3% apart, RoPE and none (0.2666) 3.4%, none and sinusoidal 5.7%; within 3.9% only
    "none and RoPE" was named, as if closeness were transitive."""
    curves = {"none": np.array([0.0, 0.08696, 0.1805, 0.2666, 0.2679]),
              "sinusoidal": np.array([0.07815, 0.1322, 0.1545, 0.2521, 0.2696]),
              "RoPE": np.array([0.0, 0.08554, 0.1800, 0.2579, 0.3170])}
    groups = coinciding(curves, 0.039)
    assert groups == [(("none", "RoPE"), [0, 1, 2, 3]), (("sinusoidal", "RoPE"), [3]),
                      (("none", "sinusoidal"), [4])]
    assert coinciding_words(groups) == ("none and RoPE coincide at layers in–3; sinusoidal "
                                        "and RoPE coincide at layer 3; none and sinusoidal "
                                        "coincide at layer 4")


def test_a_pair_inside_a_larger_group_is_not_named_again():
    """a, b, d all within 3.9% of each other and b, c, d too (a and c 4% apart): two
    groups at layer 0, no pair of them on its own; at layer 1 c is far: one group."""
    close = {"a": np.array([1.0, 1.0]), "b": np.array([1.02, 1.02]),
             "c": np.array([1.04, 1.5]), "d": np.array([1.03, 1.03])}
    assert coinciding(close, 0.039) == [(("a", "b", "d"), [0, 1]), (("b", "c", "d"), [0])]


def test_closeness_holds_either_way_round_and_nan_is_close_to_nothing():
    """1.0 and 1.0399 differ by 3.99% of the one, 3.84% of the other: not within 3.9%
    (more than a pixel apart on a log axis); a NaN (no value at a layer) joins no group."""
    assert coinciding({"a": np.array([1.0]), "b": np.array([1.0399])}, 0.039) == []
    assert coinciding({"a": np.array([1.0]), "b": np.array([1.0389])}, 0.039) == [
        (("a", "b"), [0])]
    assert coinciding({"a": np.array([np.nan, 2.0]), "b": np.array([np.nan, 2.0])}) == [
        (("a", "b"), [1])]
