"""The optional compiled core (godot_formats.core._cdecode, _cencode, _cfront, _cfastlz, _ctext and _ctextw).

Everything else is in pyproject.toml.  The extensions are optional: where no C compiler is
found the build says so in one line and the package installs without them, and the
pure-Python reference codec does all the work (``godot_formats.backend == "python"``), and
the pure-Python FastLZ port (``godot_formats.layers.fastlz``) compresses, and the pure-Python text
parser (``godot_formats.views.text.parser``) reads every value of Godot's text form, and the
pure-Python text writer (``godot_formats.views.text.writer``) writes every one.
"""

from __future__ import annotations

import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


class OptionalBuildExt(build_ext):
    """Build the compiled core when possible; one line, not a traceback, when not."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as e:  # noqa: BLE001 - no compiler, no headers: the reference codec serves
            print(f"godot-formats: compiled core not built ({type(e).__name__}); using pure Python", file=sys.stderr)

    def build_extension(self, ext: Extension) -> None:
        try:
            super().build_extension(ext)
        except Exception as e:  # noqa: BLE001
            print(f"godot-formats: {ext.name} not built ({type(e).__name__}); using pure Python", file=sys.stderr)


DEPENDS = ["godot_formats/core/_bigbuf.h"]
EXTRA = ["-O2", "-std=c99", "-Wall", "-Wno-unused-function"] if sys.platform != "win32" else []

setup(
    ext_modules=[
        Extension("godot_formats.core._cdecode", ["godot_formats/core/_cdecode.c"], depends=DEPENDS,
                  extra_compile_args=EXTRA, optional=True),
        Extension("godot_formats.core._cencode", ["godot_formats/core/_cencode.c"], depends=DEPENDS,
                  extra_compile_args=EXTRA, optional=True),
        Extension("godot_formats.core._cfront", ["godot_formats/core/_cfront.c"], extra_compile_args=EXTRA,
                  optional=True),
        Extension("godot_formats.core._cfastlz", ["godot_formats/core/_cfastlz.c"], extra_compile_args=EXTRA,
                  optional=True),
        Extension("godot_formats.core._ctext", ["godot_formats/core/_ctext.c"], extra_compile_args=EXTRA,
                  optional=True),
        Extension("godot_formats.core._ctextw", ["godot_formats/core/_ctextw.c"], extra_compile_args=EXTRA,
                  optional=True),
    ],
    cmdclass={"build_ext": OptionalBuildExt},
)
