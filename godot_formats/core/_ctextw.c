/*
 * godot_formats.core._ctextw: the compiled fast path of the text writer (var2str / var_to_str text).
 *
 * godot_formats.views.text.writer is the reference: it states how the engines print every value,
 * and every error and odd case is its.  This is a front in front of it, as _ctext is in front of
 * the parser: a Writer writes the common values -- null, bool, 64-bit ints, floats (Godot 3's
 * %g of the float32, Godot 4.0-4.4's %g, Godot 4.5+'s Grisu2: views.text.floats ported digit for
 * digit), Strings, Arrays (list and tuple), Dictionaries whose keys are all exactly str, the math
 * types, the packed arrays and Object(...) -- and returns exactly the text the reference returns;
 * for anything else it says "not handled" (try_write returns None; write calls the reference
 * writer it was given), and the reference writes the whole value and decides: any other type
 * (StringName, NodePath, RID, typed containers, subclasses, a resource of a file ...), a number
 * out of its range, a component that is not exactly a float or int, a key that is not exactly a
 * str, a container that contains itself, a container deeper than the style's max_recursion
 * (Godot 4 writes [] there) or than MAX_FRAMES.
 *
 * What the types are called and how a math value's numbers are read stays in Python: the Writer
 * is built with a table (exact class -> (kind, name, parts)), made by the writer module from the
 * registry rows and the dialect's names.  An exception from Python code it calls (a parts getter,
 * a Dictionary's items) is "not handled" too, except one that is not an Exception
 * (KeyboardInterrupt), which goes up; a MemoryError of its own goes up as well.
 *
 * No recursion on the value: containers open frames on an explicit stack on the heap.  The text
 * is built in a UCS4 buffer and made into a str once at the end.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>
#include <math.h>
#include <stdio.h>

/* The kinds of the type table (views.text.writer._compiled_table says which class is which). */
enum { K_MATH_REAL = 1, K_MATH_I32 = 2, K_BYTES = 3, K_PACKED_INT = 4, K_PACKED_REAL = 5, K_STRINGS = 6,
       K_OBJECT = 7, K_DICTIONARY = 8 };
/* The float rules of a style (views.text.style): Godot 3, 4.0-4.4, 4.5+. */
enum { FL_3 = 3, FL_40 = 40, FL_45 = 45 };

/* Nesting deeper than this is the reference's (its explicit stack has no limit; this one's does). */
#define MAX_FRAMES 1000

typedef struct {
    PyObject_HEAD
    int spaced;
    int major;
    int floats;
    Py_ssize_t max_recursion;  /* -1: none */
    PyObject *types;           /* dict: exact class -> (kind, name, parts or None) */
    PyObject *fallback;        /* the reference writer: write(value) -> str */
} Writer;

/* ------------------------------------------------------------------------------------------ */
/* The output: a growable UCS4 buffer.                                                         */

typedef struct {
    Py_UCS4 *buf;
    Py_ssize_t len, cap;
} Buf;

static int reserve(Buf *b, Py_ssize_t extra)
{
    if (extra > PY_SSIZE_T_MAX / 8 - b->len) {
        PyErr_NoMemory();
        return -1;
    }
    if (b->len + extra <= b->cap)
        return 0;
    Py_ssize_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra)
        cap *= 2;
    Py_UCS4 *nb = PyMem_Realloc(b->buf, (size_t)cap * sizeof(Py_UCS4));
    if (nb == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    b->buf = nb;
    b->cap = cap;
    return 0;
}

static int put_ascii(Buf *b, const char *s, Py_ssize_t n)
{
    if (reserve(b, n) < 0)
        return -1;
    for (Py_ssize_t i = 0; i < n; i++)
        b->buf[b->len++] = (unsigned char)s[i];
    return 0;
}

#define PUT(b, lit) put_ascii((b), (lit), (Py_ssize_t)(sizeof(lit) - 1))

static int put_cstr(Buf *b, const char *s) { return put_ascii(b, s, (Py_ssize_t)strlen(s)); }

/* A str's characters; escape 0: as they are, 1: c_escape_multiline, 3 / 4: c_escape of Godot 3 / 4. */
static int put_text(Buf *b, PyObject *s, int escape)
{
    Py_ssize_t n = PyUnicode_GET_LENGTH(s);
    int kind = PyUnicode_KIND(s);
    const void *data = PyUnicode_DATA(s);
    if (reserve(b, escape ? 2 * n : n) < 0)
        return -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        Py_UCS4 e = 0;
        if (escape && c < 128) {
            if (c == '\\' || c == '"')
                e = c;
            else if (escape >= 3) {
                switch (c) {
                case '\a': e = 'a'; break;
                case '\b': e = 'b'; break;
                case '\f': e = 'f'; break;
                case '\n': e = 'n'; break;
                case '\r': e = 'r'; break;
                case '\t': e = 't'; break;
                case '\v': e = 'v'; break;
                case '\'': e = '\''; break;
                case '?': e = escape == 3 ? '?' : 0; break;
                default: break;
                }
            }
        }
        if (e) {
            b->buf[b->len++] = '\\';
            b->buf[b->len++] = e;
        }
        else
            b->buf[b->len++] = c;
    }
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* Floats: views.text.floats, ported.                                                          */

