/*
 * godot_formats.core._ctext: the compiled fast path of the text parser (var2str / var_to_str text).
 *
 * godot_formats.views.text.parser is the reference: it states Godot's text grammar, and every
 * error, offset and odd case is its.  This is a front in front of it, as the compiled codec is
 * in front of the reference codec: a Reader reads the common grammar engines write -- blanks
 * and ';' comments, null/true/false, ints, floats, inf/nan, strings (with the one-character
 * escapes), Arrays, Dictionaries, math constructors, packed arrays, Object(...) -- and answers
 * (value, end) exactly as the reference would; anything else -- any error, any other token or
 * construct (typed containers, StringName, NodePath, Resource, colors, \u escapes, Godot 3's
 * empty-element RID), a depth past max_depth -- is "not handled" (None), and the reference
 * then reads the same text from the same start and decides.
 *
 * What a value is made of stays in Python, in one place: the Reader is built with the
 * parser's own tables (keywords, constructor names the dialect has, special floats, escapes)
 * and calls back the parser's own functions for what a Dictionary is (make_dictionary: key
 * semantics), what Name(args) makes (construct: math values and packed arrays, with their
 * checks and conversions) and what Object(Class, ...) makes (make_object).  An exception from a
 * callback is "not handled" too (the reference meets the same case and raises it), except one
 * that is not an Exception (KeyboardInterrupt), which goes up.
 *
 * No recursion on the text: containers open frames on an explicit stack that grows on the heap
 * and never goes deeper than max_depth (the reference's limit, checked where it checks it).
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

/* The constructor kinds of the names table (views.text.parser._compiled says which name is which). */
enum { C_NUMBERS = 1, C_STRINGS = 2, C_OBJECT = 3 };

typedef struct {
    PyObject_HEAD
    int godot3;
    Py_ssize_t max_key_depth;
    PyObject *keywords;     /* dict: identifier -> value (true, false, null, nil) */
    PyObject *names;        /* dict: identifier -> C_* (the constructors this dialect reads) */
    PyObject *specials;     /* dict: "inf", "inf_neg", "-inf", "nan", "-nan" -> float */
    PyObject *rules;        /* the dialect's KeyRules, make_dictionary's second argument */
    PyObject *make_dict;    /* make_dictionary(pairs, rules, memo) */
    PyObject *construct;    /* construct(name, args, pos) */
    PyObject *make_object;  /* make_object(class_name, properties) */
    Py_UCS4 escapes[128];   /* \x -> the character it stands for; 0: x itself */
} Reader;

/* ------------------------------------------------------------------------------------------ */
/* The scanner: the reference's _TOKEN (and scan_slow, for the tokens read here).              */

enum { T_EOF, T_PUNCT, T_STR, T_INT, T_FLOAT, T_SPECIAL, T_IDENT, T_BAD };

typedef struct {
    int kind;
    Py_UCS4 c;          /* T_PUNCT: the character */
    Py_ssize_t start;   /* the token's first character (after blanks and comments) */
    Py_ssize_t end;     /* just past it */
    Py_ssize_t escapes; /* T_STR: how many escapes */
    const char *special;/* T_SPECIAL: its name in the specials table */
} Tok;

typedef struct {
    Reader *r;
    PyObject *text;
    const void *data;
    int ukind;
    Py_ssize_t n;
    Py_ssize_t pos;     /* where the next token's blanks begin */
    PyObject *memo;     /* make_dictionary's memo: one per value read, made when first needed */
    char *buf;          /* a float token as C text */
    Py_ssize_t bufsize;
} P;

#define AT(p, i) PyUnicode_READ((p)->ukind, (p)->data, (i))

static inline int is_digit(Py_UCS4 c) { return c >= '0' && c <= '9'; }
static inline int is_ident_start(Py_UCS4 c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }
static inline int is_ident(Py_UCS4 c) { return is_ident_start(c) || is_digit(c); }

