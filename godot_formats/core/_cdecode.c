/*
 * godot_formats.core._cdecode: a compiled fast path in front of the reference decoder.
 *
 * The pure-Python decoder (godot_formats/codec.py: Decoder, _Walk) is the statement of
 * the rules.  This module reads the values common in save data and network messages
 * itself -- Nil, bool, int, float, String, StringName, the flagless math types, untyped
 * and typed Arrays and Dictionaries, Object ids, packed arrays -- and for anything else
 * calls back into the reference's own payload readers.  Whenever it meets something it
 * does not handle *exactly* (an error of any kind, an odd flag, a limit reached) it
 * raises Fallback, and the caller decodes the same bytes again with the reference, which
 * returns the value or raises the precise error.  So this code only has to be right when
 * it does not fall back, and it may fall back whenever it is unsure.
 *
 * The input comes from the network: every read is checked against `end`, a count is
 * checked against the bytes left before anything is sized by it, containers are walked
 * with an explicit heap stack (no C recursion), and integers are assembled from bytes
 * (no unaligned loads, no signed overflow, any host byte order).
 *
 * The Python side (codec._CReader) builds one Reader per Decoder from the dialect's
 * tables; see the Reader docstring below for the table format.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "_bigbuf.h"

/* Kinds of table entry: what the wire id's payload is (codec._CReader.PY ...). */
enum {
    K_PY = 0,         /* the reference's reader for this id (py_readers[id]) */
    K_NIL,
    K_BOOL,
    K_INT,            /* arg 0: int32, int64 with FLAG_64; arg 1: always int64 */
    K_FLOAT,          /* arg 0: float32, float64 with FLAG_64; 1: always f32; 2: always f64 */
    K_STRING,
    K_STRING_NAME,    /* arg: the StringName class */
    K_MATH,           /* arg: (make, make_arg, count, is_int[, wide]) */
    K_ARRAY,          /* arg: whether the dialect has typed Arrays */
    K_DICTIONARY,     /* arg: whether the dialect has typed Dictionaries */
    K_OBJECT,         /* arg: the EncodedObjectAsID class */
    K_BYTES,          /* PackedByteArray */
    K_PACKED,         /* arg: (from_bytes, typecode, item_size, width) */
    K_STRINGS,        /* PackedStringArray; arg: (from_wire, cls, nul) */
    K_COUNT
};

/* The kinds' names, in the enum's order: the module's KINDS, the one list the Python side
 * (codec._CReader) and the tests build their tables from. */
static const char *const KIND_NAMES[K_COUNT] = {
    "PY", "NIL", "BOOL", "INT", "FLOAT", "STRING", "STRING_NAME", "MATH", "ARRAY", "DICTIONARY", "OBJECT",
    "BYTES", "PACKED", "STRINGS",
};

#define FLAG_64 (1u << 16)
#define COUNT_MASK 0x7FFFFFFFu
#define INT32_MAX_U 0x7FFFFFFFu
/* The longest PackedStringArray element kept in wire form (codec._TABLE_LENGTHS). */
#define WIRE_MAX_LEN 4096
/* Math types have at most 16 numbers (Projection); anything larger is a table error. */
#define MATH_MAX 16
/* Short ASCII strings are shared within one decode (see make_text): the keys of records
 * and the small enum-like values of save data repeat, and a shared str is neither
 * allocated nor hashed again.  Only inputs this long use the cache: below it, setting the
 * cache up costs more than it saves. */
#define TEXT_CACHE_SIZE 1024     /* a power of two */
#define TEXT_CACHE_MAX_LEN 24
#define TEXT_CACHE_MIN_INPUT 256
/* The stacks' first blocks, inside the State (see grow). */
#define SMALL_FRAMES 16
#define SMALL_VALS 32

static PyObject *Fallback;       /* _cdecode.Fallback */
static PyObject *tuple_new;      /* tuple.__new__, to spot the math types that are tuples */

/* --- little-endian reads, portable and alignment-free ------------------------------ */

static inline uint32_t
rd_u32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t
rd_u64(const unsigned char *p)
{
    return (uint64_t)rd_u32(p) | (uint64_t)rd_u32(p + 4) << 32;
}

/* Two's complement without relying on implementation-defined conversions. */
static inline long long
as_i32(uint32_t u)
{
    return u <= INT32_MAX_U ? (long long)u : (long long)u - 0x100000000LL;
}

static inline long long
as_i64(uint64_t u)
{
    return u <= (uint64_t)INT64_MAX ? (long long)u : -(long long)(~u) - 1;
}

/* IEEE floats share the integers' byte order on every platform CPython runs on, so the
 * assembled integer's bits are the float's. */
static inline double
rd_f32(const unsigned char *p)
{
    uint32_t u = rd_u32(p);
    float f;
    memcpy(&f, &u, sizeof f);
    return (double)f;
}

