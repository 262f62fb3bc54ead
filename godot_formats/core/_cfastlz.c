/*
 * godot_formats.core._cfastlz: FastLZ 0.5.0 (levels 1 and 2) in C, for Godot's COMPRESSION_FASTLZ.
 *
 * The pure-Python port, godot_formats/layers/fastlz.py, is the statement of the rules; this
 * module is the same algorithm, step for step, so that it is fast.  Its contract:
 *
 *   - compress(data, level=None) returns byte for byte what fastlz.py's reference compressor
 *     returns (which is what the engine's fastlz.c writes), for every input;
 *   - decompress(data, max_output) returns the reference decompressor's bytes, or raises the
 *     same exception (godot_formats.core.errors.DecodeError, same byte offset, same message;
 *     ValueError for a negative max_output) for every input.
 *
 * Why not the engine's fastlz.c itself: its decoder trusts its input (it reads past the end of a
 * truncated stream) and says nothing but "0" when a stream is wrong, and the library promises
 * an error with the byte offset.  So the decoder here is the reference's strict loop, and the
 * compressor is the reference's loop, which follows fastlz.c's choices exactly.
 *
 * The decoder never reads outside the input and never writes outside the output, and the
 * output it allocates is exactly the size of the result, which is at most max_output: a first
 * pass walks the instructions without writing anything (every check the reference makes
 * depends only on lengths and offsets, never on the bytes written), and only a stream that
 * passes it gets a buffer, of the size it found, which the second pass fills.  The first pass
 * skips over literal runs, so it costs a fraction of the second.
 *
 * Both functions take only bytes objects (immutable, so the GIL can be released while the
 * loops run and nobody can change the input between the two passes); fastlz.py converts other
 * buffers first, as the reference does with bytes(data).
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <string.h>

#define MAX_COPY 32
#define MAX_LEN 264
#define MAX_L1_DISTANCE 8192
#define MAX_L2_DISTANCE 8191
#define MAX_FARDISTANCE (65535 + MAX_L2_DISTANCE - 1)
#define HASH_SIZE (1 << 13)
#define HASH_MASK (HASH_SIZE - 1)
/* The decoder's distance (high bits 31, distance byte 255) that says a level 2 far match's
 * 16-bit distance follows. */
#define FAR_MARKER ((31 << 8) + 1 + 255)
/* fastlz_compress picks level 2 from this input size up. */
#define LEVEL2_THRESHOLD 65536
/* The loops give the GIL away only for inputs (or outputs) this large: Godot's GCPF blocks
 * are 4 KiB, thousands to a save, and handing the GIL over for each of them would cost more
 * than it lends to other threads (and, with a busy thread waiting, a switch interval each). */
#define NOGIL_MIN ((Py_ssize_t)1 << 16)

static PyObject *DecodeError; /* godot_formats.core.errors.DecodeError */

/* --- compression ----------------------------------------------------------------------- */

/* The hash of the three bytes at p, as fastlz.c (and fastlz.py) compute it. */
static inline uint32_t
hash3(const uint8_t *p)
{
    uint32_t v = (uint32_t)p[0] | (uint32_t)p[1] << 8;
    return (v ^ ((uint32_t)p[1] | (uint32_t)p[2] << 8) ^ (v >> 3)) & HASH_MASK;
}

/* The hash table holds input positions.  32-bit entries halve the table that every call
 * clears (Godot compresses 4 KiB blocks, so that clearing is a real share of the work); an
 * input of 4 GiB or more, where positions do not fit, gets 64-bit entries. */
typedef struct {
    uint32_t *narrow;
    Py_ssize_t *wide;
} Table;

static inline Py_ssize_t
table_swap(Table *t, uint32_t h, Py_ssize_t pos)
{
    Py_ssize_t old;
    if (t->narrow != NULL) {
        old = (Py_ssize_t)t->narrow[h];
        t->narrow[h] = (uint32_t)pos;
    }
    else {
        old = t->wide[h];
        t->wide[h] = pos;
    }
    return old;
}

