"""An order carried from one tokenization of a text to another, word by word: the words
are reordered alike, each word's pieces stay together and in order, pinned tokens keep
their slots, and an order that splits a word the other reads as one is refused, saying so."""
import numpy as np
import pytest

from posviz.analysis.experiments.carry import carry_order
from posviz.errors import PosvizInputError
from posviz.models.backend import TokenSequence


def seq(*tokens, pinned=()):
    return TokenSequence(tuple(tokens), tuple(tokens),
                         tuple(k in pinned for k in range(len(tokens))))


WORDS = seq("the", "cat", "sat", "on", "the", "mat")
PIECES = seq("the", "c", "##at", "sat", "on", "the", "m", "##at")


def shown(target, order):
    return [target.tokens[i] for i in order]


def test_a_swap_of_two_words_moves_their_pieces_together():
    order = carry_order(WORDS, [1, 0, 2, 3, 4, 5], PIECES)
    assert shown(PIECES, order) == ["c", "##at", "the", "sat", "on", "the", "m", "##at"]


def test_a_reversal_of_the_words_keeps_each_word_s_pieces_in_their_order():
    order = carry_order(WORDS, np.arange(6)[::-1], PIECES)
    assert shown(PIECES, order) == ["m", "##at", "the", "on", "sat", "c", "##at", "the"]
    assert sorted(order) == list(range(8))              # a permutation of the target


def test_a_pinned_start_token_keeps_its_slot_on_either_side():
    """The trained tokenizer may put a start-of-text token at slot 0 of every text (like
    a BOS); [CLS] and [SEP] of an encoder are pinned too."""
    target = seq("<s>", "the", "c", "##at", "sat", pinned=(0,))
    assert shown(target, carry_order(seq("the", "cat", "sat"), [2, 0, 1], target)) == [
        "<s>", "sat", "the", "c", "##at"]
    source = seq("[CLS]", "the", "cat", "sat", "[SEP]", pinned=(0, 4))
    order = carry_order(source, [0, 3, 2, 1, 4], target)
    assert shown(target, order) == ["<s>", "sat", "c", "##at", "the"]


def test_words_cut_differently_move_as_the_unit_both_agree_on():
    """"don't" is one word here and two there ("don", "'t"): they move as one."""
    target = seq("don", "'t", "go")
    assert shown(target, carry_order(seq("don't", "go"), [1, 0], target)) == [
        "go", "don", "'t"]


def test_an_order_that_splits_a_word_is_refused_saying_which():
    with pytest.raises(PosvizInputError, match="splits “c ##at”, which the built-in model"):
        carry_order(PIECES, [2, 1, 0, 3, 4, 5, 6, 7], WORDS, "the built-in model")
    with pytest.raises(PosvizInputError, match="other letters"):
        carry_order(WORDS, range(6), seq("a", "cat", "sat", "on", "the", "mat"))
