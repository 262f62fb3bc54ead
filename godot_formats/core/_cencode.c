/*
 * godot_formats.core._cencode: the compiled fast path of godot_formats.codec.Encoder.
 *
 * The pure-Python Encoder is the statement of the rules; this module only makes the
 * common values fast.  Its contract with the Python side is one-sided on purpose:
 *
 *   - when it returns bytes, they are byte for byte the reference's bytes;
 *   - whenever it meets anything it does not handle exactly (an error, a type it does
 *     not cover, a limit), it raises Fallback, and the caller encodes the same value
 *     with the reference, which returns the bytes or raises the precise error with the
 *     value's path.
 *
 * So every doubtful case here is a Fallback, never a guess.  The exceptions: what the
 * caller's own code raises in the leaf callback (and KeyboardInterrupt, SystemExit) is
 * passed on once, not swallowed and retried; a value the reference's row writer refuses
 * is a LeafError(value, error), for the Python side to name its path as the reference
 * does, without encoding again; a size change is an EncodeError.
 *
 * Nested containers are walked with an explicit, heap-allocated stack of frames, never
 * with C recursion: a value nested 10^6 deep, or one that contains itself, ends in
 * Fallback at the depth limit.  Every container on the stack is held by a strong
 * reference, so Python code run by the leaf callback cannot free what is being walked;
 * a list or dict whose size changes under the walk is an EncodeError, as in the reference.
 * An exception the leaf callback raises that is not one the reference turns into an
 * EncodeError with a path (the caller's own code raised it) goes through as it is, once.
 *
 * The wire is little-endian; every value is a u32 header and its payload, and every
 * field starts 4-aligned (strings are zero-padded).
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "_bigbuf.h"

/* The header bit of the 64-bit forms of int and float (and of double-precision math). */
#define FLAG_64 (1u << 16)

/* Whatever max_depth says, the C walk stops here and leaves deeper values to the
 * reference: this bounds the frame stack's memory for a self-containing value. */
#define HARD_MAX_DEPTH ((Py_ssize_t)1 << 16)

/* Bytes written on the C stack before the first heap buffer: a small message costs one
 * allocation, the result itself. */
#define SMALL_OUT 1024
/* The largest buffer out_finish copies out of, or keeps a leftover in, rather than shrinking it
 * in place (glibc's DEFAULT_MMAP_THRESHOLD_MAX on 64 bits). */
#define COPY_OUT_MAX ((Py_ssize_t)32 << 20)

/* A count or byte length is a u32 on the wire. */
#define MAX_U32 ((size_t)0xFFFFFFFFu)

enum { H_NIL, H_BOOL, H_INT, H_FLOAT, H_STRING, H_ARRAY, H_DICT, N_HEADERS };
enum { INT_AUTO, INT_FLAG64, INT_I64, INT_I32 };
enum { FLOAT_AUTO, FLOAT_FLAG64, FLOAT_F32, FLOAT_F64 };
enum { MATH_F32, MATH_I32, MATH_F64 };
enum { K_LIST, K_TUPLE, K_DICT };

static PyObject *Fallback; /* the module's exception class */

/* ---------------------------------------------------------------------------------------
 * The output buffer.  It starts on the C stack; once that is full it moves into a bytes
 * object that grows by doubling (_PyBytes_Resize is a realloc: large buffers usually grow
 * in place).  At the end it is the result, or the result is copied out of it (out_finish
 * says when and why).
 */

typedef struct {
    char *p;         /* next byte to write */
    char *end;       /* end of the capacity */
    char *base;      /* start of the current buffer */
    PyObject *heap;  /* the bytes object being filled; NULL while writing into `small` */
    int passthrough; /* the exception set is the caller's own (a user callback's): never a Fallback */
    char small[SMALL_OUT];
} Out;

static void out_init(Out *o)
{
    o->base = o->p = o->small;
    o->end = o->small + SMALL_OUT;
    o->heap = NULL;
    o->passthrough = 0;
}

/* The exceptions the reference encoder turns into an EncodeError naming the value's path
 * (godot_formats.codec.Encoder._write_all): when the leaf raises one of them, the reference
 * encodes the value again to say where.  Looked up the first time they are needed. */
static PyObject *ReferenceErrors; /* a tuple of classes */
static PyObject *EncodeErrorType;
static PyObject *LeafError; /* (value, error): the Python side names the value's path, as the reference does */

static int load_reference_errors(void)
{
    PyObject *errors, *structmod, *structerror;

    if (ReferenceErrors != NULL)
        return 0;
    errors = PyImport_ImportModule("godot_formats.core.errors");
    if (errors == NULL)
        return -1;
    EncodeErrorType = PyObject_GetAttrString(errors, "EncodeError");
    Py_DECREF(errors);
    if (EncodeErrorType == NULL)
        return -1;
    structmod = PyImport_ImportModule("struct");
    if (structmod == NULL)
        return -1;
    structerror = PyObject_GetAttrString(structmod, "error");
    Py_DECREF(structmod);
    if (structerror == NULL)
        return -1;
    /* the same list as codec._REFUSALS */
    ReferenceErrors = PyTuple_Pack(6, EncodeErrorType, PyExc_TypeError, PyExc_AttributeError,
                                   PyExc_OverflowError, structerror, PyExc_IndexError);
    Py_DECREF(structerror);
    return ReferenceErrors == NULL ? -1 : 0;
}

/* A container whose size changed while it was written (by Python code a callback ran): an
 * EncodeError, as the reference raises it, never bytes that disagree with the count. */
static int changed_size(PyObject *container, const char *what)
{
    PyObject *error, *args;

    /* loaded by Writer_new; the same words as the reference's (codec._changed) */
    error = PyObject_CallFunction(EncodeErrorType, "s", what);
    if (error == NULL)
        return -1;
    args = PyTuple_Pack(2, container, error);
    Py_DECREF(error);
    if (args != NULL) {
        PyErr_SetObject(LeafError, args); /* the Python side names the container's path */
        Py_DECREF(args);
    }
    return -1;
}

static int fallback(const char *why)
{
    PyErr_SetString(Fallback, why);
    return -1;
}

/* Make room for `need` more bytes (the slow path of RESERVE). */
static int out_grow(Out *o, size_t need)
{
    size_t used = (size_t)(o->p - o->base);
    size_t cap = (size_t)(o->end - o->base);
    size_t want, new_cap;

    if (need > (size_t)PY_SSIZE_T_MAX - used)
        return fallback("output larger than PY_SSIZE_T_MAX");
    want = used + need;
    new_cap = cap <= (size_t)PY_SSIZE_T_MAX / 2 ? cap * 2 : (size_t)PY_SSIZE_T_MAX;
    if (new_cap < want)
        new_cap = want;
    if (o->heap == NULL) {
        PyObject *b = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)new_cap);
        if (b == NULL)
            return -1;
        memcpy(PyBytes_AS_STRING(b), o->base, used);
        o->heap = b;
    }
    else if (_PyBytes_Resize(&o->heap, (Py_ssize_t)new_cap) < 0) {
        return -1; /* o->heap is NULL now: nothing left to free */
    }
    o->base = PyBytes_AS_STRING(o->heap);
    o->p = o->base + used;
    o->end = o->base + new_cap;
    return 0;
}

#define RESERVE(o, n) \
    (((size_t)((o)->end - (o)->p) >= (size_t)(n)) ? 0 : out_grow((o), (size_t)(n)))

/* The finished bytes (the Out is spent).
 *
 * What is left over in the buffer is given back by copying the bytes into an object of their
 * size, and freeing the grown buffer whole, rather than by shrinking it in place, up to the
 * size glibc's malloc decides for itself whether to map (32 MiB): freeing a mapped buffer raises
 * malloc's mapping threshold to its size, so the next encode of that size is served from memory
 * already mapped.  Shrunk in place, the buffer freed is always smaller than the one the next call
 * grows to, and every call maps fresh pages: a 2.4 MB result faulted in all of its 587 pages each
 * time, half of the encode's time (msgspec, which never shrinks in place, faulted none).  A
 * leftover of at most an eighth is kept in the object (its size set), not copied: memory that
 * sys.getsizeof does not show, so only up to 32 MiB (above, glibc maps every buffer anyway, and
 * shrinking in place is an mremap). */
static PyObject *out_finish(Out *o)
{
    Py_ssize_t used = (Py_ssize_t)(o->p - o->base), cap = (Py_ssize_t)(o->end - o->base);
    PyObject *result;

    if (o->heap == NULL)
        return PyBytes_FromStringAndSize(o->small, used);
    result = o->heap;
    o->heap = NULL;
    if (cap <= COPY_OUT_MAX) {
        PyObject *exact;
        if (cap - used <= cap / 8) {
            Py_SET_SIZE(result, used);
            PyBytes_AS_STRING(result)[used] = '\0';
            return result;
        }
        exact = PyBytes_FromStringAndSize(PyBytes_AS_STRING(result), used);
        Py_DECREF(result);
        return exact;
    }
    if (_PyBytes_Resize(&result, used) < 0)
        return NULL;
    return result;
}

