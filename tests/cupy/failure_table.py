"""failure_table.py: the table of CuPy-suite tests that still fail (module, test, reason), built from a
run's tests file (`bench/results/<date>-cupy-suite-<tag>-tests.jsonl.gz`, written by run_suite.py).

One row per test function: the parametrizations of a function (pytest's `[...]` ids and cupy.testing's
`TestX_param_3_{...}` classes) collapse into one row with the number of failing cases beside the number
the function has in the run. Reasons are grouped: the row names each distinct (category, detail) with its
count, most frequent first. Used by run_suite.py (--failure-table, --update-readme), which puts the table
in tests/cupy/README.md between the markers below.
"""
import collections
import gzip
import json
import re

FAILING = ("failed", "error")
BEGIN = "<!-- failure-table:begin (generated: tests/cupy/run_suite.py --update-readme) -->"
END = "<!-- failure-table:end -->"
_PARAM_CLASS = re.compile(r"_param_\d+_\{.*?\}(?=::|$)")
_PARAM_ID = re.compile(r"\[.*\]$")


def read_tests(path):
    """The records of a tests file (gzipped or plain JSON lines)."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return [json.loads(line) for line in f if line.strip()]


def test_function(test_id):
    """(module, Class::function) of a test id with its parametrization removed:
    'core_tests/test_flags.py::TestFlags_param_0_{order='C'}::test_c[x]' -> ('core_tests/test_flags.py',
    'TestFlags::test_c')."""
    module, _, rest = test_id.partition("::")
    parts = [_PARAM_ID.sub("", _PARAM_CLASS.sub("", p)) for p in rest.split("::")]
    return module, "::".join(parts)


def reason_of(t):
    cat, detail = t.get("category") or "other", (t.get("detail") or "").strip()
    return f"{cat}: {detail}" if detail else cat


def rows(tests):
    """[(module, function, failing, cases, [(reason, n), ...])] sorted by module and function."""
    cases = collections.Counter(test_function(t["id"]) for t in tests)
    reasons = collections.defaultdict(collections.Counter)
    for t in tests:
        if t["outcome"] in FAILING:
            reasons[test_function(t["id"])][reason_of(t)] += 1
    return [(m, f, sum(c.values()), cases[(m, f)], c.most_common()) for (m, f), c in sorted(reasons.items())]


def _cell(s, cap):
    s = " ".join(str(s).split()).replace("|", "/")
    return s if len(s) <= cap else s[:cap - 3] + "..."


def markdown(tests, reason_cap=160):
    """The table as markdown lines, with a one-line count above it."""
    rs = rows(tests)
    nfail = sum(r[2] for r in rs)
    out = [f"{nfail} failing tests in {len(rs)} test functions "
           f"({len({r[0] for r in rs})} modules). 'failing' counts the parametrizations of the function that "
           f"fail, of 'cases' run.", "",
           "| module | test | failing / cases | reason (tests) |", "|---|---|---:|---|"]
    for m, f, n, total, rc in rs:
        why = "; ".join(f"{r} ({k})" if len(rc) > 1 else r for r, k in rc)
        out.append(f"| {m} | `{f}` | {n} / {total} | {_cell(why, reason_cap)} |")
    return out


def update_readme(readme_path, tests, heading_note):
    """Replaces the text between BEGIN and END in readme_path with heading_note and the table; the markers
    must be there (a README section written by hand around them)."""
    with open(readme_path) as f:
        text = f.read()
    if BEGIN not in text or END not in text:
        raise SystemExit(f"{readme_path}: markers not found; add the lines\n{BEGIN}\n{END}\nwhere the table goes")
    head, _, rest = text.partition(BEGIN)
    _, _, tail = rest.partition(END)
    body = "\n".join([BEGIN, heading_note, ""] + markdown(tests) + [END])
    with open(readme_path, "w") as f:
        f.write(head + body + tail)