/* Where a match that holds up to ip ends: one past the first differing byte (or ip_bound).
 * A run (distance 0, the biased distance) stops *at* the differing byte, any other match one
 * past it, after 8 comparisons without the bound check (safe since ip < ip_limit): the
 * output depends on these quirks of fastlz.c, so they are kept (fastlz.py's _match_end). */
static inline Py_ssize_t
match_end(const uint8_t *src, Py_ssize_t ip, Py_ssize_t ref, Py_ssize_t distance, Py_ssize_t ip_bound)
{
    int k;
    if (distance == 0) {
        uint8_t x = src[ip - 1];
        while (ip < ip_bound && src[ref] == x) {
            ref++;
            ip++;
        }
        return ip;
    }
    for (k = 0; k < 8; k++) {
        if (src[ref++] != src[ip++])
            return ip;
    }
    while (ip < ip_bound) {
        if (src[ref++] != src[ip++])
            break;
    }
    return ip;
}

/* A level 1 match (length biased: 1 means 3 bytes); lengths over 262 become several matches. */
static inline Py_ssize_t
write_match_level1(uint8_t *out, Py_ssize_t op, Py_ssize_t length, Py_ssize_t distance)
{
    uint8_t high = (uint8_t)(distance >> 8), low = (uint8_t)(distance & 255);
    while (length > MAX_LEN - 2) {
        out[op++] = (uint8_t)((7 << 5) + high);
        out[op++] = MAX_LEN - 2 - 7 - 2;
        out[op++] = low;
        length -= MAX_LEN - 2;
    }
    if (length < 7) {
        out[op++] = (uint8_t)((length << 5) + high);
        out[op++] = low;
    }
    else {
        out[op++] = (uint8_t)((7 << 5) + high);
        out[op++] = (uint8_t)(length - 7);
        out[op++] = low;
    }
    return op;
}

/* A level 2 match: any length (a 255-chain), distances from 8191 on as 16 bits after a marker. */
static inline Py_ssize_t
write_match_level2(uint8_t *out, Py_ssize_t op, Py_ssize_t length, Py_ssize_t distance)
{
    uint8_t high;
    int far = distance >= MAX_L2_DISTANCE;
    if (far) {
        distance -= MAX_L2_DISTANCE;
        high = 31;
    }
    else
        high = (uint8_t)(distance >> 8);
    if (length < 7)
        out[op++] = (uint8_t)((length << 5) + high);
    else {
        out[op++] = (uint8_t)((7 << 5) + high);
        length -= 7;
        while (length >= 255) {
            out[op++] = 255;
            length -= 255;
        }
        out[op++] = (uint8_t)length;
    }
    if (far) {
        out[op++] = 255;
        out[op++] = (uint8_t)(distance >> 8);
    }
    out[op++] = (uint8_t)(distance & 255);
    return op;
}

/* The most compress_body writes for n >= 4 input bytes.  A literal costs its byte plus a
 * control byte per 32; a match never costs more bytes than it covers (at least 3 bytes in 2,
 * a far one at least 5 in 4, a split level 1 match 262 in 3); one pending control byte is
 * written ahead.  So n + n/32 + 2 is enough; the margin is cheap. */
static inline Py_ssize_t
compress_bound(Py_ssize_t n)
{
    return n + n / 16 + 64;
}

/* The shared body of fastlz1_compress and fastlz2_compress for n >= 4 bytes (fastlz.py's
 * _compress, line for line: ip, anchor, ref, copy are its names).  Returns the output size. */