static inline double
rd_f64(const unsigned char *p)
{
    uint64_t u = rd_u64(p);
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

/* A double as the engine's float32 real_t holds it: rounded to nearest, and past float32's
 * range infinity (IEEE 754's result; written out because C leaves an out-of-range
 * conversion undefined).  FLT_MAX plus half its last unit and beyond rounds to infinity. */
static inline double
narrow_to_f32(double d)
{
    if (d >= 3.4028235677973366e38)
        return Py_HUGE_VAL;
    if (d <= -3.4028235677973366e38)
        return -Py_HUGE_VAL;
    return (double)(float)d;
}

/* --- the Reader's tables ------------------------------------------------------------- */

/* One wire id, unpacked from its (kind, arg) entry once, at construction.  The object
 * pointers are borrowed from the table and py_readers tuples, which the Reader owns and
 * which are immutable. */
typedef struct {
    int kind;
    int sub;              /* INT/FLOAT mode, ARRAY/DICTIONARY typed, MATH is_int */
    int count;            /* MATH: how many numbers */
    int fast_tuple;       /* MATH: make is tuple.__new__ on a plain tuple subclass */
    int untrack;          /* MATH: and that subclass holds nothing but its numbers (see atomic_tuple_subclass) */
    int wide;             /* MATH: with FLAG_64, doubles: 0 not read here, 1 kept, 2 narrowed to float32 */
    Py_ssize_t size;      /* PACKED: bytes per element (item_size * width) */
    unsigned mark;        /* the mark a value of this id with the 64-bit flag leaves (an int: if it fits 32 bits) */
    PyObject *reader;     /* py_readers[id], or NULL */
    PyObject *obj;        /* class (STRING_NAME, OBJECT), make (MATH), from_bytes (PACKED) */
    PyObject *obj2;       /* make_arg (MATH), typecode (PACKED) */
} Slot;

typedef struct {
    PyObject_HEAD
    uint32_t mask;
    Py_ssize_t nslots;
    Slot *slots;
    PyObject *table;
    PyObject *py_readers;
    PyObject *typed_array_head;
    PyObject *typed_dict_head;
    Py_ssize_t max_depth;
    long long max_elements;   /* -1: no limit */
    long long int32_header;   /* the header of a plain 32-bit int (no flags), or -1 */
    /* What loads() needs besides (set by bind): the Decoder's max_size, its dictionary_for, and
     * after(data, tried), the Python path for whatever loads leaves (see Reader_loads). */
    Py_ssize_t max_size;
    PyObject *dictionary_for;
    PyObject *after;
} Reader;

/* The first static (C) type among cls and its bases: tuple.__new__(cls, parts) accepts
 * cls, and builds exactly what tp_alloc + filling the items does, when this is tuple. */
static int
plain_tuple_subclass(PyObject *cls)
{
    PyTypeObject *tp;
    if (!PyType_Check(cls))
        return 0;
    tp = (PyTypeObject *)cls;
    if (tp == &PyTuple_Type || !PyType_IsSubtype(tp, &PyTuple_Type))
        return 0;
    while (tp != NULL && (tp->tp_flags & Py_TPFLAGS_HEAPTYPE))
        tp = tp->tp_base;
    return tp == &PyTuple_Type && ((PyTypeObject *)cls)->tp_itemsize == PyTuple_Type.tp_itemsize;
}

/* Whether a plain tuple subclass's instances can hold nothing but their items: no __dict__, no
 * slots of their own.  Such an instance made of numbers holds one more reference, its class: when
 * that class lives as long as the library (`lasting`: the table says so for the library's own
 * classes, kept by their module), the instance can never be part of a cycle the collector must
 * break, so it is left untracked, as CPython's collector leaves an exact tuple of atomic items (it
 * cannot untrack a subclass, which might have a __dict__).  A vector in a save is one such object
 * per record; tracked, each walked by every collection and counted towards the full ones. */
static int
atomic_tuple_subclass(PyObject *cls)
{
    PyTypeObject *tp = (PyTypeObject *)cls;
    if (!plain_tuple_subclass(cls) || tp->tp_dictoffset != 0 || tp->tp_basicsize != PyTuple_Type.tp_basicsize)
        return 0;
#ifdef Py_TPFLAGS_MANAGED_DICT
    if (tp->tp_flags & Py_TPFLAGS_MANAGED_DICT)
        return 0;
#endif
    return 1;
}

static int
small_int(PyObject *o, long lo, long hi, long *out, const char *what)
{
    long v;
    if (!PyLong_Check(o)) {
        PyErr_Format(PyExc_TypeError, "Reader: %s must be an int", what);
        return -1;
    }
    v = PyLong_AsLong(o);
    if (v == -1 && PyErr_Occurred())
        return -1;
    if (v < lo || v > hi) {
        PyErr_Format(PyExc_ValueError, "Reader: %s %ld is not in [%ld, %ld]", what, v, lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

/* Fill one Slot from table[id] = (kind, arg); a malformed table is a ValueError now,
 * never a surprise mid-decode. */
static int
fill_slot(Slot *s, PyObject *entry, PyObject *reader)
{
    PyObject *arg;
    long kind, v;

    if (!PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) != 2) {
        PyErr_SetString(PyExc_TypeError, "Reader: each table entry must be a (kind, arg) tuple");
        return -1;
    }
    if (small_int(PyTuple_GET_ITEM(entry, 0), 0, K_COUNT - 1, &kind, "kind") < 0)
        return -1;
    arg = PyTuple_GET_ITEM(entry, 1);
    memset(s, 0, sizeof *s);
    s->kind = (int)kind;
    s->reader = reader == Py_None ? NULL : reader;
    if (s->reader != NULL && !PyCallable_Check(s->reader)) {
        PyErr_SetString(PyExc_TypeError, "Reader: py_readers entries must be callables or None");
        return -1;
    }
    switch (kind) {
    case K_INT:
        if (small_int(arg, 0, 1, &v, "INT arg") < 0)
            return -1;
        s->sub = (int)v;
        break;
    case K_FLOAT:
        if (small_int(arg, 0, 2, &v, "FLOAT arg") < 0)
            return -1;
        s->sub = (int)v;
        break;
    case K_ARRAY:
    case K_DICTIONARY: {
        int typed = PyObject_IsTrue(arg);
        if (typed < 0)
            return -1;
        s->sub = typed;
        break;
    }
    case K_STRING_NAME:
    case K_OBJECT:
        if (!PyCallable_Check(arg)) {
            PyErr_SetString(PyExc_TypeError, "Reader: STRING_NAME/OBJECT arg must be a class");
            return -1;
        }
        s->obj = arg;
        break;
    case K_MATH: {
        int is_int;
        int lasting = 0;
        if (!PyTuple_Check(arg) || PyTuple_GET_SIZE(arg) < 4 || PyTuple_GET_SIZE(arg) > 6 ||
            !PyCallable_Check(PyTuple_GET_ITEM(arg, 0))) {
            PyErr_SetString(PyExc_TypeError,
                            "Reader: MATH arg must be (make, make_arg, count, is_int[, wide[, lasting]])");
            return -1;
        }
        if (PyTuple_GET_SIZE(arg) >= 5 && small_int(PyTuple_GET_ITEM(arg, 4), 0, 2, &v, "MATH wide") < 0)
            return -1;
        s->wide = PyTuple_GET_SIZE(arg) >= 5 ? (int)v : 0;
        if (PyTuple_GET_SIZE(arg) == 6 && (lasting = PyObject_IsTrue(PyTuple_GET_ITEM(arg, 5))) < 0)
            return -1;
        if (small_int(PyTuple_GET_ITEM(arg, 2), 1, MATH_MAX, &v, "MATH count") < 0)
            return -1;
        if ((is_int = PyObject_IsTrue(PyTuple_GET_ITEM(arg, 3))) < 0)
            return -1;
        s->obj = PyTuple_GET_ITEM(arg, 0);
        s->obj2 = PyTuple_GET_ITEM(arg, 1);
        s->count = (int)v;
        s->sub = is_int;
        s->fast_tuple = s->obj == tuple_new && plain_tuple_subclass(s->obj2);
        s->untrack = lasting && s->fast_tuple && atomic_tuple_subclass(s->obj2);
        break;
    }
    case K_PACKED: {
        long item, width;
        if (!PyTuple_Check(arg) || PyTuple_GET_SIZE(arg) != 4 || !PyCallable_Check(PyTuple_GET_ITEM(arg, 0))) {
            PyErr_SetString(PyExc_TypeError, "Reader: PACKED arg must be (from_bytes, typecode, item_size, width)");
            return -1;
        }
        if (small_int(PyTuple_GET_ITEM(arg, 2), 1, 64, &item, "PACKED item_size") < 0 ||
            small_int(PyTuple_GET_ITEM(arg, 3), 1, 64, &width, "PACKED width") < 0)
            return -1;
        s->obj = PyTuple_GET_ITEM(arg, 0);
        s->obj2 = PyTuple_GET_ITEM(arg, 1);
        s->size = (Py_ssize_t)(item * width);
        break;
    }
    case K_STRINGS: {
        int nul;
        if (!PyTuple_Check(arg) || PyTuple_GET_SIZE(arg) != 3 || !PyCallable_Check(PyTuple_GET_ITEM(arg, 0)) ||
            !PyCallable_Check(PyTuple_GET_ITEM(arg, 1))) {
            PyErr_SetString(PyExc_TypeError, "Reader: STRINGS arg must be (from_wire, cls, nul)");
            return -1;
        }
        if ((nul = PyObject_IsTrue(PyTuple_GET_ITEM(arg, 2))) < 0)
            return -1;
        s->obj = PyTuple_GET_ITEM(arg, 0);
        s->obj2 = PyTuple_GET_ITEM(arg, 1);
        s->sub = nul;
        break;
    }
    default:
        break;
    }
    return 0;
}

static int
Reader_init(Reader *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"mask", "table", "py_readers", "typed_array_head", "typed_dict_head",
                             "max_depth", "max_elements", "marks", NULL};
    unsigned long long mask;
    PyObject *mask_obj, *table, *py_readers, *tah, *tdh, *marks = NULL;
    Py_ssize_t max_depth, n, i;
    long long max_elements;
    Slot *slots;

    if (self->table != NULL) {
        /* A decode borrows from the tables: they are fixed once made. */
        PyErr_SetString(PyExc_TypeError, "Reader is already initialised");
        return -1;
    }
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!O!O!OOnL|O!:Reader", kwlist, &PyLong_Type, &mask_obj,
                                     &PyTuple_Type, &table, &PyTuple_Type, &py_readers, &tah, &tdh,
                                     &max_depth, &max_elements, &PyBytes_Type, &marks))
        return -1;
    mask = PyLong_AsUnsignedLongLong(mask_obj);
    if (mask == (unsigned long long)-1 && PyErr_Occurred()) {
        if (!PyErr_ExceptionMatches(PyExc_OverflowError))
            return -1;
        PyErr_Clear();
    }
    if (mask > 0xFFFFFFFFull) {
        PyErr_SetString(PyExc_ValueError, "Reader: mask must fit in 32 bits");
        return -1;
    }
    if (!PyCallable_Check(tah) || !PyCallable_Check(tdh)) {
        PyErr_SetString(PyExc_TypeError, "Reader: typed_array_head and typed_dict_head must be callable");
        return -1;
    }
    if (max_depth < 0 || max_elements < -1) {
        PyErr_SetString(PyExc_ValueError, "Reader: max_depth must be >= 0 and max_elements >= -1");
        return -1;
    }
    n = PyTuple_GET_SIZE(table);
    if (PyTuple_GET_SIZE(py_readers) != n || (marks != NULL && PyBytes_GET_SIZE(marks) != n)) {
        PyErr_SetString(PyExc_ValueError, "Reader: table, py_readers and marks must have the same length");
        return -1;
    }
    slots = PyMem_Calloc(n ? (size_t)n : 1, sizeof(Slot));
    if (slots == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (i = 0; i < n; i++) {
        if (fill_slot(&slots[i], PyTuple_GET_ITEM(table, i), PyTuple_GET_ITEM(py_readers, i)) < 0) {
            PyMem_Free(slots);
            return -1;
        }
        slots[i].mark = marks != NULL ? (unsigned char)PyBytes_AS_STRING(marks)[i] : 0;
    }
    Py_INCREF(table);
    self->table = table;
    Py_INCREF(py_readers);
    self->py_readers = py_readers;
    Py_INCREF(tah);
    self->typed_array_head = tah;
    Py_INCREF(tdh);
    self->typed_dict_head = tdh;
    self->slots = slots;
    self->nslots = n;
    self->mask = (uint32_t)mask;
    self->max_depth = max_depth;
    self->max_elements = max_elements;
    self->int32_header = -1;
    for (i = 0; i < n; i++)
        if (slots[i].kind == K_INT && slots[i].sub == 0 && (uint32_t)i == ((uint32_t)i & self->mask)) {
            self->int32_header = i;
            break;
        }
    return 0;
}

/* The Reader holds bound methods of the Python object that holds it: a cycle the
 * collector must see. */
static int
Reader_traverse(Reader *self, visitproc visit, void *arg)
{
    Py_VISIT(self->table);
    Py_VISIT(self->py_readers);
    Py_VISIT(self->typed_array_head);
    Py_VISIT(self->typed_dict_head);
    Py_VISIT(self->dictionary_for);
    Py_VISIT(self->after);
    return 0;
}

static int
Reader_clear(Reader *self)
{
    /* The slots borrow from the tuples: forget them first. */
    self->nslots = 0;
    PyMem_Free(self->slots);
    self->slots = NULL;
    Py_CLEAR(self->table);
    Py_CLEAR(self->py_readers);
    Py_CLEAR(self->typed_array_head);
    Py_CLEAR(self->typed_dict_head);
    Py_CLEAR(self->dictionary_for);
    Py_CLEAR(self->after);
    return 0;
}

static void
Reader_dealloc(Reader *self)
{
    PyObject_GC_UnTrack(self);
    Reader_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* --- one decode ------------------------------------------------------------------------ */

enum { F_TOP, F_ARRAY, F_DICT };

/* An open container.  Its values so far sit on the value stack from `base` on; it is
 * built when `left` reaches zero. */
typedef struct {
    int kind;
    Py_ssize_t base;
    Py_ssize_t left;      /* values still to read (a Dictionary: keys and values) */
    Py_ssize_t count;     /* elements / entries announced */
    PyObject *target;     /* typed Array: the (list subclass) object from typed_array_head */
    PyObject *list;       /* untyped Array: the result, filled in place (NULL slots until read) */
    PyObject *types;      /* typed Dictionary: what typed_dict_head returned */
} Frame;

/* A cached str and the hash of its bytes (compared first: most misses end there). */
struct text_slot {
    PyObject *text;
    uint32_t hash;
};

typedef struct {
    Reader *r;
    PyObject *buf;            /* the caller's object, passed to the Python callables */
    const unsigned char *data;
    Py_ssize_t end;
    PyObject *dictionary_for;  /* dictionary_for() -> this decode's dictionary(pairs, types) */
    PyObject *dictionary;      /* made on first need: most decodes never build a Dictionary there */
    PyObject *view;           /* memoryview(buf), made on the first packed array */
    PyObject **vals;          /* decoded values, owned, in wire order */
    Py_ssize_t nvals, capvals;
    Frame *frames;
    Py_ssize_t nframes, capframes;
    long long elements_left;
    unsigned marks;           /* what the flagged values read so far left (Slot.mark) */
    struct text_slot *texts;  /* the short-string cache, TEXT_CACHE_SIZE slots, or NULL */
    PyObject **made;          /* the lists and dicts this decode built, held untracked (see hold) */
    Py_ssize_t nmade, capmade;
    /* The stacks' first blocks, here: a small message allocates no stack at all. */
    Frame frames0[SMALL_FRAMES];
    PyObject *vals0[SMALL_VALS];
    PyObject *made0[SMALL_VALS];
} State;

/* Stack growth is bounded by the input: every value takes at least 4 bytes of it.  Each
 * stack starts in its block inside the State (`first`), and moves to the heap when that is full. */
static int
grow(void **arr, Py_ssize_t *cap, size_t item, void *first)
{
    Py_ssize_t n = *cap * 2;
    void *p;
    if (n > PY_SSIZE_T_MAX / (Py_ssize_t)item)
        return -1;
    if (*arr == first) {
        if ((p = PyMem_Malloc((size_t)n * item)) == NULL)
            return -1;
        memcpy(p, first, (size_t)*cap * item);
    }
    else if ((p = PyMem_Realloc(*arr, (size_t)n * item)) == NULL) {
        return -1;
    }
    *arr = p;
    *cap = n;
    return 0;
}

/* A stack's memory, unless it is still its first block. */
static void
free_stack(void *arr, void *first)
{
    if (arr != first)
        PyMem_Free(arr);
}


/* The cyclic GC and a decode.  A decode builds many lists and dicts; while they are tracked,
 * every collection the allocations trigger walks them again, and the full collections
 * (which walk the process's whole heap) come sooner: a decode ran 2-3 times slower with the
 * GC on in a process holding a large heap.  Nothing a decode builds can be part of a cycle
 * while it is built (the values are a tree), so the lists and dicts are held untracked here,
 * and tracked again, every one, when the decode ends (value or fallback): after it, the user
 * may mutate them into cycles, which the GC must see (a list is never re-tracked by CPython
 * on its own; a dict is tracked again only when a tracked value is stored in it).  Nothing
 * global changes (unlike gc.disable()), so other threads and nested decodes see the GC as it
 * was.  A held object keeps a reference until then.  When the array cannot grow, the object
 * stays tracked: slower, never wrong. */
static void
hold(State *st, PyObject *op)
{
    if (st->nmade == st->capmade && grow((void **)&st->made, &st->capmade, sizeof(PyObject *), st->made0) < 0)
        return;
    if (PyObject_GC_IsTracked(op))
        PyObject_GC_UnTrack(op);
    Py_INCREF(op);
    st->made[st->nmade++] = op;
}

/* CPython's rule (_PyObject_GC_MAY_BE_TRACKED), and a vector left untracked here (read_math)
 * counts as the exact tuple of numbers it is. */
static inline int
may_be_tracked(PyObject *op)
{
    return PyObject_IS_GC(op) && (!PyTuple_Check(op) || PyObject_GC_IsTracked(op));
}

/* Track again everything hold() untracked, and drop its references.  (A dict that needs no
 * tracking was never held: see build_dict.) */
static void
release_held(State *st)
{
    Py_ssize_t i;
    for (i = 0; i < st->nmade; i++) {
        PyObject *op = st->made[i];
        if (!PyObject_GC_IsTracked(op))
            PyObject_GC_Track(op);
        Py_DECREF(op);
    }
    free_stack(st->made, st->made0);
    st->made = st->made0;
    st->nmade = 0;
    st->capmade = SMALL_VALS;
}

static inline int
push_val(State *st, PyObject *v)
{
    if (st->nvals == st->capvals && grow((void **)&st->vals, &st->capvals, sizeof(PyObject *), st->vals0) < 0) {
        Py_DECREF(v);
        return -1;
    }
    st->vals[st->nvals++] = v;
    return 0;
}

/* A Python int in [lo, hi], or -1 (with or without an exception set: the caller falls back). */
static Py_ssize_t
checked_pos(PyObject *o, Py_ssize_t lo, Py_ssize_t hi)
{
    Py_ssize_t v;
    if (!PyLong_Check(o))
        return -1;
    v = PyLong_AsSsize_t(o);
    if (v == -1 && PyErr_Occurred())
        return -1;
    if (v < lo || v > hi)
        return -1;
    return v;
}

/* callable(buf, pos, header, end): the Python readers' and typed heads' signature. */
static PyObject *
call4(State *st, PyObject *fn, Py_ssize_t pos, uint32_t header)
{
    PyObject *args[4], *res;
    args[0] = st->buf;
    args[1] = PyLong_FromSsize_t(pos);
    args[2] = PyLong_FromUnsignedLong(header);
    args[3] = PyLong_FromSsize_t(st->end);
    if (args[1] == NULL || args[2] == NULL || args[3] == NULL)
        res = NULL;
    else
        res = PyObject_Vectorcall(fn, args, 4, NULL);
    Py_XDECREF(args[1]);
    Py_XDECREF(args[2]);
    Py_XDECREF(args[3]);
    return res;
}

/* A value read by the reference's own reader for this id: (value, next_pos).  Every value
 * has its 4-byte header, so a reader that does not move past it is not trusted. */
static PyObject *
read_py(State *st, PyObject *reader, Py_ssize_t *pos, uint32_t header)
{
    PyObject *res, *value;
    Py_ssize_t next;
    if (reader == NULL)
        return NULL;
    res = call4(st, reader, *pos, header);
    if (res == NULL)
        return NULL;
    if (!PyTuple_Check(res) || PyTuple_GET_SIZE(res) != 2 ||
        (next = checked_pos(PyTuple_GET_ITEM(res, 1), *pos + 4, st->end)) < 0) {
        Py_DECREF(res);
        return NULL;
    }
    value = PyTuple_GET_ITEM(res, 0);
    Py_INCREF(value);
    Py_DECREF(res);
    *pos = next;
    return value;
}

/* Dictionary keys, across decodes: a process reads the same few key names again and again
 * (a message's "type", "id" ...), and a str found here is the one the last dict hashed, so
 * its hash is not computed again either.  Direct-mapped, KEY_CACHE_SIZE slots of at most
 * TEXT_CACHE_MAX_LEN ASCII characters each: bounded whatever the input; a collision is a
 * miss.  Shared by every Reader (the strs are immutable); the GIL guards it, and nothing
 * between a look-up and its store runs Python code. */
#define KEY_CACHE_SIZE 512     /* a power of two */
static struct text_slot key_cache[KEY_CACHE_SIZE];

/* Longest str made with PyUnicode_New + memcpy after an ASCII check, not by the decoder. */
#define SHORT_TEXT 64

/* The str of n bytes of UTF-8 at s (strict: NULL for anything invalid).
 *
 * A short ASCII one is looked up in a small direct-mapped cache first (a key: key_cache;
 * else, in a large input, the decode's own), by an FNV-1a hash of its bytes (the ASCII check
 * rides along), and shared on a hit.  Sharing immutable strs changes nothing but identity,
 * which no caller relies on; the str built on a miss is exactly what PyUnicode_DecodeUTF8
 * builds for ASCII (compact, 1 byte per char). */
static PyObject *
make_text(State *st, const unsigned char *s, Py_ssize_t n, int key)
{
    struct text_slot *table = key ? key_cache : st->texts;
    const uint32_t mask = key ? KEY_CACHE_SIZE - 1 : TEXT_CACHE_SIZE - 1;
    unsigned char high = 0;
    Py_ssize_t i;
    PyObject *text;

    if (table != NULL && n <= TEXT_CACHE_MAX_LEN && n > 1) {
        uint32_t h = 2166136261u ^ (uint32_t)n;
        for (i = 0; i < n; i++) {
            h = (h ^ s[i]) * 16777619u;
            high |= s[i];
        }
        if (!(high & 0x80)) {
            struct text_slot *slot = &table[h & mask];
            text = slot->text;
            if (text != NULL && slot->hash == h && PyUnicode_GET_LENGTH(text) == n &&
                memcmp(PyUnicode_1BYTE_DATA(text), s, (size_t)n) == 0) {
                Py_INCREF(text);
                return text;
            }
            text = PyUnicode_New(n, 127);
            if (text == NULL)
                return NULL;
            memcpy(PyUnicode_1BYTE_DATA(text), s, (size_t)n);
            Py_INCREF(text);
            Py_XSETREF(slot->text, text);
            slot->hash = h;
            return text;
        }
        return PyUnicode_DecodeUTF8((const char *)s, n, NULL);
    }
    if (n > 1 && n <= SHORT_TEXT) {
        for (i = 0; i < n; i++)
            high |= s[i];
        if (!(high & 0x80)) {
            if ((text = PyUnicode_New(n, 127)) != NULL)
                memcpy(PyUnicode_1BYTE_DATA(text), s, (size_t)n);
            return text;
        }
    }
    return PyUnicode_DecodeUTF8((const char *)s, n, NULL);
}

/* A String's text at pos (its length word): strict UTF-8, padding to 4 present.  NULL
 * for anything else (too long, cut short, invalid or surrogate UTF-8). */
static PyObject *
read_text(State *st, Py_ssize_t *pos, int key)
{
    Py_ssize_t p = *pos;
    uint32_t n;
    uint64_t need;
    PyObject *s;
    if (st->end - p < 4)
        return NULL;
    n = rd_u32(st->data + p);
    if (n > INT32_MAX_U)
        return NULL;
    need = 4 + (uint64_t)n + ((0u - n) & 3u);
    if (need > (uint64_t)(st->end - p))
        return NULL;
    s = make_text(st, st->data + p + 4, (Py_ssize_t)n, key);
    if (s == NULL)
        return NULL;
    *pos = p + (Py_ssize_t)need;
    return s;
}

static PyObject *
call1(PyObject *fn, PyObject *a)
{
    PyObject *args[1] = {a};
    return PyObject_Vectorcall(fn, args, 1, NULL);
}

/* A math value: `count` int32s or float32s, or with `wide` (the 64-bit flag, where the
 * dialect reads it) doubles, kept or narrowed to float32 as the engine's real_t is; then
 * make(make_arg, numbers). */
static PyObject *
read_math(State *st, const Slot *s, Py_ssize_t *pos, int wide)
{
    const unsigned char *p;
    const Py_ssize_t size = wide ? 8 : 4;
    PyObject *parts, *res;
    int i;
    if (st->end - *pos - 4 < size * s->count)
        return NULL;
    p = st->data + *pos + 4;
    if (s->fast_tuple)  /* tuple.__new__(cls, numbers) is this, without the temporary tuple */
        parts = ((PyTypeObject *)s->obj2)->tp_alloc((PyTypeObject *)s->obj2, s->count);
    else
        parts = PyTuple_New(s->count);
    if (parts == NULL)
        return NULL;
    for (i = 0; i < s->count; i++, p += size) {
        PyObject *num;
        if (wide)
            num = PyFloat_FromDouble(s->wide == 1 ? rd_f64(p) : narrow_to_f32(rd_f64(p)));
        else
            num = s->sub ? PyLong_FromLongLong(as_i32(rd_u32(p))) : PyFloat_FromDouble(rd_f32(p));
        if (num == NULL) {
            Py_DECREF(parts);
            return NULL;
        }
        PyTuple_SET_ITEM(parts, i, num);
    }
    *pos += 4 + size * s->count;
    if (s->untrack)
        PyObject_GC_UnTrack(parts);
    if (s->fast_tuple)
        return parts;
    {
        PyObject *args[2] = {s->obj2, parts};
        res = PyObject_Vectorcall(s->obj, args, 2, NULL);
    }
    Py_DECREF(parts);
    return res;
}

/* A packed array of numbers: from_bytes(memoryview(buf)[start:stop], typecode). */
static PyObject *
read_packed(State *st, const Slot *s, Py_ssize_t *pos)
{
    Py_ssize_t p = *pos + 4, start, stop;
    uint32_t count;
    PyObject *slice, *res;
    if (st->end - p < 4)
        return NULL;
    count = rd_u32(st->data + p);
    start = p + 4;
    /* count <= 2**31 and size <= 4096: the product fits in 64 bits. */
    if (count > INT32_MAX_U || (uint64_t)count * (uint64_t)s->size > (uint64_t)(st->end - start))
        return NULL;
    stop = start + (Py_ssize_t)count * s->size;
    if (st->view == NULL && (st->view = PyMemoryView_FromObject(st->buf)) == NULL)
        return NULL;
    slice = PySequence_GetSlice(st->view, start, stop);
    if (slice == NULL)
        return NULL;
    {
        PyObject *args[2] = {slice, s->obj2};
        res = PyObject_Vectorcall(s->obj, args, 2, NULL);
    }
    Py_DECREF(slice);
    if (res != NULL)
        *pos = stop;
    return res;
}

/* The bits of an element's last word that must be zero for the wire form, by length & 3:
 * its padding, and where lengths count a final NUL, that NUL (codec._walk_tables). */
static const uint32_t PADDING_BITS[4] = {0, 0xFFFFFF00u, 0xFFFF0000u, 0xFF000000u};
static const uint32_t NUL_AND_PADDING_BITS[4] = {0xFF000000u, 0xFFFFFFFFu, 0xFFFFFF00u, 0xFFFF0000u};

/* Where `count` elements from `start` end, if they are exactly what the engine writes and
 * plain ASCII: the reference keeps such an array in wire form (read_packed_strings with
 * _string_elements_end and isascii).  -1 otherwise. */
static Py_ssize_t
wire_strings_end(const unsigned char *data, Py_ssize_t start, Py_ssize_t end, Py_ssize_t count, int nul)
{
    const Py_ssize_t wend = start + ((end - start) & ~(Py_ssize_t)3);
    const uint32_t *bits = nul ? NUL_AND_PADDING_BITS : PADDING_BITS;
    Py_ssize_t q = start, j, k;
    unsigned char high = 0;
    for (j = 0; j < count; j++) {
        uint32_t n;
        Py_ssize_t next;
        if (wend - q < 4)
            return -1;
        n = rd_u32(data + q);
        if (n >= WIRE_MAX_LEN || (nul && n == 0))
            return -1;
        next = q + 4 * (Py_ssize_t)((n + 7) >> 2);
        if (next > wend || (rd_u32(data + next - 4) & bits[n & 3]))
            return -1;
        q = next;
    }
    for (k = start; k < q; k++)
        high |= data[k];
    return (high & 0x80) ? -1 : q;
}

/* cls(strings), each element strict UTF-8 with a final NUL dropped where lengths count one
 * (codec._strict_strings), or NULL with no exception set when anything is odd. */
static PyObject *
strict_strings(State *st, const Slot *s, Py_ssize_t start, Py_ssize_t count, Py_ssize_t *pos)
{
    PyObject *list = PyList_New(count), *res;
    Py_ssize_t p = start, j;
    if (list == NULL)
        return NULL;
    for (j = 0; j < count; j++) {
        uint32_t n;
        Py_ssize_t len;
        PyObject *text;
        if (st->end - p < 4)
            goto odd;
        n = rd_u32(st->data + p);
        if ((uint64_t)n > (uint64_t)(st->end - p - 4))
            goto odd;
        len = (Py_ssize_t)n;
        if (s->sub && len > 0 && st->data[p + 4 + len - 1] == 0)
            len--;
        if ((text = PyUnicode_DecodeUTF8((const char *)st->data + p + 4, len, NULL)) == NULL)
            goto odd;
        PyList_SET_ITEM(list, j, text);
        p += 4 + (Py_ssize_t)n + (Py_ssize_t)((0u - n) & 3u);
    }
    if (p > st->end)
        goto odd;
    res = call1(s->obj2, list);
    Py_DECREF(list);
    if (res != NULL)
        *pos = p;
    return res;
odd:
    Py_DECREF(list);
    if (PyErr_Occurred() && PyErr_ExceptionMatches(PyExc_Exception))
        PyErr_Clear();
    return NULL;
}

/* A PackedStringArray: in wire form when the reference keeps it so (its strings are made
 * when first read), else its strings made here with strict UTF-8; anything odd (cut short,
 * invalid UTF-8, surrogates a dialect accepts, a negative count) is the reference's. */
static PyObject *
read_strings(State *st, const Slot *s, Py_ssize_t *pos, uint32_t header)
{
    Py_ssize_t start = *pos + 8, stop, count;
    PyObject *res;
    if (st->end - *pos < 8)
        return read_py(st, s->reader, pos, header);
    count = (Py_ssize_t)rd_u32(st->data + *pos + 4);
    if (count > (Py_ssize_t)INT32_MAX_U || (uint64_t)count * 4u > (uint64_t)(st->end - start))
        return read_py(st, s->reader, pos, header);
    stop = wire_strings_end(st->data, start, st->end, count, s->sub);
    if (stop >= 0) {
        PyObject *wire = PyBytes_FromStringAndSize((const char *)st->data + start, stop - start), *n;
        if (wire == NULL)
            return NULL;
        if ((n = PyLong_FromSsize_t(count)) == NULL) {
            Py_DECREF(wire);
            return NULL;
        }
        {
            PyObject *args[3] = {wire, n, s->sub ? Py_True : Py_False};
            res = PyObject_Vectorcall(s->obj, args, 3, NULL);
        }
        Py_DECREF(wire);
        Py_DECREF(n);
        if (res != NULL)
            *pos = stop;
        return res;
    }
    if ((res = strict_strings(st, s, start, count, pos)) != NULL || PyErr_Occurred())
        return res;
    return read_py(st, s->reader, pos, header);
}

/* Whether this decode's dictionary callable is at hand (made by dictionary_for() on the
 * first Dictionary the reference must build: its memo lives as long as the decode). */
static int
dictionary_of(State *st)
{
    if (st->dictionary == NULL)
        st->dictionary = PyObject_CallNoArgs(st->dictionary_for);
    return st->dictionary != NULL;
}

/* The Dictionary whose keys and values are vals[base:base + 2 * count].
 *
 * A plain dict when the reference's _dictionary would return one without looking
 * further: no types, every key an exact str or int (types Python and the engines key
 * alike), and no key repeated.  Anything else goes to `dictionary(pairs, types)`, the
 * reference's own function, with the decode's shared memo.  The values' references move
 * into the result (or are released); the stack slots are left dangling for the caller. */
static PyObject *
build_dict(State *st, Py_ssize_t base, Py_ssize_t count, PyObject *types)
{
    PyObject **kv = st->vals + base, *d, *pairs, *res;
    Py_ssize_t i, n = 2 * count;
    int needs = 0;

    if (types == NULL) {
        for (i = 0; i < n; i += 2)
            if (!PyUnicode_CheckExact(kv[i]) && !PyLong_CheckExact(kv[i]))
                break;
        if (i == n) {
#if PY_VERSION_HEX < 0x030D0000
            d = _PyDict_NewPresized(count);
#else
            d = PyDict_New();
#endif
            if (d == NULL)
                goto fail;
            for (i = 0; i < n; i += 2) {
                if (PyDict_SetItem(d, kv[i], kv[i + 1]) < 0) {
                    Py_DECREF(d);
                    goto fail;
                }
                needs |= may_be_tracked(kv[i + 1]);  /* the keys here are str and int */
            }
            if (PyDict_GET_SIZE(d) == count) {
                for (i = 0; i < n; i++)
                    Py_DECREF(kv[i]);
                /* Held after its items (storing a container in a dict tracks it again), and only
                 * when CPython would track it (its MAINTAIN_TRACKING rule): a dict of numbers,
                 * strings and vectors alone stays untracked, as Python's own. */
#if PY_VERSION_HEX >= 0x030E0000
                /* 3.14 tracks every dict and never again on an insertion (gh-127010): held, and
                 * tracked again at the end, whatever it holds. */
                (void)needs;
                hold(st, d);
#else
                if (needs)
                    hold(st, d);
                else if (PyObject_GC_IsTracked(d))
                    PyObject_GC_UnTrack(d);
#endif
                return d;
            }
            Py_DECREF(d);  /* a repeated key: the engine's merge is the reference's to make */
        }
    }
    pairs = PyList_New(n);
    if (pairs == NULL)
        goto fail;
    for (i = 0; i < n; i++)
        PyList_SET_ITEM(pairs, i, kv[i]);  /* the references move into the list */
    {
        PyObject *args[2] = {pairs, types ? types : Py_None};
        res = dictionary_of(st) ? PyObject_Vectorcall(st->dictionary, args, 2, NULL) : NULL;
    }
    Py_DECREF(pairs);
    return res;
fail:
    for (i = 0; i < n; i++)
        Py_DECREF(kv[i]);
    return NULL;
}

/* A typed Array: the elements vals[base:base + count] appended to the (list subclass)
 * object its head made, with its inherited append, as the reference fills it.  The
 * references move (or are released) as in build_dict.  Untyped Arrays are filled in
 * place instead (Frame.list). */
static PyObject *
build_array(State *st, Py_ssize_t base, Py_ssize_t count, PyObject *target)
{
    PyObject **items = st->vals + base;
    Py_ssize_t i;
    for (i = 0; i < count; i++)
        if (PyList_Append(target, items[i]) < 0)
            goto fail;
    for (i = 0; i < count; i++)
        Py_DECREF(items[i]);
    Py_INCREF(target);
    return target;
fail:
    for (i = 0; i < count; i++)
        Py_DECREF(items[i]);
    return NULL;
}

/* Open a container of `count` values (a Dictionary: 2 * entries) or, when empty, give
 * its value at once.  Returns 1 when a frame was pushed, 0 when *empty is the value,
 * -1 to fall back.  Steals `target` and `types`. */
static int
open_container(State *st, int kind, Py_ssize_t count, PyObject *target, PyObject *types, PyObject **empty)
{
    Frame *f;
    if (count == 0) {
        if (kind == F_ARRAY) {
            *empty = target ? target : PyList_New(0);
        }
        else if (types == NULL) {
            *empty = PyDict_New();
        }
        else {
            PyObject *pairs = PyList_New(0);
            *empty = NULL;
            if (pairs != NULL) {
                PyObject *args[2] = {pairs, types};
                *empty = dictionary_of(st) ? PyObject_Vectorcall(st->dictionary, args, 2, NULL) : NULL;
                Py_DECREF(pairs);
            }
            Py_DECREF(types);
        }
        return *empty == NULL ? -1 : 0;
    }
    /* The reference's limits: counts are charged as containers open, and the stack of
     * open non-empty containers (the top level not counted) may be max_depth deep. */
    if (st->elements_left >= 0 && (st->elements_left -= count) < 0)
        goto refuse;
    if (st->nframes - 1 >= st->r->max_depth)
        goto refuse;
    if (st->nframes == st->capframes && grow((void **)&st->frames, &st->capframes, sizeof(Frame), st->frames0) < 0)
        goto refuse;
    f = &st->frames[st->nframes];
    f->list = NULL;
    /* An untyped Array's values go straight into its list, sized once: the count was
     * checked against the bytes left (4 per element), so its size is bounded by the input. */
    if (kind == F_ARRAY && target == NULL) {
        if ((f->list = PyList_New(count)) == NULL)
            goto refuse;
        hold(st, f->list);
    }
    st->nframes++;
    f->kind = kind;
    f->base = st->nvals;
    f->count = count;
    f->left = kind == F_DICT ? 2 * count : count;
    f->target = target;
    f->types = types;
    return 1;
refuse:
    Py_XDECREF(target);
    Py_XDECREF(types);
    return -1;
}

/* One value read: into the innermost container's list, or onto the value stack. */
static inline int
place(State *st, Frame *f, PyObject *v)
{
    if (f->list != NULL) {
        PyList_SET_ITEM(f->list, f->count - f->left, v);
        f->left--;
        return 0;
    }
    if (push_val(st, v) < 0)
        return -1;
    f->left--;
    return 0;
}

/* (obj, count, next_pos) from a typed head, checked as the reference checks its counts. */
static int
typed_head(State *st, PyObject *fn, Py_ssize_t *pos, uint32_t header, Py_ssize_t min_size,
           PyObject **obj, Py_ssize_t *count)
{
    PyObject *res = call4(st, fn, *pos, header);
    Py_ssize_t next, n;
    if (res == NULL)
        return -1;
    if (!PyTuple_Check(res) || PyTuple_GET_SIZE(res) != 3 ||
        (next = checked_pos(PyTuple_GET_ITEM(res, 2), *pos + 8, st->end)) < 0 ||
        (n = checked_pos(PyTuple_GET_ITEM(res, 1), 0, COUNT_MASK)) < 0 ||
        (uint64_t)n * (uint64_t)min_size > (uint64_t)(st->end - next)) {
        Py_DECREF(res);
        return -1;
    }
    *obj = PyTuple_GET_ITEM(res, 0);
    Py_INCREF(*obj);
    Py_DECREF(res);
    *pos = next;
    *count = n;
    return 0;
}

/* The walk: read values into the innermost open container until the top level has its
 * one value.  Returns that value (the stack is empty again) or NULL to fall back; the
 * caller releases whatever is left on the stacks. */
static PyObject *
walk(State *st, Py_ssize_t pos, Py_ssize_t *next_pos)
{
    Reader *r = st->r;
    const unsigned char *data = st->data;
    const Py_ssize_t end = st->end;

    st->frames[0].kind = F_TOP;
    st->frames[0].base = 0;
    st->frames[0].left = 1;
    st->frames[0].count = 1;
    st->frames[0].target = st->frames[0].types = st->frames[0].list = NULL;
    st->nframes = 1;

    for (;;) {
        Frame *f = &st->frames[st->nframes - 1];
        PyObject *v;
        uint32_t header, id;
        const Slot *s;

        if (f->left == 0) {
            /* The innermost container has all its values: build it, and it is one value of
             * its parent. */
            if (f->kind == F_TOP)
                break;
            if (f->list != NULL) {
                v = f->list;
                f->list = NULL;
            }
            else if (f->kind == F_ARRAY)
                v = build_array(st, f->base, f->count, f->target);
            else
                v = build_dict(st, f->base, f->count, f->types);
            st->nvals = f->base;
            Py_CLEAR(f->target);
            Py_CLEAR(f->types);
            st->nframes--;
            if (v == NULL || place(st, &st->frames[st->nframes - 1], v) < 0)
                return NULL;
            continue;
        }

        if (f->list != NULL && r->int32_header >= 0) {
            /* A run of plain ints in an Array (ids, scores, tiles): the commonest long
             * array, read without the general dispatch. */
            PyObject **items = ((PyListObject *)f->list)->ob_item;
            Py_ssize_t i = f->count - f->left, stop = f->count;
            const uint32_t want = (uint32_t)r->int32_header;
            while (i < stop && end - pos >= 8 && rd_u32(data + pos) == want) {
                if ((v = PyLong_FromLong((long)as_i32(rd_u32(data + pos + 4)))) == NULL)
                    return NULL;
                items[i++] = v;
                pos += 8;
            }
            f->left = stop - i;
            if (f->left == 0)
                continue;
        }
        if (end - pos < 4)
            return NULL;
        header = rd_u32(data + pos);
        id = header & r->mask;
        if (id >= (uint64_t)r->nslots)
            return NULL;
        s = &r->slots[id];

        switch (s->kind) {
        case K_NIL:
            Py_INCREF(Py_None);
            v = Py_None;
            pos += 4;
            break;
        case K_BOOL:
            if (end - pos < 8)
                return NULL;
            v = rd_u32(data + pos + 4) ? Py_True : Py_False;
            Py_INCREF(v);
            pos += 8;
            break;
        case K_INT:
            if (s->sub || (header & FLAG_64)) {
                int64_t n;
                if (end - pos < 12)
                    return NULL;
                n = as_i64(rd_u64(data + pos + 4));
                if ((header & FLAG_64) && n >= INT32_MIN && n <= INT32_MAX)
                    st->marks |= s->mark;
                v = PyLong_FromLongLong(n);
                pos += 12;
            }
            else {
                if (end - pos < 8)
                    return NULL;
                v = PyLong_FromLongLong(as_i32(rd_u32(data + pos + 4)));
                pos += 8;
            }
            break;
        case K_FLOAT:
            if (s->sub == 2 || (s->sub == 0 && (header & FLAG_64))) {
                if (end - pos < 12)
                    return NULL;
                v = PyFloat_FromDouble(rd_f64(data + pos + 4));
                pos += 12;
            }
            else {
                if (end - pos < 8)
                    return NULL;
                v = PyFloat_FromDouble(rd_f32(data + pos + 4));
                pos += 8;
            }
            break;
        case K_STRING:
            pos += 4;
            v = read_text(st, &pos, f->kind == F_DICT && !(f->left & 1));  /* a key: left counts keys and values */
            break;
        case K_STRING_NAME: {
            PyObject *text;
            pos += 4;
            if ((text = read_text(st, &pos, 0)) == NULL)
                return NULL;
            v = call1(s->obj, text);
            Py_DECREF(text);
            break;
        }
        case K_MATH:
            /* Any flag (the 64-bit one, or bits the reference ignores): its reader decides. */
            if (header == id)
                v = read_math(st, s, &pos, 0);
            else if (s->wide && header == (id | FLAG_64))
                v = read_math(st, s, &pos, 1);
            else
                v = read_py(st, s->reader, &pos, header);
            break;
        case K_OBJECT: {
            uint64_t oid;
            if (!(header & FLAG_64) || end - pos < 12)
                return NULL;  /* a full Object: allow_objects and its rules are the reference's */
            oid = rd_u64(data + pos + 4);
            pos += 12;
            if (oid == 0) {
                Py_INCREF(Py_None);
                v = Py_None;
            }
            else {
                PyObject *n = PyLong_FromUnsignedLongLong(oid);
                if (n == NULL)
                    return NULL;
                v = call1(s->obj, n);
                Py_DECREF(n);
            }
            break;
        }
        case K_BYTES: {
            uint32_t count;
            Py_ssize_t start = pos + 8;
            if (end - pos < 8)
                return NULL;
            count = rd_u32(data + pos + 4);
            if (count > INT32_MAX_U || (Py_ssize_t)count > end - start)
                return NULL;
            if ((size_t)count < BIG_BUFFER) {
                v = PyBytes_FromStringAndSize((const char *)data + start, (Py_ssize_t)count);
            }
            else if ((v = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)count)) != NULL) {
                advise_huge_pages(PyBytes_AS_STRING(v), (size_t)count);
                memcpy(PyBytes_AS_STRING(v), data + start, (size_t)count);
            }
            /* The engine does not require the final padding to be there. */
            pos = start + (Py_ssize_t)count + (Py_ssize_t)((0u - count) & 3u);
            if (pos > end)
                pos = end;
            break;
        }
        case K_PACKED:
            v = header == id ? read_packed(st, s, &pos) : read_py(st, s->reader, &pos, header);
            break;
        case K_STRINGS:
            v = header == id ? read_strings(st, s, &pos, header) : read_py(st, s->reader, &pos, header);
            break;
        case K_ARRAY:
        case K_DICTIONARY: {
            int is_dict = s->kind == K_DICTIONARY, opened;
            PyObject *target = NULL, *types = NULL;
            Py_ssize_t count;
            uint32_t typed_bits = is_dict ? (15u << 16) : (3u << 16);
            if (s->sub && (header & typed_bits)) {
                /* The element types are written as class names, script paths or ids the
                 * reference resolves: its head reads them, and the count. */
                if (typed_head(st, is_dict ? r->typed_dict_head : r->typed_array_head, &pos, header,
                               is_dict ? 8 : 4, is_dict ? &types : &target, &count) < 0)
                    return NULL;
                if (target != NULL && (!PyList_Check(target) || PyList_GET_SIZE(target) != 0)) {
                    Py_DECREF(target);
                    return NULL;
                }
            }
            else {
                if (end - pos < 8)
                    return NULL;
                count = (Py_ssize_t)(rd_u32(data + pos + 4) & COUNT_MASK);
                pos += 8;
                /* Every element takes at least 4 bytes, every entry 8: no count that the
                 * input cannot hold gets as far as sizing anything. */
                if ((uint64_t)count * (is_dict ? 8u : 4u) > (uint64_t)(end - pos))
                    return NULL;
            }
            opened = open_container(st, is_dict ? F_DICT : F_ARRAY, count, target, types, &v);
            if (opened < 0)
                return NULL;
            if (opened)
                continue;  /* its values come next */
            break;
        }
        default: /* K_PY */
            v = read_py(st, s->reader, &pos, header);
            break;
        }
        if ((header & FLAG_64) && s->kind != K_INT)
            st->marks |= s->mark;
        if (v == NULL || place(st, f, v) < 0)
            return NULL;
    }
    *next_pos = pos;
    st->nvals = 0;
    return st->vals[0];
}

