"""Reading a file as the engine would (layers, framing, dialect, damage), detecting which version
wrote it, converting it between versions without silent loss (its values through
:mod:`godot_formats.migration`), and writing it back."""