static const struct { uint64_t f; int e; int k; } CACHED_POWERS[] = {
    {0xAB70FE17C79AC6CAULL, -1060, -300}, {0xFF77B1FCBEBCDC4FULL, -1034, -292},
    {0xBE5691EF416BD60CULL, -1007, -284}, {0x8DD01FAD907FFC3CULL, -980, -276},
    {0xD3515C2831559A83ULL, -954, -268}, {0x9D71AC8FADA6C9B5ULL, -927, -260},
    {0xEA9C227723EE8BCBULL, -901, -252}, {0xAECC49914078536DULL, -874, -244},
    {0x823C12795DB6CE57ULL, -847, -236}, {0xC21094364DFB5637ULL, -821, -228},
    {0x9096EA6F3848984FULL, -794, -220}, {0xD77485CB25823AC7ULL, -768, -212},
    {0xA086CFCD97BF97F4ULL, -741, -204}, {0xEF340A98172AACE5ULL, -715, -196},
    {0xB23867FB2A35B28EULL, -688, -188}, {0x84C8D4DFD2C63F3BULL, -661, -180},
    {0xC5DD44271AD3CDBAULL, -635, -172}, {0x936B9FCEBB25C996ULL, -608, -164},
    {0xDBAC6C247D62A584ULL, -582, -156}, {0xA3AB66580D5FDAF6ULL, -555, -148},
    {0xF3E2F893DEC3F126ULL, -529, -140}, {0xB5B5ADA8AAFF80B8ULL, -502, -132},
    {0x87625F056C7C4A8BULL, -475, -124}, {0xC9BCFF6034C13053ULL, -449, -116},
    {0x964E858C91BA2655ULL, -422, -108}, {0xDFF9772470297EBDULL, -396, -100},
    {0xA6DFBD9FB8E5B88FULL, -369, -92}, {0xF8A95FCF88747D94ULL, -343, -84},
    {0xB94470938FA89BCFULL, -316, -76}, {0x8A08F0F8BF0F156BULL, -289, -68},
    {0xCDB02555653131B6ULL, -263, -60}, {0x993FE2C6D07B7FACULL, -236, -52},
    {0xE45C10C42A2B3B06ULL, -210, -44}, {0xAA242499697392D3ULL, -183, -36},
    {0xFD87B5F28300CA0EULL, -157, -28}, {0xBCE5086492111AEBULL, -130, -20},
    {0x8CBCCC096F5088CCULL, -103, -12}, {0xD1B71758E219652CULL, -77, -4},
    {0x9C40000000000000ULL, -50, 4}, {0xE8D4A51000000000ULL, -24, 12},
    {0xAD78EBC5AC620000ULL, 3, 20}, {0x813F3978F8940984ULL, 30, 28},
    {0xC097CE7BC90715B3ULL, 56, 36}, {0x8F7E32CE7BEA5C70ULL, 83, 44},
    {0xD5D238A4ABE98068ULL, 109, 52}, {0x9F4F2726179A2245ULL, 136, 60},
    {0xED63A231D4C4FB27ULL, 162, 68}, {0xB0DE65388CC8ADA8ULL, 189, 76},
    {0x83C7088E1AAB65DBULL, 216, 84}, {0xC45D1DF942711D9AULL, 242, 92},
    {0x924D692CA61BE758ULL, 269, 100}, {0xDA01EE641A708DEAULL, 295, 108},
    {0xA26DA3999AEF774AULL, 322, 116}, {0xF209787BB47D6B85ULL, 348, 124},
    {0xB454E4A179DD1877ULL, 375, 132}, {0x865B86925B9BC5C2ULL, 402, 140},
    {0xC83553C5C8965D3DULL, 428, 148}, {0x952AB45CFA97A0B3ULL, 455, 156},
    {0xDE469FBD99A05FE3ULL, 481, 164}, {0xA59BC234DB398C25ULL, 508, 172},
    {0xF6C69A72A3989F5CULL, 534, 180}, {0xB7DCBF5354E9BECEULL, 561, 188},
    {0x88FCF317F22241E2ULL, 588, 196}, {0xCC20CE9BD35C78A5ULL, 614, 204},
    {0x98165AF37B2153DFULL, 641, 212}, {0xE2A0B5DC971F303AULL, 667, 220},
    {0xA8D9D1535CE3B396ULL, 694, 228}, {0xFB9B7CD9A4A7443CULL, 720, 236},
    {0xBB764C4CA7A44410ULL, 747, 244}, {0x8BAB8EEFB6409C1AULL, 774, 252},
    {0xD01FEF10A657842CULL, 800, 260}, {0x9B10A4E5E9913129ULL, 827, 268},
    {0xE7109BFBA19C0C9DULL, 853, 276}, {0xAC2820D9623BF429ULL, 880, 284},
    {0x80444B5E7AA7CF85ULL, 907, 292}, {0xBF21E44003ACDD2DULL, 933, 300},
    {0x8E679C2F5E44FF8FULL, 960, 308}, {0xD433179D9C8CB841ULL, 986, 316},
    {0x9E19DB92B4E31BA9ULL, 1013, 324},
};
#define N_CACHED_POWERS ((int)(sizeof(CACHED_POWERS) / sizeof(CACHED_POWERS[0])))
#define GRISU_ALPHA (-60)

typedef unsigned __int128 u128;

static void normalize(uint64_t *f, int *e)
{
    int shift = __builtin_clzll(*f);
    *f <<= shift;
    *e -= shift;
}

static uint64_t mul_hi(uint64_t x, uint64_t y)
{
    u128 p = (u128)x * y + ((u128)1 << 63);
    return (uint64_t)(p >> 64);
}