static inline int is_punct(Py_UCS4 c)
{
    switch (c) {
    case '{': case '}': case '[': case ']': case '(': case ')': case ',': case ':': case '=':
        return 1;
    default:
        return 0;
    }
}

/* Whether `word` (ASCII) is at i. */
static int
at_word(P *p, Py_ssize_t i, const char *word)
{
    for (; *word; word++, i++)
        if (i >= p->n || AT(p, i) != (Py_UCS4)(unsigned char)*word)
            return 0;
    return 1;
}

/* _SPECIAL_FLOAT at i: (inf_neg|-?inf|-?nan)(\.0)?(?![A-Za-z0-9_]), the regular expression's
 * backtracking included (inf.0x is inf, then .0x).  Its end, or -1. */
static Py_ssize_t
special_at(P *p, Py_ssize_t i, const char **name)
{
    static const char *const words[] = {"inf_neg", "-inf", "inf", "-nan", "nan"};
    for (size_t w = 0; w < sizeof(words) / sizeof(words[0]); w++) {
        if (!at_word(p, i, words[w]))
            continue;
        Py_ssize_t e = i + (Py_ssize_t)strlen(words[w]);
        if (at_word(p, e, ".0") && (e + 2 >= p->n || !is_ident(AT(p, e + 2)))) {
            *name = words[w];
            return e + 2;
        }
        if (e >= p->n || !is_ident(AT(p, e))) {
            *name = words[w];
            return e;
        }
    }
    return -1;
}

/* The token after the blanks and comments from `from`. */
static void
scan(P *p, Py_ssize_t from, Tok *tok)
{
    Py_ssize_t i = from, n = p->n;
    Py_UCS4 c;
    for (;;) {
        while (i < n && AT(p, i) <= 0x20)
            i++;
        if (i < n && AT(p, i) == ';') {
            while (i < n && AT(p, i) != '\n')
                i++;
            continue;
        }
        break;
    }
    tok->start = i;
    tok->end = i;
    if (i >= n) {
        tok->kind = T_EOF;
        return;
    }
    c = AT(p, i);
    if (is_punct(c)) {
        tok->kind = T_PUNCT;
        tok->c = c;
        tok->end = i + 1;
        return;
    }
    if (c == '"') {
        Py_ssize_t j = i + 1, esc = 0;
        for (;;) {
            if (j >= n) {  /* unterminated: the reference's error */
                tok->kind = T_BAD;
                return;
            }
            c = AT(p, j);
            if (c == '"')
                break;
            if (c == '\\') {
                if (j + 1 >= n) {
                    tok->kind = T_BAD;
                    return;
                }
                c = AT(p, j + 1);
                if (c == 'u' || c == 'U') {  /* code points and surrogate pairs: the reference's */
                    tok->kind = T_BAD;
                    return;
                }
                esc++;
                j += 2;
                continue;
            }
            j++;
        }
        tok->kind = T_STR;
        tok->escapes = esc;
        tok->end = j + 1;
        return;
    }
    {
        const char *name;
        Py_ssize_t e = special_at(p, i, &name);
        if (e >= 0) {
            tok->kind = T_SPECIAL;
            tok->special = name;
            tok->end = e;
            return;
        }
    }
    if (is_digit(c) || (c == '-' && i + 1 < n && is_digit(AT(p, i + 1)))) {
        /* -?[0-9]+(\.[0-9]*)?([eE][+-]?[0-9]+)? */
        Py_ssize_t j = i + (c == '-');
        int is_float = 0;
        while (j < n && is_digit(AT(p, j)))
            j++;
        if (j < n && AT(p, j) == '.') {
            is_float = 1;
            j++;
            while (j < n && is_digit(AT(p, j)))
                j++;
        }
        if (j < n && (AT(p, j) == 'e' || AT(p, j) == 'E')) {
            Py_ssize_t k = j + 1;
            if (k < n && (AT(p, k) == '+' || AT(p, k) == '-'))
                k++;
            if (k < n && is_digit(AT(p, k))) {
                while (k < n && is_digit(AT(p, k)))
                    k++;
                j = k;
                is_float = 1;
            }
        }
        tok->kind = is_float ? T_FLOAT : T_INT;
        tok->end = j;
        return;
    }
    if (is_ident_start(c)) {
        Py_ssize_t j = i + 1;
        while (j < n && is_ident(AT(p, j)))
            j++;
        tok->kind = T_IDENT;
        tok->end = j;
        return;
    }
    tok->kind = T_BAD;
}

