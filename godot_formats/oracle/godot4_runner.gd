extends Node
## godot-formats, Godot 4 oracle: the main scene's script (res://main.gd) of the PCK that
## godot_formats/oracle/godot4.py builds. It runs the cases of res://job.json,
## {"mode": "encode"|"decode", "cases": [{"i", "raw"?} or {"i", "hex", "allow_objects"?}]},
## and prints for each one:
##   @@CASE i, @@STAGE name (value, str, encode, decode, reencode),
##   @@RESULT i typeof type_string text-as-UTF-8-hex hex [hex_full_objects], @@END i
## then @@DONE, and quits. The engine's error lines come between the markers.
## An encode case is the script res://cases/c_<i>.gd, whose value() returns the value.
##
## Keep the objects this script makes, and their order, as they are: the instance ids the
## engine writes depend on how many objects were made before, and the fixtures hold them.


func _ready() -> void:
	var job: Dictionary = JSON.parse_string(FileAccess.get_file_as_string("res://job.json"))
	for c: Dictionary in job.cases:
		var i := int(c.i)
		print("@@CASE %d" % i)
		var res: Array
		if job.mode == "encode":
			res = _encode(i, bool(c.get("raw", false)))
		else:
			res = _decode(String(c.hex), bool(c.get("allow_objects", false)))
		if not res.is_empty():
			print("@@RESULT %d %s" % [i, " ".join(res)])
		print("@@END %d" % i)
	print("@@DONE")
	get_tree().quit()


func _encode(i: int, raw: bool) -> Array:
	print("@@STAGE value")
	var script: Script = load("res://cases/c_%d.gd" % i)
	if script == null or not script.can_instantiate():
		return []  # a parse error: its lines are the record's errors
	var node: Node = script.new()
	add_child(node)  # in the tree while value() runs (get_tree() works there)
	var v: Variant = node.value()
	var res := _describe(v)
	print("@@STAGE encode")
	if raw:  # value() captured bytes itself (store_var, put_var framing)
		res.append(PackedByteArray(v).hex_encode())
	else:
		res.append(var_to_bytes(v).hex_encode())
		res.append(var_to_bytes_with_objects(v).hex_encode())
	node.queue_free()
	return res


func _decode(hex: String, allow_objects: bool) -> Array:
	var b := hex.hex_decode()
	print("@@STAGE decode")
	var v: Variant = bytes_to_var_with_objects(b) if allow_objects else bytes_to_var(b)
	var res := _describe(v)
	print("@@STAGE reencode")
	res.append((var_to_bytes_with_objects(v) if allow_objects else var_to_bytes(v)).hex_encode())
	return res


func _describe(v: Variant) -> Array:
	print("@@STAGE str")
	return [str(typeof(v)), type_string(typeof(v)), var_to_str(v).to_utf8_buffer().hex_encode()]