/* Fall back: drop whatever went wrong, unless it is not an error of the decode at all
 * (KeyboardInterrupt, SystemExit), which goes on to the caller as it is. */
static void
set_fallback(void)
{
    PyObject *exc = PyErr_Occurred();
    if (exc != NULL && !PyErr_GivenExceptionMatches(exc, PyExc_Exception))
        return;
    PyErr_Clear();
    PyErr_SetNone(Fallback);
}

PyDoc_STRVAR(decode_doc,
"decode(buf, offset, end, dictionary_for[, marks_out]) -> (value, next_pos)\n\n"
"Decode the value at buf[offset:end], or raise Fallback for the reference to decide.\n"
"``marks_out``: a list; a decode that succeeds appends the marks its flagged values left\n"
"(the ``marks`` given to the Reader, or-ed; see codec.Decoder.decode_marked).\n"
"``dictionary_for()`` gives this decode's ``dictionary(pairs, types)``, which builds the\n"
"Dictionaries that are not plain str/int-keyed dicts (the reference's _dictionary, with a\n"
"memo for the decode); it is called once, on the first such Dictionary, if ever.");

/* One decode of view[offset:end] (`obj` is the caller's object, for the Python callables):
 * the value, with *next_pos and *marks set, or NULL with Fallback set (or an exception that
 * is not an error of the decode, which goes on as it is). */
