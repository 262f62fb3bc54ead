"""One module per ``godot-formats`` subcommand; see :mod:`godot_formats.tool`."""
