"""loom.cuda.compiler: CompileException, the error of a raw module's CUDA C++ that does not compile (CuPy's
cupy.cuda.compiler.CompileException), with the compiler's log as its message.

It is also a ValueError (loom's error for code that does not compile before this class existed). source,
name, options and backend are the module's, as in CuPy; dump(f) writes the message and the numbered
source to f.
"""


class CompileException(ValueError):
    def __init__(self, msg, source="", name="kernel.cu", options=(), backend="nvrtc"):
        self._msg = str(msg)
        self.source, self.name, self.options, self.backend = source, name, tuple(options), backend
        super().__init__(self._msg)

    def get_message(self):
        return self._msg

    def dump(self, f):
        lines = (self.source if isinstance(self.source, str) else "").splitlines()
        f.write(f"{self.backend} compilation of {self.name} with options {' '.join(self.options)} failed:\n")
        f.write(self._msg + "\n==========\n")
        for i, line in enumerate(lines, 1):
            f.write(f"{i:04d} {line}\n")
        f.write("==========\n")
