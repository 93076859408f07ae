"""_loomc.py: the `loomc` command of the Python package (pyproject's [project.scripts]): runs the loomc
executable the wheel carries in loom/bin/ (tools/loomc.c, linked against the package's own libloom),
so `pip install` puts the ahead-of-time bundler on PATH with no compiler or CMake. A development
build copies its loomc there too (CMakeLists.txt). `python -m loom.aot` is the Python-module form.
"""
import os
import sys


def executable():
    """The path of the package's loomc executable; FileNotFoundError (saying how to get one) when this
    installation has none."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "loomc")
    if not os.access(path, os.X_OK):
        raise FileNotFoundError(
            f"loomc: this installation of loom has no loomc executable ({path}): install the loom-jit wheel, "
            "or build the repository (scripts/setup.sh builds build/loomc and copies it there)")
    return path


def main(argv=None):
    """Runs loomc with argv (default: this process's arguments) in place of this process."""
    args = sys.argv[1:] if argv is None else list(argv)
    try:
        path = executable()
    except FileNotFoundError as e:
        print(e, file=sys.stderr)
        return 127
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(path, [path, *args])
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
