# SPDX-License-Identifier: Apache-2.0
# Sphinx configuration of Loom's documentation (scripts/docs.sh builds it into docs/_build/html).
# Pages are Markdown (MyST); the API reference is autodoc over the installed `loom` package, so the
# docstrings are the source; _generated/ is written by supported.py and benchmarks.py at every build.
import os
import re
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
import benchmarks  # noqa: E402
import supported  # noqa: E402

with open(os.path.join(here, "..", "include", "loom", "loom.h")) as f:
    release = re.search(r'#define LOOM_VERSION_STRING "([^"]+)"', f.read()).group(1)
version = release
project = "Loom"
copyright = "the Loom authors (Apache-2.0)"

extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.napoleon"]
myst_enable_extensions = ["colon_fence"]
myst_heading_anchors = 3
source_suffix = {".md": "markdown"}
exclude_patterns = ["_build", "_generated", "README.md"]
autodoc_default_options = {"members": True}
autodoc_member_order = "bysource"
napoleon_numpy_docstring = True
html_theme = "alabaster"
html_theme_options = {"description": "JIT kernel fusion for array expressions", "fixed_sidebar": True}
html_static_path = []

supported.generate(os.path.join(here, "_generated"))
benchmarks.generate(os.path.join(here, "_generated"))
