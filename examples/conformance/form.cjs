// The kit's JSON form (docs/json.md) for JavaScript adapters: scalars as "i:"/"f:"/"s:" text, math
// types as {"type", "args"}, and a writer that keeps what JSON.stringify loses (-0, NaN, Infinity,
// integers past 2**53 given as BigInt or as digit text).
"use strict";

const RAW = Symbol("raw");

/** A JSON number written as this exact text (digits of a 64-bit int, "-0.0"). */
function raw(text) { return { [RAW]: text }; }

function floatText(x) {
  if (Number.isNaN(x)) return "nan";
  if (x === Infinity) return "inf";
  if (x === -Infinity) return "-inf";
  if (Object.is(x, -0)) return "-0.0";
  return String(x);
}

/** A float scalar: "f:1.5", "f:-0.0", "f:nan". */
function f(x) { return "f:" + floatText(x); }
/** An int scalar from a number, a BigInt, or anything whose toString() is its digits (Long). */
function i(x) { return "i:" + String(x); }

/** A float inside "args": a JSON number, or the text the form uses for what JSON cannot hold. */
function num(x) {
  if (typeof x === "bigint") return raw(String(x));
  if (Number.isNaN(x) || !Number.isFinite(x)) return floatText(x);
  return Object.is(x, -0) ? raw("-0.0") : x;
}

/** JSON text of a form built from the helpers above (no recursion limit worth the name in V8). */
function stringify(node) {
  if (node === null || node === undefined) return "null";
  if (typeof node === "object" && node[RAW] !== undefined) return node[RAW];
  if (typeof node === "number" || typeof node === "boolean" || typeof node === "string") return JSON.stringify(node);
  if (typeof node === "bigint") return String(node);
  if (Array.isArray(node)) return "[" + node.map(stringify).join(",") + "]";
  return "{" + Object.entries(node).map(([k, v]) => JSON.stringify(k) + ":" + stringify(v)).join(",") + "}";
}

/** A scalar of the form as [kind, JS value]: ["i", 5], ["f", 0.5], ["s", "text"], ["np", "a/b"]. */
function scalar(text) {
  const colon = text.indexOf(":");
  const kind = text.slice(0, colon), body = text.slice(colon + 1);
  if (kind === "i") {
    const n = BigInt(body);
    return ["i", n >= BigInt(Number.MIN_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n];
  }
  if (kind === "f") {
    const special = { nan: NaN, inf: Infinity, "+inf": Infinity, "-inf": -Infinity }[body];
    return ["f", special !== undefined ? special : Number(body)];
  }
  return [kind, body];
}

/** A number of "args" back (the form writes inf/nan as text). */
function arg(x) {
  if (typeof x === "string") return scalar("f:" + x)[1];
  return x === null ? 0 : x;
}

/** Run an adapter: read request lines, answer each with handle(request) -> fields (JSON text) or an error. */
function serve(operations, handle) {
  const readline = require("node:readline");
  const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  rl.on("line", (line) => {
    const req = JSON.parse(line);
    let fields;
    try {
      fields = req.op === "operations" ? '"operations":' + JSON.stringify(operations) : handle(req);
    } catch (e) {
      fields = '"error":' + JSON.stringify(String((e && e.message) || e));
    }
    process.stdout.write('{"id":' + JSON.stringify(req.id) + "," + fields + "}\n");
  });
}

module.exports = { raw, f, i, num, stringify, scalar, arg, serve };
