// Conformance adapter for the npm package @gd-com/utils (getVar / putVar), docs/conformance.md.
//
//   npm install --prefix /tmp/gf-peers/gd-com-5 @gd-com/utils@5.0.0
//   NODE_PATH=/tmp/gf-peers/gd-com-5/node_modules \
//     godot-formats conformance -d godot4 -- node examples/conformance/gd-com-utils.cjs
//
// (4.x is its Godot 3 line: install @gd-com/utils@4.1.5 and run with -d godot3.)
//
// The package reads and writes one table of type ids whatever the request's dialect, so the adapter
// passes the bytes and values through unchanged.  What the adapter adds, and only this:
// * roundtrip: putVar(getVar(bytes).value, type), with the type id the package read from the header
//   (putVar needs it for anything but null, bool, number, string, Array, Buffer and plain objects);
// * decode: the JSON form of getVar's value.  getVar returns JS numbers, so a top-level number is an
//   int or a float by its header's type id, a nested one by whether it is integral (the package keeps
//   no more); NODE_PATH comes back as a string and is written as a NodePath; keys of a Dictionary
//   are strings (the package's objects);
// * encode: the JSON form read into the package's own values (GodotVector2, Buffer, plain objects ...)
//   and written by putVar with the type of the top-level value.  A type the package has no value
//   for (Vector2i, StringName, typed containers ...) is refused, naming it.
"use strict";

const gd = require("@gd-com/utils");
const { f, i, num, stringify, scalar, arg, serve } = require("./form.cjs");

const T = gd.TYPE;
// The packed arrays, by the package's names for them (its Godot 3 line says INT_ARRAY, REAL_ARRAY).
const PACKED = Object.fromEntries([
  ["INT_32_ARRAY", "PackedInt32Array", 1], ["INT_ARRAY", "PackedInt32Array", 1],
  ["INT_64_ARRAY", "PackedInt64Array", 1], ["FLOAT_32_ARRAY", "PackedFloat32Array", 1],
  ["REAL_ARRAY", "PackedFloat32Array", 1], ["FLOAT_64_ARRAY", "PackedFloat64Array", 1],
  ["VECTOR2_ARRAY", "PackedVector2Array", 2], ["VECTOR3_ARRAY", "PackedVector3Array", 3],
  ["COLOR_ARRAY", "PackedColorArray", 4],
].filter(([key]) => T[key] !== undefined).map(([key, name, width]) => [T[key], [name, width]]));
// Each math class's numbers in the order of the bytes the package reads and writes.
const v2 = (v) => [v.x, v.y], v3 = (v) => [v.x, v.y, v.z];
const MATH = {
  GodotVector2: ["Vector2", v2],
  GodotVector3: ["Vector3", v3],
  GodotRect2: ["Rect2", (v) => [...v2(v.coordinate), ...v2(v.size)]],
  GodotTransform2D: ["Transform2D", (v) => [...v2(v.x), ...v2(v.y), ...v2(v.origin)]],
  GodotPlane: ["Plane", (v) => [v.x, v.y, v.z, v.distance]],
  GodotQuat: ["Quaternion", (v) => [v.x, v.y, v.z, v.w]],
  GodotAabb: ["AABB", (v) => [...v3(v.coordinate), ...v3(v.size)]],
  GodotBasis: ["Basis", (v) => [...v3(v.x), ...v3(v.y), ...v3(v.z)]],
  GodotTransform: ["Transform3D", (v) => [...v3(v.x), ...v3(v.y), ...v3(v.z), ...v3(v.origin)]],
  GodotColor: ["Color", (v) => [v.r, v.g, v.b, v.a]],
};
// The form lists a Basis by axes (columns); the bytes hold rows.
const transpose9 = (a) => [a[0], a[3], a[6], a[1], a[4], a[7], a[2], a[5], a[8]];
const ARGS_OF_WIRE = { Basis: transpose9, Transform3D: (a) => [...transpose9(a), ...a.slice(9)] };

function isLong(v) { return v !== null && typeof v === "object" && typeof v.high === "number" && typeof v.low === "number"; }

function numberForm(v, type) {
  if (type === T.FLOAT) return f(v);
  if (type === T.INTEGER) return i(v);
  return Number.isInteger(v) && !Object.is(v, -0) ? i(v) : f(v);
}

function toForm(v, type) {
  if (v === null || v === undefined) return null;
  if (typeof v === "boolean") return v;
  if (typeof v === "number") return numberForm(v, type);
  if (isLong(v)) return i(v.toString());
  if (typeof v === "string") return (type === T.NODE_PATH ? "np:" : "s:") + v;
  if (Buffer.isBuffer(v)) return { type: "PackedByteArray", args: [...v] };
  if (Array.isArray(v)) return arrayForm(v, type);
  const math = MATH[v.constructor && v.constructor.name];
  if (math) {
    const [name, wire] = math;
    const args = (ARGS_OF_WIRE[name] || ((a) => a))(wire(v));
    return { type: name, args: args.map(num) };
  }
  return { type: "Dictionary", args: Object.entries(v).flatMap(([k, x]) => ["s:" + k, toForm(x)]) };
}