static void grisu2_round(char *digits, int nd, uint64_t dist, uint64_t delta, uint64_t rest, uint64_t ten_k)
{
    while (rest < dist && delta - rest >= ten_k && (rest + ten_k < dist || dist - rest > rest + ten_k - dist)) {
        digits[nd - 1]--;
        rest += ten_k;
    }
}

/* Digits (as characters) and decimal exponent of value > 0; 0 on success, -1: not handled. */
static int grisu2(double value, int single, char *digits, int *ndigits, int *exponent)
{
    int precision, bias;
    uint64_t bits;
    if (single) {
        float fv = (float)value;
        uint32_t b32;
        memcpy(&b32, &fv, 4);
        bits = b32;
        precision = 24;
        bias = 150;
    }
    else {
        memcpy(&bits, &value, 8);
        precision = 53;
        bias = 1075;
    }
    uint64_t hidden = (uint64_t)1 << (precision - 1);
    uint64_t big_e = bits >> (precision - 1), big_f = bits & (hidden - 1);
    uint64_t vf;
    int ve;
    if (big_e == 0) {
        vf = big_f;
        ve = 1 - bias;
    }
    else {
        vf = big_f + hidden;
        ve = (int)big_e - bias;
    }
    if (vf == 0)
        return -1;
    uint64_t plus_f = 2 * vf + 1, minus_f;
    int plus_e = ve - 1, minus_e;
    normalize(&plus_f, &plus_e);
    if (big_f == 0 && big_e > 1) {
        minus_f = 4 * vf - 1;
        minus_e = ve - 2;
    }
    else {
        minus_f = 2 * vf - 1;
        minus_e = ve - 1;
    }
    minus_f <<= (minus_e - plus_e);
    uint64_t wf = vf;
    int we = ve;
    normalize(&wf, &we);
    int f = GRISU_ALPHA - plus_e - 1;
    int k = (int)(((int64_t)(f < 0 ? -f : f) * 78913) >> 18);
    k = (f < 0 ? -k : k) + (f > 0 ? 1 : 0);
    int idx = (300 + k + 7) / 8;
    if (300 + k + 7 < 0 || idx >= N_CACHED_POWERS)
        return -1;
    uint64_t cf = CACHED_POWERS[idx].f;
    int ce = CACHED_POWERS[idx].e, ck = CACHED_POWERS[idx].k;
    (void)we;
    uint64_t w = mul_hi(wf, cf);
    uint64_t lo = mul_hi(minus_f, cf);
    uint64_t hi = mul_hi(plus_f, cf);
    int e = plus_e + ce + 64;
    /* digit generation */
    uint64_t m_minus = lo + 1, m_plus = hi - 1;
    uint64_t delta = m_plus - m_minus, dist = m_plus - w;
    int one_e = -e;
    if (one_e <= 0 || one_e >= 64)
        return -1;
    uint64_t one_f = (uint64_t)1 << one_e;
    uint64_t p1 = m_plus >> one_e, p2 = m_plus & (one_f - 1);
    int n = 1;
    uint64_t pow10 = 1;
    while (p1 / pow10 >= 10) {
        pow10 *= 10;
        n++;
    }
    int nd = 0;
    int dec = -ck;
    while (n > 0) {
        uint64_t d = p1 / pow10;
        p1 %= pow10;
        digits[nd++] = (char)('0' + d);
        n--;
        uint64_t rest = (p1 << one_e) + p2;
        if (rest <= delta) {
            grisu2_round(digits, nd, dist, delta, rest, pow10 << one_e);
            *ndigits = nd;
            *exponent = dec + n;
            return 0;
        }
        pow10 /= 10;
    }
    int m = 0;
    for (;;) {
        if (nd >= 40)
            return -1;
        p2 *= 10;
        digits[nd++] = (char)('0' + (p2 >> one_e));
        p2 &= one_f - 1;
        m++;
        delta *= 10;
        dist *= 10;
        if (p2 <= delta)
            break;
    }
    grisu2_round(digits, nd, dist, delta, p2, one_f);
    *ndigits = nd;
    *exponent = dec - m;
    return 0;
}

/* floats.grisu2_text into out (64 bytes); -1: not handled. */
static int grisu2_text(double x, int single, char *out)
{
    if (isnan(x)) {
        strcpy(out, "nan");
        return 0;
    }
    if (isinf(x)) {
        strcpy(out, x < 0 ? "-inf" : "inf");
        return 0;
    }
    char *o = out;
    if (signbit(x))
        *o++ = '-';
    x = fabs(x);
    if (x == 0) {
        strcpy(o, "0");
        return 0;
    }
    char digits[48];
    int k, exponent;
    if (grisu2(x, single, digits, &k, &exponent) < 0)
        return -1;
    for (int i = 0; i < k; i++)
        if (digits[i] < '0' || digits[i] > '9')
            return -1;
    int n = k + exponent;
    if (k <= n && n <= 15) {
        memcpy(o, digits, k);
        o += k;
        for (int i = 0; i < n - k; i++)
            *o++ = '0';
    }
    else if (0 < n && n <= 15) {
        memcpy(o, digits, n);
        o += n;
        *o++ = '.';
        memcpy(o, digits + n, k - n);
        o += k - n;
    }
    else if (-4 < n && n <= 0) {
        *o++ = '0';
        *o++ = '.';
        for (int i = 0; i < -n; i++)
            *o++ = '0';
        memcpy(o, digits, k);
        o += k;
    }
    else {
        int e = n - 1;
        *o++ = digits[0];
        if (k > 1) {
            *o++ = '.';
            memcpy(o, digits + 1, k - 1);
            o += k - 1;
        }
        o += sprintf(o, "e%c%02d", e < 0 ? '-' : '+', e < 0 ? -e : e);
    }
    *o = '\0';
    return 0;
}