/* The next token, consumed. */
static inline void
next(P *p, Tok *tok)
{
    scan(p, p->pos, tok);
    if (tok->kind != T_BAD)
        p->pos = tok->end;
}

static inline int
is(const Tok *tok, Py_UCS4 c)
{
    return tok->kind == T_PUNCT && tok->c == c;
}

/* ------------------------------------------------------------------------------------------ */
/* Token values.  NULL with no error set: not handled here.                                    */

/* _Scanner.integer: 64-bit or refused. */
static PyObject *
int_value(P *p, const Tok *tok)
{
    Py_ssize_t i = tok->start, e = tok->end;
    int negative = AT(p, i) == '-';
    uint64_t v = 0;
    if (negative)
        i++;
    while (i < e && AT(p, i) == '0')
        i++;
    if (e - i > 19)
        return NULL;
    for (; i < e; i++)
        v = v * 10 + (uint64_t)(AT(p, i) - '0');  /* 19 digits fit in 64 unsigned bits */
    if (negative) {
        if (v > (uint64_t)1 << 63)
            return NULL;
        if (v == (uint64_t)1 << 63)
            return PyLong_FromLongLong(INT64_MIN);
        return PyLong_FromLongLong(-(long long)v);
    }
    if (v >= (uint64_t)1 << 63)
        return NULL;
    return PyLong_FromLongLong((long long)v);
}

/* float(token), as Python's float() converts it. */
static PyObject *
float_value(P *p, const Tok *tok)
{
    Py_ssize_t len = tok->end - tok->start;
    char *end;
    double d;
    if (len + 1 > p->bufsize) {
        char *b = PyMem_Realloc(p->buf, (size_t)len + 1);
        if (b == NULL) {
            PyErr_NoMemory();
            return NULL;
        }
        p->buf = b;
        p->bufsize = len + 1;
    }
    for (Py_ssize_t k = 0; k < len; k++)
        p->buf[k] = (char)AT(p, tok->start + k);  /* ASCII: the scanner took only digits, '-', '.', e, E, '+' */
    p->buf[len] = '\0';
    d = PyOS_string_to_double(p->buf, &end, NULL);
    if (d == -1.0 && PyErr_Occurred())
        return NULL;
    if (end != p->buf + len)
        return NULL;
    return PyFloat_FromDouble(d);
}

static PyObject *
special_value(P *p, const Tok *tok)
{
    PyObject *v = PyDict_GetItemString(p->r->specials, tok->special);
    Py_XINCREF(v);
    return v;
}

/* A string token's content, the one-character escapes decoded (\u escapes never get here). */
static PyObject *
string_value(P *p, const Tok *tok)
{
    Py_ssize_t a = tok->start + 1, b = tok->end - 1, i, k;
    Py_UCS4 maxchar = 0, c;
    PyObject *s;
    if (tok->escapes == 0)
        return PyUnicode_Substring(p->text, a, b);
    for (i = a; i < b; i++) {
        c = AT(p, i);
        if (c == '\\') {
            c = AT(p, ++i);
            if (c < 128 && p->r->escapes[c])
                c = p->r->escapes[c];
        }
        if (c > maxchar)
            maxchar = c;
    }
    s = PyUnicode_New(b - a - tok->escapes, maxchar);
    if (s == NULL)
        return NULL;
    {
        int skind = PyUnicode_KIND(s);
        void *sdata = PyUnicode_DATA(s);
        for (i = a, k = 0; i < b; i++, k++) {
            c = AT(p, i);
            if (c == '\\') {
                c = AT(p, ++i);
                if (c < 128 && p->r->escapes[c])
                    c = p->r->escapes[c];
            }
            PyUnicode_WRITE(skind, sdata, k, c);
        }
    }
    return s;
}