static PyObject *
run_decode(Reader *self, PyObject *obj, const Py_buffer *view, Py_ssize_t offset, Py_ssize_t end,
           PyObject *dictionary_for, Py_ssize_t *next_pos, unsigned *marks)
{
    State st;
    Py_ssize_t i;
    PyObject *value = NULL;

    memset(&st, 0, offsetof(State, frames0));  /* the first blocks need no clearing */
    st.frames = st.frames0;
    st.capframes = SMALL_FRAMES;
    st.vals = st.vals0;
    st.capvals = SMALL_VALS;
    st.made = st.made0;
    st.capmade = SMALL_VALS;
    st.r = self;
    st.buf = obj;
    st.data = view->buf;
    st.end = end;
    st.dictionary_for = dictionary_for;
    st.elements_left = self->max_elements;
    if (end - offset >= TEXT_CACHE_MIN_INPUT)
        st.texts = PyMem_Calloc(TEXT_CACHE_SIZE, sizeof(struct text_slot));  /* NULL: no cache, no harm */
    /* A Reader that was never initialised has no slots: every id falls back.  The tables
     * are fixed once made (see Reader_init), and self is held while callbacks run. */
    Py_INCREF(self);
    value = walk(&st, offset, next_pos);
    if (value == NULL) {
        for (i = 0; i < st.nvals; i++)
            Py_DECREF(st.vals[i]);
        for (i = 1; i < st.nframes; i++) {
            Py_XDECREF(st.frames[i].list);  /* its unread slots are NULL: list_dealloc skips them */
            Py_XDECREF(st.frames[i].target);
            Py_XDECREF(st.frames[i].types);
        }
        set_fallback();
    }
    *marks = st.marks;
    release_held(&st);
    Py_XDECREF(st.view);
    Py_XDECREF(st.dictionary);
    if (st.texts != NULL) {
        for (i = 0; i < TEXT_CACHE_SIZE; i++)
            Py_XDECREF(st.texts[i].text);
        PyMem_Free(st.texts);
    }
    free_stack(st.vals, st.vals0);
    free_stack(st.frames, st.frames0);
    Py_DECREF(self);
    return value;
}