static Py_ssize_t
compress_body(const uint8_t *src, Py_ssize_t n, int level2, uint8_t *out, Table *htab)
{
    Py_ssize_t ip_bound = n - 2, ip_limit = n - 12 - 1;
    Py_ssize_t max_distance = level2 ? MAX_FARDISTANCE : MAX_L1_DISTANCE;
    Py_ssize_t ip = 2, op = 0, copy = 2, anchor, ref, distance, length;
    int k;

    out[op++] = MAX_COPY - 1;
    out[op++] = src[0];
    out[op++] = src[1];
    while (ip < ip_limit) {
        anchor = ip;
        length = 3;
        if (level2 && src[ip] == src[ip - 1] && src[ip] == src[ip + 1] && src[ip + 1] == src[ip + 2]) {
            /* Level 2 checks for a run before hashing (and leaves the table alone). */
            distance = 1;
            ref = anchor - 1 + 3;
        }
        else {
            ref = table_swap(htab, hash3(src + ip), anchor);
            distance = anchor - ref;
            if (distance == 0 || distance >= max_distance || src[ref] != src[ip] || src[ref + 1] != src[ip + 1] ||
                src[ref + 2] != src[ip + 2] ||
                /* far matches need at least 5 bytes */
                (level2 && distance >= MAX_L2_DISTANCE && (src[ip + 3] != src[ref + 3] || src[ip + 4] != src[ref + 4]))) {
                out[op++] = src[anchor];
                ip = anchor + 1;
                if (++copy == MAX_COPY) {
                    copy = 0;
                    out[op++] = MAX_COPY - 1;
                }
                continue;
            }
            ref += 3;
            if (level2 && distance >= MAX_L2_DISTANCE) {
                ref += 2;
                length += 2;
            }
        }
        distance -= 1;
        ip = match_end(src, anchor + length, ref, distance, ip_bound) - 3;
        /* The pending literal run's control byte was written before its length was known:
         * patch it, or take it back if the run stayed empty. */
        if (copy)
            out[op - copy - 1] = (uint8_t)(copy - 1);
        else
            op--;
        copy = 0;
        op = level2 ? write_match_level2(out, op, ip - anchor, distance)
                    : write_match_level1(out, op, ip - anchor, distance);
        for (k = 0; k < 2; k++) { /* the hash at the match boundary (two positions) */
            (void)table_swap(htab, hash3(src + ip), ip);
            ip++;
        }
        out[op++] = MAX_COPY - 1;
    }
    /* The bytes after the last place a match may start, as literals, and the last run closed. */
    while (ip <= ip_bound + 1) {
        out[op++] = src[ip++];
        if (++copy == MAX_COPY) {
            copy = 0;
            out[op++] = MAX_COPY - 1;
        }
    }
    if (copy)
        out[op - copy - 1] = (uint8_t)(copy - 1);
    else
        op--;
    if (level2)
        out[0] |= 1 << 5;
    return op;
}

/* 1 or 2 for a level the reference accepts (`level in (1, 2)`: so 2.0 and True too), 0 for
 * any other, -1 with an exception when comparing raised one. */
static int
level_of(PyObject *level)
{
    int k, same;
    for (k = 1; k <= 2; k++) {
        PyObject *want = PyLong_FromLong(k);
        if (want == NULL)
            return -1;
        same = PyObject_RichCompareBool(want, level, Py_EQ);
        Py_DECREF(want);
        if (same != 0)
            return same < 0 ? -1 : k;
    }
    return 0;
}

PyDoc_STRVAR(compress_doc,
"compress(data: bytes, level: int | None = None) -> bytes\n--\n\n"
"FastLZ 0.5.0's compressor: fastlz.py's reference_compress, byte for byte.\n\n"
"level None chooses as fastlz_compress does (1 below 64 KiB, else 2); 1 or 2 force it.\n"
"Inputs under 4 bytes are one literal run with no level marker; empty input gives b''.");