static PyObject *
atom_value(P *p, const Tok *tok)
{
    switch (tok->kind) {
    case T_STR: return string_value(p, tok);
    case T_INT: return int_value(p, tok);
    case T_FLOAT: return float_value(p, tok);
    case T_SPECIAL: return special_value(p, tok);
    default: return NULL;
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Constructors: the arguments read here, the value made by the parser's own functions.        */

/* Name( n, n, ... ) or Name( "s", "s", ... ) after the name: the reference's numbers() and
 * strings().  A new list, or NULL. */
static PyObject *
arguments(P *p, int strings)
{
    Tok tok;
    PyObject *args, *v;
    next(p, &tok);
    if (!is(&tok, '('))
        return NULL;
    if ((args = PyList_New(0)) == NULL)
        return NULL;
    if (!strings) {
        scan(p, p->pos, &tok);
        if (is(&tok, ')')) {
            p->pos = tok.end;
            return args;
        }
    }
    for (;;) {
        next(p, &tok);
        if (strings && is(&tok, ')') && PyList_GET_SIZE(args) == 0)
            return args;
        if (strings ? tok.kind != T_STR : !(tok.kind == T_INT || tok.kind == T_FLOAT || tok.kind == T_SPECIAL))
            goto fail;
        if ((v = atom_value(p, &tok)) == NULL)
            goto fail;
        if (PyList_Append(args, v) < 0) {
            Py_DECREF(v);
            goto fail;
        }
        Py_DECREF(v);
        next(p, &tok);
        if (is(&tok, ')'))
            return args;
        if (!is(&tok, ','))
            goto fail;
    }
fail:
    Py_DECREF(args);
    return NULL;
}

static PyObject *
construct(P *p, PyObject *name, int strings, Py_ssize_t pos)
{
    PyObject *args = arguments(p, strings), *at, *res;
    if (args == NULL)
        return NULL;
    if ((at = PyLong_FromSsize_t(pos)) == NULL) {
        Py_DECREF(args);
        return NULL;
    }
    {
        PyObject *argv[3] = {name, args, at};
        res = PyObject_Vectorcall(p->r->construct, argv, 3, NULL);
    }
    Py_DECREF(args);
    Py_DECREF(at);
    return res;
}

/* ------------------------------------------------------------------------------------------ */
/* The containers: the reference's _ArrayFrame, _DictFrame and _ObjectFrame.                   */

enum { F_ARRAY, F_DICT, F_OBJECT };
enum { D_KEY, D_COLON, D_VALUE };
enum { ST_FAIL = -1, ST_NEED = 0, ST_DONE = 1 };
#define COMMA_NONE 2  /* an Array's need_comma after a Godot 3 comma (the reference's None) */

typedef struct {
    int kind;
    int state;          /* a Dictionary's: D_* */
    int need_comma;
    Py_ssize_t height;  /* container levels inside it so far */
    PyObject *items;    /* Array: the list; Dictionary: the (key, value) pairs; Object: its properties */
    PyObject *key;      /* Dictionary: the key read; Object: the property name read */
    PyObject *name;     /* Object: its class name */
} Frame;

static void
frame_clear(Frame *f)
{
    Py_CLEAR(f->items);
    Py_CLEAR(f->key);
    Py_CLEAR(f->name);
}

/* The finished container's value (a new reference), or NULL. */
static PyObject *
finish(P *p, Frame *f)
{
    if (f->kind == F_ARRAY) {
        PyObject *v = f->items;
        f->items = NULL;
        return v;
    }
    if (f->kind == F_DICT) {
        if (p->memo == NULL && (p->memo = PyDict_New()) == NULL)
            return NULL;
        PyObject *argv[3] = {f->items, p->r->rules, p->memo};
        return PyObject_Vectorcall(p->r->make_dict, argv, 3, NULL);
    }
    {
        PyObject *argv[2] = {f->name, f->items};
        return PyObject_Vectorcall(p->r->make_object, argv, 2, NULL);
    }
}

/* The frame's next step: ST_NEED (a value is wanted), ST_DONE (*out: the container) or ST_FAIL. */
static int
advance(P *p, Frame *f, PyObject **out)
{
    Tok tok;
    int godot3 = p->r->godot3;
    if (f->kind == F_ARRAY) {
        scan(p, p->pos, &tok);
        if (is(&tok, ']') && !(godot3 && f->need_comma == COMMA_NONE)) {
            p->pos = tok.end;
            goto done;
        }
        if (f->need_comma == 1) {
            if (!is(&tok, ','))
                return ST_FAIL;
            p->pos = tok.end;
            f->need_comma = godot3 ? COMMA_NONE : 0;
            if (!godot3) {
                scan(p, p->pos, &tok);
                if (is(&tok, ']')) {
                    p->pos = tok.end;
                    goto done;
                }
            }
        }
        return ST_NEED;
    }
    if (f->kind == F_DICT) {
        if (f->state == D_COLON) {
            next(p, &tok);
            if (!is(&tok, ':'))
                return ST_FAIL;
            f->state = D_VALUE;
            return ST_NEED;
        }
        scan(p, p->pos, &tok);
        if (is(&tok, '}')) {
            p->pos = tok.end;
            goto done;
        }
        if (f->need_comma) {
            if (!is(&tok, ','))
                return ST_FAIL;
            p->pos = tok.end;
            f->need_comma = 0;
            if (!godot3) {
                scan(p, p->pos, &tok);
                if (is(&tok, '}')) {
                    p->pos = tok.end;
                    goto done;
                }
            }
        }
        return ST_NEED;
    }
    /* Object */
    next(p, &tok);
    if (is(&tok, ')'))
        goto done;
    if (f->need_comma) {
        if (!is(&tok, ','))
            return ST_FAIL;
        f->need_comma = 0;
        next(p, &tok);
        if (is(&tok, ')'))
            goto done;
    }
    if (tok.kind != T_STR)
        return ST_FAIL;
    Py_CLEAR(f->key);
    if ((f->key = string_value(p, &tok)) == NULL)
        return ST_FAIL;
    next(p, &tok);
    if (!is(&tok, ':'))
        return ST_FAIL;
    return ST_NEED;
done:
    if ((*out = finish(p, f)) == NULL)
        return ST_FAIL;
    return ST_DONE;
}

/* The frame takes `value` (stolen); `height` is the value's container levels.  0, or -1. */
static int
accept(P *p, Frame *f, PyObject *value, Py_ssize_t height)
{
    int rc;
    if (f->kind == F_ARRAY) {
        rc = PyList_Append(f->items, value);
        Py_DECREF(value);
        f->need_comma = 1;
        return rc;
    }
    if (f->kind == F_DICT) {
        PyObject *pair;
        if (f->state == D_KEY) {
            if (height > p->r->max_key_depth) {
                Py_DECREF(value);
                return -1;
            }
            Py_XSETREF(f->key, value);
            f->state = D_COLON;
            return 0;
        }
        pair = PyTuple_New(2);
        if (pair == NULL) {
            Py_DECREF(value);
            return -1;
        }
        PyTuple_SET_ITEM(pair, 0, f->key);  /* the frame's reference moves into the pair */
        PyTuple_SET_ITEM(pair, 1, value);
        f->key = NULL;
        rc = PyList_Append(f->items, pair);
        Py_DECREF(pair);
        f->state = D_KEY;
        f->need_comma = 1;
        return rc;
    }
    rc = PyDict_SetItem(f->items, f->key, value);
    Py_DECREF(value);
    f->need_comma = 1;
    return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* The value: the reference's _Parser.parse, its stack explicit here too.                      */

typedef struct {
    Frame *frames;
    Py_ssize_t depth;
    Py_ssize_t cap;
} Stack;

static Frame *
push(Stack *s)
{
    if (s->depth == s->cap) {
        Py_ssize_t cap = s->cap ? s->cap * 2 : 16;
        Frame *f = PyMem_Realloc(s->frames, (size_t)cap * sizeof(Frame));
        if (f == NULL) {
            PyErr_NoMemory();
            return NULL;
        }
        s->frames = f;
        s->cap = cap;
    }
    Frame *f = &s->frames[s->depth++];
    memset(f, 0, sizeof(*f));
    return f;
}

/* Start a value at the next token: an atom (*out) or a new frame (*opened).  0, or -1. */
static int
begin(P *p, Stack *s, Py_ssize_t max_depth, PyObject **out, Frame **opened)
{
    Tok tok;
    PyObject *word, *found;
    next(p, &tok);
    *out = NULL;
    *opened = NULL;
    switch (tok.kind) {
    case T_STR: case T_INT: case T_FLOAT: case T_SPECIAL:
        *out = atom_value(p, &tok);
        return *out == NULL ? -1 : 0;
    case T_PUNCT:
        if (tok.c != '[' && tok.c != '{')
            return -1;  /* an empty value position (Godot 3: a RID) or an error: the reference's */
        if (s->depth >= max_depth)
            return -1;
        if ((*opened = push(s)) == NULL)
            return -1;
        (*opened)->kind = tok.c == '[' ? F_ARRAY : F_DICT;
        (*opened)->items = PyList_New(0);
        return (*opened)->items == NULL ? -1 : 0;
    case T_IDENT:
        break;
    default:
        return -1;
    }
    if ((word = PyUnicode_Substring(p->text, tok.start, tok.end)) == NULL)
        return -1;
    if ((found = PyDict_GetItemWithError(p->r->keywords, word)) != NULL) {
        Py_DECREF(word);
        Py_INCREF(found);
        *out = found;
        return 0;
    }
    if (PyErr_Occurred() || (found = PyDict_GetItemWithError(p->r->names, word)) == NULL) {
        Py_DECREF(word);
        return -1;
    }
    switch (PyLong_AsLong(found)) {
    case C_NUMBERS:
    case C_STRINGS:
        *out = construct(p, word, PyLong_AsLong(found) == C_STRINGS, tok.start);
        Py_DECREF(word);
        return *out == NULL ? -1 : 0;
    case C_OBJECT: {
        PyObject *class_name, *props;
        Py_DECREF(word);
        next(p, &tok);
        if (!is(&tok, '('))
            return -1;
        next(p, &tok);
        if (tok.kind != T_IDENT)
            return -1;
        if ((class_name = PyUnicode_Substring(p->text, tok.start, tok.end)) == NULL)
            return -1;
        next(p, &tok);
        if (!is(&tok, ',') || s->depth >= max_depth || (props = PyDict_New()) == NULL) {
            Py_DECREF(class_name);
            return -1;
        }
        if ((*opened = push(s)) == NULL) {
            Py_DECREF(class_name);
            Py_DECREF(props);
            return -1;
        }
        (*opened)->kind = F_OBJECT;
        (*opened)->name = class_name;
        (*opened)->items = props;
        return 0;
    }
    default:
        Py_DECREF(word);
        return -1;
    }
}

/* (value, end), or NULL: not handled, or an error set that is not the reference's to raise. */
static PyObject *
parse(P *p, Py_ssize_t max_depth, int whole)
{
    Stack s = {NULL, 0, 0};
    PyObject *value = NULL, *res = NULL;
    Py_ssize_t height = 0;
    int want = 1, st;
    Frame *f;
    for (;;) {
        if (want) {
            height = 0;  /* an atom, unless a container finishes below */
            if (begin(p, &s, max_depth, &value, &f) < 0)
                goto fail;
            if (f != NULL) {
                st = advance(p, f, &value);
                if (st == ST_FAIL)
                    goto fail;
                if (st == ST_NEED)
                    continue;
                frame_clear(f);
                s.depth--;
                height = 1;  /* an empty container */
            }
            want = 0;
        }
        if (s.depth == 0)
            break;
        f = &s.frames[s.depth - 1];
        if (height > f->height)
            f->height = height;
        st = accept(p, f, value, height);
        value = NULL;
        if (st < 0)
            goto fail;
        st = advance(p, f, &value);
        if (st == ST_FAIL)
            goto fail;
        if (st == ST_NEED) {
            want = 1;
        } else {
            height = f->height + 1;
            frame_clear(f);
            s.depth--;
        }
    }
    if (whole) {
        Tok tok;
        scan(p, p->pos, &tok);
        if (tok.kind != T_EOF)
            goto fail;
    }
    {
        PyObject *end = PyLong_FromSsize_t(p->pos);
        if (end == NULL || (res = PyTuple_New(2)) == NULL) {
            Py_XDECREF(end);
            goto fail;
        }
        PyTuple_SET_ITEM(res, 0, value);  /* both references move into the tuple */
        PyTuple_SET_ITEM(res, 1, end);
        value = NULL;
    }
fail:
    Py_XDECREF(value);
    while (s.depth > 0)
        frame_clear(&s.frames[--s.depth]);
    PyMem_Free(s.frames);
    return res;
}

/* ------------------------------------------------------------------------------------------ */
/* The Reader type.                                                                            */

static PyObject *
Reader_read(Reader *self, PyObject *const *args, Py_ssize_t nargs)
{
    P p;
    PyObject *text, *res;
    Py_ssize_t start, max_depth;
    long long depth;
    int overflow, whole;
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "read(text, start, max_depth, whole) takes 4 arguments");
        return NULL;
    }
    if (self->make_object == NULL) {
        PyErr_SetString(PyExc_TypeError, "this Reader was never initialised");
        return NULL;
    }
    text = args[0];
    if (!PyUnicode_Check(text) || !PyLong_Check(args[1]) || !PyLong_Check(args[2]))
        Py_RETURN_NONE;
    start = PyLong_AsSsize_t(args[1]);
    if (start == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    depth = PyLong_AsLongLongAndOverflow(args[2], &overflow);
    if (depth == -1 && PyErr_Occurred())
        return NULL;
    if (overflow > 0 || depth > PY_SSIZE_T_MAX)
        max_depth = PY_SSIZE_T_MAX;
    else if (overflow < 0 || depth < 0)
        max_depth = 0;  /* the same to the reference: no container fits */
    else
        max_depth = (Py_ssize_t)depth;
    if ((whole = PyObject_IsTrue(args[3])) < 0)
        return NULL;
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(text) < 0)
        return NULL;
#endif
    p.r = self;
    p.text = text;
    p.data = PyUnicode_DATA(text);
    p.ukind = PyUnicode_KIND(text);
    p.n = PyUnicode_GET_LENGTH(text);
    if (start < 0 || start > p.n)
        Py_RETURN_NONE;  /* the reference's way with such a start */
    p.pos = start;
    p.memo = NULL;
    p.buf = NULL;
    p.bufsize = 0;
    res = parse(&p, max_depth, whole);
    Py_XDECREF(p.memo);
    PyMem_Free(p.buf);
    if (res == NULL) {
        if (PyErr_Occurred()) {
            if (!PyErr_ExceptionMatches(PyExc_Exception))
                return NULL;  /* KeyboardInterrupt, SystemExit: not the text's */
            PyErr_Clear();
        }
        Py_RETURN_NONE;
    }
    return res;
}

static int
Reader_init(Reader *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"godot3", "keywords", "names", "specials", "escapes", "rules", "make_dictionary",
                             "construct", "make_object", "max_key_depth", NULL};
    int godot3;
    PyObject *keywords, *names, *specials, *escapes, *rules, *make_dict, *constr, *make_object, *key, *value;
    Py_ssize_t max_key_depth, pos = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "pO!O!O!O!OOOOn", kwlist, &godot3, &PyDict_Type, &keywords,
                                     &PyDict_Type, &names, &PyDict_Type, &specials, &PyDict_Type, &escapes,
                                     &rules, &make_dict, &constr, &make_object, &max_key_depth))
        return -1;
    memset(self->escapes, 0, sizeof(self->escapes));
    while (PyDict_Next(escapes, &pos, &key, &value)) {
        if (!PyUnicode_Check(key) || !PyUnicode_Check(value) || PyUnicode_GET_LENGTH(key) != 1
                || PyUnicode_GET_LENGTH(value) != 1 || PyUnicode_READ_CHAR(key, 0) >= 128
                || PyUnicode_READ_CHAR(value, 0) == 0) {
            PyErr_SetString(PyExc_ValueError, "escapes maps one ASCII character to one character");
            return -1;
        }
        self->escapes[PyUnicode_READ_CHAR(key, 0)] = PyUnicode_READ_CHAR(value, 0);
    }
    pos = 0;
    while (PyDict_Next(names, &pos, &key, &value)) {
        long code = PyLong_Check(value) ? PyLong_AsLong(value) : -1;
        if (code != C_NUMBERS && code != C_STRINGS && code != C_OBJECT) {
            PyErr_Clear();
            PyErr_SetString(PyExc_ValueError, "names maps an identifier to 1 (numbers), 2 (strings) or 3 (Object)");
            return -1;
        }
    }
    self->godot3 = godot3;
    self->max_key_depth = max_key_depth;
    Py_INCREF(keywords); Py_XSETREF(self->keywords, keywords);
    Py_INCREF(names); Py_XSETREF(self->names, names);
    Py_INCREF(specials); Py_XSETREF(self->specials, specials);
    Py_INCREF(rules); Py_XSETREF(self->rules, rules);
    Py_INCREF(make_dict); Py_XSETREF(self->make_dict, make_dict);
    Py_INCREF(constr); Py_XSETREF(self->construct, constr);
    Py_INCREF(make_object); Py_XSETREF(self->make_object, make_object);
    return 0;
}