static void out_free(Out *o)
{
    Py_CLEAR(o->heap);
}

/* Little-endian stores into room already reserved.  memcpy of a fixed size compiles to
 * one move; a big-endian host swaps first. */
static inline void put_u32(char *p, uint32_t v)
{
#if !PY_LITTLE_ENDIAN
    v = (v >> 24) | ((v >> 8) & 0xFF00u) | ((v << 8) & 0xFF0000u) | (v << 24);
#endif
    memcpy(p, &v, 4);
}

static inline void put_u64(char *p, uint64_t v)
{
#if PY_LITTLE_ENDIAN
    memcpy(p, &v, 8);
#else
    put_u32(p, (uint32_t)v);
    put_u32(p + 4, (uint32_t)(v >> 32));
#endif
}

static inline void put_f32(char *p, float f)
{
    uint32_t bits;
    memcpy(&bits, &f, 4);
    put_u32(p, bits);
}

static inline void put_f64(char *p, double d)
{
    uint64_t bits;
    memcpy(&bits, &d, 8);
    put_u64(p, bits);
}

/* Append a header and a u32 (a count, a length, a bool). */
static inline int out_u32_pair(Out *o, uint32_t a, uint32_t b)
{
    if (RESERVE(o, 8) < 0)
        return -1;
    put_u32(o->p, a);
    put_u32(o->p + 4, b);
    o->p += 8;
    return 0;
}

/* ---------------------------------------------------------------------------------------
 * float32: whether and how a double is written in 4 bytes.  A double outside float's
 * finite range is never cast (that conversion is undefined behaviour in C); NaN is never
 * cast either, so the sanitizers have nothing to say about any of it.
 */

/* The float32 the reference writes for d where float32 is the only choice (rounded to
 * nearest, as struct.pack('<f') does), or 0 to fall back: NaN (whose narrowed bits are
 * the platform's business) and finite values beyond FLT_MAX (the reference writes
 * FLT_MAX or inf there). */
static inline int narrow_f32(double d, float *f)
{
    if (isinf(d)) {
        *f = d > 0 ? HUGE_VALF : -HUGE_VALF;
        return 1;
    }
    if (!(fabs(d) <= FLT_MAX)) /* NaN, or finite and too large */
        return 0;
    *f = (float)d;
    return 1;
}

/* Whether d survives float32 exactly (the reference's pack/unpack round trip), *f its
 * float then: inf does; NaN and a finite value beyond FLT_MAX never do. */
static inline int exact_f32(double d, float *f)
{
    return narrow_f32(d, f) && (double)*f == d;
}

/* ---------------------------------------------------------------------------------------
 * The Writer: one dialect's headers and number formats, its vector-like math types, and
 * the reference's writer of single values (`leaf`), all fixed at construction.
 */

typedef struct {
    PyTypeObject *type;  /* an exact class (a tuple subclass: checked at construction) */
    PyObject *header;    /* bytes: its header as the reference writes it */
    Py_ssize_t count;    /* components */
    int kind;            /* MATH_F32, MATH_I32, MATH_F64 */
} MathEntry;

typedef struct {
    PyObject_HEAD
    int64_t headers[N_HEADERS]; /* -1: the dialect has no such type */
    int int_mode;
    int float_mode;
    Py_ssize_t max_depth;
    PyObject *leaf;
    MathEntry *math;
    Py_ssize_t n_math;
    int64_t bytes_header;       /* PackedByteArray (bytes, bytearray), -1: through leaf */
    PyObject *strings_cls;      /* PackedStringArray's class, or NULL: through leaf */
    PyObject *strings_parts;    /* parts(value) -> (wire, count) or the list of its strings */
    int64_t strings_header;
    int strings_nul;            /* each element's length counts a final NUL */
    /* What dumps needs besides (set by bind): the classes whose lone values the Python side
     * writes in one copy (a set, shared: rows registered later are in it), and after(value,
     * error), the Python path for them and for whatever encode leaves (see Writer_dumps). */
    PyObject *lone;
    PyObject *after;
} Writer;

/* The explicit stack: one frame per open non-empty container. */
typedef struct {
    PyObject *obj;      /* the container (a strong reference) */
    PyObject *pending;  /* dict: the value still to write after its key (strong), or NULL */
    Py_ssize_t pos;     /* list/tuple: next index; dict: the PyDict_Next position */
    Py_ssize_t size;    /* the count written in its header */
    Py_ssize_t done;    /* dict: entries taken so far */
    int kind;           /* K_LIST, K_TUPLE, K_DICT */
} Frame;

typedef struct {
    Frame *frames;
    Py_ssize_t n;
    Py_ssize_t cap;
    Py_ssize_t limit;   /* the most frames allowed: min(max_depth, HARD_MAX_DEPTH) */
} Stack;

static void stack_free(Stack *st)
{
    while (st->n > 0) {
        Frame *f = &st->frames[--st->n];
        Py_DECREF(f->obj);
        Py_XDECREF(f->pending);
    }
    PyMem_Free(st->frames);
    st->frames = NULL;
}

