"""Reading a file as the engine would (layers, framing, dialect, damage), detecting which version
wrote it, converting between versions without silent loss, and writing it back."""