static int
Reader_traverse(Reader *self, visitproc visit, void *arg)
{
    Py_VISIT(self->keywords);
    Py_VISIT(self->names);
    Py_VISIT(self->specials);
    Py_VISIT(self->rules);
    Py_VISIT(self->make_dict);
    Py_VISIT(self->construct);
    Py_VISIT(self->make_object);
    return 0;
}

static int
Reader_clear(Reader *self)
{
    Py_CLEAR(self->keywords);
    Py_CLEAR(self->names);
    Py_CLEAR(self->specials);
    Py_CLEAR(self->rules);
    Py_CLEAR(self->make_dict);
    Py_CLEAR(self->construct);
    Py_CLEAR(self->make_object);
    return 0;
}

static void
Reader_dealloc(Reader *self)
{
    PyObject_GC_UnTrack(self);
    Reader_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMethodDef Reader_methods[] = {
    {"read", (PyCFunction)(void (*)(void))Reader_read, METH_FASTCALL,
     "read(text, start, max_depth, whole) -> (value, end), or None: not handled (the reference reads it)."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject ReaderType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "godot_formats.core._ctext.Reader",
    .tp_basicsize = sizeof(Reader),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "The common text grammar of one dialect, read in C; the rest is the reference parser's.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Reader_init,
    .tp_traverse = (traverseproc)Reader_traverse,
    .tp_clear = (inquiry)Reader_clear,
    .tp_dealloc = (destructor)Reader_dealloc,
    .tp_methods = Reader_methods,
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    "godot_formats.core._ctext",
    "The compiled fast path of the text parser (godot_formats.views.text.parser is the reference).",
    -1,
    NULL,
};

PyMODINIT_FUNC
PyInit__ctext(void)
{
    PyObject *m;
    if (PyType_Ready(&ReaderType) < 0)
        return NULL;
    if ((m = PyModule_Create(&module)) == NULL)
        return NULL;
    Py_INCREF(&ReaderType);
    if (PyModule_AddObject(m, "Reader", (PyObject *)&ReaderType) < 0) {
        Py_DECREF(&ReaderType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
