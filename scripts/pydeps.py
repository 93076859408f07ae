# SPDX-License-Identifier: Apache-2.0
"""pydeps.py: the Python requirements of a task, read from pyproject.toml, that are not yet satisfied.

pyproject.toml is the one place for Python dependencies: [build-system].requires (building the
package), [project].dependencies (running it) and the [dependency-groups] tables (PEP 735): `test`
(scripts/test.sh), `docs` (scripts/docs.sh), `wheel` (scripts/build_wheel.sh). Add a test dependency
to [dependency-groups].test and scripts/setup.sh installs it.

    python scripts/pydeps.py build runtime test   # prints one unsatisfied requirement per line

Run with the interpreter that will use the packages. Needs Python >= 3.11 (tomllib) and pip (for its
vendored `packaging`, so nothing has to be installed first).
"""
import importlib.metadata
import pathlib
import sys
import tomllib

try:
    from packaging.requirements import Requirement
except ImportError:  # a fresh venv: pip's vendored copy
    from pip._vendor.packaging.requirements import Requirement


def requirements(pyproject, group):
    if group == "build":
        return pyproject["build-system"]["requires"]
    if group == "runtime":
        return pyproject["project"].get("dependencies", [])
    groups = pyproject.get("dependency-groups", {})
    if group not in groups:
        sys.exit(f"pydeps: no [dependency-groups].{group} in pyproject.toml (have: {', '.join(groups)})")
    out = []
    for item in groups[group]:
        # PEP 735: {include-group = "name"} pulls in another group
        out += requirements(pyproject, item["include-group"]) if isinstance(item, dict) else [item]
    return out


def satisfied(req):
    if req.marker is not None and not req.marker.evaluate():
        return True
    try:
        version = importlib.metadata.version(req.name)
    except importlib.metadata.PackageNotFoundError:
        return False
    return req.specifier.contains(version, prereleases=True)


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    root = pathlib.Path(__file__).resolve().parent.parent
    pyproject = tomllib.loads((root / "pyproject.toml").read_text())
    seen = set()
    for group in argv[1:]:
        for text in requirements(pyproject, group):
            if text not in seen and not satisfied(Requirement(text)):
                print(text)
            seen.add(text)


if __name__ == "__main__":
    main(sys.argv)
