/*
 * godot_formats.core._cfront: the front door of gf.loads and gf.dumps, in C.
 *
 * A small message's decode costs the compiled core about 0.6 us; the Python function around
 * it (its keyword defaults checked, the codec looked up in its table, the call passed on) cost
 * another 0.15 us, some 2,000 of the 5,700 machine instructions of the whole call.  A Front is
 * that Python function with the common call made here: one or two positional arguments and no
 * keywords, whose codec is already in the function's table (api._LOADS / api._DUMPS, keyed by
 * the dialect as given), is that codec called with the first argument.  Every other call --
 * keywords, a dialect not seen yet, "auto", an unhashable dialect, a wrong number of arguments
 * -- goes to the Python function as it was made, which keeps every rule and every error.  So
 * the Python function stays the one statement of what loads and dumps do; this only saves its
 * frame when the answer is already in its table.
 *
 * A Front looks like the function it wraps: functools.update_wrapper gives it __name__,
 * __doc__, __wrapped__ (inspect.signature and help() follow it) in its __dict__; it pickles
 * by name, as a function does; and it is a method descriptor that binds to nothing (as
 * staticmethod), so pydoc counts it a routine.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *table;     /* dict: dialect as given -> the codec's one-argument callable */
    PyObject *slow;      /* the Python function: every call the table does not answer */
    PyObject *dialect;   /* the dialect of a call that names none */
    PyObject *dict;      /* __dict__: what functools.update_wrapper sets */
    PyObject *weaklist;  /* weak references, as a function has them (signal libraries keep weak receivers) */
} Front;

/* The codec the table holds for `dialect` (a new reference), or NULL: not there (no error set),
 * or an error that is not the lookup's to swallow (set).  A TypeError or KeyError (an unhashable
 * dialect object, an odd __hash__) is the Python function's to handle: it catches both. */
static PyObject *
codec_for(Front *self, PyObject *dialect)
{
    PyObject *codec;
#if PY_VERSION_HEX >= 0x030D0000
    if (PyDict_GetItemRef(self->table, dialect, &codec) < 0) {
#else
    codec = PyDict_GetItemWithError(self->table, dialect);
    Py_XINCREF(codec);  /* held: the call may clear the table (a full table starts again) */
    if (codec == NULL && PyErr_Occurred()) {
#endif
        if (PyErr_ExceptionMatches(PyExc_TypeError) || PyErr_ExceptionMatches(PyExc_KeyError))
            PyErr_Clear();
        return NULL;
    }
    return codec;
}

static PyObject *
Front_vectorcall(PyObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Front *self = (Front *)op;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    PyObject *codec, *res;

    if ((kwnames == NULL || PyTuple_GET_SIZE(kwnames) == 0) && (nargs == 1 || nargs == 2)) {
        if ((codec = codec_for(self, nargs == 2 ? args[1] : self->dialect)) != NULL) {
            res = PyObject_Vectorcall(codec, args, 1, NULL);
            Py_DECREF(codec);
            return res;
        }
        if (PyErr_Occurred())
            return NULL;
    }
    return PyObject_Vectorcall(self->slow, args, nargsf, kwnames);
}

static PyObject *
Front_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    Front *self;
    PyObject *table, *slow, *dialect;
    static char *kwlist[] = {"table", "slow", "dialect", NULL};

    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!OO:Front", kwlist, &PyDict_Type, &table, &slow, &dialect))
        return NULL;
    if (!PyCallable_Check(slow)) {
        PyErr_SetString(PyExc_TypeError, "Front: slow must be callable");
        return NULL;
    }
    if ((self = (Front *)type->tp_alloc(type, 0)) == NULL)
        return NULL;
    self->vectorcall = Front_vectorcall;
    Py_INCREF(table);
    self->table = table;
    Py_INCREF(slow);
    self->slow = slow;
    Py_INCREF(dialect);
    self->dialect = dialect;
    return (PyObject *)self;
}

static int
Front_traverse(Front *self, visitproc visit, void *arg)
{
    Py_VISIT(self->table);
    Py_VISIT(self->slow);
    Py_VISIT(self->dialect);
    Py_VISIT(self->dict);
    return 0;
}

static int
Front_clear(Front *self)
{
    Py_CLEAR(self->table);
    Py_CLEAR(self->slow);
    Py_CLEAR(self->dialect);
    Py_CLEAR(self->dict);
    return 0;
}

static void
Front_dealloc(Front *self)
{
    PyObject_GC_UnTrack(self);
    if (self->weaklist != NULL)
        PyObject_ClearWeakRefs((PyObject *)self);
    Front_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* As a function: found on an instance, a method bound to it; on a class, itself. */
static PyObject *
Front_get(PyObject *self, PyObject *obj, PyObject *type)
{
    if (obj == NULL || obj == Py_None) {
        Py_INCREF(self);
        return self;
    }
    return PyMethod_New(self, obj);
}

/* Pickled by name, as a module-level function is: its __qualname__, looked up in its
 * __module__ when unpickled. */
static PyObject *
Front_reduce(PyObject *self, PyObject *unused)
{
    return PyObject_GetAttrString(self, "__qualname__");
}

static PyObject *
Front_repr(PyObject *self)
{
    PyObject *name = PyObject_GetAttrString(self, "__qualname__"), *res;
    if (name == NULL) {
        PyErr_Clear();
        return PyUnicode_FromFormat("<Front object at %p>", self);
    }
    res = PyUnicode_FromFormat("<function %S (compiled front)>", name);
    Py_DECREF(name);
    return res;
}

static PyMethodDef Front_methods[] = {
    {"__reduce__", Front_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Front_getset[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyDoc_STRVAR(Front_doc,
"Front(table, slow, dialect)\n\n"
"``slow`` (the Python function loads or dumps) with its common call made in C: called with\n"
"one or two positional arguments and no keywords, a Front calls ``table[dialect](first)``\n"
"when the table holds the dialect given (``dialect`` when none is), and ``slow`` with the\n"
"same arguments otherwise.  ``functools.update_wrapper(front, slow)`` makes it look like it.");

static PyTypeObject FrontType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "godot_formats.core._cfront.Front",
    .tp_basicsize = sizeof(Front),
    .tp_dealloc = (destructor)Front_dealloc,
    .tp_vectorcall_offset = offsetof(Front, vectorcall),
    .tp_repr = Front_repr,
    .tp_call = PyVectorcall_Call,
    .tp_getattro = PyObject_GenericGetAttr,
    .tp_setattro = PyObject_GenericSetAttr,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = Front_doc,
    .tp_traverse = (traverseproc)Front_traverse,
    .tp_clear = (inquiry)Front_clear,
    .tp_methods = Front_methods,
    .tp_getset = Front_getset,
    .tp_descr_get = Front_get,
    .tp_dictoffset = offsetof(Front, dict),
    .tp_weaklistoffset = offsetof(Front, weaklist),
    .tp_new = Front_new,
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "godot_formats.core._cfront",
    .m_doc = "The front door of gf.loads and gf.dumps: their common call made in C (see Front).",
    .m_size = -1,
};

PyMODINIT_FUNC
PyInit__cfront(void)
{
    PyObject *m;
    if (PyType_Ready(&FrontType) < 0)
        return NULL;
    if ((m = PyModule_Create(&module)) == NULL)
        return NULL;
    Py_INCREF(&FrontType);
    if (PyModule_AddObject(m, "Front", (PyObject *)&FrontType) < 0) {
        Py_DECREF(&FrontType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