static PyObject *
fastlz_compress(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"data", "level", NULL};
    PyObject *data, *level_obj = Py_None, *result;
    const uint8_t *src;
    Py_ssize_t n, size;
    int level;
    Table htab = {NULL, NULL};
    size_t table_bytes;

    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!|O:compress", names, &PyBytes_Type, &data, &level_obj))
        return NULL;
    src = (const uint8_t *)PyBytes_AS_STRING(data);
    n = PyBytes_GET_SIZE(data);
    if (level_obj == Py_None)
        level = n < LEVEL2_THRESHOLD ? 1 : 2;
    else if ((level = level_of(level_obj)) <= 0)
        return level < 0 ? NULL : PyErr_Format(PyExc_ValueError, "FastLZ level must be 1 or 2, not %R", level_obj);
    if (n < 4) {
        /* The C code's "sanity check": one literal run (no level marker). */
        if (n == 0)
            return PyBytes_FromStringAndSize(NULL, 0);
        result = PyBytes_FromStringAndSize(NULL, n + 1);
        if (result != NULL) {
            PyBytes_AS_STRING(result)[0] = (char)(n - 1);
            memcpy(PyBytes_AS_STRING(result) + 1, src, (size_t)n);
        }
        return result;
    }
    result = PyBytes_FromStringAndSize(NULL, compress_bound(n));
    if (result == NULL)
        return NULL;
    table_bytes = (size_t)HASH_SIZE * ((uint64_t)n > UINT32_MAX ? sizeof(Py_ssize_t) : sizeof(uint32_t));
    if ((uint64_t)n > UINT32_MAX)
        htab.wide = PyMem_RawCalloc(1, table_bytes);
    else
        htab.narrow = PyMem_RawCalloc(1, table_bytes);
    if (htab.narrow == NULL && htab.wide == NULL) {
        Py_DECREF(result);
        return PyErr_NoMemory();
    }
    if (n >= NOGIL_MIN) {
        Py_BEGIN_ALLOW_THREADS
        size = compress_body(src, n, level == 2, (uint8_t *)PyBytes_AS_STRING(result), &htab);
        Py_END_ALLOW_THREADS
    }
    else
        size = compress_body(src, n, level == 2, (uint8_t *)PyBytes_AS_STRING(result), &htab);
    PyMem_RawFree(htab.narrow != NULL ? (void *)htab.narrow : (void *)htab.wide);
    if (_PyBytes_Resize(&result, size) < 0)
        return NULL;
    return result;
}

/* --- decompression --------------------------------------------------------------------- */

/* What is wrong with a stream; each has the reference's message (fastlz.py's _decode). */
enum {
    P_NONE,
    P_LENGTH1,  /* level 1's length byte is missing */
    P_LENGTH2,  /* level 2's length bytes are missing */
    P_DISTANCE, /* the distance byte is missing */
    P_FAR,      /* a far match's 16-bit distance is missing */
    P_PASS,     /* the output would pass max_output */
    P_BEFORE,   /* a match reaches before the start of the output (value: how far back) */
    P_LITERAL,  /* a literal run cut short (value: its length, left: the bytes left) */
};

typedef struct {
    int kind;
    Py_ssize_t at; /* the offset of the instruction in the stream */
    Py_ssize_t value;
    Py_ssize_t left;
} Problem;

static inline int
problem(Problem *p, int kind, Py_ssize_t at, Py_ssize_t value, Py_ssize_t left)
{
    p->kind = kind;
    p->at = at;
    p->value = value;
    p->left = left;
    return -1;
}

/* A match of `length` bytes from `back` bytes behind d (back <= what is written, length >= 1).
 * When the two overlap, the last `back` bytes repeat: copied in doubling chunks, each from the
 * start of the repeating region, so no memcpy overlaps. */
static inline void
copy_match(uint8_t *d, Py_ssize_t back, Py_ssize_t length)
{
    const uint8_t *s = d - back;
    Py_ssize_t chunk;
    if (back >= length) {
        memcpy(d, s, (size_t)length);
        return;
    }
    if (back == 1) {
        memset(d, *s, (size_t)length);
        return;
    }
    while (length > 0) {
        chunk = back < length ? back : length;
        memcpy(d, s, (size_t)chunk);
        d += chunk;
        length -= chunk;
        back += chunk; /* d - s: still a whole number of periods */
    }
}

/* The instruction loop of fastlz1_decompress / fastlz2_decompress, as fastlz.py's _decode
 * (and its helpers) checks it.  With out NULL it only measures: *size is the output size of
 * a stream it accepts.  With out set it also writes (out holds cap bytes).  Returns 0, or -1
 * with *p saying what is wrong.  Every read is checked against n, every write against cap. */
