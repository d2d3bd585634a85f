"""scripts/install says each step as it starts, each package pip fetches (once), that
installing them takes minutes, and how long each step took, without a terminal (CI runs
it so), and fails when pip fails. It ran 4 min 22 s without a line of output; then it
named 52 of the 95 packages it installed. Run here against a stand-in Python whose pip
answers as pip does, so nothing is installed."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "install"
FAKE_PYTHON = """#!/bin/bash
if [ "$2" = pip ]; then
  echo "Looking in links: /wheels"
  echo "Collecting torch==2.13.0"
  echo "Processing /opt/pypi/files/numpy-2.4.6-cp311-cp311-manylinux_2_28_x86_64.whl (from posviz==0.1.0)"
  echo "Collecting Numpy>=1.24 (from pyqtgraph)"
  echo "Processing /work/posviz"
  echo "Requirement already satisfied: packaging"
  echo "WARNING: Location 'file:///wheels' is ignored" >&2
  echo "Installing collected packages: numpy, torch, posviz"
  echo "Successfully installed numpy-2.4.6 torch-2.13.0 posviz-0.1.0"
  exit ${FAKE_STATUS:-0}
fi
exit 0
"""


# an apt-get whose package lock another apt-get holds: apt waits for it when told to
# (-o DPkg::Lock::Timeout=N, saying so on lines ended by carriage returns), else fails
LOCKED_APT = r"""#!/bin/bash
for arg in "$@"; do
  if [[ "$arg" == DPkg::Lock::Timeout=* ]]; then
    echo "$@" >> "$HOME/apt-calls"
    held="Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 7 (apt-get)..."
    printf 'Reading package lists...\nWaiting for cache lock: %s\rWaiting for cache lock: %s\r' \
      "$held" "$held"
    exit 0
  fi
done
echo "E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 7 (apt-get)" >&2
exit 100
"""
ROOT = {"id": "#!/bin/bash\necho 0\n", "dpkg": "#!/bin/bash\nexit 1\n",
        "apt-get": LOCKED_APT}


def run(tmp_path, status: int = 0, system: dict | None = None) -> subprocess.CompletedProcess:
    root = tmp_path / "posviz"
    (root / "scripts").mkdir(parents=True)
    shutil.copy(SCRIPT, root / "scripts" / "install")
    python = root / ".venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(FAKE_PYTHON)
    python.chmod(0o755)
    tools = tmp_path / "bin"                 # no apt-get: nothing asked of the system
    tools.mkdir()
    for name, script in (system or {}).items():     # stand-ins for the system's tools
        (tools / name).write_text(script)
        (tools / name).chmod(0o755)
    for name in ("bash", "grep", "sed", "id", "dirname", "cat", "awk"):
        if (tools / name).exists():
            continue
        found = shutil.which(name)
        if found is None:
            pytest.skip(f"needs {name}")
        (tools / name).symlink_to(found)
    env = {"PATH": str(tools), "FAKE_STATUS": str(status), "HOME": str(tmp_path)}
    return subprocess.run(["bash", str(root / "scripts" / "install")], env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=60, cwd=tmp_path)


def test_the_install_says_each_step_and_what_pip_fetches(tmp_path):
    done = run(tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    steps = [line for line in lines if line.startswith("[")]
    assert [line.split("]")[0] + "]" for line in steps] == [f"[{k}/5]" for k in range(1, 6)]
    assert "torch (CPU)" in steps[2] and "minutes" in steps[2]
    assert lines.count("      Collecting torch==2.13.0") == 2          # each pip step
    # a package pip takes from a file is named too, once with the name it resolved
    assert lines.count("      Collecting numpy 2.4.6") == 2
    assert not any("Numpy" in line or "/work/posviz" in line for line in lines)
    installing = [line for line in lines if "Installing" in line]
    # only the packages step takes minutes; the bundled models' step takes seconds
    assert installing == ["      Installing the 3 packages collected (minutes on a fresh "
                          ".venv: pip says nothing more until they are all in)",
                          "      Installing the 3 packages collected"]
    assert "minutes" not in steps[3]
    assert sum(line.startswith("      done in ") for line in lines) == 5
    assert not any("Requirement already satisfied" in line for line in lines)
    assert "is ignored" not in done.stderr
    assert lines[-1] == "posviz is installed in .venv: run .venv/bin/posviz"


def test_the_install_fails_when_pip_fails(tmp_path):
    done = run(tmp_path, status=1)
    assert done.returncode != 0 and "posviz is installed" not in done.stdout
    assert os.path.exists(tmp_path / "posviz" / ".venv")


def test_the_install_waits_for_another_apt_get_and_says_so(tmp_path):
    """Run as root while another apt-get held the package lock, it said "could not
    install them; the window may not open" at once and went on: apt is told to wait for
    the lock, and the wait is said once."""
    done = run(tmp_path, system=ROOT)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert not any("could not install" in line for line in lines), lines
    calls = (tmp_path / "apt-calls").read_text().splitlines()
    assert len(calls) == 2 and "update" in calls[0] and "install" in calls[1]
    assert all("DPkg::Lock::Timeout=600" in call for call in calls)
    waits = [line for line in lines if "waiting" in line]
    assert waits == ["      waiting, up to 600 s, for another apt-get or dpkg to finish (the "
                     "lock is held by process 7 (apt-get))"] * 2          # update, install
    assert lines[lines.index(waits[0]) - 1] == "      installing them with apt-get…"


def test_the_install_hides_no_program_behind_a_function_of_its_name():
    """Its helpers were shell functions named ``apt`` and ``pip``: a reader (or a line
    added later) calling apt or pip got the function, not the program."""
    import re
    functions = set(re.findall(r"^\s*([\w-]+)\s*\(\)\s*\{", SCRIPT.read_text(), re.M))
    assert {"say", "took"} <= functions, functions          # the pattern finds them
    programs = {"apt", "apt-get", "dpkg", "pip", "pip3", "python", "python3", "awk",
                "grep", "sed"}
    assert not functions & programs, functions & programs
