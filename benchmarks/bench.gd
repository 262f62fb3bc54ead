# Times var2bytes / bytes2var inside the real Godot 3 engine, on the workloads of bench.py,
# and saves the engine's own var2bytes output of each workload for bench.py to decode.
#
# bench.py rewrites the constants below and runs this through the Godot 3 oracle
# (tests/oracles.py godot3_run -> /work/shared/oracle/godot3/oracle.py run), once per
# workload, right before timing ours on the same bytes.  Run by hand it only prints:
#     godot3-server --no-window -s bench.gd
#
# Method (as /work/shared/oracle/godot3/perf.gd): OS.get_ticks_usec() around ONE call,
# RUNS times; bench.py takes the median.  Building the value is not timed, and neither is
# freeing a result: it is dropped after the second clock read, so no run pays for freeing
# the previous run's value.  var2bytes runs encode_variant twice (a sizing pass, then the
# writing pass); both are inside the timed region, as they are for any GDScript caller.
extends SceneTree

const RUNS = 5
const DIVISOR = 1  # every workload's size is divided by this (bench.py --quick: 10)
const OUT_DIR = ""  # where <workload>.bin is written; "" = nowhere
const ONLY = ""  # run just this workload; "" = all of them
const WORKLOADS = ["dict_100k", "records_20k", "ints_1m", "strings_100k", "floats_10m", "bytes_40m"]

func save(name, b):
	if OUT_DIR == "":
		return
	var f = File.new()
	var path = OUT_DIR.plus_file(name + ".bin")
	var err = f.open(path, File.WRITE)
	if err != OK:
		printerr("@@ERROR cannot write %s: %d" % [path, err])
		return
	f.store_buffer(b)
	f.close()

func joined(times):
	var parts = PoolStringArray()
	for t in times:
		parts.append(str(t))
	return parts.join(",")

func bench(name, v):
	var b = var2bytes(v)
	save(name, b)
	var enc = []
	var dec = []
	for r in range(RUNS):
		var t0 = OS.get_ticks_usec()
		var e = var2bytes(v)
		var t1 = OS.get_ticks_usec()
		enc.append(t1 - t0)
		e = null  # freed outside the timed region
		t0 = OS.get_ticks_usec()
		var back = bytes2var(b)
		t1 = OS.get_ticks_usec()
		dec.append(t1 - t0)
		if typeof(back) != typeof(v):
			printerr("@@ERROR %s: bytes2var gave type %d, expected %d" % [name, typeof(back), typeof(v)])
		back = null  # freed outside the timed region
	# name, encoded size, var2bytes times (us), bytes2var times (us)
	print("@@BENCH %s %d %s %s" % [name, b.size(), joined(enc), joined(dec)])

# 100,000-entry Dictionary, String keys, values cycling over 11 small mixed values (perf.gd).
func w_dict_100k():
	var small = [1, -7, 2147483648, 0.5, 0.1, "ab", "héllo", true, null, Vector2(1, 2), Color(1, 0, 0)]
	var d = {}
	for i in range(100000 / DIVISOR):
		d["k%d" % i] = small[i % small.size()]
	bench("dict_100k", d)

# 20,000 records of a typical save file.
func w_records_20k():
	var recs = []
	for i in range(20000 / DIVISOR):
		recs.append({"id": i, "pos": Vector3(i, i * 0.5, -i), "tags": ["a", "b"], "hp": 0.75})
	bench("records_20k", recs)

func w_ints_1m():
	var a = []
	for i in range(1000000 / DIVISOR):
		a.append(i)
	bench("ints_1m", a)

func w_strings_100k():
	var psa = PoolStringArray()
	for i in range(100000 / DIVISOR):
		psa.append("s%d" % i)
	bench("strings_100k", psa)

# perf.gd's pattern; note that its -0.0 literal arrives as +0.0 in the array.
func w_floats_10m():
	var pra = PoolRealArray([0.0, 1.5, -2.25, 3.0e10, 0.1, -0.0, 7.0, 1e-3])
	while pra.size() < 10000000 / DIVISOR:
		pra.append_array(pra)
	pra.resize(10000000 / DIVISOR)
	bench("floats_10m", pra)

func w_bytes_40m():
	var pba = PoolByteArray([1, 2, 3, 4, 5, 6, 7, 8])
	while pba.size() < 40000000 / DIVISOR:
		pba.append_array(pba)
	pba.resize(40000000 / DIVISOR)
	bench("bytes_40m", pba)

func _init():
	var info = Engine.get_version_info()
	print("@@ENGINE %s debug=%s" % [info.string, OS.is_debug_build()])
	for name in WORKLOADS:
		if ONLY == "" or ONLY == name:
			call("w_" + name)  # each workload's value is freed when its function returns
	quit()
