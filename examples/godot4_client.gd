extends Node
## Talks to examples/asyncio_server.py with StreamPeerTCP.put_var / get_var.
##
## Attach to any node (or make it an autoload) and run the project while the
## server runs: python examples/asyncio_server.py --port 4242
## put_var writes a u32 length and then var_to_bytes(value); the Python side
## reads it with godot_formats.stream.read_value and answers with write_value.

const HOST := "127.0.0.1"
const PORT := 4242

var peer := StreamPeerTCP.new()
var pings_sent := 0


func _ready() -> void:
	var err := peer.connect_to_host(HOST, PORT)
	if err != OK:
		push_error("connect_to_host failed: %s" % error_string(err))
		set_process(false)


func _process(_delta: float) -> void:
	peer.poll()
	match peer.get_status():
		StreamPeerTCP.STATUS_CONNECTED:
			if pings_sent == 0:
				peer.put_var({"cmd": "ping", "t": Time.get_ticks_msec()})
				peer.put_var({"cmd": "echo", "value": [Vector2(1.5, -2), Color.RED, PackedInt32Array([1, 2, 3])]})
				pings_sent = 2
			# get_var() blocks until its whole frame has arrived, so only call it
			# once the reply has started to come in (replies here are tiny).
			# For large or many messages, wrap the peer in a PacketPeerStream
			# (same bytes on the wire) and poll get_available_packet_count().
			while pings_sent > 0 and peer.get_available_bytes() > 0:
				var reply = peer.get_var()
				pings_sent -= 1
				if reply is Dictionary and reply.has("pong"):
					print("pong after %d ms" % (Time.get_ticks_msec() - int(reply["pong"])))
				else:
					print("reply: ", reply)
				if pings_sent == 0:
					peer.disconnect_from_host()
					set_process(false)
		StreamPeerTCP.STATUS_ERROR:
			push_error("connection to %s:%d failed" % [HOST, PORT])
			set_process(false)