/* Open a non-empty container: the depth limit counts it. */
static int stack_push(Stack *st, PyObject *obj, int kind, Py_ssize_t size)
{
    Frame *f;

    if (st->n + 1 > st->limit)
        return fallback("nested deeper than max_depth");
    if (st->n == st->cap) {
        Py_ssize_t cap = st->cap ? st->cap * 2 : 16;
        Frame *frames = PyMem_Realloc(st->frames, (size_t)cap * sizeof(Frame));
        if (frames == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        st->frames = frames;
        st->cap = cap;
    }
    f = &st->frames[st->n++];
    Py_INCREF(obj);
    f->obj = obj;
    f->pending = NULL;
    f->pos = 0;
    f->size = size;
    f->done = 0;
    f->kind = kind;
    return 0;
}

/* A value of a type this file does not know, by the reference's row writer: leaf(v) gives
 * its bytes, or for a container with children still to write (a typed Array, a
 * Dictionary that is not a dict, a full Object) (its head's bytes, [children...]), and
 * the children are walked here like a list's.  The value is held across the call: the
 * callback runs Python code, which could drop the container's reference to it.
 * 0: written; 1: its children are on the stack; -1: an exception is set. */
static int write_leaf(Writer *w, Out *o, Stack *st, PyObject *v)
{
    PyObject *b, *children = NULL;
    Py_ssize_t n;

    if (w->leaf == NULL) /* cleared by the garbage collector: nothing to call */
        return fallback("the writer has been cleared");
    Py_INCREF(v);
    b = PyObject_CallOneArg(w->leaf, v);
    if (b == NULL) {
        /* An error the reference reports with the value's path (a value the dialect cannot
         * hold ...) goes up as LeafError(value, error), and the Python side names the path
         * as the reference does, without encoding anything again (which would run the
         * caller's code twice, and for code that encodes again, without end).  Anything else
         * was raised by the caller's own code (an __index__, a str subclass's encode): it goes
         * through as it is, once, as from the reference; so do KeyboardInterrupt and the like. */
        o->passthrough = 1;
        if (PyErr_ExceptionMatches(ReferenceErrors)) { /* loaded when the Writer was made */
            PyObject *type, *val, *tb, *args;
            PyErr_Fetch(&type, &val, &tb);
            PyErr_NormalizeException(&type, &val, &tb);
            args = PyTuple_Pack(2, v, val != NULL ? val : Py_None);
            Py_XDECREF(type);
            Py_XDECREF(val);
            Py_XDECREF(tb);
            if (args != NULL) {
                PyErr_SetObject(LeafError, args);
                Py_DECREF(args);
            }
        }
        Py_DECREF(v);
        return -1;
    }
    Py_DECREF(v);
    if (PyTuple_CheckExact(b) && PyTuple_GET_SIZE(b) == 2 && st != NULL &&
        PyBytes_CheckExact(PyTuple_GET_ITEM(b, 0)) && PyList_CheckExact(PyTuple_GET_ITEM(b, 1))) {
        PyObject *head = PyTuple_GET_ITEM(b, 0);
        children = PyTuple_GET_ITEM(b, 1);
        Py_INCREF(head);
        Py_INCREF(children);
        Py_SETREF(b, head);
    }
    if (!PyBytes_CheckExact(b)) {
        Py_DECREF(b);
        return fallback("the leaf writer did not return bytes");
    }
    n = PyBytes_GET_SIZE(b);
    if (RESERVE(o, n) < 0) {
        Py_DECREF(b);
        Py_XDECREF(children);
        return -1;
    }
    memcpy(o->p, PyBytes_AS_STRING(b), (size_t)n);
    o->p += n;
    Py_DECREF(b);
    if (children == NULL)
        return 0;
    if (PyList_GET_SIZE(children) == 0) {  /* nothing opened: the depth limit does not count it */
        Py_DECREF(children);
        return 0;
    }
    n = stack_push(st, children, K_LIST, PyList_GET_SIZE(children));
    Py_DECREF(children);  /* the frame holds its own reference */
    return n < 0 ? -1 : 1;
}

/* The common scalars, written without running any Python code: 0 written; NOT_HERE when
 * the value is the general path's (a type that is not an exact scalar, or a case the
 * reference decides: a header the dialect lacks, an unpaired surrogate, an int or float
 * beyond the dialect's width); -1 an exception (no memory).  The runs below rely on it: a
 * container cannot change under a run that only calls these. */
#define NOT_HERE 1

/* Whether a str holds a code point in U+D800..U+DFFF (only 2- and 4-byte strs can). */
static int
has_surrogate(PyObject *s)
{
    Py_ssize_t i, n = PyUnicode_GET_LENGTH(s);
    int kind = PyUnicode_KIND(s);
    const void *data = PyUnicode_DATA(s);
    if (kind == PyUnicode_1BYTE_KIND)
        return 0;
    for (i = 0; i < n; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (c >= 0xD800 && c <= 0xDFFF)
            return 1;
    }
    return 0;
}

/* put_scalar is a few type tests: inlined in the loops that call it for every element, while the
 * writers behind it stay out of line (inlined into one function, their registers cost every call
 * a long prologue: a fifth of the records' instructions in callgrind). */
#if defined(__GNUC__) || defined(__clang__)
#define ALWAYS_INLINE static inline __attribute__((always_inline))
#define OUT_OF_LINE static __attribute__((noinline))
#else
#define ALWAYS_INLINE static inline
#define OUT_OF_LINE static
#endif

OUT_OF_LINE int put_str(Writer *w, Out *o, PyObject *v)
{
    const char *s;
    Py_ssize_t n;
    size_t padded;

    if (w->headers[H_STRING] < 0)
        return NOT_HERE;
    if (PyUnicode_IS_COMPACT_ASCII(v)) {
        s = (const char *)PyUnicode_DATA(v);
        n = PyUnicode_GET_LENGTH(v);
    }
    else {
        /* An unpaired surrogate: some dialects write it (surrogatepass), some refuse it; the
         * reference's writer knows which.  Found here, before PyUnicode_AsUTF8AndSize would
         * make a UnicodeEncodeError of it: making an exception allocates GC-tracked objects,
         * and a collection then can run finalizers, Python code that could change the
         * container a run is walking.  So nothing here raises but MemoryError. */
#if PY_VERSION_HEX < 0x030C0000
        if (PyUnicode_READY(v) < 0)  /* a legacy str made through the old C API: made ready first */
            return -1;
#endif
        if (has_surrogate(v))
            return NOT_HERE;
        if ((s = PyUnicode_AsUTF8AndSize(v, &n)) == NULL)
            return -1;
    }
    if ((size_t)n > MAX_U32)
        return NOT_HERE;
    padded = ((size_t)n + 3) & ~(size_t)3;
    if (RESERVE(o, 8 + padded) < 0)
        return -1;
    put_u32(o->p, (uint32_t)w->headers[H_STRING]);
    put_u32(o->p + 4, (uint32_t)n);
    if (padded)  /* the padding: the last word zeroed, then the text over it (no memset call) */
        put_u32(o->p + 4 + padded, 0);
    memcpy(o->p + 8, s, (size_t)n);
    o->p += 8 + padded;
    return 0;
}

/* An exact int's value, or NOT_HERE past 64 bits.  A one-digit int (|x| < 2**30 with 30-bit
 * digits, nearly every int a game stores) is read straight from its digit on the CPython versions whose
 * layout this knows; the rest through the API. */
static inline int int_value(PyObject *v, long long *x)
{
    int overflow;
#if !defined(PYPY_VERSION) && !defined(Py_LIMITED_API) && PY_VERSION_HEX < 0x030C0000
    Py_ssize_t size = Py_SIZE(v);
    if (size >= -1 && size <= 1) {  /* a zero may have no digit allocated (3.10) */
        *x = size == 0 ? 0 : (long long)size * (long long)((PyLongObject *)v)->ob_digit[0];
        return 0;
    }
#elif !defined(PYPY_VERSION) && !defined(Py_LIMITED_API)
    if (PyUnstable_Long_IsCompact((PyLongObject *)v)) {
        *x = (long long)PyUnstable_Long_CompactValue((PyLongObject *)v);
        return 0;
    }
#endif
    *x = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (overflow)
        return NOT_HERE;
    return *x == -1 && PyErr_Occurred() ? -1 : 0;
}

/* Each number reserves only the bytes it writes: a container whose size was reserved in
 * full (open_container) then never grows its buffer at its last element. */
OUT_OF_LINE int put_int(Writer *w, Out *o, PyObject *v)
{
    long long x;
    int64_t h = w->headers[H_INT];
    uint32_t head;
    int r;

    if ((r = int_value(v, &x)) != 0)
        return r;
    if (h < 0)
        return NOT_HERE;
    if (x >= INT32_MIN && x <= INT32_MAX && (w->int_mode == INT_AUTO || w->int_mode == INT_I32))
        return out_u32_pair(o, (uint32_t)h, (uint32_t)(int32_t)x);
    switch (w->int_mode) {
    case INT_AUTO:
    case INT_FLAG64:
        head = (uint32_t)h | FLAG_64;
        break;
    case INT_I64:
        head = (uint32_t)h;
        break;
    default: /* INT_I32, and x does not fit */
        return NOT_HERE;
    }
    if (RESERVE(o, 12) < 0)
        return -1;
    put_u32(o->p, head);
    put_u64(o->p + 4, (uint64_t)x);
    o->p += 12;
    return 0;
}

OUT_OF_LINE int put_float(Writer *w, Out *o, PyObject *v)
{
    double d = PyFloat_AS_DOUBLE(v);
    int64_t h = w->headers[H_FLOAT];
    uint32_t head;
    float f;

    if (h < 0)
        return NOT_HERE;
    switch (w->float_mode) {
    case FLOAT_AUTO:
        if (exact_f32(d, &f))
            goto narrow;
        head = (uint32_t)h | FLAG_64;
        break;
    case FLOAT_FLAG64:
        head = (uint32_t)h | FLAG_64;
        break;
    case FLOAT_F32:
        if (!narrow_f32(d, &f))
            return NOT_HERE;
        goto narrow;
    default: /* FLOAT_F64 */
        head = (uint32_t)h;
        break;
    }
    if (RESERVE(o, 12) < 0)
        return -1;
    put_u32(o->p, head);
    put_f64(o->p + 4, d);
    o->p += 12;
    return 0;
narrow:
    if (RESERVE(o, 8) < 0)
        return -1;
    put_u32(o->p, (uint32_t)h);
    put_f32(o->p + 4, f);
    o->p += 8;
    return 0;
}

/* Exact types only: a subclass (IntEnum, a str subclass ...) is the reference's business. */
ALWAYS_INLINE int put_scalar(Writer *w, Out *o, PyObject *v)
{
    PyTypeObject *tp = Py_TYPE(v);

    if (tp == &PyUnicode_Type)
        return put_str(w, o, v);
    if (tp == &PyLong_Type)
        return put_int(w, o, v);
    if (tp == &PyFloat_Type)
        return put_float(w, o, v);
    if (v == Py_None) {
        if (w->headers[H_NIL] < 0)
            return NOT_HERE;
        if (RESERVE(o, 4) < 0)
            return -1;
        put_u32(o->p, (uint32_t)w->headers[H_NIL]);
        o->p += 4;
        return 0;
    }
    if (tp == &PyBool_Type) {
        if (w->headers[H_BOOL] < 0)
            return NOT_HERE;
        return out_u32_pair(o, (uint32_t)w->headers[H_BOOL], v == Py_True ? 1u : 0u);
    }
    return NOT_HERE;
}

/* A list's or tuple's item array (no Python code may run while it is used). */
static inline PyObject **items_of(PyObject *seq, int kind)
{
    return kind == K_LIST ? ((PyListObject *)seq)->ob_item : ((PyTupleObject *)seq)->ob_item;
}

/* items[*pos] onward, up to n, while each is a scalar: 0 when all were written, NOT_HERE at the
 * first that is not (*pos on it), -1 on an exception.  The runs of a list or tuple, when it
 * opens and when its frame resumes. */
static inline int put_scalars(Writer *w, Out *o, PyObject **items, Py_ssize_t *pos, Py_ssize_t n)
{
    int r;

    for (; *pos < n; (*pos)++)
        if ((r = put_scalar(w, o, items[*pos])) != 0)
            return r;
    return 0;
}

/* A vector-like math value: its header, then its tuple items as numbers of one kind.
 * Anything unexpected in the items (a non-float, an int out of range, NaN or an overflow
 * in float32) is left to the reference. */
static int write_math(Writer *w, Out *o, const MathEntry *m, PyObject *v)
{
    Py_ssize_t hlen = PyBytes_GET_SIZE(m->header);
    Py_ssize_t i, n = m->count;
    size_t width = m->kind == MATH_F64 ? 8 : 4;
    char *p;

    if (PyTuple_GET_SIZE(v) != n)
        return write_leaf(w, o, NULL, v); /* the reference writes it or says why not */
    if (RESERVE(o, (size_t)hlen + width * (size_t)n) < 0)
        return -1;
    p = o->p;
    memcpy(p, PyBytes_AS_STRING(m->header), (size_t)hlen);
    p += hlen;
    for (i = 0; i < n; i++) {
        PyObject *c = PyTuple_GET_ITEM(v, i);
        if (m->kind == MATH_I32) {
            int overflow;
            long long x;
            if (!PyLong_CheckExact(c))
                return write_leaf(w, o, NULL, v); /* the reference writes it or says why not */
            x = PyLong_AsLongLongAndOverflow(c, &overflow);
            if (overflow || x < INT32_MIN || x > INT32_MAX)
                return write_leaf(w, o, NULL, v); /* the reference writes it or says why not */
            put_u32(p, (uint32_t)(int32_t)x);
            p += 4;
        }
        else {
            double d;
            if (!PyFloat_CheckExact(c))
                return write_leaf(w, o, NULL, v); /* the reference writes it or says why not */
            d = PyFloat_AS_DOUBLE(c);
            if (m->kind == MATH_F64) {
                put_f64(p, d);
                p += 8;
            }
            else {
                float f;
                if (!narrow_f32(d, &f))
                    return write_leaf(w, o, NULL, v); /* the reference writes it or says why not */
                put_f32(p, f);
                p += 4;
            }
        }
    }
    o->p = p; /* only now: a fallback above leaves nothing half-written that matters */
    return 0;
}

/* An Array or Dictionary header and count; the elements follow through the stack. */
static int open_container(Writer *w, Out *o, Stack *st, PyObject *v, int hi, int kind, Py_ssize_t n)
{
    if (w->headers[hi] < 0)
        return fallback("the dialect has no such container");
    if ((size_t)n > MAX_U32)
        return fallback("container count beyond a u32");
    if (out_u32_pair(o, (uint32_t)w->headers[hi], (uint32_t)n) < 0)
        return -1;
    if (RESERVE(o, (size_t)n * (kind == K_DICT ? 16 : 8)) < 0)
        return -1;
    if (n == 0)
        return 0; /* an empty container opens nothing: the depth limit does not count it */
    if (kind != K_DICT) {
        /* A list or tuple of scalars (tags, flags, a row of numbers) is written here whole, without
         * a frame; the first element that is not one is where its frame takes over.  The depth
         * limit counts it as if it had been opened. */
        Py_ssize_t i = 0;
        int r;
        if (st->n + 1 > st->limit)
            return fallback("nested deeper than max_depth");
        if ((r = put_scalars(w, o, items_of(v, kind), &i, n)) != NOT_HERE)
            return r;
        if (stack_push(st, v, kind, n) < 0)
            return -1;
        st->frames[st->n - 1].pos = i;
        return 1;
    }
    return stack_push(st, v, kind, n) < 0 ? -1 : 1;
}

/* A PackedByteArray from an exact bytes or bytearray: header, length, the bytes, zero
 * padding.  No Python code runs between taking the pointer and copying from it. */
static int write_bytes(Writer *w, Out *o, PyObject *v)
{
    Py_ssize_t n = PyBytes_Check(v) ? PyBytes_GET_SIZE(v) : PyByteArray_GET_SIZE(v);
    size_t padded = ((size_t)n + 3) & ~(size_t)3;

    if ((size_t)n > MAX_U32)
        return write_leaf(w, o, NULL, v); /* the reference writes it or says why not */
    if (RESERVE(o, 8 + padded) < 0)
        return -1;
    put_u32(o->p, (uint32_t)w->bytes_header);
    put_u32(o->p + 4, (uint32_t)n);
    memcpy(o->p + 8, PyBytes_Check(v) ? PyBytes_AS_STRING(v) : PyByteArray_AS_STRING(v), (size_t)n);
    memset(o->p + 8 + n, 0, padded - (size_t)n);
    o->p += 8 + padded;
    return 0;
}

/* The elements of a PackedStringArray from its list of strings: each a u32 length (with
 * the NUL where the dialect counts one), strict UTF-8, the NUL, zero padding.  Anything
 * but an exact str, or one strict UTF-8 refuses (a lone surrogate, which some dialects
 * write and some refuse), is the reference's. */
static int write_string_list(Writer *w, Out *o, PyObject *list)
{
    const size_t nul = w->strings_nul ? 1 : 0;
    Py_ssize_t i;

    for (i = 0; i < PyList_GET_SIZE(list); i++) {
        PyObject *v = PyList_GET_ITEM(list, i);
        const char *s;
        Py_ssize_t n;
        size_t body, padded;
        if (!PyUnicode_CheckExact(v))
            return fallback("a PackedStringArray element that is not an exact str");
        if (PyUnicode_IS_COMPACT_ASCII(v)) {
            s = (const char *)PyUnicode_DATA(v);
            n = PyUnicode_GET_LENGTH(v);
        }
        else if ((s = PyUnicode_AsUTF8AndSize(v, &n)) == NULL) {
            PyErr_Clear();
            return fallback("a PackedStringArray element strict UTF-8 refuses");
        }
        body = (size_t)n + nul;
        if (body > MAX_U32)
            return fallback("a PackedStringArray element longer than a u32 length");
        padded = (body + 3) & ~(size_t)3;
        if (RESERVE(o, 4 + padded) < 0)
            return -1;
        put_u32(o->p, (uint32_t)body);
        if (padded)  /* as write_str: the last word zeroed first */
            put_u32(o->p + padded, 0);
        memcpy(o->p + 4, s, (size_t)n);
        o->p += 4 + padded;
    }
    return 0;
}

/* A PackedStringArray: its header and count, then the bytes it was read from when it
 * keeps them in this dialect's layout, else its strings.  parts(value) (codec's
 * _string_parts) says which, so that this file knows nothing of the class's insides. */
static int write_strings(Writer *w, Out *o, PyObject *v)
{
    PyObject *parts;
    int r;

    if (w->strings_parts == NULL) /* cleared by the garbage collector */
        return fallback("the writer has been cleared");
    Py_INCREF(v);
    parts = PyObject_CallOneArg(w->strings_parts, v);
    Py_DECREF(v);
    if (parts == NULL) {
        if (PyErr_ExceptionMatches(PyExc_Exception)) {
            PyErr_Clear();
            return fallback("PackedStringArray parts raised");
        }
        return -1;
    }
    if (PyTuple_CheckExact(parts) && PyTuple_GET_SIZE(parts) == 2 && PyBytes_CheckExact(PyTuple_GET_ITEM(parts, 0))) {
        PyObject *wire = PyTuple_GET_ITEM(parts, 0);
        Py_ssize_t count = PyLong_AsSsize_t(PyTuple_GET_ITEM(parts, 1)), n = PyBytes_GET_SIZE(wire);
        if (count < 0 || (size_t)count > MAX_U32)
            r = fallback("PackedStringArray count");
        else if ((r = RESERVE(o, 8 + (size_t)n)) == 0) {
            put_u32(o->p, (uint32_t)w->strings_header);
            put_u32(o->p + 4, (uint32_t)count);
            memcpy(o->p + 8, PyBytes_AS_STRING(wire), (size_t)n);
            o->p += 8 + n;
        }
    }
    else if (PyList_CheckExact(parts)) {
        if ((size_t)PyList_GET_SIZE(parts) > MAX_U32)
            r = fallback("PackedStringArray count");
        else if ((r = out_u32_pair(o, (uint32_t)w->strings_header, (uint32_t)PyList_GET_SIZE(parts))) == 0)
            r = write_string_list(w, o, parts);
    }
    else {
        r = fallback("PackedStringArray parts: neither (wire, count) nor a list");
    }
    Py_DECREF(parts);
    if (r < 0 && !PyErr_ExceptionMatches(Fallback) && PyErr_ExceptionMatches(PyExc_Exception)) {
        PyErr_Clear();
        r = fallback("PackedStringArray");
    }
    return r;
}

/* Write one value.  0: written; 1: a container was opened (its elements are on the
 * stack); -1: an exception is set (Fallback, or one that must pass). */
static int write_value(Writer *w, Out *o, Stack *st, PyObject *v)
{
    PyTypeObject *tp = Py_TYPE(v);
    Py_ssize_t i;
    int r = put_scalar(w, o, v);

    if (r != NOT_HERE)
        return r;
    /* An exact scalar put_scalar left: the reference writes it or says why not. */
    if (tp == &PyUnicode_Type || tp == &PyLong_Type || tp == &PyFloat_Type || v == Py_None || tp == &PyBool_Type)
        return write_leaf(w, o, NULL, v);
    if (tp == &PyDict_Type)
        return open_container(w, o, st, v, H_DICT, K_DICT, PyDict_GET_SIZE(v));
    if (tp == &PyList_Type)
        return open_container(w, o, st, v, H_ARRAY, K_LIST, PyList_GET_SIZE(v));
    if (tp == &PyTuple_Type)
        return open_container(w, o, st, v, H_ARRAY, K_TUPLE, PyTuple_GET_SIZE(v));
    if ((tp == &PyBytes_Type || tp == &PyByteArray_Type) && w->bytes_header >= 0)
        return write_bytes(w, o, v);
    if ((PyObject *)tp == w->strings_cls)
        return write_strings(w, o, v);
    for (i = 0; i < w->n_math; i++) {
        if (w->math[i].type == tp)
            return write_math(w, o, &w->math[i], v);
    }
    return write_leaf(w, o, st, v);
}

/* The next child of the innermost container, or NULL when it is finished (then popped).
 * *owned is set when the caller holds a reference to the child it must drop. */
static int next_child(Stack *st, PyObject **child, int *owned)
{
    Frame *f = &st->frames[st->n - 1];

    *owned = 0;
    *child = NULL;
    switch (f->kind) {
    case K_LIST:
        /* The leaf callback runs Python code: a list it changed is not what the count says.  As
         * the reference (codec.Encoder.elements), the elements up to the count are written while
         * there are that many, and the size is checked at the end: the caller's code runs as
         * often in both, and a list it keeps growing ends at the count. */
        if (f->pos < f->size) {
            if (f->pos >= PyList_GET_SIZE(f->obj))
                return changed_size(f->obj, "a list changed size while it was written");
            *child = PyList_GET_ITEM(f->obj, f->pos);
            Py_INCREF(*child);  /* held: writing it may run Python code that drops the list's reference */
            *owned = 1;
            f->pos++;
            return 0;
        }
        if (PyList_GET_SIZE(f->obj) != f->size)
            return changed_size(f->obj, "a list changed size while it was written");
        break;
    case K_TUPLE:
        if (f->pos < f->size) {
            *child = PyTuple_GET_ITEM(f->obj, f->pos);  /* the frame holds the tuple, the tuple its items */
            f->pos++;
            return 0;
        }
        break;
    default: { /* K_DICT: the key, then (next time) the value */
        PyObject *key, *value;
        if (f->pending != NULL) {
            *child = f->pending;
            f->pending = NULL;
            *owned = 1;
            return 0;
        }
        if (PyDict_GET_SIZE(f->obj) != f->size)
            return changed_size(f->obj, "a dict changed size while it was written");
        if (PyDict_Next(f->obj, &f->pos, &key, &value)) {
            if (++f->done > f->size)
                return changed_size(f->obj, "a dict changed size while it was written");
            /* Held: writing the key may run Python code. */
            Py_INCREF(value);
            f->pending = value;
            *child = key;
            return 0;
        }
        if (f->done != f->size)
            return changed_size(f->obj, "a dict changed size while it was written");
        break;
    }
    }
    st->n--;
    Py_DECREF(f->obj);
    return 0;
}

/* Runs of scalars (ids, scores, tags, a record's fields): the innermost container's next
 * elements written while each is one put_scalar writes, without a round through the stack
 * and the general dispatch.  The element that ends a run is written at once by the general
 * path (held across it: the general path may run Python code that drops the container's
 * reference), and the run returns: 1 when that element opened a container (the stack has
 * moved), RUN_AGAIN when it was written whole (the run goes on after it, its container's
 * size checked again: Python code may have run), 0 when the run wrote no such element (the
 * container is done, or its next key is not a scalar: next_child's business), -1 on an
 * exception.  A size already changed is left to next_child. */
#define RUN_AGAIN 2

static int write_element(Writer *w, Out *o, Stack *st, PyObject *v)
{
    int r;

    Py_INCREF(v);
    r = write_value(w, o, st, v);
    Py_DECREF(v);
    return r == 0 ? RUN_AGAIN : r;
}

static int write_sequence_run(Writer *w, Out *o, Stack *st, Frame *f)
{
    PyObject **items = items_of(f->obj, f->kind);
    int r;

    if (f->kind == K_LIST && PyList_GET_SIZE(f->obj) != f->size)
        return 0;
    if ((r = put_scalars(w, o, items, &f->pos, f->size)) != NOT_HERE)
        return r;
    return write_element(w, o, st, items[f->pos++]);
}

/* A dict's entries while both key and value are scalars.  An entry whose key is one but
 * whose value is not has its value written by the general path; one whose key is not is
 * left to next_child. */
static int write_dict_run(Writer *w, Out *o, Stack *st, Frame *f)
{
    PyObject *key, *value;
    Py_ssize_t pos = f->pos;
    int r;

    if (f->pending != NULL || PyDict_GET_SIZE(f->obj) != f->size)
        return 0;
    while (f->done < f->size && PyDict_Next(f->obj, &pos, &key, &value)) {
        if ((r = put_scalar(w, o, key)) != 0)
            return r < 0 ? -1 : 0;
        f->pos = pos;
        f->done++;
        if ((r = put_scalar(w, o, value)) != 0)
            return r == NOT_HERE ? write_element(w, o, st, value) : -1;
    }
    return 0;
}

/* Every element of the containers open on the stack, innermost first, until it is empty. */
static int write_children(Writer *w, Out *o, Stack *st)
{
    while (st->n > 0) {
        Frame *f = &st->frames[st->n - 1];
        PyObject *child;
        int owned, r;
        int run = f->kind == K_DICT ? write_dict_run(w, o, st, f) : write_sequence_run(w, o, st, f);
        if (run != 0) {
            if (run < 0)
                return -1;
            continue; /* a container was opened (its elements come first), or the run goes on */
        }
        if (next_child(st, &child, &owned) < 0)
            return -1;
        if (child == NULL)
            continue; /* a container finished */
        r = write_value(w, o, st, child);
        if (owned)
            Py_DECREF(child); /* a pushed child holds its own reference */
        if (r < 0)
            return -1;
    }
    return 0;
}

static PyObject *Writer_encode(Writer *self, PyObject *value)
{
    Out out;
    Stack st = {NULL, 0, 0, self->max_depth < HARD_MAX_DEPTH ? self->max_depth : HARD_MAX_DEPTH};
    PyObject *result;

    out_init(&out);
    if (write_value(self, &out, &st, value) < 0)
        goto error;
    if (write_children(self, &out, &st) < 0)
        goto error;
    PyMem_Free(st.frames);
    result = out_finish(&out);
    if (result != NULL)
        return result;
    goto convert;

error:
    stack_free(&st);
    out_free(&out);
convert:
    /* Our own failures (no memory, a size limit) are the reference's to meet or report; a
     * caller's own exception and a size change are the outcome, as from the reference. */
    if (!out.passthrough && !PyErr_ExceptionMatches(Fallback) && PyErr_ExceptionMatches(PyExc_Exception) &&
        !PyErr_ExceptionMatches(LeafError)) {
        PyObject *type, *val, *tb;
        PyErr_Fetch(&type, &val, &tb);
        PyErr_Format(Fallback, "%s in the compiled writer", ((PyTypeObject *)type)->tp_name);
        Py_XDECREF(type);
        Py_XDECREF(val);
        Py_XDECREF(tb);
    }
    return NULL;
}

/* --- construction and the type's plumbing ------------------------------------------- */

static void writer_clear_math(Writer *self)
{
    Py_ssize_t i;
    MathEntry *math = self->math;
    Py_ssize_t n = self->n_math;

    self->math = NULL;
    self->n_math = 0;
    for (i = 0; i < n; i++) {
        Py_DECREF(math[i].type);
        Py_DECREF(math[i].header);
    }
    PyMem_Free(math);
}

/* Copy the `math` dict into a C table, checking everything the encoder then relies on. */
static int writer_set_math(Writer *self, PyObject *math)
{
    PyObject *key, *value;
    Py_ssize_t pos = 0, n;

    if (!PyDict_Check(math)) {
        PyErr_SetString(PyExc_TypeError, "math must be a dict {class: (header bytes, count, kind)}");
        return -1;
    }
    n = PyDict_GET_SIZE(math);
    self->math = PyMem_Calloc(n ? (size_t)n : 1, sizeof(MathEntry));
    if (self->math == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    while (PyDict_Next(math, &pos, &key, &value)) {
        PyObject *header;
        Py_ssize_t count;
        long kind;
        MathEntry *m;

        if (self->n_math >= n) {
            PyErr_SetString(PyExc_RuntimeError, "math changed size during construction");
            return -1;
        }
        if (!PyType_Check(key) || !PyType_IsSubtype((PyTypeObject *)key, &PyTuple_Type)) {
            PyErr_SetString(PyExc_TypeError, "math keys must be tuple subclasses");
            return -1;
        }
        if (!PyTuple_Check(value) || PyTuple_GET_SIZE(value) != 3) {
            PyErr_SetString(PyExc_TypeError, "math values must be (header bytes, count, kind)");
            return -1;
        }
        header = PyTuple_GET_ITEM(value, 0);
        if (!PyBytes_Check(header)) {
            PyErr_SetString(PyExc_TypeError, "a math header must be bytes");
            return -1;
        }
        count = PyLong_AsSsize_t(PyTuple_GET_ITEM(value, 1));
        if (count == -1 && PyErr_Occurred())
            return -1;
        kind = PyLong_AsLong(PyTuple_GET_ITEM(value, 2));
        if (kind == -1 && PyErr_Occurred())
            return -1;
        if (count < 0 || count > 1024 || kind < MATH_F32 || kind > MATH_F64) {
            PyErr_SetString(PyExc_ValueError, "a math count must be 0-1024 and its kind 0, 1 or 2");
            return -1;
        }
        m = &self->math[self->n_math++];
        Py_INCREF(key);
        Py_INCREF(header);
        m->type = (PyTypeObject *)key;
        m->header = header;
        m->count = count;
        m->kind = (int)kind;
    }
    return 0;
}

static PyObject *Writer_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"headers", "int_mode", "float_mode", "math", "leaf", "max_depth", "bytes_header",
                             "strings", NULL};
    PyObject *headers, *math, *leaf, *strings = Py_None;
    int int_mode, float_mode;
    Py_ssize_t max_depth, i;
    long long bytes_header = -1, strings_header = -1;
    PyObject *strings_cls = NULL, *strings_parts = NULL;
    int strings_nul = 0;
    Writer *self;

    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!iiOOn|$LO:Writer", kwlist, &PyTuple_Type, &headers, &int_mode,
                                     &float_mode, &math, &leaf, &max_depth, &bytes_header, &strings))
        return NULL;
    /* Now, not when a callback has failed: no import runs with an exception pending, nor at
     * the bottom of a deep recursion. */
    if (load_reference_errors() < 0)
        return NULL;
    if (bytes_header > 0xFFFFFFFFLL) {
        PyErr_SetString(PyExc_ValueError, "bytes_header must fit in a u32 (-1: none)");
        return NULL;
    }
    if (strings != Py_None) {
        if (!PyTuple_Check(strings) || PyTuple_GET_SIZE(strings) != 4 || !PyType_Check(PyTuple_GET_ITEM(strings, 0)) ||
            !PyCallable_Check(PyTuple_GET_ITEM(strings, 3))) {
            PyErr_SetString(PyExc_TypeError, "strings must be (class, header, nul, parts) or None");
            return NULL;
        }
        strings_header = PyLong_AsLongLong(PyTuple_GET_ITEM(strings, 1));
        if (strings_header == -1 && PyErr_Occurred())
            return NULL;
        if (strings_header < 0 || strings_header > 0xFFFFFFFFLL) {
            PyErr_SetString(PyExc_ValueError, "the strings header must fit in a u32");
            return NULL;
        }
        if ((strings_nul = PyObject_IsTrue(PyTuple_GET_ITEM(strings, 2))) < 0)
            return NULL;
        strings_cls = PyTuple_GET_ITEM(strings, 0);
        strings_parts = PyTuple_GET_ITEM(strings, 3);
    }
    if (PyTuple_GET_SIZE(headers) != N_HEADERS) {
        PyErr_SetString(PyExc_ValueError, "headers must be 7 ints: nil, bool, int, float, String, Array, "
                                          "Dictionary (-1: none)");
        return NULL;
    }
    if (int_mode < INT_AUTO || int_mode > INT_I32 || float_mode < FLOAT_AUTO || float_mode > FLOAT_F64) {
        PyErr_SetString(PyExc_ValueError, "int_mode and float_mode must be 0-3");
        return NULL;
    }
    if (!PyCallable_Check(leaf)) {
        PyErr_SetString(PyExc_TypeError, "leaf must be callable");
        return NULL;
    }
    self = (Writer *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    for (i = 0; i < N_HEADERS; i++) {
        long long h = PyLong_AsLongLong(PyTuple_GET_ITEM(headers, i));
        if (h == -1 && PyErr_Occurred())
            goto error;
        if (h > 0xFFFFFFFFLL) {
            PyErr_SetString(PyExc_ValueError, "a header must fit in a u32");
            goto error;
        }
        self->headers[i] = h < 0 ? -1 : (int64_t)h;
    }
    self->int_mode = int_mode;
    self->float_mode = float_mode;
    self->max_depth = max_depth;
    Py_INCREF(leaf);
    self->leaf = leaf;
    self->bytes_header = bytes_header < 0 ? -1 : (int64_t)bytes_header;
    self->strings_header = strings_header;
    self->strings_nul = strings_nul;
    Py_XINCREF(strings_cls);
    self->strings_cls = strings_cls;
    Py_XINCREF(strings_parts);
    self->strings_parts = strings_parts;
    if (writer_set_math(self, math) < 0)
        goto error;
    return (PyObject *)self;

error:
    Py_DECREF(self);
    return NULL;
}

