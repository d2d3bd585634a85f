"""A script's end after a long run: its runs released and their maps on disk removed
by posviz's exit hook, told, before the interpreter's teardown (SmolLM2's compare of
2,000 words ended 4.8 s after its last line in silence, freeing its runs there)."""
from __future__ import annotations

import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    import atexit, sys

    def after_posviz():                  # registered first: runs after posviz's hooks
        from posviz.models.maps import kept_on_disk
        print("engine kept:", model._engine is not None, "maps on disk:",
              len(kept_on_disk()), file=sys.stderr)
    atexit.register(after_posviz)

    import posviz
    from posviz.models import maps
    from posviz.runtime import held_lines
    maps.IN_MEMORY, maps.REMOVAL_TOLD, held_lines.HOLD_S = 0, 0, 0.0   # told at once
    model = posviz.load(layers=1)
    report = model.compare("the cat sat on the mat")      # kept to the end, as a script's
    print("end", file=sys.stderr)
""")


def test_a_script_s_runs_are_released_and_its_maps_removed_told_before_its_teardown():
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    after = lines[lines.index("end") + 1:]
    assert after[0].startswith("posviz: removing the attention maps kept on disk ("), lines
    assert after[-1] == "engine kept: False maps on disk: 0", lines