/* floats.printf_g: glibc's %g (Python's format(x, "g") but for the sign of NaN). */
static void printf_g(double x, char *out)
{
    if (isnan(x))
        strcpy(out, signbit(x) ? "-nan" : "nan");
    else
        snprintf(out, 64, "%g", x);
}

static int is_f32(double x) { return (double)(float)x == x; }

/* rtos_fix of a style (a float inside another type) into out (64 bytes); -1: not handled. */
static int rtos_fix(int floats, double x, char *out)
{
    if (x == 0) {
        strcpy(out, "0");
        return 0;
    }
    if (floats == FL_3) {
        printf_g(x, out);
        return 0;
    }
    if (floats == FL_40) {
        if (isnan(x))
            strcpy(out, "nan");
        else if (isinf(x))
            strcpy(out, x > 0 ? "inf" : "inf_neg");
        else
            printf_g(x, out);
        return 0;
    }
    if (isinf(x) && x < 0) {
        strcpy(out, "inf_neg");
        return 0;
    }
    return grisu2_text(x, is_f32(x), out);
}

/* A float Variant (the style's scalar) into out; -1: not handled. */
static int scalar(int floats, double x, char *out)
{
    if (floats == FL_3)
        x = (double)(float)x;  /* Godot 3 prints the real_t (float32) it casts to */
    if (rtos_fix(floats, x, out) < 0)
        return -1;
    int keep;
    if (floats == FL_3)
        keep = !strcmp(out, "inf") || !strcmp(out, "nan");
    else if (floats == FL_40)
        keep = !strcmp(out, "inf") || !strcmp(out, "inf_neg") || !strcmp(out, "nan");
    else
        keep = !strcmp(out, "inf") || !strcmp(out, "-inf") || !strcmp(out, "nan");
    if (!keep && !strchr(out, '.') && !strchr(out, 'e') && (floats == FL_3 || !strchr(out, 'E')))
        strcat(out, ".0");
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* The writer.                                                                                 */

enum { F_LIST, F_TUPLE, F_DICT, F_OBJECT };

typedef struct {
    int kind;
    Py_ssize_t depth;    /* the reference's recursion count of this container */
    PyObject *container; /* strong: the value (for "contains itself") */
    PyObject *seq;       /* strong: what is walked (the list or tuple; sorted pairs; properties) */
    Py_ssize_t i;
} Frame;

typedef struct {
    Writer *w;
    Buf out;
    Frame *frames;
    Py_ssize_t nframes, cap;
} W;

#define BAIL 1

/* An exception from Python code: "not handled" (the reference meets it again), unless it is
 * not an Exception (KeyboardInterrupt) or a MemoryError, which go up. */
static int callback_failed(void)
{
    if (PyErr_ExceptionMatches(PyExc_Exception) && !PyErr_ExceptionMatches(PyExc_MemoryError)) {
        PyErr_Clear();
        return BAIL;
    }
    return -1;
}

static int put_number(W *st, PyObject *x, int i32)
{
    char tmp[72];
    if (i32) {
        if (!PyLong_CheckExact(x))
            return BAIL;
        int overflow = 0;
        long long v = PyLong_AsLongLongAndOverflow(x, &overflow);
        if (v == -1 && PyErr_Occurred())
            return -1;
        if (overflow || v < INT32_MIN || v > INT32_MAX)
            return BAIL;
        snprintf(tmp, sizeof tmp, "%lld", v);
    }
    else {
        if (!PyFloat_CheckExact(x))
            return BAIL;
        if (rtos_fix(st->w->floats, PyFloat_AS_DOUBLE(x), tmp) < 0)
            return BAIL;
    }
    return put_cstr(&st->out, tmp);
}

static int put_open(W *st, PyObject *name)
{
    if (put_text(&st->out, name, 0) < 0)
        return -1;
    return st->w->spaced ? PUT(&st->out, "( ") : PUT(&st->out, "(");
}

static int put_close(W *st) { return st->w->spaced ? PUT(&st->out, " )") : PUT(&st->out, ")"); }

static int write_math(W *st, PyObject *v, int i32, PyObject *name, PyObject *parts)
{
    PyObject *nums;
    if (PyLong_CheckExact(parts)) {  /* the value is the tuple of its numbers, this many */
        if (!PyTuple_Check(v) || PyTuple_GET_SIZE(v) != PyLong_AsSsize_t(parts))
            return BAIL;
        nums = Py_NewRef(v);
    }
    else {
        nums = PyObject_CallOneArg(parts, v);
        if (nums == NULL)
            return callback_failed();
        if (!PyTuple_CheckExact(nums)) {
            Py_DECREF(nums);
            return BAIL;
        }
    }
    int r = put_open(st, name);
    for (Py_ssize_t i = 0; r == 0 && i < PyTuple_GET_SIZE(nums); i++) {
        if (i)
            r = PUT(&st->out, ", ");
        if (r == 0)
            r = put_number(st, PyTuple_GET_ITEM(nums, i), i32);
    }
    if (r == 0)
        r = put_close(st);
    Py_DECREF(nums);
    return r;
}

static int write_bytes(W *st, PyObject *v, PyObject *name)
{
    char *data = PyBytes_Check(v) ? PyBytes_AS_STRING(v) : PyByteArray_AS_STRING(v);
    Py_ssize_t n = PyBytes_Check(v) ? PyBytes_GET_SIZE(v) : PyByteArray_GET_SIZE(v);
    if (put_open(st, name) < 0)
        return -1;
    /* data may move if the bytearray were resized, but nothing here runs Python code */
    for (Py_ssize_t i = 0; i < n; i++) {
        char tmp[8];
        int len = snprintf(tmp, sizeof tmp, i ? ", %u" : "%u", (unsigned)(unsigned char)data[i]);
        if (put_ascii(&st->out, tmp, len) < 0)
            return -1;
    }
    return put_close(st);
}

/* A numeric packed array: its ``data`` (an array.array) through the buffer protocol. */
static int write_packed(W *st, PyObject *v, int ints, PyObject *name)
{
    PyObject *data = PyObject_GetAttrString(v, "data");
    if (data == NULL)
        return callback_failed();
    Py_buffer view;
    if (PyObject_GetBuffer(data, &view, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0) {
        Py_DECREF(data);
        return callback_failed();
    }
    int r = 0;
    char fmt = view.format && view.format[0] && !view.format[1] ? view.format[0] : 0;
    Py_ssize_t size = view.itemsize, n = size > 0 ? view.len / size : 0;
    int ok = ints ? (strchr("bBhHiIlLqQ", fmt) != NULL && fmt) : (fmt == 'f' || fmt == 'd');
    if (!ok || size <= 0)
        r = BAIL;
    if (r == 0)
        r = put_open(st, name);
    const char *p = view.buf;
    for (Py_ssize_t i = 0; r == 0 && i < n; i++, p += size) {
        char tmp[72];
        if (i && (r = PUT(&st->out, ", ")) != 0)
            break;
        if (!ints) {
            double x;
            if (fmt == 'f') {
                float fv;
                memcpy(&fv, p, 4);
                x = fv;
            }
            else
                memcpy(&x, p, 8);
            if (rtos_fix(st->w->floats, x, tmp) < 0) {
                r = BAIL;
                break;
            }
        }
        else {
            long long sv = 0;
            unsigned long long uv = 0;
            int is_unsigned = fmt == 'B' || fmt == 'H' || fmt == 'I' || fmt == 'L' || fmt == 'Q';
            switch (fmt) {
            case 'b': { signed char c; memcpy(&c, p, 1); sv = c; break; }
            case 'B': { unsigned char c; memcpy(&c, p, 1); uv = c; break; }
            case 'h': { short c; memcpy(&c, p, sizeof c); sv = c; break; }
            case 'H': { unsigned short c; memcpy(&c, p, sizeof c); uv = c; break; }
            case 'i': { int c; memcpy(&c, p, sizeof c); sv = c; break; }
            case 'I': { unsigned int c; memcpy(&c, p, sizeof c); uv = c; break; }
            case 'l': { long c; memcpy(&c, p, sizeof c); sv = c; break; }
            case 'L': { unsigned long c; memcpy(&c, p, sizeof c); uv = c; break; }
            case 'q': { long long c; memcpy(&c, p, sizeof c); sv = c; break; }
            default: { unsigned long long c; memcpy(&c, p, sizeof c); uv = c; break; }
            }
            if (is_unsigned)
                snprintf(tmp, sizeof tmp, "%llu", uv);
            else
                snprintf(tmp, sizeof tmp, "%lld", sv);
        }
        r = put_cstr(&st->out, tmp);
    }
    if (r == 0)
        r = put_close(st);
    PyBuffer_Release(&view);
    Py_DECREF(data);
    return r;
}

static int write_strings(W *st, PyObject *v, PyObject *name)
{
    PyObject *items = PySequence_List(v);
    if (items == NULL)
        return callback_failed();
    int r = put_open(st, name);
    for (Py_ssize_t i = 0; r == 0 && i < PyList_GET_SIZE(items); i++) {
        PyObject *s = PyList_GET_ITEM(items, i);
        if (!PyUnicode_CheckExact(s)) {
            r = BAIL;
            break;
        }
        if (i)
            r = PUT(&st->out, ", ");
        if (r == 0)
            r = PUT(&st->out, "\"");
        if (r == 0)
            r = put_text(&st->out, s, st->w->major == 3 ? 3 : 4);
        if (r == 0)
            r = PUT(&st->out, "\"");
    }
    if (r == 0)
        r = put_close(st);
    Py_DECREF(items);
    return r;
}

static int push(W *st, int kind, PyObject *container, PyObject *seq, Py_ssize_t depth)
{
    if (st->nframes >= st->cap) {
        Py_ssize_t cap = st->cap ? st->cap * 2 : 16;
        Frame *nf = PyMem_Realloc(st->frames, (size_t)cap * sizeof(Frame));
        if (nf == NULL) {
            Py_DECREF(seq);
            PyErr_NoMemory();
            return -1;
        }
        st->frames = nf;
        st->cap = cap;
    }
    Frame *f = &st->frames[st->nframes++];
    f->kind = kind;
    f->depth = depth;
    f->container = Py_NewRef(container);
    f->seq = seq;  /* stolen */
    f->i = 0;
    return 0;
}

/* Whether a container at ``depth`` is the reference's (too deep, or already open: it contains itself). */
static int refuse_container(W *st, PyObject *v, Py_ssize_t depth)
{
    if (st->w->max_recursion >= 0 && depth > st->w->max_recursion)
        return 1;
    if (st->nframes >= MAX_FRAMES)
        return 1;
    for (Py_ssize_t i = 0; i < st->nframes; i++)
        if (st->frames[i].container == v)
            return 1;
    return 0;
}

/* The pairs of a Dictionary in the engine's order, when every key is exactly a str (then sorted
 * by code point, as views.text.order does); NULL with no error: not handled. */
static PyObject *sorted_pairs(PyObject *v)
{
    PyObject *pairs;
    if (PyDict_CheckExact(v)) {
        pairs = PyList_New(PyDict_GET_SIZE(v));
        if (pairs == NULL)
            return NULL;
        Py_ssize_t pos = 0, i = 0;
        PyObject *k, *x;
        while (PyDict_Next(v, &pos, &k, &x)) {
            if (!PyUnicode_CheckExact(k) || i >= PyList_GET_SIZE(pairs)) {
                Py_DECREF(pairs);
                return NULL;
            }
            PyObject *t = PyTuple_Pack(2, k, x);
            if (t == NULL) {
                Py_DECREF(pairs);
                return NULL;
            }
            PyList_SET_ITEM(pairs, i++, t);
        }
        if (i != PyList_GET_SIZE(pairs)) {
            Py_DECREF(pairs);
            return NULL;
        }
    }
    else {
        pairs = PyMapping_Items(v);
        if (pairs == NULL)
            return NULL;
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(pairs); i++) {
            PyObject *t = PyList_GET_ITEM(pairs, i);
            if (!PyTuple_CheckExact(t) || PyTuple_GET_SIZE(t) != 2 || !PyUnicode_CheckExact(PyTuple_GET_ITEM(t, 0))) {
                Py_DECREF(pairs);
                return NULL;
            }
        }
    }
    /* Distinct str keys: comparing the pairs compares the keys and never the values. */
    if (PyList_Sort(pairs) < 0) {
        Py_DECREF(pairs);
        return NULL;
    }
    return pairs;
}

static int is_identifier(PyObject *s)
{
    Py_ssize_t n = PyUnicode_GET_LENGTH(s);
    if (n == 0)
        return 0;
    int kind = PyUnicode_KIND(s);
    const void *data = PyUnicode_DATA(s);
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        int alpha = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
        if (!(alpha || (i && c >= '0' && c <= '9')))
            return 0;
    }
    return 1;
}