static int
inflate(const uint8_t *src, Py_ssize_t n, int level2, Py_ssize_t cap, uint8_t *out, Py_ssize_t *size, Problem *p)
{
    /* The C loops stop when fewer than two bytes remain (level 1) or none (level 2). */
    Py_ssize_t last = level2 ? n - 1 : n - 2;
    Py_ssize_t ip = 1, have = 0, at, length, back;
    unsigned ctrl = src[0] & 31, code;

    for (;;) {
        at = ip - 1;
        if (ctrl >= 32) {
            length = (Py_ssize_t)(ctrl >> 5) + 2;
            if (length == 9) {
                if (!level2) {
                    if (ip > n - 2)
                        return problem(p, P_LENGTH1, at, 0, 0);
                    length += src[ip++];
                }
                else {
                    do { /* bytes added up to the first that is not 255 (no overflow: 255 per byte) */
                        if (ip > n - 2)
                            return problem(p, P_LENGTH2, at, 0, 0);
                        code = src[ip++];
                        length += code;
                    } while (code == 255);
                }
            }
            if (ip >= n)
                return problem(p, P_DISTANCE, at, 0, 0);
            back = ((Py_ssize_t)(ctrl & 31) << 8) + 1 + src[ip++];
            if (level2 && back == FAR_MARKER) {
                if (ip >= n - 2)
                    return problem(p, P_FAR, at, 0, 0);
                back = ((Py_ssize_t)src[ip] << 8 | src[ip + 1]) + MAX_L2_DISTANCE + 1;
                ip += 2;
            }
            if (length > cap - have)
                return problem(p, P_PASS, at, 0, 0);
            if (back > have)
                return problem(p, P_BEFORE, at, back, 0);
            if (out != NULL)
                copy_match(out + have, back, length);
            have += length;
        }
        else {
            length = (Py_ssize_t)ctrl + 1;
            if (length > cap - have)
                return problem(p, P_PASS, at, 0, 0);
            if (length > n - ip)
                return problem(p, P_LITERAL, at, length, n - ip);
            if (out != NULL)
                memcpy(out + have, src + ip, (size_t)length);
            have += length;
            ip += length;
        }
        if (ip > last) {
            *size = have;
            return 0;
        }
        ctrl = src[ip++];
    }
}

/* Raise the reference's DecodeError for p; max_output is the caller's object, printed as the
 * reference prints it. */
static PyObject *
raise_problem(const Problem *p, PyObject *max_output)
{
    PyObject *reason = NULL, *error;
    switch (p->kind) {
    case P_LENGTH1:
        reason = PyUnicode_FromString("FastLZ match cut short: its length byte is missing");
        break;
    case P_LENGTH2:
        reason = PyUnicode_FromString("FastLZ match cut short: its length bytes are missing");
        break;
    case P_DISTANCE:
        reason = PyUnicode_FromString("FastLZ match cut short: its distance byte is missing");
        break;
    case P_FAR:
        reason = PyUnicode_FromString("FastLZ far match cut short: its 16-bit distance is missing");
        break;
    case P_PASS:
        reason = PyUnicode_FromFormat("FastLZ output would pass %S bytes", max_output);
        break;
    case P_BEFORE:
        reason = PyUnicode_FromFormat("FastLZ match reaches %zd bytes back, before the start of the output", p->value);
        break;
    case P_LITERAL:
        reason = PyUnicode_FromFormat("FastLZ literal run of %zd bytes cut short (%zd left)", p->value, p->left);
        break;
    default:
        PyErr_SetString(PyExc_SystemError, "_cfastlz: unknown problem");
        return NULL;
    }
    if (reason == NULL)
        return NULL;
    error = PyObject_CallFunction(DecodeError, "nO", p->at, reason);
    Py_DECREF(reason);
    if (error != NULL) {
        PyErr_SetObject((PyObject *)Py_TYPE(error), error);
        Py_DECREF(error);
    }
    return NULL;
}

static PyObject *
decode_error(Py_ssize_t at, PyObject *reason)
{
    PyObject *error;
    if (reason == NULL)
        return NULL;
    error = PyObject_CallFunction(DecodeError, "nO", at, reason);
    Py_DECREF(reason);
    if (error != NULL) {
        PyErr_SetObject((PyObject *)Py_TYPE(error), error);
        Py_DECREF(error);
    }
    return NULL;
}

