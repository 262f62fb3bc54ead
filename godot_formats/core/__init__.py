"""The value model and the codec: each Godot type's class and row, each engine version as data,
Dictionary key identity, and the reference reader and writer with the compiled core in front."""