static int write_object(W *st, PyObject *v, Py_ssize_t depth)
{
    if (refuse_container(st, v, depth))
        return BAIL;
    PyObject *cls = PyObject_GetAttrString(v, "class_name");
    if (cls == NULL)
        return callback_failed();
    PyObject *props = PyObject_GetAttrString(v, "properties");
    if (props == NULL) {
        Py_DECREF(cls);
        return callback_failed();
    }
    int r = 0;
    PyObject *items = NULL;
    if (!PyUnicode_CheckExact(cls) || !is_identifier(cls) || !PyDict_CheckExact(props))
        r = BAIL;
    else {
        items = PyDict_Items(props);
        if (items == NULL)
            r = -1;
        for (Py_ssize_t i = 0; r == 0 && i < PyList_GET_SIZE(items); i++)
            if (!PyUnicode_CheckExact(PyTuple_GET_ITEM(PyList_GET_ITEM(items, i), 0)))
                r = BAIL;
    }
    if (r == 0)
        r = PUT(&st->out, "Object(");
    if (r == 0)
        r = put_text(&st->out, cls, 0);
    if (r == 0)
        r = PUT(&st->out, ",");
    if (r == 0) {
        r = push(st, F_OBJECT, v, items, depth + 1);
        items = NULL;
    }
    Py_XDECREF(items);
    Py_DECREF(cls);
    Py_DECREF(props);
    return r;
}

