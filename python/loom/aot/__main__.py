"""python -m loom.aot MODULE -o BUNDLE [options]: bundles the kernels of a module's LOOM_AOT table (see
loom.aot's documentation; the same builder as loomc, which reads kernel IR text instead)."""
import argparse
import importlib
import importlib.util
import os
import sys

from . import compile


def _load_module(spec):
    if spec.endswith(".py") or os.sep in spec:
        name = os.path.splitext(os.path.basename(spec))[0]
        ms = importlib.util.spec_from_file_location(name, spec)
        if ms is None:
            raise SystemExit(f"loom.aot: cannot load {spec}")
        mod = importlib.util.module_from_spec(ms)
        sys.modules[name] = mod
        ms.loader.exec_module(mod)
        return mod
    return importlib.import_module(spec)


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m loom.aot",
                                description="Bundle the kernels of a Python module's LOOM_AOT functions and signatures.")
    p.add_argument("module", help="a .py file or a module name defining LOOM_AOT")
    p.add_argument("-o", "--output", required=True, help="the bundle to write")
    p.add_argument("-t", "--target", default="host-all", help="targets, comma-separated (see loomc --help)")
    p.add_argument("-j", "--jobs", type=int, default=0, help="parallel compiles (default: the CPUs)")
    p.add_argument("--emit-c", help="also write PATH.c and PATH.h for libloomrt")
    p.add_argument("--index", default="both", choices=["32", "64", "both"])
    p.add_argument("--no-sleef", action="store_true")
    p.add_argument("--ptxas")
    p.add_argument("--progress", dest="progress", action="store_true", default=None)
    p.add_argument("--no-progress", dest="progress", action="store_false")
    p.add_argument("-q", "--quiet", action="store_true", help="no summary table")
    a = p.parse_args(argv)
    sys.path.insert(0, os.getcwd())
    mod = _load_module(a.module)
    table = getattr(mod, "LOOM_AOT", None)
    if table is None:
        print(f"loom.aot: {a.module} defines no LOOM_AOT", file=sys.stderr)
        return 2
    functions, sigs, names = [], {}, {}
    for item in table.items() if isinstance(table, dict) else table:
        fn, s = item[0], item[1]
        functions.append(fn)
        sigs[fn] = s
        if len(item) > 2:
            names[fn] = item[2]
    try:
        compile(functions, sigs, targets=a.target, path=a.output, jobs=a.jobs, progress=a.progress,
                emit_c=a.emit_c, names=names, no_sleef=a.no_sleef, index_widths=a.index,
                summary=not a.quiet, ptxas=a.ptxas)
    except (ValueError, TypeError, NotImplementedError, RuntimeError, MemoryError) as e:
        print(f"loom.aot: {e}", file=sys.stderr)
        return 1
    if a.emit_c and not a.quiet:
        print(f"loom.aot: wrote {a.emit_c}.c and {a.emit_c}.h", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
