# Times whole save files inside the real Godot 3 engine: File + store_var / get_var, for each
# layer the engine writes (plain, open_compressed FastLZ / Deflate / Zstd / Gzip,
# open_encrypted_with_pass), and leaves the files for bench.py (wholefile.py) to time ours on.
#
# bench.py rewrites the constants below and runs this through the Godot 3 oracle
# (godot_formats.oracle.godot3_run), once per layer, right before timing ours on the same file,
# and once more at the end with MODE = "verify" to read back the files we wrote.
#
# Method: OS.get_ticks_usec() around the whole open / store_var... / close (write), the whole
# open / get_var... / close (read), and a read then a write of the same file (migrate: what the
# engine does to re-save a save), RUNS times each, in turns.  Building the values is not timed;
# a read's result is dropped after the second clock read, so no run pays for freeing another's.
# The read loop is the usual one: get_var while get_position() < get_len().
extends SceneTree

const RUNS = 5
const DIVISOR = 1  # the save's size is divided by this (bench.py --quick: 10)
const OUT_DIR = ""  # where <layer>.sav is written and (verify) ours_<layer>.sav is read
const LAYER = "plain"  # the layer timed by this run
const MODE = "time"  # "time": time LAYER; "verify": read every ours_<layer>.sav, store it plain
const PASSWORD = "bench-password"
const LAYERS = ["plain", "fastlz", "deflate", "zstd", "gzip", "encrypted"]
const DICT_SIZE = 100000
const RECORDS = 32000

# The save: one Dictionary of the dict_100k workload, then one store_var per record of the
# records workload (as a game that saves each node with its own store_var): 6.7 MB plain.
func save_values():
	var small = [1, -7, 2147483648, 0.5, 0.1, "ab", "héllo", true, null, Vector2(1, 2), Color(1, 0, 0)]
	var d = {}
	for i in range(DICT_SIZE / DIVISOR):
		d["k%d" % i] = small[i % small.size()]
	var out = [d]
	for i in range(RECORDS / DIVISOR):
		out.append({"id": i, "pos": Vector3(i, i * 0.5, -i), "tags": ["a", "b"], "hp": 0.75})
	return out

func open_layer(f, path, mode, layer):
	if layer == "plain":
		return f.open(path, mode)
	if layer == "encrypted":
		return f.open_encrypted_with_pass(path, mode, PASSWORD)
	var modes = {"fastlz": File.COMPRESSION_FASTLZ, "deflate": File.COMPRESSION_DEFLATE,
			"zstd": File.COMPRESSION_ZSTD, "gzip": File.COMPRESSION_GZIP}
	return f.open_compressed(path, mode, modes[layer])

func write_save(path, layer, vals):
	var f = File.new()
	var err = open_layer(f, path, File.WRITE, layer)
	if err != OK:
		printerr("@@ERROR cannot open %s for writing (%s): %d" % [path, layer, err])
		return
	for v in vals:
		f.store_var(v)
	f.close()

func read_save(path, layer):
	var f = File.new()
	var err = open_layer(f, path, File.READ, layer)
	if err != OK:
		printerr("@@ERROR cannot open %s for reading (%s): %d" % [path, layer, err])
		return []
	var out = []
	var n = f.get_len()
	while f.get_position() < n:
		out.append(f.get_var())
	f.close()
	return out

func joined(times):
	var parts = PoolStringArray()
	for t in times:
		parts.append(str(t))
	return parts.join(",")

func time_layer(layer):
	var vals = save_values()
	var path = OUT_DIR.plus_file(layer + ".sav")
	var migrated = OUT_DIR.plus_file(layer + ".engine-migrated.sav")
	var w = []
	var r = []
	var m = []
	for run in range(RUNS):
		var t0 = OS.get_ticks_usec()
		write_save(path, layer, vals)
		var t1 = OS.get_ticks_usec()
		w.append(t1 - t0)
		t0 = OS.get_ticks_usec()
		var back = read_save(path, layer)
		t1 = OS.get_ticks_usec()
		r.append(t1 - t0)
		if back.size() != vals.size():
			printerr("@@ERROR %s: read %d values, wrote %d" % [layer, back.size(), vals.size()])
		back = null  # freed outside the timed region
		t0 = OS.get_ticks_usec()
		back = read_save(path, layer)
		write_save(migrated, layer, back)
		t1 = OS.get_ticks_usec()
		m.append(t1 - t0)
		back = null
	var f = File.new()
	f.open(path, File.READ)
	var size = f.get_len()
	f.close()
	# layer, file size, values, write / read / migrate times (us)
	print("@@FILE %s %d %d %s %s %s" % [layer, size, vals.size(), joined(w), joined(r), joined(m)])

# The engine reads what we wrote, layer by layer, and stores its values again in a plain file:
# bench.py compares those bytes with the values it saved.
func verify():
	for layer in LAYERS:
		var ours = OUT_DIR.plus_file("ours_" + layer + ".sav")
		if not File.new().file_exists(ours):
			continue
		var back = read_save(ours, layer)
		write_save(OUT_DIR.plus_file("verify_" + layer + ".sav"), "plain", back)
		print("@@VERIFY %s %d" % [layer, back.size()])

func _init():
	var info = Engine.get_version_info()
	print("@@ENGINE %s debug=%s" % [info.string, OS.is_debug_build()])
	if MODE == "verify":
		verify()
	else:
		time_layer(LAYER)
	quit()
