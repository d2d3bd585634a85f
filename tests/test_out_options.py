"""An option of what ``--out`` writes is refused where it would be silently ignored:
without --out (compare, extend), beside the other size (--width with --dpi), or where no
PNG is written (--width or --dpi with SVG or PDF only), in the words export refuses
them in; and figure.save alike, naming the Python argument. A group's two flags given
together are refused in posviz's words, not argparse's."""
from __future__ import annotations

import pytest

import posviz
from posviz.cli import main
from posviz.errors import PosvizInputError

BOTH = "give --width or --dpi, not both: --dpi sizes a PNG instead of its width"


def refused(capsys, *argv) -> str:
    """The one line ``posviz ARGV`` is refused with (exit 2, nothing on stdout)."""
    status = main(list(argv))
    out, err = capsys.readouterr()
    assert (status, out, err.count("\n")) == (2, "", 1), (status, out, err)
    return err.removeprefix("posviz: error: ").rstrip("\n")


@pytest.mark.parametrize("options, said", [
    (["--width", "800"], "--width only applies with --out (nothing is written without it)"),
    (["--no-csv"], "--no-csv only applies with --out (nothing is written without it)"),
    (["--format", "pdf"], "--format only applies with --out (nothing is written without "
                          "it)"),
    (["--format", "png", "--dpi", "300"], "--format, --dpi only apply with --out (nothing "
                                          "is written without it)"),
    (["--out", "OUT", "--format", "png", "--dpi", "300", "--width", "700"], BOTH),
    (["--out", "OUT", "--format", "svg", "--width", "700"],
     "--width applies to PNG files only (got --format svg)")])
def test_compare_refuses_what_it_would_not_read(capsys, tmp_path, options, said):
    options = [str(tmp_path) if word == "OUT" else word for word in options]
    assert refused(capsys, "compare", "--pe", "none,rope", "--layers", "1",
                   *options) == said
    assert list(tmp_path.iterdir()) == []


def test_extend_and_export_refuse_them_too(capsys, tmp_path):
    assert refused(capsys, "extend", "--width", "800") == (
        "--width only applies with --out (nothing is written without it)")
    assert refused(capsys, "extend", "--format", "svg") == (
        "--format only applies with --out (nothing is written without it)")
    assert refused(capsys, "export", "--text", "a b c", "--order", "2,1,0", "--out",
                   str(tmp_path), "--format", "svg", "--width", "800") == (
        "--width applies to PNG files only (got --format svg)")


def test_a_figure_save_refuses_a_width_its_file_would_not_read(tmp_path):
    figure = posviz.load(layers=1).compare("a b c").figure("symmetry")
    with pytest.raises(PosvizInputError) as error:
        figure.save(tmp_path / "symmetry.svg", width=800)
    assert str(error.value) == "width applies to PNG files only (got symmetry.svg)"


def test_two_flags_of_one_group_are_refused_in_posviz_words(capsys):
    assert refused(capsys, "sweep", "--json", "--csv", "x.csv") == (
        "give --json or --csv, not both")


def test_one_check_drops_the_flags_not_given_and_takes_them_with_out():
    """compare and extend hand refuse_without_out every flag's value; it alone decides
    which were given."""
    from posviz.document.files import refuse_without_out
    refuse_without_out("out", {"--width": 800})
    refuse_without_out(None, {"--width": None, "--no-csv": None})
    with pytest.raises(PosvizInputError) as told:
        refuse_without_out(None, {"--width": 800, "--dpi": None, "--format": "svg"})
    assert str(told.value).startswith("--width, --format only apply with --out")