static PyObject *
Reader_decode(Reader *self, PyObject *const *args, Py_ssize_t nargs)
{
    Py_buffer view;
    Py_ssize_t offset, end, next = 0;
    unsigned marks = 0;
    PyObject *value, *pos, *result = NULL;

    if ((nargs != 4 && nargs != 5) || (nargs == 5 && !PyList_Check(args[4]))) {
        PyErr_SetString(PyExc_TypeError, "decode(buf, offset, end, dictionary_for[, marks_out]) takes 4 or 5 "
                                         "arguments; marks_out is a list");
        return NULL;
    }
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0) {
        set_fallback();
        return NULL;
    }
    offset = checked_pos(args[1], 0, view.len);
    end = checked_pos(args[2], 0, view.len);
    if (offset < 0 || end < 0) {
        PyBuffer_Release(&view);
        set_fallback();
        return NULL;
    }
    value = run_decode(self, args[0], &view, offset, end, args[3], &next, &marks);
    PyBuffer_Release(&view);
    if (value == NULL)
        return NULL;
    pos = PyLong_FromSsize_t(next);
    if (pos != NULL && nargs == 5) {
        PyObject *m = PyLong_FromUnsignedLong(marks);
        if (m == NULL || PyList_Append(args[4], m) < 0)
            Py_CLEAR(pos);
        Py_XDECREF(m);
    }
    result = pos ? PyTuple_New(2) : NULL;
    if (result == NULL) {
        Py_DECREF(value);
        Py_XDECREF(pos);
        set_fallback();
        return NULL;
    }
    PyTuple_SET_ITEM(result, 0, value);
    PyTuple_SET_ITEM(result, 1, pos);
    return result;
}

