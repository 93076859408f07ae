#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# docs.sh: build the documentation site (Sphinx + MyST, docs/) into docs/_build/html. The API pages
# are autodoc over the installed package and docs/supported.py regenerates the table of supported
# functions, so scripts/setup.sh runs first (it installs `loom` into .venv/); the `docs` group of
# pyproject.toml is installed into the same interpreter. Every warning is an error, from the pages and
# from the docstrings alike (autodoc reads them as reStructuredText: code such as f(*args) or |x| goes
# in ``double backquotes``); LOOM_DOCS_STRICT=0 only counts and shows a docstring's warnings (while
# writing one). Environment: PYTHON (as in setup.sh), LOOM_DOCS_STRICT (default 1).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh >/dev/null
py=${PYTHON:-$PWD/.venv/bin/python}
log=build/docs.log
mkdir -p build
mapfile -t missing < <("$py" scripts/pydeps.py docs)
if ((${#missing[@]})); then
  "$py" -m pip install -q "${missing[@]}" >"$log" 2>&1 || { cat "$log" >&2; exit 1; }
fi
start=$SECONDS
# from a folder outside the repository: `import loom` must find the installed package
if ! (cd build && "$py" -m sphinx -b html -q ../docs ../docs/_build/html) >"$log" 2>&1; then
  cat "$log" >&2
  echo "docs: sphinx-build failed (log: $log)" >&2
  exit 1
fi
page_warnings=$(grep -E "WARNING|ERROR" "$log" | grep -vc "docstring of" || true)
doc_warnings=$(grep -E "WARNING|ERROR" "$log" | grep -c "docstring of" || true)
if [ "$page_warnings" -gt 0 ] || { [ "${LOOM_DOCS_STRICT:-1}" != 0 ] && [ "$doc_warnings" -gt 0 ]; }; then
  grep -E "WARNING|ERROR" "$log" >&2
  echo "docs: $page_warnings warnings from the pages, $doc_warnings from docstrings (log: $log)" >&2
  exit 1
fi
if [ "$doc_warnings" -gt 0 ]; then
  grep "docstring of" "$log" | sed 's/^/  /' | sort -u | head -n 20
  echo "docs: $doc_warnings docstring warnings (not fatal with LOOM_DOCS_STRICT=0)"
fi
echo "docs: docs/_build/html/index.html ($((SECONDS - start)) s)"
