"""Godot's StreamPeer and FileAccess calls (put_var, get_32 ...), and framed streams of values."""