/* after(data, tried): the Python path, for what loads leaves to it. */
static PyObject *
call_after(Reader *self, PyObject *data, int tried)
{
    PyObject *args[2] = {data, tried ? Py_True : Py_False};
    if (self->after == NULL) {
        PyErr_SetString(PyExc_TypeError, "Reader.loads before Reader.bind");
        return NULL;
    }
    return PyObject_Vectorcall(self->after, args, 2, NULL);
}

PyDoc_STRVAR(loads_doc,
"loads(data) -> value\n\n"
"The value at the start of ``data``, as ``Decoder.decode(data)[0]`` gives it, with no Python\n"
"frame on the way for the common case: a bytes object no larger than max_size that the\n"
"compiled walk reads.  Everything else goes to ``after(data, tried)`` (see bind), ``tried``\n"
"saying whether the compiled walk already gave up on these bytes, and its result or error is\n"
"this call's.");

/* gf.loads' own path: a small message costs about as much to find and call as to read, so
 * the checks Decoder._decode makes in Python are made here for the common input (bytes,
 * offset 0, no end), and anything else is handed to the Python path, which makes them all. */
static PyObject *
Reader_loads(Reader *self, PyObject *data)
{
    Py_buffer view;
    Py_ssize_t next = 0;
    unsigned marks = 0;
    PyObject *value;

    if (!PyBytes_Check(data) || PyBytes_GET_SIZE(data) > self->max_size || self->dictionary_for == NULL)
        return call_after(self, data, 0);  /* the Python path says why not, or converts the buffer */
    if (PyBytes_CheckExact(data)) {
        /* Immutable, held by the caller for the call: its bytes are the buffer, without the
         * buffer protocol's round trip (a subclass may define its own buffer, so it asks). */
        view.buf = PyBytes_AS_STRING(data);
        view.len = PyBytes_GET_SIZE(data);
        view.obj = NULL;
    }
    else if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    value = run_decode(self, data, &view, 0, view.len, self->dictionary_for, &next, &marks);
    if (view.obj != NULL)
        PyBuffer_Release(&view);
    if (value != NULL || !PyErr_ExceptionMatches(Fallback))
        return value;
    PyErr_Clear();
    return call_after(self, data, 1);
}