/* Write v (a scalar now, a container as a frame); 0, BAIL or -1. */
static int write_value(W *st, PyObject *v, Py_ssize_t depth)
{
    Buf *b = &st->out;
    Writer *w = st->w;
    char tmp[72];
    if (v == Py_None)
        return PUT(b, "null");
    if (v == Py_True)
        return PUT(b, "true");
    if (v == Py_False)
        return PUT(b, "false");
    PyTypeObject *tp = Py_TYPE(v);
    if (tp == &PyUnicode_Type) {
        if (PUT(b, "\"") < 0 || put_text(b, v, 1) < 0)
            return -1;
        return PUT(b, "\"");
    }
    if (tp == &PyFloat_Type) {
        if (scalar(w->floats, PyFloat_AS_DOUBLE(v), tmp) < 0)
            return BAIL;
        return put_cstr(b, tmp);
    }
    if (tp == &PyLong_Type) {
        int overflow = 0;
        long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
        if (x == -1 && PyErr_Occurred())
            return -1;
        if (overflow)
            return BAIL;
        snprintf(tmp, sizeof tmp, "%lld", x);
        return put_cstr(b, tmp);
    }
    if (tp == &PyList_Type || tp == &PyTuple_Type) {
        if (refuse_container(st, v, depth))
            return BAIL;
        if ((w->spaced ? PUT(b, "[ ") : PUT(b, "[")) < 0)
            return -1;
        return push(st, tp == &PyList_Type ? F_LIST : F_TUPLE, v, Py_NewRef(v), depth);
    }
    int dict_kind = tp == &PyDict_Type;
    PyObject *row = NULL;
    if (!dict_kind) {
        row = PyDict_GetItemWithError(w->types, (PyObject *)tp);
        if (row == NULL)
            return PyErr_Occurred() ? -1 : BAIL;
        if (!PyTuple_CheckExact(row) || PyTuple_GET_SIZE(row) != 3)
            return BAIL;
    }
    long kind = dict_kind ? K_DICTIONARY : PyLong_AsLong(PyTuple_GET_ITEM(row, 0));
    if (kind == -1 && PyErr_Occurred())
        return -1;
    PyObject *name = row ? PyTuple_GET_ITEM(row, 1) : NULL;
    if (name != NULL && !PyUnicode_CheckExact(name))
        return BAIL;
    switch (kind) {
    case K_MATH_REAL:
    case K_MATH_I32:
        return write_math(st, v, kind == K_MATH_I32, name, PyTuple_GET_ITEM(row, 2));
    case K_BYTES:
        if (!PyBytes_CheckExact(v) && !PyByteArray_CheckExact(v))
            return BAIL;
        return write_bytes(st, v, name);
    case K_PACKED_INT:
    case K_PACKED_REAL:
        return write_packed(st, v, kind == K_PACKED_INT, name);
    case K_STRINGS:
        return write_strings(st, v, name);
    case K_OBJECT:
        return write_object(st, v, depth);
    case K_DICTIONARY: {
        if (refuse_container(st, v, depth))
            return BAIL;
        PyObject *pairs = sorted_pairs(v);
        if (pairs == NULL)
            return PyErr_Occurred() ? callback_failed() : BAIL;
        if (!w->spaced && PyList_GET_SIZE(pairs) == 0) {
            Py_DECREF(pairs);
            return PUT(b, "{}");
        }
        if (PUT(b, "{\n") < 0) {
            Py_DECREF(pairs);
            return -1;
        }
        return push(st, F_DICT, v, pairs, depth);
    }
    default:
        return BAIL;
    }
}

