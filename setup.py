"""The one thing pyproject.toml cannot say: the top-level resources/ folder (icons,
sentences, scenario sessions, the trained checkpoints) is installed as the package data
of posviz.resources."""
from setuptools import find_packages, setup

setup(
    packages=find_packages(include=["posviz", "posviz.*"]) + ["posviz.resources"],
    package_dir={"posviz.resources": "resources"},
    package_data={"posviz.resources": ["*.txt", "icons/*.svg", "scenarios/*.posviz",
                                     "desktop/*", "checkpoints/*/*"]},
)
