# Helpers of the godot-formats Godot 3 oracle (godot_formats/oracle/godot3.py), which pastes
# this file under "extends SceneTree" into res://run.gd. Fixtures keep the engine's error
# lines, "SCRIPT ERROR: dec: ..." and "At: res://run.gd:8.": keep bytes2var on line 8.
func dec(i, allow):
	var b = _read_file("res://in_%d.bin" % i)
	# A failed bytes2var raises a script error that ends this call: no @@DECODED then.
	var v = bytes2var(b, allow)
	printerr("@@DECODED")
	var text = var2str(v)
	_result(i, v, text, var2bytes(v, allow).hex_encode())


# Engine errors land between the markers in the order of these calls: bytes, text, objects.
func emit(i, v, raw):
	var b = v if raw else var2bytes(v, false)
	var text = var2str(v)
	var full = "" if raw else " " + var2bytes(v, true).hex_encode()
	_result(i, v, text, b.hex_encode() + full)


# "@@RESULT i typeof text-as-UTF-8-hex hex..." (the text is hex: it may hold anything)
func _result(i, v, text, hexes):
	printerr("@@RESULT %d %d %s %s" % [i, typeof(v), text.to_utf8().hex_encode(), hexes])


func _read_file(path):
	var f = File.new()
	f.open(path, File.READ)
	var b = f.get_buffer(f.get_len())
	f.close()
	return b