PyDoc_STRVAR(decompress_doc,
"decompress(data: bytes, max_output: int) -> bytes\n--\n\n"
"One FastLZ stream (level 1 or 2) of at most max_output bytes: fastlz.py's reference_decompress\n"
"with the same DecodeError (offset and message) for every stream it refuses.\n"
"The output buffer is allocated once, at the exact size of the result.");

static PyObject *
fastlz_decompress(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"data", "max_output", NULL};
    PyObject *data, *max_output, *result;
    const uint8_t *src;
    Py_ssize_t n, cap, size = 0;
    int level, overflow, failed;
    long long wanted;
    Problem p = {P_NONE, 0, 0, 0};

    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!O!:decompress", names, &PyBytes_Type, &data, &PyLong_Type,
                                     &max_output))
        return NULL;
    src = (const uint8_t *)PyBytes_AS_STRING(data);
    n = PyBytes_GET_SIZE(data);
    if (n == 0)
        return decode_error(0, PyUnicode_FromString("empty FastLZ stream"));
    wanted = PyLong_AsLongLongAndOverflow(max_output, &overflow);
    if (wanted == -1 && PyErr_Occurred())
        return NULL;
    if (overflow < 0 || (overflow == 0 && wanted < 0)) {
        PyErr_SetString(PyExc_ValueError, "max_output must not be negative");
        return NULL;
    }
    /* No stream can come near PY_SSIZE_T_MAX bytes (at most 255 output bytes per input byte),
     * so a larger cap is no cap. */
    cap = (overflow > 0 || wanted > (long long)PY_SSIZE_T_MAX) ? PY_SSIZE_T_MAX : (Py_ssize_t)wanted;
    level = (src[0] >> 5) + 1;
    if (level > 2)
        return decode_error(0, PyUnicode_FromFormat(
            "unknown FastLZ level %d (the first byte's top bits must be 0 or 1)", level));

    /* First pass: check and measure; nothing is allocated for a stream that is refused. */
    if (n >= NOGIL_MIN) {
        Py_BEGIN_ALLOW_THREADS
        failed = inflate(src, n, level == 2, cap, NULL, &size, &p);
        Py_END_ALLOW_THREADS
    }
    else
        failed = inflate(src, n, level == 2, cap, NULL, &size, &p);
    if (failed)
        return raise_problem(&p, max_output);

    /* Second pass: the same walk, writing into a buffer of exactly the measured size. */
    result = PyBytes_FromStringAndSize(NULL, size);
    if (result == NULL)
        return NULL;
    if (size >= NOGIL_MIN) {
        Py_BEGIN_ALLOW_THREADS
        failed = inflate(src, n, level == 2, size, (uint8_t *)PyBytes_AS_STRING(result), &size, &p);
        Py_END_ALLOW_THREADS
    }
    else
        failed = inflate(src, n, level == 2, size, (uint8_t *)PyBytes_AS_STRING(result), &size, &p);
    if (failed) { /* cannot happen: the input is immutable and the first pass accepted it */
        Py_DECREF(result);
        PyErr_SetString(PyExc_SystemError, "_cfastlz: the second pass disagrees with the first");
        return NULL;
    }
    return result;
}

static PyMethodDef module_methods[] = {
    {"compress", (PyCFunction)(void (*)(void))fastlz_compress, METH_VARARGS | METH_KEYWORDS, compress_doc},
    {"decompress", (PyCFunction)(void (*)(void))fastlz_decompress, METH_VARARGS | METH_KEYWORDS, decompress_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "godot_formats.core._cfastlz",
    .m_doc = "FastLZ 0.5.0 in C: the compiled twin of godot_formats.layers.fastlz (the reference).",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC
PyInit__cfastlz(void)
{
    PyObject *m, *errors;
    if (DecodeError == NULL) {
        errors = PyImport_ImportModule("godot_formats.core.errors");
        if (errors == NULL)
            return NULL;
        DecodeError = PyObject_GetAttrString(errors, "DecodeError");
        Py_DECREF(errors);
        if (DecodeError == NULL)
            return NULL;
    }
    m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    if (PyModule_AddIntConstant(m, "LEVEL2_THRESHOLD", LEVEL2_THRESHOLD) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