static int Writer_traverse(Writer *self, visitproc visit, void *arg)
{
    Py_ssize_t i;

    Py_VISIT(self->leaf);
    Py_VISIT(self->strings_cls);
    Py_VISIT(self->strings_parts);
    Py_VISIT(self->lone);
    Py_VISIT(self->after);
    for (i = 0; i < self->n_math; i++) {
        Py_VISIT(self->math[i].type);
        Py_VISIT(self->math[i].header);
    }
    return 0;
}

/* The leaf is usually a bound method of the Encoder that holds this Writer: a cycle the
 * collector must be able to break. */
static int Writer_clear(Writer *self)
{
    Py_CLEAR(self->leaf);
    Py_CLEAR(self->strings_cls);
    Py_CLEAR(self->strings_parts);
    Py_CLEAR(self->lone);
    Py_CLEAR(self->after);
    writer_clear_math(self);
    return 0;
}

static void Writer_dealloc(Writer *self)
{
    PyObject_GC_UnTrack(self);
    Writer_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *Writer_get_max_depth(Writer *self, void *closure)
{
    return PyLong_FromSsize_t(self->max_depth);
}

/* after(value, error): the Python path, for a lone buffer (error None) or what encode left. */
static PyObject *call_after(Writer *self, PyObject *value, PyObject *error)
{
    PyObject *args[2] = {value, error};
    if (self->after == NULL) {
        PyErr_SetString(PyExc_TypeError, "Writer.dumps before Writer.bind");
        return NULL;
    }
    return PyObject_Vectorcall(self->after, args, 2, NULL);
}

/* gf.dumps' own path: a small message costs about as much to reach as to write, so the
 * dispatch Encoder.encode makes in Python (a lone buffer? the compiled writer, then its
 * Fallback or LeafError) is made here, and the Python side is called only for those. */
static PyObject *Writer_dumps(Writer *self, PyObject *value)
{
    PyObject *result, *type, *val, *tb;
    int lone = self->lone == NULL ? 0 : PySet_Contains(self->lone, (PyObject *)Py_TYPE(value));

    if (lone < 0)
        return NULL;
    if (lone)
        return call_after(self, value, Py_None);
    result = Writer_encode(self, value);
    if (result != NULL || !(PyErr_ExceptionMatches(Fallback) || PyErr_ExceptionMatches(LeafError)))
        return result;
    PyErr_Fetch(&type, &val, &tb);
    PyErr_NormalizeException(&type, &val, &tb);
    result = val == NULL ? NULL : call_after(self, value, val);
    Py_XDECREF(type);
    Py_XDECREF(val);
    Py_XDECREF(tb);
    return result;
}

static PyObject *Writer_bind(Writer *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || !PyAnySet_Check(args[0]) || !PyCallable_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "bind(lone: set, after: callable)");
        return NULL;
    }
    Py_INCREF(args[0]);
    Py_XSETREF(self->lone, args[0]);
    Py_INCREF(args[1]);
    Py_XSETREF(self->after, args[1]);
    Py_RETURN_NONE;
}

