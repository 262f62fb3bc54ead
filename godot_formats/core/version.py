"""The package version, in one place: ``pyproject.toml`` reads it for the build (``dynamic``),
``godot-formats --version`` and ``godot_formats.__version__`` show it.

Between releases it is the next release with ``.dev0`` (PEP 440), the version CHANGELOG.md's top
section names "(unreleased)"; a release drops the suffix and dates that section
(tests/cli/test_command_line_edges.py checks that the three agree).
"""

__version__ = "0.4.0.dev0"
