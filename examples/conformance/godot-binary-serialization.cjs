// Conformance adapter for the npm package godot-binary-serialization (PacketPeer.get_var / put_var),
// a Godot 3.0 implementation, docs/conformance.md.
//
//   npm install --prefix /tmp/gf-peers/gbs godot-binary-serialization@0.1.6
//   NODE_PATH=/tmp/gf-peers/gbs/node_modules \
//     godot-formats conformance -d godot3 -- node examples/conformance/godot-binary-serialization.cjs
//
// The package has one value per JS kind and chooses the type id itself when it writes (an integral
// number is an int, any other a float).  What the adapter adds, and only this:
// * roundtrip: put_var(get_var(bytes));
// * decode: the JSON form of get_var's value: a top-level number is an int or a float by the type id
//   in the header (the package's own table), a nested one by whether it is integral; Dictionary keys
//   are strings (the package's objects);
// * encode: the JSON form read into the package's values (its math classes, NodePath, Color, plain
//   objects and arrays) and written by put_var.  A type it has no value for is refused, naming it.
"use strict";

const gbs = require("godot-binary-serialization");
const TYPES = require("godot-binary-serialization/lib/types");
const { f, i, num, stringify, scalar, arg, serve } = require("./form.cjs");

const CLASSES = { ...gbs.math, ...gbs.misc };
const FORM_NAME = { Quat: "Quaternion", Transform: "Transform3D" };
const CLASS_NAME = { Quaternion: "Quat", Transform3D: "Transform" };
// The form lists a Basis by axes (columns); the bytes hold rows.
const transpose9 = (a) => [a[0], a[3], a[6], a[1], a[4], a[7], a[2], a[5], a[8]];
const ARGS_OF_WIRE = { Basis: transpose9, Transform3D: (a) => [...transpose9(a), ...a.slice(9)] };

function toForm(v, typeName) {
  if (v === null || v === undefined) return null;
  if (typeof v === "boolean") return v;
  if (typeof v === "number") {
    if (typeName === "REAL") return f(v);
    if (typeName === "INT") return i(v);
    return Number.isInteger(v) && !Object.is(v, -0) ? i(v) : f(v);
  }
  if (typeof v === "string") return "s:" + v;
  if (Array.isArray(v)) return v.map((x) => toForm(x));
  const cls = v.constructor && v.constructor.name;
  if (cls === "NodePath") return "np:" + v.path;
  if (CLASSES[cls]) {
    const name = FORM_NAME[cls] || cls;
    return { type: name, args: (ARGS_OF_WIRE[name] || ((a) => a))(v.args).map(num) };
  }
  return { type: "Dictionary", args: Object.entries(v).flatMap(([k, x]) => ["s:" + k, toForm(x)]) };
}

function fromForm(node) {
  if (node === null || typeof node === "boolean") return node;
  if (typeof node === "string") {
    const [kind, v] = scalar(node);
    if (kind === "np") return new gbs.misc.NodePath(v);
    if (kind === "sn" || typeof v === "bigint") throw new Error(`the package has no value for ${node}`);
    return v;
  }
  if (Array.isArray(node)) return node.map(fromForm);
  const name = node.type, cls = CLASSES[CLASS_NAME[name] || name];
  if (name === "Dictionary" && !node.key_type) {
    const obj = {};
    for (let k = 0; k < node.args.length; k += 2) obj[String(fromForm(node.args[k]))] = fromForm(node.args[k + 1]);
    return obj;
  }
  if (cls && cls !== gbs.misc.NodePath) {
    const args = node.args.map(arg);
    return cls.from(name === "Basis" || name === "Transform3D" ? [...transpose9(args), ...args.slice(9)] : args);
  }
  throw new Error(`the package has no value for ${name}${node.key_type || node.elem_type ? " (typed)" : ""}`);
}

serve(["roundtrip", "decode", "encode"], (req) => {
  if (req.op === "encode") return '"hex":' + JSON.stringify(gbs.PacketPeer.put_var(fromForm(req.json)).toString("hex"));
  const buf = Buffer.from(req.hex, "hex");
  const value = gbs.PacketPeer.get_var(buf);
  if (req.op === "decode") return '"json":' + stringify(toForm(value, TYPES[buf.readUInt16LE(0)]));
  if (req.op === "roundtrip") return '"hex":' + JSON.stringify(gbs.PacketPeer.put_var(value).toString("hex"));
  throw new Error(`unknown op ${req.op}`);
});