static void drop_frames(W *st)
{
    for (Py_ssize_t i = 0; i < st->nframes; i++) {
        Py_DECREF(st->frames[i].container);
        Py_DECREF(st->frames[i].seq);
    }
    st->nframes = 0;
}

/* The text, Py_None: not handled, NULL: an error. */
static PyObject *run(Writer *w, PyObject *root)
{
    W st = {w, {NULL, 0, 0}, NULL, 0, 0};
    int r = write_value(&st, root, 0);
    while (r == 0 && st.nframes) {
        Frame *f = &st.frames[st.nframes - 1];
        Buf *b = &st.out;
        PyObject *child = NULL;
        int done = 0;
        Py_ssize_t child_depth = f->depth + 1;
        switch (f->kind) {
        case F_LIST:
        case F_TUPLE: {
            Py_ssize_t n = f->kind == F_LIST ? PyList_GET_SIZE(f->seq) : PyTuple_GET_SIZE(f->seq);
            if (f->i >= n) {
                r = w->spaced ? PUT(b, " ]") : PUT(b, "]");
                done = 1;
                break;
            }
            if (f->i && (r = PUT(b, ", ")) != 0)
                break;
            child = f->kind == F_LIST ? PyList_GET_ITEM(f->seq, f->i) : PyTuple_GET_ITEM(f->seq, f->i);
            f->i++;
            break;
        }
        case F_DICT: {
            if (f->i >= PyList_GET_SIZE(f->seq)) {
                r = PUT(b, "\n}");
                done = 1;
                break;
            }
            if (f->i && (r = PUT(b, ",\n")) != 0)
                break;
            PyObject *pair = PyList_GET_ITEM(f->seq, f->i);
            f->i++;
            if ((r = PUT(b, "\"")) != 0 || (r = put_text(b, PyTuple_GET_ITEM(pair, 0), 1)) != 0 ||
                (r = PUT(b, "\": ")) != 0)
                break;
            child = PyTuple_GET_ITEM(pair, 1);
            if (w->spaced)
                child_depth = f->depth;
            break;
        }
        default: { /* F_OBJECT */
            if (f->i >= PyList_GET_SIZE(f->seq)) {
                r = PUT(b, ")\n");
                done = 1;
                break;
            }
            if (f->i && (r = PUT(b, ",")) != 0)
                break;
            PyObject *pair = PyList_GET_ITEM(f->seq, f->i);
            f->i++;
            PyObject *pname = PyTuple_GET_ITEM(pair, 0), *prop = PyTuple_GET_ITEM(pair, 1);
            if ((r = PUT(b, "\"")) != 0 || (r = put_text(b, pname, 1)) != 0 || (r = PUT(b, "\":")) != 0)
                break;
            child_depth = f->depth;
            if (w->major == 4 && PyUnicode_Check(prop) && PyUnicode_CompareWithASCIIString(pname, "script") == 0) {
                if ((r = PUT(b, "Resource(\"")) == 0 && (r = put_text(b, prop, 1)) == 0)
                    r = PUT(b, "\")");
                break;
            }
            child = prop;
            break;
        }
        }
        if (r != 0)
            break;
        if (done) {
            st.nframes--;
            Py_DECREF(st.frames[st.nframes].container);
            Py_DECREF(st.frames[st.nframes].seq);
            continue;
        }
        if (child == NULL)  /* written in place (a script's path) */
            continue;
        Py_INCREF(child);
        r = write_value(&st, child, child_depth);
        Py_DECREF(child);
    }
    drop_frames(&st);
    PyMem_Free(st.frames);
    PyObject *result = NULL;
    if (r == 0)
        result = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, st.out.buf, st.out.len);
    else if (r == BAIL)
        result = Py_NewRef(Py_None);
    PyMem_Free(st.out.buf);
    return result;
}