function arrayForm(v, type) {
  if (type === T.STRING_ARRAY) return { type: "PackedStringArray", args: v };
  const packed = PACKED[type];
  if (!packed) return v.map((x) => toForm(x));
  const [name, width] = packed;
  const flat = width === 1 ? v : v.flatMap((x) => MATH[x.constructor.name][1](x));
  return { type: name, args: flat.map((x) => (isLong(x) ? num(BigInt(x.toString())) : num(x))) };
}

// -- the JSON form read into the package's values ------------------------------------------------

const CLASS = {
  Vector2: (a) => new gd.GodotVector2(a[0], a[1]),
  Vector3: (a) => new gd.GodotVector3(a[0], a[1], a[2]),
  Rect2: (a) => new gd.GodotRect2(new gd.GodotVector2(a[0], a[1]), new gd.GodotVector2(a[2], a[3])),
  Plane: (a) => new gd.GodotPlane(a[0], a[1], a[2], a[3]),
  Quaternion: (a) => new gd.GodotQuat(a[0], a[1], a[2], a[3]),
  AABB: (a) => new gd.GodotAabb(new gd.GodotVector3(a[0], a[1], a[2]), new gd.GodotVector3(a[3], a[4], a[5])),
  Color: (a) => new gd.GodotColor(a[0], a[1], a[2], a[3]),
  Transform2D: (a) => new gd.GodotTransform2D(new gd.GodotVector2(a[0], a[1]), new gd.GodotVector2(a[2], a[3]),
    new gd.GodotVector2(a[4], a[5])),
  Basis: (a) => { const w = transpose9(a); return new gd.GodotBasis(CLASS.Vector3(w), CLASS.Vector3(w.slice(3)), CLASS.Vector3(w.slice(6))); },
  Transform3D: (a) => { const w = transpose9(a); return new gd.GodotTransform(CLASS.Vector3(w), CLASS.Vector3(w.slice(3)), CLASS.Vector3(w.slice(6)), CLASS.Vector3(a.slice(9))); },
};
const TYPE_OF_CLASS = {
  Vector2: T.VECTOR2, Vector3: T.VECTOR3, Rect2: T.RECT2, Plane: T.PLANE, Quaternion: T.QUAT, AABB: T.AABB,
  Color: T.COLOR, Transform2D: T.TRANSFORM2D, Basis: T.BASIS, Transform3D: T.TRANSFORM,
};
const PACKED_TYPE = Object.fromEntries(Object.entries(PACKED).map(([t, [name, width]]) => [name, [Number(t), width]]));

function fromForm(node) {
  if (node === null) return [null, T.NULL];
  if (typeof node === "boolean") return [node, T.BOOL];
  if (typeof node === "string") {
    const [kind, v] = scalar(node);
    const type = { i: T.INTEGER, f: T.FLOAT, s: T.STRING, np: T.NODE_PATH }[kind];
    if (type === undefined) throw new Error(`the package has no value for ${kind === "sn" ? "StringName" : node}`);
    if (typeof v === "bigint") throw new Error(`the package has no value for the int ${v} (past 2**53)`);
    return [v, type];
  }
  if (Array.isArray(node)) return [node.map((x) => fromForm(x)[0]), T.ARRAY];
  const name = node.type;
  if (name === "Dictionary" && !node.key_type) {
    const obj = {};
    for (let k = 0; k < node.args.length; k += 2) obj[String(fromForm(node.args[k])[0])] = fromForm(node.args[k + 1])[0];
    return [obj, T.DICTIONARY];
  }
  if (name === "PackedByteArray" && node.args) return [Buffer.from(node.args), T.RAW_ARRAY];
  if (name === "PackedStringArray") return [node.args, T.STRING_ARRAY];
  if (CLASS[name]) return [CLASS[name](node.args.map(arg)), TYPE_OF_CLASS[name]];
  if (PACKED_TYPE[name]) {
    const [type, width] = PACKED_TYPE[name], a = node.args.map(arg), out = [];
    for (let k = 0; k < a.length; k += width) out.push(width === 1 ? a[k] : CLASS[{ 2: "Vector2", 3: "Vector3", 4: "Color" }[width]](a.slice(k, k + width)));
    return [out, type];
  }
  throw new Error(`the package has no value for ${name}${node.key_type || node.elem_type ? " (typed)" : ""}`);
}

serve(["roundtrip", "decode", "encode"], (req) => {
  if (req.op === "encode") {
    const [value, type] = fromForm(req.json);
    return '"hex":' + JSON.stringify(gd.putVar(value, type).toString("hex"));
  }
  const buf = Buffer.from(req.hex, "hex");
  const { value } = gd.getVar(buf);
  const type = buf.readInt16LE(0); // as the package reads it
  if (req.op === "decode") return '"json":' + stringify(toForm(value, type));
  if (req.op === "roundtrip") return '"hex":' + JSON.stringify(gd.putVar(value, type).toString("hex"));
  throw new Error(`unknown op ${req.op}`);
});