PyDoc_STRVAR(bind_doc,
"bind(max_size, dictionary_for, after)\n\n"
"What loads needs of its Decoder: the input limit, the dictionary_for of decode, and\n"
"``after(data, tried)``, the Python path for what loads does not read itself.");

static PyObject *
Reader_bind(Reader *self, PyObject *const *args, Py_ssize_t nargs)
{
    Py_ssize_t max_size;
    if (nargs != 3 || !PyCallable_Check(args[1]) || !PyCallable_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError, "bind(max_size, dictionary_for, after): two callables");
        return NULL;
    }
    max_size = PyLong_AsSsize_t(args[0]);
    if (max_size == -1 && PyErr_Occurred())
        return NULL;
    if (max_size < 0) {
        PyErr_SetString(PyExc_ValueError, "bind: max_size must be >= 0");
        return NULL;
    }
    self->max_size = max_size;
    Py_INCREF(args[1]);
    Py_XSETREF(self->dictionary_for, args[1]);
    Py_INCREF(args[2]);
    Py_XSETREF(self->after, args[2]);
    Py_RETURN_NONE;
}

/* --- a run of records: decode_run ------------------------------------------------------------
 *
 * A save file is thousands of store_var records.  Decoded one call each, every record paid a
 * call's set-up, and its lists and dicts were tracked again as soon as it was read, so the GC's
 * collections, triggered by the next records' allocations, walked all the records read so far
 * (a many-record decode grew slower per byte as the file grew).  Here the records are decoded in
 * one call: the lists and dicts of all of them stay held untracked (see hold) until the run ends.
 * A record this core leaves to the reference (or that is an error: the reference names it) ends
 * the run before it; the caller decodes that one through the reference and runs on after it, so
 * values and errors are the reference's, record by record. */

PyDoc_STRVAR(decode_run_doc,
"decode_run(buf, spans, first, dictionary_for, stop_unread) -> (values, ends, marks)\n\n"
"Decode the records at ``spans[first:]`` (a tuple of (start, end) pairs, each inside buf)\n"
"in order, as decode() decodes each, stopping before the first it leaves to the reference\n"
"and, with ``stop_unread``, before the first whose value leaves more of its span unread than\n"
"it reads (detection.mostly_unread: not a reading of the record, which the caller reports):\n"
"``values`` and ``ends`` (where each value ends) of the records read, ``marks`` their marks\n"
"or-ed.  ``len(values)`` says how far it got.  ``dictionary_for`` as for decode(), asked\n"
"once per record that needs it.");

static PyObject *
Reader_decode_run(Reader *self, PyObject *const *args, Py_ssize_t nargs)
{
    Py_buffer view;
    State st;
    PyObject *spans, *values = NULL, *ends = NULL, *result = NULL;
    Py_ssize_t first, n, k, i;
    int failed = 0, stop_unread;

    if (nargs != 5 || !PyTuple_Check(args[1]) || !PyLong_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError, "decode_run(buf, spans: tuple, first: int, dictionary_for, stop_unread)");
        return NULL;
    }
    if ((stop_unread = PyObject_IsTrue(args[4])) < 0)
        return NULL;
    spans = args[1];
    n = PyTuple_GET_SIZE(spans);
    first = PyLong_AsSsize_t(args[2]);
    if (first == -1 && PyErr_Occurred())
        return NULL;
    if (first < 0)
        first = n;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0)
        return NULL;
    values = PyList_New(0);
    ends = PyList_New(0);
    if (values == NULL || ends == NULL) {
        Py_XDECREF(values);
        Py_XDECREF(ends);
        PyBuffer_Release(&view);
        return NULL;
    }
    memset(&st, 0, offsetof(State, frames0));  /* the stacks start in their first blocks, as in run_decode */
    st.frames = st.frames0;
    st.capframes = SMALL_FRAMES;
    st.vals = st.vals0;
    st.capvals = SMALL_VALS;
    st.made = st.made0;
    st.capmade = SMALL_VALS;
    st.r = self;
    st.buf = args[0];
    st.data = view.buf;
    st.dictionary_for = args[3];
    if (view.len >= TEXT_CACHE_MIN_INPUT)
        st.texts = PyMem_Calloc(TEXT_CACHE_SIZE, sizeof(struct text_slot));  /* NULL: no cache, no harm */
    Py_INCREF(self);
    for (k = first; k < n && !failed; k++) {
        PyObject *span = PyTuple_GET_ITEM(spans, k), *value, *pos;
        Py_ssize_t start, end, next = 0;
        unsigned marks_before = st.marks;
        if (!PyTuple_Check(span) || PyTuple_GET_SIZE(span) != 2)
            break;
        end = checked_pos(PyTuple_GET_ITEM(span, 1), 0, view.len);
        start = end < 0 ? -1 : checked_pos(PyTuple_GET_ITEM(span, 0), 0, end);
        if (start < 0) {
            PyErr_Clear();
            break;
        }
        st.end = end;
        st.elements_left = self->max_elements;
        st.nvals = 0;
        Py_CLEAR(st.dictionary);  /* a Dictionary builder's memo lives for one record, as in decode() */
        value = walk(&st, start, &next);
        if (value == NULL) {
            PyObject *exc = PyErr_Occurred();
            for (i = 0; i < st.nvals; i++)
                Py_DECREF(st.vals[i]);
            for (i = 1; i < st.nframes; i++) {
                Py_XDECREF(st.frames[i].list);
                Py_XDECREF(st.frames[i].target);
                Py_XDECREF(st.frames[i].types);
            }
            st.nvals = st.nframes = 0;
            st.marks = marks_before;  /* a record not read leaves no marks */
            if (exc != NULL && !PyErr_GivenExceptionMatches(exc, PyExc_Exception))
                failed = 1;  /* KeyboardInterrupt, SystemExit: not the decode's, it goes on */
            else
                PyErr_Clear();  /* the reference decides this record */
            break;
        }
        if (stop_unread && next - start < end - next) {
            Py_DECREF(value);  /* its objects stay held, and are tracked again at the end */
            st.marks = marks_before;
            break;
        }
        pos = PyLong_FromSsize_t(next);
        if (pos == NULL || PyList_Append(values, value) < 0 || PyList_Append(ends, pos) < 0)
            failed = 1;
        Py_DECREF(value);
        Py_XDECREF(pos);
    }
    if (!failed) {
        PyObject *m = PyLong_FromUnsignedLong(st.marks);
        if (m != NULL)
            result = PyTuple_Pack(3, values, ends, m);
        Py_XDECREF(m);
    }
    release_held(&st);
    Py_XDECREF(st.view);
    Py_XDECREF(st.dictionary);
    if (st.texts != NULL) {
        for (i = 0; i < TEXT_CACHE_SIZE; i++)
            Py_XDECREF(st.texts[i].text);
        PyMem_Free(st.texts);
    }
    free_stack(st.vals, st.vals0);
    free_stack(st.frames, st.frames0);
    PyBuffer_Release(&view);
    Py_DECREF(self);
    Py_DECREF(values);
    Py_DECREF(ends);
    return result;
}