/* --- a run of store_var records: encode_frames ---------------------------------------------------
 *
 * A save written record by record paid one call, one bytes object and one join per record, and
 * a Python loop around them.  Here every record is written into one buffer behind a hole for its
 * length, which is filled in when the record is written: the file's plaintext in one call and one
 * allocation.  Anything else (a Fallback, a value's error) is the reference's, record by record:
 * the caller writes the records one at a time then, and names the record of an error. */

static PyObject *Writer_encode_frames(Writer *self, PyObject *const *args, Py_ssize_t nargs)
{
    Out out;
    Stack st = {NULL, 0, 0, self->max_depth < HARD_MAX_DEPTH ? self->max_depth : HARD_MAX_DEPTH};
    PyObject *values, *result;
    Py_ssize_t i;
    int big;

    if (nargs != 2 || !PyList_CheckExact(args[0])) {
        PyErr_SetString(PyExc_TypeError, "encode_frames(values: list, big_endian)");
        return NULL;
    }
    if ((big = PyObject_IsTrue(args[1])) < 0)
        return NULL;
    values = args[0];
    Py_INCREF(values);
    out_init(&out);
    for (i = 0; i < PyList_GET_SIZE(values); i++) {
        PyObject *value = PyList_GET_ITEM(values, i);
        size_t at, length;
        int r;
        if (RESERVE(&out, 4) < 0)
            goto error;
        at = (size_t)(out.p - out.base);
        out.p += 4;
        Py_INCREF(value);  /* a callback may change the list */
        r = write_value(self, &out, &st, value);
        Py_DECREF(value);
        if (r < 0)
            goto error;
        if (write_children(self, &out, &st) < 0)
            goto error;
        length = (size_t)(out.p - out.base) - at - 4;
        if (length > 0x7FFFFFFFu) {  /* a frame the engine cannot read back: the reference refuses it */
            fallback("a record over 2**31 - 1 bytes");
            goto error;
        }
        if (big) {
            unsigned char *q = (unsigned char *)out.base + at;
            q[0] = (unsigned char)(length >> 24);
            q[1] = (unsigned char)(length >> 16);
            q[2] = (unsigned char)(length >> 8);
            q[3] = (unsigned char)length;
        }
        else
            put_u32(out.base + at, (uint32_t)length);
    }
    Py_DECREF(values);
    PyMem_Free(st.frames);
    result = out_finish(&out);
    if (result != NULL)
        return result;
    goto convert;

error:
    Py_DECREF(values);
    stack_free(&st);
    out_free(&out);
convert:
    /* As in Writer_encode: our own failures are Fallback, a caller's exception goes on. */
    if (!out.passthrough && !PyErr_ExceptionMatches(Fallback) && PyErr_ExceptionMatches(PyExc_Exception) &&
        !PyErr_ExceptionMatches(LeafError)) {
        PyObject *type, *val, *tb;
        PyErr_Fetch(&type, &val, &tb);
        PyErr_Format(Fallback, "%s in the compiled writer", ((PyTypeObject *)type)->tp_name);
        Py_XDECREF(type);
        Py_XDECREF(val);
        Py_XDECREF(tb);
    }
    return NULL;
}

