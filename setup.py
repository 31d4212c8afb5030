"""The compiled build of the rules engine; everything else is in pyproject.toml.

A wheel (`pip install .`, `python -m build`) compiles referee/rules with mypyc into extension
modules beside the sources, which Python then imports in place of them, when the machine can
compile C. The pure sources stay the reference and the fallback: the suite runs on both.

- TICHU_PURE=1: no compilation, a pure-Python wheel (py3-none-any) that needs no C compiler.
- TICHU_COMPILE=1: compilation required; a failure fails the build (`make fast`, the tests).
- neither: compiled when it can be; when it cannot (no C compiler or Python headers, a mypyc
  error), the build warns and installs the pure engine. It never fails an install for that.

An editable install (`pip install -e .`) stays pure unless TICHU_COMPILE=1: extension modules
built beside sources that are then edited would shadow the edits. `make fast` and `make demo`
build them in place with make's own tracking of the sources.
"""

from __future__ import annotations

import os
import sys
import sysconfig
import tempfile
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.sdist import sdist

# events.py stays pure: mypyc gives a dataclass's ClassVar a field of its own (mypyc/mypyc#1122),
# which breaks every event class; the package __init__ stays pure so that it can load the
# shared library that holds the compiled modules.
PURE_MODULES = {"__init__.py", "events.py"}
# The shared library lives outside referee/rules: inside it, loading the package would need the
# library, and the library the package.
GROUP_NAME = "referee.compiled_rules"

PURE_REQUESTED = os.environ.get("TICHU_PURE") == "1"
COMPILE_REQUIRED = os.environ.get("TICHU_COMPILE") == "1"
if PURE_REQUESTED and COMPILE_REQUIRED:
    sys.exit("setup.py: TICHU_PURE=1 and TICHU_COMPILE=1 contradict each other; set one")
# The command line, as setuptools' PEP 517 backend (editable_wheel) and a legacy `pip install -e`
# (develop) write it: build_ext's own editable_mode comes too late, as the wheel's tag is decided,
# and build_ext set up once, before editable_wheel sets it.
EDITABLE = not COMPILE_REQUIRED and any(command in sys.argv for command in ("editable_wheel", "develop"))
if EDITABLE and not PURE_REQUESTED:
    print("setup.py: an editable install keeps the engine pure (make fast compiles it)", file=sys.stderr)

# Stands for the mypyc modules until build_ext is set up: a wheel with an extension module is
# tagged for this platform (bdist_wheel decides that before anything is built), while running
# mypyc only when something is built keeps it out of the sdist, the metadata and the hooks that
# pip calls first.
PLACEHOLDER = Extension(GROUP_NAME, sources=[])


def warn(message: str) -> None:
    """A warning that `python -m build` and `pip install -v` show."""
    print(f"\nWARNING (tichu-referee): {message}\n", file=sys.stderr, flush=True)


def c_compiler_problem(compiler_name: str | None) -> str | None:
    """Why this machine cannot compile an extension module (None when it can)."""
    from distutils.ccompiler import new_compiler
    from distutils.sysconfig import customize_compiler

    include_dirs = sorted({sysconfig.get_path("include"), sysconfig.get_path("platinclude")})
    with tempfile.TemporaryDirectory() as scratch:
        probe = Path(scratch, "probe.c")
        probe.write_text("#include <Python.h>\nint tichu_probe(void) { return 0; }\n", encoding="utf-8")
        try:
            compiler = new_compiler(compiler=compiler_name)
            customize_compiler(compiler)
            compiler.compile([str(probe)], output_dir=scratch, include_dirs=include_dirs)
        except Exception as error:  # any failure means the same thing here: build pure
            return f"no working C compiler with the Python headers ({error})"
    return None


class BuildEngine(build_ext):
    """build_ext that compiles the engine when it can and otherwise leaves it pure."""

    def finalize_options(self) -> None:
        """Swap the placeholder for the mypyc modules (or none) before build_ext sees it."""
        if self.distribution.ext_modules == [PLACEHOLDER]:
            self.distribution.ext_modules = self.mypyc_modules()
            if not self.distribution.ext_modules:
                self.mark_wheel_pure()
        super().finalize_options()

    def mypyc_modules(self) -> list[Extension]:
        """The engine's modules compiled by mypyc; none, with a warning, when that cannot be done."""
        problem = c_compiler_problem(self.compiler if isinstance(self.compiler, str) else None)
        if problem is None:
            try:
                from mypyc.build import mypycify

                here = Path(__file__).parent
                sources = sorted(str(p.relative_to(here)) for p in (here / "referee" / "rules").glob("*.py"))
                return list(
                    mypycify(
                        [s for s in sources if Path(s).name not in PURE_MODULES],
                        group_name=GROUP_NAME,
                        opt_level="3",
                    )
                )
            # mypyc reports a type error by exiting (SystemExit), and a missing mypy is an
            # ImportError: the same fallback for both.
            except (Exception, SystemExit) as error:
                problem = f"mypyc could not compile referee/rules ({error!r})"
        if COMPILE_REQUIRED:
            sys.exit(f"setup.py: TICHU_COMPILE=1, but {problem}")
        warn(f"the rules engine stays pure Python (slower, same rules): {problem}")
        return []

    def build_extensions(self) -> None:
        """Build every module, or, when one fails, none of them: the engine stays pure then."""
        from distutils.errors import CCompilerError, DistutilsError

        try:
            super().build_extensions()
        except (CCompilerError, DistutilsError, OSError) as error:
            if COMPILE_REQUIRED:
                raise
            # A shim whose shared library did not build would break the import: remove all.
            for extension in self.extensions:
                Path(self.get_ext_fullpath(extension.name)).unlink(missing_ok=True)
            self.extensions = []
            self.distribution.ext_modules = []
            self.mark_wheel_pure()
            warn(f"the rules engine stays pure Python (slower, same rules): compiling it failed ({error})")

    def mark_wheel_pure(self) -> None:
        """Tag the wheel being built, if one is, for any platform: it holds no compiled code."""
        wheel_command = self.distribution.command_obj.get("bdist_wheel")
        if wheel_command is not None:
            wheel_command.root_is_pure = True


class SourceDistribution(sdist):
    """sdist without the C that mypyc generates: the Python sources it is made from are there."""

    def _add_defaults_ext(self) -> None:
        # The default asks build_ext for its sources, which would run mypyc for nothing.
        pass


setup(
    ext_modules=[] if PURE_REQUESTED or EDITABLE else [PLACEHOLDER],
    cmdclass={"build_ext": BuildEngine, "sdist": SourceDistribution},
)