static PyObject *Writer_try_write(Writer *self, PyObject *value)
{
    return run(self, value);
}

static PyObject *Writer_write(Writer *self, PyObject *value)
{
    PyObject *text = run(self, value);
    if (text != Py_None)
        return text;
    Py_DECREF(text);
    return PyObject_CallOneArg(self->fallback, value);
}

static int Writer_init(Writer *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"spaced", "major", "floats", "max_recursion", "types", "fallback", NULL};
    int spaced, major, floats;
    Py_ssize_t max_recursion;
    PyObject *types, *fallback;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "piinO!O:Writer", kwlist, &spaced, &major, &floats,
                                     &max_recursion, &PyDict_Type, &types, &fallback))
        return -1;
    if (floats != FL_3 && floats != FL_40 && floats != FL_45) {
        PyErr_SetString(PyExc_ValueError, "floats must be 3, 40 or 45");
        return -1;
    }
    if (!PyCallable_Check(fallback)) {
        PyErr_SetString(PyExc_TypeError, "fallback must be callable");
        return -1;
    }
    self->spaced = spaced;
    self->major = major;
    self->floats = floats;
    self->max_recursion = max_recursion < 0 ? -1 : max_recursion;
    Py_XSETREF(self->types, Py_NewRef(types));
    Py_XSETREF(self->fallback, Py_NewRef(fallback));
    return 0;
}

static int Writer_traverse(Writer *self, visitproc visit, void *arg)
{
    Py_VISIT(self->types);
    Py_VISIT(self->fallback);
    return 0;
}

static int Writer_clear(Writer *self)
{
    Py_CLEAR(self->types);
    Py_CLEAR(self->fallback);
    return 0;
}

static void Writer_dealloc(Writer *self)
{
    PyObject_GC_UnTrack(self);
    Writer_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *Writer_call(Writer *self, PyObject *args, PyObject *kwds)
{
    PyObject *value;
    if (kwds != NULL && PyDict_GET_SIZE(kwds)) {
        PyErr_SetString(PyExc_TypeError, "write() takes no keyword arguments");
        return NULL;
    }
    if (!PyArg_UnpackTuple(args, "write", 1, 1, &value))
        return NULL;
    return Writer_write(self, value);
}

static PyObject *Writer_not_ready(void)
{
    PyErr_SetString(PyExc_ValueError, "Writer not initialized");
    return NULL;
}

static PyObject *Writer_try_write_m(Writer *self, PyObject *value)
{
    if (self->types == NULL)
        return Writer_not_ready();
    return Writer_try_write(self, value);
}

static PyObject *Writer_write_m(Writer *self, PyObject *value)
{
    if (self->types == NULL)
        return Writer_not_ready();
    return Writer_write(self, value);
}

static PyObject *Writer_call_m(Writer *self, PyObject *args, PyObject *kwds)
{
    if (self->types == NULL)
        return Writer_not_ready();
    return Writer_call(self, args, kwds);
}

static PyMethodDef Writer_methods[] = {
    {"try_write", (PyCFunction)Writer_try_write_m, METH_O,
     "try_write(value) -> the text, or None: not handled (the reference writer then writes it)."},
    {"write", (PyCFunction)Writer_write_m, METH_O, "write(value) -> the text (the fallback's when not handled)."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject WriterType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "godot_formats.core._ctextw.Writer",
    .tp_basicsize = sizeof(Writer),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "The compiled fast path of one text writer: Writer(spaced, major, floats, max_recursion, types, "
              "fallback).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Writer_init,
    .tp_dealloc = (destructor)Writer_dealloc,
    .tp_traverse = (traverseproc)Writer_traverse,
    .tp_clear = (inquiry)Writer_clear,
    .tp_methods = Writer_methods,
    .tp_call = (ternaryfunc)Writer_call_m,
};

/* Test hooks: a float as each style prints it (scalar or rtos_fix), None: not handled. */
static PyObject *mod_format_float(PyObject *mod, PyObject *args)
{
    double x;
    int floats, real;
    if (!PyArg_ParseTuple(args, "dip:format_float", &x, &floats, &real))
        return NULL;
    if (floats != FL_3 && floats != FL_40 && floats != FL_45) {
        PyErr_SetString(PyExc_ValueError, "floats must be 3, 40 or 45");
        return NULL;
    }
    char out[72];
    if ((real ? rtos_fix(floats, x, out) : scalar(floats, x, out)) < 0)
        Py_RETURN_NONE;
    return PyUnicode_FromString(out);
}

static PyMethodDef module_methods[] = {
    {"format_float", mod_format_float, METH_VARARGS,
     "format_float(x, floats, real) -> the text of x by a style's rules (3, 40, 45): rtos_fix if real, "
     "else a float Variant's."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moduledef = {
    PyModuleDef_HEAD_INIT, "godot_formats.core._ctextw",
    "The compiled fast path of the text writer (see godot_formats.views.text.writer).", -1, module_methods,
};

PyMODINIT_FUNC PyInit__ctextw(void)
{
    if (PyType_Ready(&WriterType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&moduledef);
    if (m == NULL)
        return NULL;
    Py_INCREF(&WriterType);
    if (PyModule_AddObject(m, "Writer", (PyObject *)&WriterType) < 0) {
        Py_DECREF(&WriterType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