/* --- end of encode_frames ------------------------------------------------------------------------ */

static PyMethodDef Writer_methods[] = {
    {"encode_frames", (PyCFunction)(void (*)(void))Writer_encode_frames, METH_FASTCALL,
     "encode_frames(values: list, big_endian) -> bytes\n\nThe values as consecutive store_var records (each behind "
     "its u32 length), the reference's bytes for each; Fallback or LeafError when the reference must decide."},
    {"encode", (PyCFunction)Writer_encode, METH_O,
     "encode(value) -> bytes\n\nThe reference's bytes for value, or Fallback when the reference must decide."},
    {"dumps", (PyCFunction)Writer_dumps, METH_O,
     "dumps(value) -> bytes\n\nEncoder.encode(value) with no Python frame on the way for what encode writes:\n"
     "a lone buffer (a class in bind's set) and whatever encode leaves go to after(value, error)\n"
     "(error None, or the Fallback or LeafError raised), whose result or error is this call's."},
    {"bind", (PyCFunction)(void (*)(void))Writer_bind, METH_FASTCALL,
     "bind(lone, after)\n\nThe set of classes dumps leaves to after(value, None), and after."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Writer_getset[] = {
    {"max_depth", (getter)Writer_get_max_depth, NULL, "the deepest nesting of non-empty containers", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyDoc_STRVAR(Writer_doc,
"Writer(headers, int_mode, float_mode, math, leaf, max_depth)\n\n"
"One dialect's compiled writer.  headers: (nil, bool, int, float, String, Array, Dictionary)\n"
"type ids, -1 where the dialect has none; int_mode 0-3: auto, flag64, i64, i32;\n"
"float_mode 0-3: auto, flag64, f32, f64; math: {exact class: (header bytes, count, kind)}\n"
"with kind 0 float32, 1 int32, 2 float64 (a snapshot is taken); leaf(value) -> bytes: the\n"
"reference's bytes for a value without children; max_depth: the deepest nesting of\n"
"non-empty containers.  Keyword-only: bytes_header, the PackedByteArray header (-1: bytes\n"
"go through leaf); strings, (class, header, nul, parts) for PackedStringArray, where\n"
"parts(value) gives (wire bytes, count) or the list of its strings (None: through leaf).");

static PyTypeObject WriterType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "godot_formats.core._cencode.Writer",
    .tp_basicsize = sizeof(Writer),
    .tp_dealloc = (destructor)Writer_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = Writer_doc,
    .tp_traverse = (traverseproc)Writer_traverse,
    .tp_clear = (inquiry)Writer_clear,
    .tp_methods = Writer_methods,
    .tp_getset = Writer_getset,
    .tp_new = Writer_new,
};

PyDoc_STRVAR(module_doc,
"The compiled fast path of godot_formats.codec.Encoder.\n\n"
"Writer.encode returns exactly the reference's bytes, or raises Fallback for anything it\n"
"does not handle exactly; the caller then encodes the value with the reference.");

/* --- one big buffer, copied once ------------------------------------------------------ */

#define CONCAT_MAX_PARTS 8

/* -- unchanged: whether a value needs no change for a conversion (saves/conversion.py) ------ */

#define UNCHANGED_SURROGATES 1u  /* the target stores only valid UTF-8: a lone surrogate changes */
#define UNCHANGED_INT32 2u       /* the target writes ints in 32 bits */
#define UNCHANGED_FLOAT32 4u     /* the target writes floats in 32 bits */


static int
f32_exact(double d)
{
    return isnan(d) || isinf(d) || (fabs(d) <= FLT_MAX && (double)(float)d == d);
}

/* The math types given as tuples of floats (Vector2 ...) whose components must be exact in
 * float32 (a single-precision target): 1 all exact, 0 not, -2 not such a value. */
static int
real_tuple_unchanged(PyObject *v, PyObject *real_tuple_types)
{
    Py_ssize_t i, n;
    PyTypeObject *tp = Py_TYPE(v);
    if (!PyTuple_Check(v))
        return -2;
    n = PyTuple_GET_SIZE(real_tuple_types);
    for (i = 0; i < n; i++)
        if ((PyObject *)tp == PyTuple_GET_ITEM(real_tuple_types, i))
            break;
    if (i == n)
        return -2;
    for (i = 0; i < PyTuple_GET_SIZE(v); i++) {
        PyObject *c = PyTuple_GET_ITEM(v, i);
        if (Py_TYPE(c) != &PyFloat_Type)
            return -2;
        if (!f32_exact(PyFloat_AS_DOUBLE(c)))
            return 0;
    }
    return 1;
}

/* 1: this scalar stays as it is; 0: it changes (or is not an exact scalar: -2). */
static int
scalar_unchanged(PyObject *v, unsigned flags, PyObject *real_types)
{
    PyTypeObject *tp = Py_TYPE(v);
    if (tp == &PyUnicode_Type)
        return !(flags & UNCHANGED_SURROGATES) || !has_surrogate(v);
    if (tp == &PyLong_Type) {
        int overflow;
        long long n;
        if (!(flags & UNCHANGED_INT32))
            return 1;
        n = PyLong_AsLongLongAndOverflow(v, &overflow);
        if (n == -1 && PyErr_Occurred()) {
            PyErr_Clear();
            return 0;
        }
        return !overflow && n >= INT32_MIN && n <= INT32_MAX;
    }
    if (tp == &PyFloat_Type) {
        double d = PyFloat_AS_DOUBLE(v);
        if (!(flags & UNCHANGED_FLOAT32) || isnan(d) || isinf(d))
            return 1;
        return f32_exact(d);
    }
    if (v == Py_None || tp == &PyBool_Type)
        return 1;
    return real_tuple_unchanged(v, real_types);
}

PyDoc_STRVAR(unchanged_doc,
"unchanged(flags, leaf, keys_agree, max_depth, real_types, value) -> bool\n\n"
"(``value`` last: a conversion plan binds the rest once, with functools.partial.)\n"
"Whether ``value`` needs no change for a conversion: exact lists and dicts (each dict's keys\n"
"all exact str or int, or ``keys_agree(d)`` true), nested at most ``max_depth`` deep, whose\n"
"exact str, int, float, bool and None leaves pass ``flags`` (1: no lone surrogate, 2: int fits\n"
"32 bits, 4: float exact in 32 bits) and whose other leaves pass ``leaf(v)``; an instance of\n"
"one of ``real_types`` (tuple subclasses: Vector2 ...) of exact floats passes when each is\n"
"exact in float32.  Walks with an\n"
"explicit stack; any error of a callback is raised.");

#define UNCHANGED_SMALL 32  /* the walk's first stack block, on the C stack: a record allocates none */

static PyObject *
unchanged(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    PyObject *stack0[UNCHANGED_SMALL], **stack = stack0;
    Py_ssize_t depths0[UNCHANGED_SMALL], *depths = depths0, top = 0, cap = UNCHANGED_SMALL, max_depth;
    unsigned long flags;
    PyObject *leaf, *keys_agree, *real_types, *result = NULL, *v = NULL;
    int ok = 1;

    if (nargs != 6 || !PyTuple_Check(args[4])) {
        PyErr_SetString(PyExc_TypeError, "unchanged(flags, leaf, keys_agree, max_depth, real_types: tuple, value)");
        return NULL;
    }
    flags = PyLong_AsUnsignedLong(args[0]);
    max_depth = PyLong_AsSsize_t(args[3]);
    if (PyErr_Occurred())
        return NULL;
    leaf = args[1];
    keys_agree = args[2];
    real_types = args[4];
#define PUSH(obj, d) do { \
        if (top == cap) { \
            Py_ssize_t ncap = 2 * cap; \
            PyObject **ns = PyMem_Malloc((size_t)ncap * sizeof(PyObject *)); \
            Py_ssize_t *nd = PyMem_Malloc((size_t)ncap * sizeof(Py_ssize_t)); \
            if (ns == NULL || nd == NULL) { PyMem_Free(ns); PyMem_Free(nd); PyErr_NoMemory(); goto done; } \
            memcpy(ns, stack, (size_t)top * sizeof(PyObject *)); \
            memcpy(nd, depths, (size_t)top * sizeof(Py_ssize_t)); \
            if (stack != stack0) { PyMem_Free(stack); PyMem_Free(depths); } \
            stack = ns; \
            depths = nd; \
            cap = ncap; \
        } \
        Py_INCREF(obj); \
        stack[top] = (obj); \
        depths[top++] = (d); \
    } while (0)

    PUSH(args[5], 0);
    while (ok && top > 0) {
        Py_ssize_t depth;
        PyTypeObject *tp;
        v = stack[--top];
        depth = depths[top];
        tp = Py_TYPE(v);
        if (tp == &PyList_Type || tp == &PyDict_Type) {
            if (depth >= max_depth) {
                ok = 0;
            }
            else if (tp == &PyList_Type) {
                Py_ssize_t i;
                for (i = 0; ok && i < PyList_GET_SIZE(v); i++) {
                    PyObject *x = PyList_GET_ITEM(v, i);
                    PyTypeObject *tx = Py_TYPE(x);
                    if (tx == &PyList_Type || tx == &PyDict_Type)
                        PUSH(x, depth + 1);
                    else if ((ok = scalar_unchanged(x, (unsigned)flags, real_types)) == -2) {
                        PyObject *res;
                        Py_INCREF(x);  /* the callback may change the list */
                        res = PyObject_CallOneArg(leaf, x);
                        Py_DECREF(x);
                        if (res == NULL) goto done;
                        ok = PyObject_IsTrue(res);
                        Py_DECREF(res);
                        if (ok < 0) goto done;
                    }
                }
            }
            else {
                Py_ssize_t pos = 0;
                PyObject *k, *x;
                int plain_keys = 1;
                while (ok && PyDict_Next(v, &pos, &k, &x)) {
                    PyObject *pair[2] = {k, x};
                    int j;
                    if (Py_TYPE(k) != &PyUnicode_Type && Py_TYPE(k) != &PyLong_Type)
                        plain_keys = 0;
                    for (j = 0; ok && j < 2; j++) {
                        PyTypeObject *tx = Py_TYPE(pair[j]);
                        if (tx == &PyList_Type || tx == &PyDict_Type)
                            PUSH(pair[j], depth + 1);
                        else if ((ok = scalar_unchanged(pair[j], (unsigned)flags, real_types)) == -2) {
                            PyObject *res;
                            Py_INCREF(pair[j]);  /* the callback may change the dict */
                            res = PyObject_CallOneArg(leaf, pair[j]);
                            Py_DECREF(pair[j]);
                            if (res == NULL) goto done;
                            ok = PyObject_IsTrue(res);
                            Py_DECREF(res);
                            if (ok < 0) goto done;
                        }
                    }
                }
                if (ok && !plain_keys) {
                    PyObject *res = PyObject_CallOneArg(keys_agree, v);
                    if (res == NULL) goto done;
                    ok = PyObject_IsTrue(res);
                    Py_DECREF(res);
                    if (ok < 0) goto done;
                }
            }
        }
        else if ((ok = scalar_unchanged(v, (unsigned)flags, real_types)) == -2) {
            PyObject *res = PyObject_CallOneArg(leaf, v);
            if (res == NULL) goto done;
            ok = PyObject_IsTrue(res);
            Py_DECREF(res);
            if (ok < 0) goto done;
        }
        Py_CLEAR(v);
    }
    result = PyBool_FromLong(ok > 0);
done:
#undef PUSH
    Py_XDECREF(v);
    while (top > 0)
        Py_DECREF(stack[--top]);
    if (stack != stack0) {
        PyMem_Free(stack);
        PyMem_Free(depths);
    }
    return result;
}

PyDoc_STRVAR(concat_doc,
"concat(*parts) -> bytes\n\n"
"b\"\".join(parts) for a few contiguous buffers (a lone packed array: header, data, padding),\n"
"its one copy into memory advised for huge pages when it is big.  Fallback for anything\n"
"else (a non-contiguous view, too many parts): the caller joins them itself.");

static PyObject *concat(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    Py_buffer views[CONCAT_MAX_PARTS];
    Py_ssize_t i, got = 0, total = 0;
    PyObject *result = NULL;
    char *p;

    if (nargs > CONCAT_MAX_PARTS) {
        PyErr_SetString(Fallback, "concat: too many parts");
        return NULL;
    }
    for (; got < nargs; got++) {
        if (PyObject_GetBuffer(args[got], &views[got], PyBUF_SIMPLE) < 0)
            goto fail;
        if (views[got].len > PY_SSIZE_T_MAX - total) {
            got++;
            PyErr_SetString(PyExc_OverflowError, "concat: too large");
            goto fail;
        }
        total += views[got].len;
    }
    if ((result = PyBytes_FromStringAndSize(NULL, total)) == NULL)
        goto fail;
    p = PyBytes_AS_STRING(result);
    advise_huge_pages(p, (size_t)total);
    for (i = 0; i < nargs; i++) {
        memcpy(p, views[i].buf, (size_t)views[i].len);
        p += views[i].len;
    }
    for (i = 0; i < got; i++)
        PyBuffer_Release(&views[i]);
    return result;
fail:
    for (i = 0; i < got; i++)
        PyBuffer_Release(&views[i]);
    if (PyErr_ExceptionMatches(PyExc_Exception)) {
        PyErr_Clear();
        PyErr_SetString(Fallback, "concat: not contiguous buffers");
    }
    return NULL;
}

static PyMethodDef module_methods[] = {
    {"concat", (PyCFunction)(void (*)(void))concat, METH_FASTCALL, concat_doc},
    {"unchanged", (PyCFunction)(void (*)(void))unchanged, METH_FASTCALL, unchanged_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "godot_formats.core._cencode",
    .m_doc = module_doc,
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC PyInit__cencode(void)
{
    PyObject *m;

    if (PyType_Ready(&WriterType) < 0)
        return NULL;
    m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    if (Fallback == NULL) {
        Fallback = PyErr_NewExceptionWithDoc(
            "godot_formats.core._cencode.Fallback",
            "The compiled writer leaves this value to the reference encoder.", PyExc_Exception, NULL);
        if (Fallback == NULL)
            goto error;
    }
    Py_INCREF(Fallback);
    if (PyModule_AddObject(m, "Fallback", Fallback) < 0) {
        Py_DECREF(Fallback);
        goto error;
    }
    if (LeafError == NULL) {
        LeafError = PyErr_NewExceptionWithDoc(
            "godot_formats.core._cencode.LeafError",
            "A value's row writer refused it: args are (value, error), for the caller to name the path.",
            PyExc_Exception, NULL);
        if (LeafError == NULL)
            goto error;
    }
    Py_INCREF(LeafError);
    if (PyModule_AddObject(m, "LeafError", LeafError) < 0) {
        Py_DECREF(LeafError);
        goto error;
    }
    Py_INCREF(&WriterType);
    if (PyModule_AddObject(m, "Writer", (PyObject *)&WriterType) < 0) {
        Py_DECREF(&WriterType);
        goto error;
    }
    return m;

error:
    Py_DECREF(m);
    return NULL;
}
