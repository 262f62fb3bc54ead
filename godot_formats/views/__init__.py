"""The same value seen another way: Godot text (var_to_str), JSON, an annotated byte listing
(explain), and where a value carries code."""
