"""The .posviz session file: round trip, atomic writes, and every bad file told in one line."""
import json
import os

import numpy as np
import pytest

from posviz.analysis.engine import Engine
from posviz.document import session_file
from posviz.document.session import Session
from posviz.document.spec import ModelSpec, Selection
from posviz.errors import PosvizInputError
from posviz.models.builtin.backend import BuiltinBackend
from posviz.models.config import ModelConfig, Positions

CONFIG = ModelConfig(layers=2, heads=2, d_model=16, pe="rope", mask="causal", seed=3,
                     dtype="float64")


def _session() -> Session:
    s = Session(BuiltinBackend(CONFIG), "one two three four five", Positions("token", 2))
    s.set_order([4, 0, 3, 1, 2])
    s.select(Selection(layer=2, head=1, mosaic="reordered", difference_range=0.1, tab=1))
    return s


def _numbers(s: Session):
    ev = Engine(s.backend).evaluate(s.seq, s.order, s.positions)
    return ev.comparison


def test_round_trip_equals_the_original_session(tmp_path):
    s = _session()
    path = session_file.write(tmp_path / "a.posviz", s.to_document("A title", "a note"))
    doc = session_file.read(path)
    assert (doc.title, doc.note) == ("A title", "a note")
    assert doc.spec == s.spec and doc.positions == s.positions
    assert doc.selection == s.selection and doc.tokens == s.tokens
    again = Session.from_document(doc, BuiltinBackend(doc.spec.config))
    assert again.order.tolist() == s.order.tolist()
    assert again.text == s.text and again.selection == s.selection
    a, b = _numbers(s), _numbers(again)
    for name in ("hidden_equivariance", "last_token_change", "pooled_change"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    # written again, byte for byte the same: diffs show only real changes
    assert session_file.dumps(again.to_document("A title", "a note")) == path.read_text()


def test_the_file_is_readable_json_with_lists_on_one_line(tmp_path):
    path = session_file.write(tmp_path / "a.posviz", _session().to_document())
    text = path.read_text()
    assert '"order": [4, 0, 3, 1, 2]' in text
    data = json.loads(text)
    assert data["format"] == "posviz-session" and data["version"] == 1
    assert data["model"] == {"kind": "builtin", "config": CONFIG.to_dict()}
    assert data["positions"] == {"mode": "token", "offset": 2}


def test_a_pretrained_model_records_a_hash_of_its_config(tmp_path):
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text('{"model_type": "bert"}')
    spec = ModelSpec.pretrained(str(folder), "tiny")
    doc = session_file.SessionDocument("a b", (1, 0), spec,
                                       config_sha256=session_file.config_hash(str(folder)))
    assert len(doc.config_sha256) == 64
    read = session_file.loads(session_file.dumps(doc))
    assert read.spec == spec and read.config_sha256 == doc.config_sha256
    assert session_file.model_mismatch(read) is None
    (folder / "config.json").write_text('{"model_type": "bert", "num_hidden_layers": 3}')
    assert "differs" in session_file.model_mismatch(read)


def test_a_failed_save_leaves_the_old_file_intact(tmp_path, monkeypatch):
    path = session_file.write(tmp_path / "a.posviz", _session().to_document())
    old = path.read_bytes()
    s = _session()
    s.reverse()

    def crash(*args):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(PosvizInputError, match="No space left"):
        session_file.write(path, s.to_document())
    assert path.read_bytes() == old
    assert os.listdir(tmp_path) == ["a.posviz"]          # no temporary left behind


def test_a_write_that_breaks_half_way_leaves_the_old_file(tmp_path, monkeypatch):
    path = session_file.write(tmp_path / "a.posviz", _session().to_document())
    old = path.read_bytes()

    def broken_disk(fd):               # the temporary holds part of the text by now
        raise OSError(5, "Input/output error")
    monkeypatch.setattr(os, "fsync", broken_disk)
    with pytest.raises(PosvizInputError):
        session_file.write(path, _session().to_document())
    monkeypatch.undo()
    assert path.read_bytes() == old and os.listdir(tmp_path) == ["a.posviz"]


def _good() -> dict:
    return _session().to_document().to_dict()


def _bad(change):
    data = _good()
    change(data)
    return json.dumps(data)


BAD_FILES = {
    "newer": (_bad(lambda d: d.update(version=99)), "newer posviz"),
    "truncated": (json.dumps(_good())[:80], "not valid JSON"),
    "corrupt": ("\x00\x01garbage", "not valid JSON"),
    "not a permutation": (_bad(lambda d: d.update(order=[0, 0, 1, 2, 3])),
                          "not a permutation"),
    "order too short": (_bad(lambda d: d.update(order=[0, 1])), "not a permutation"),
    "unknown key": (_bad(lambda d: d.update(colour="red")), "unknown key 'colour'"),
    "unknown option": (_bad(lambda d: d["model"]["config"].update(dropout=0.1)),
                       "unknown key 'dropout'"),
    "bad option value": (_bad(lambda d: d["model"]["config"].update(pe="fourier")),
                         "pe must be one of"),
    "bad view": (_bad(lambda d: d["view"].update(mosaic="sideways")), "view.mosaic"),
    "other format": (_bad(lambda d: d.update(format="notebook")), "not a posviz session"),
    "no text": (_bad(lambda d: d.pop("text")), "no 'text'"),
    "bad positions": (_bad(lambda d: d["positions"].update(mode="diagonal")),
                      "positions must be one of slot, token"),
}


@pytest.mark.parametrize("name", list(BAD_FILES))
def test_every_bad_file_gives_one_clear_line(tmp_path, name):
    text, expected = BAD_FILES[name]
    path = tmp_path / "bad.posviz"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(PosvizInputError) as caught:
        session_file.read(path)
    message = str(caught.value)
    assert expected in message and "\n" not in message and message.startswith("bad.posviz")


def test_a_missing_file_is_told():
    with pytest.raises(PosvizInputError, match="no such file"):
        session_file.read("/nonexistent/x.posviz")


def test_restore_checks_everything_before_changing_anything():
    s = _session()
    before = (s.text, s.order.tolist(), s.positions, s.selection)
    events = []
    s.subscribe(events.append)
    with pytest.raises(PosvizInputError):
        s.restore("a b c", [0, 1, 2, 3], Positions(), Selection(layer=2))
    with pytest.raises(PosvizInputError, match="other tokens") as refused:
        s.restore("a b c", [0, 1, 2], Positions(), tokens=("a", "b", "x"))
    assert str(refused.value).endswith("token 2 is 'c' now, 'x' saved")   # not "3 instead of 3"
    with pytest.raises(PosvizInputError, match="3 tokens now, 4 saved"):
        s.restore("a b c", [0, 1, 2], Positions(), tokens=("a", "b", "c", "d"))
    assert (s.text, s.order.tolist(), s.positions, s.selection) == before and not events
    s.restore("a b c", [2, 1, 0], Positions(), Selection(layer=1))
    assert s.current_tokens == ["c", "b", "a"] and s.selection.layer == 1
    assert [type(e).__name__ for e in events] == ["TextChanged", "PositionsChanged",
                                                  "OrderChanged", "SelectionChanged"]


@pytest.mark.parametrize("umask", [0o022, 0o002, 0o077])
def test_a_saved_file_has_the_mode_the_users_umask_gives(tmp_path, umask):
    """Readable from a shared folder under the usual umask (it was always 0600); a file
    saved over keeps its own mode."""
    old = os.umask(umask)
    try:
        path = session_file.write(tmp_path / "a.posviz", _session().to_document())
    finally:
        os.umask(old)
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask
    path.chmod(0o640)
    session_file.write(path, _session().to_document())
    assert path.stat().st_mode & 0o777 == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["a.posviz"]     # no temporary left


@pytest.mark.parametrize("cut, said", [
    (lambda whole: whole[:whole.index('"text"') + 12], r"ends early, in a string begun at "
                                                      r"line 1, column \d+ \(the file may be truncated\)$"),
    (lambda whole: whole[:whole.index('"text"') + 7], r"ends early, at line 1, column \d+ "
                                                     r"\(the file may be truncated\)$"),
    (lambda whole: whole + " x", r"JSON at line 1, column \d+: extra data \(the file may be "
                                 r"corrupt\)$")])
def test_broken_json_is_told_in_whole_words(cut, said):
    """A truncated file's message ended in json's clipped "(… Unterminated string
    starting at)"."""
    with pytest.raises(PosvizInputError, match=said) as refused:
        session_file.loads(cut(json.dumps(_good())))
    assert not str(refused.value).rstrip(")").endswith(" at")