/* --- end of decode_run ------------------------------------------------------------------------ */

static PyMethodDef Reader_methods[] = {
    {"decode", (PyCFunction)(void (*)(void))Reader_decode, METH_FASTCALL, decode_doc},
    {"loads", (PyCFunction)Reader_loads, METH_O, loads_doc},
    {"bind", (PyCFunction)(void (*)(void))Reader_bind, METH_FASTCALL, bind_doc},
    {"decode_run", (PyCFunction)(void (*)(void))Reader_decode_run, METH_FASTCALL, decode_run_doc},
    {NULL, NULL, 0, NULL},
};

PyDoc_STRVAR(Reader_doc,
"Reader(mask, table, py_readers, typed_array_head, typed_dict_head, max_depth, max_elements[, marks])\n\n"
"One dialect's compiled reader.  A header's type id is ``header & mask``; ``table[id]`` is\n"
"(kind, arg) (see codec._CReader) and ``py_readers[id]`` the reference's reader for the id\n"
"(or None).  The typed heads read a typed Array's / Dictionary's types and count as the\n"
"reference does.  ``max_depth`` and ``max_elements`` (-1: none) are the Decoder's limits.\n"
"``marks``: bytes, one per id: what a value of that id with the 64-bit flag leaves in a\n"
"decode's marks (an int only when it fits in 32 bits).");

static PyTypeObject ReaderType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "godot_formats.core._cdecode.Reader",
    .tp_basicsize = sizeof(Reader),
    .tp_dealloc = (destructor)Reader_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = Reader_doc,
    .tp_traverse = (traverseproc)Reader_traverse,
    .tp_clear = (inquiry)Reader_clear,
    .tp_methods = Reader_methods,
    .tp_init = (initproc)Reader_init,
    .tp_new = PyType_GenericNew,
};

/* --- the module ---------------------------------------------------------------------------- */

/* --- a PackedStringArray's strings, made from its wire form -------------------------- */

PyDoc_STRVAR(strings_from_wire_doc,
"strings_from_wire(wire, count, nul) -> list of str\n\n"
"The strings of a PackedStringArray kept in wire form (types._strings_from_wire): ASCII\n"
"elements, each a u32 length, the text and zero padding; with ``nul`` each length counts a\n"
"final NUL that is not part of the text.  Raises Fallback for wire bytes that are not such\n"
"(from_wire is public: the Python loop then decides), never reads outside them.");

static PyObject *
strings_from_wire(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    Py_ssize_t count, size, a = 0, j;
    const unsigned char *w;
    PyObject *list;
    int nul;

    if (nargs != 3 || !PyBytes_CheckExact(args[0])) {
        PyErr_SetString(Fallback, "strings_from_wire(wire: bytes, count, nul)");
        return NULL;
    }
    count = PyLong_AsSsize_t(args[1]);
    if ((count == -1 && PyErr_Occurred()) || (nul = PyObject_IsTrue(args[2])) < 0) {
        set_fallback();
        return NULL;
    }
    w = (const unsigned char *)PyBytes_AS_STRING(args[0]);
    size = PyBytes_GET_SIZE(args[0]);
    if (count < 0 || count > size / 4) {  /* every element takes a length word */
        PyErr_SetString(Fallback, "count does not fit the wire bytes");
        return NULL;
    }
    if ((list = PyList_New(count)) == NULL)
        return NULL;
    for (j = 0; j < count; j++) {
        uint32_t n;
        Py_ssize_t len, k;
        unsigned char high = 0;
        PyObject *text;
        if (size - a < 4)
            goto odd;
        n = rd_u32(w + a);
        len = (Py_ssize_t)n - (nul ? 1 : 0);
        if ((uint64_t)n > (uint64_t)(size - a - 4) || len < 0)
            goto odd;
        for (k = 0; k < len; k++)
            high |= w[a + 4 + k];
        if (high & 0x80)
            goto odd;
        if ((text = PyUnicode_New(len, 127)) == NULL) {
            Py_DECREF(list);
            return NULL;
        }
        memcpy(PyUnicode_1BYTE_DATA(text), w + a + 4, (size_t)len);
        PyList_SET_ITEM(list, j, text);
        a += 4 + (Py_ssize_t)((n + 3) & ~3u);
    }
    return list;
odd:
    Py_DECREF(list);
    PyErr_SetString(Fallback, "not a PackedStringArray's checked wire form");
    return NULL;
}

/* --- store_var frames: frame_spans ------------------------------------------------------------ */

PyDoc_STRVAR(frame_spans_doc,
"frame_spans(buf, big_endian) -> tuple of (start, end) or None\n\n"
"The payload span of every store_var record of buf when the records tile it exactly, as\n"
"framing.scan_frames finds them (a u32 length of at least 4, then that many bytes; at least\n"
"one record), else None: the reference then says how the framing breaks.");

static PyObject *
frame_spans(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    Py_buffer view;
    const unsigned char *d;
    Py_ssize_t pos = 0, n = 0, k;
    PyObject *spans = NULL;
    int big;

    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "frame_spans(buf, big_endian)");
        return NULL;
    }
    if ((big = PyObject_IsTrue(args[1])) < 0 || PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0)
        return NULL;
    d = view.buf;
    /* First count the records (and find whether they tile the buffer), then make the tuple. */
    while (pos < view.len || n == 0) {
        uint32_t size;
        if (view.len - pos < 4)
            goto broken;
        size = big ? ((uint32_t)d[pos] << 24 | (uint32_t)d[pos + 1] << 16 | (uint32_t)d[pos + 2] << 8 | d[pos + 3])
                   : rd_u32(d + pos);
        if (size < 4 || (Py_ssize_t)size > view.len - pos - 4)
            goto broken;
        pos += 4 + (Py_ssize_t)size;
        n++;
    }
    if ((spans = PyTuple_New(n)) == NULL)
        goto done;
    for (pos = 0, k = 0; k < n; k++) {
        uint32_t size = big ? ((uint32_t)d[pos] << 24 | (uint32_t)d[pos + 1] << 16 | (uint32_t)d[pos + 2] << 8 |
                               d[pos + 3]) : rd_u32(d + pos);
        PyObject *span = Py_BuildValue("(nn)", pos + 4, pos + 4 + (Py_ssize_t)size);
        if (span == NULL) {
            Py_CLEAR(spans);
            goto done;
        }
        PyObject_GC_UnTrack(span);  /* two ints: CPython's collector would untrack it at its first pass */
        PyTuple_SET_ITEM(spans, k, span);
        pos += 4 + (Py_ssize_t)size;
    }
    PyObject_GC_UnTrack(spans);  /* a tuple of untracked tuples, as the collector would leave it */
    goto done;
broken:
    spans = Py_NewRef(Py_None);
done:
    PyBuffer_Release(&view);
    return spans;
}

/* --- end of frame_spans ------------------------------------------------------------------------- */

static PyMethodDef module_methods[] = {
    {"frame_spans", (PyCFunction)(void (*)(void))frame_spans, METH_FASTCALL, frame_spans_doc},
    {"strings_from_wire", (PyCFunction)(void (*)(void))strings_from_wire, METH_FASTCALL, strings_from_wire_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "godot_formats.core._cdecode",
    .m_doc = "The compiled fast path of godot_formats' decoder (see codec._CReader).",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC
PyInit__cdecode(void)
{
    PyObject *m;
    if (PyType_Ready(&ReaderType) < 0)
        return NULL;
    m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    if (tuple_new == NULL && (tuple_new = PyObject_GetAttrString((PyObject *)&PyTuple_Type, "__new__")) == NULL)
        goto fail;
    if (Fallback == NULL) {
        Fallback = PyErr_NewExceptionWithDoc(
            "godot_formats.core._cdecode.Fallback",
            "The compiled reader leaves these bytes to the reference decoder, which decides.", NULL, NULL);
        if (Fallback == NULL)
            goto fail;
    }
    Py_INCREF(Fallback);
    if (PyModule_AddObject(m, "Fallback", Fallback) < 0) {
        Py_DECREF(Fallback);
        goto fail;
    }
    Py_INCREF(&ReaderType);
    if (PyModule_AddObject(m, "Reader", (PyObject *)&ReaderType) < 0) {
        Py_DECREF(&ReaderType);
        goto fail;
    }
    {
        PyObject *kinds = PyTuple_New(K_COUNT);
        int i;
        if (kinds == NULL)
            goto fail;
        for (i = 0; i < K_COUNT; i++) {
            PyObject *name = PyUnicode_FromString(KIND_NAMES[i]);
            if (name == NULL) {
                Py_DECREF(kinds);
                goto fail;
            }
            PyTuple_SET_ITEM(kinds, i, name);
        }
        if (PyModule_AddObject(m, "KINDS", kinds) < 0) {
            Py_DECREF(kinds);
            goto fail;
        }
    }
    return m;
fail:
    Py_DECREF(m);
    return NULL;
}
