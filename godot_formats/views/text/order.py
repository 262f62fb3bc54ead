"""The order the engines print Dictionary keys in: ``Variant::operator<`` and Godot's introsort.

``VariantWriter`` sorts the keys before writing them, and keys that compare as ties
(NaN, two Dictionaries ...) end up wherever that particular sort leaves them, so the
writer needs this exact order rather than any sorted one.
"""

from __future__ import annotations

from collections.abc import Callable as _Fn
from itertools import chain
from typing import Any

from ...core import types as t
from ...core.dialects import Dialect
from ...core.errors import EncodeError
from ...core.registry import spec_for
from ...core.switches import REAL
from .common import MAX_KEY_DEPTH, spec_of
from .floats import _to_f32
from .style import TextStyle


def _is_equal_approx_f32(a: float, b: float) -> bool:
    """Godot 3 ``Math::is_equal_approx`` on real_t (float32), as Vector2/3 ``<`` uses it."""
    if a == b:
        return True
    tolerance = _to_f32(1e-5 * abs(a))
    tolerance = max(tolerance, _to_f32(1e-5))
    return abs(_to_f32(a - b)) < tolerance


def _vector_less(a: tuple[float, ...], b: tuple[float, ...], same: _Fn[[float, float], bool]) -> bool:
    for x, y in zip(a[:-1], b[:-1]):
        if not same(x, y):
            return x < y
    return a[-1] < b[-1]


# Kinds of sort keys: how two keys of the same type compare (Variant OP_LESS of that type).
_PLAIN, _VEC, _VEC_APPROX, _POOL, _ARRAY, _NEVER = range(6)
_PLAIN_TYPES = frozenset({"bool", "int", "float", "String", "StringName"})
_FLOAT_POOLS = frozenset({"PackedFloat32Array", "PackedFloat64Array", "PackedVector2Array", "PackedVector3Array",
                          "PackedVector4Array", "PackedColorArray"})
_END = object()


def _children(value: Any) -> Any:
    """What a container holds (None for anything else): elements, keys and values, or properties."""
    if isinstance(value, (list, tuple)) and not isinstance(value, t.Components):
        return value
    if isinstance(value, (dict, t.Dictionary)):
        return chain.from_iterable(value.items())
    if isinstance(value, t.Object):
        return value.properties.values()
    return None


class _Order:
    """``Variant::operator<`` of one engine family: type id first, then ``OP_LESS``.

    Types without ``OP_LESS`` compare as never-less, which makes such keys
    ties; their final order is whatever the engine's introsort leaves, so the
    sort is a port of that introsort too.

    Every key is turned once into a *sort key* ``(type id, kind, data)``
    (:meth:`compile`, iterative and memoized per container, so a key nested
    in a key is not walked again), and comparisons only look at those: a
    packed array becomes a small int naming its contents, an Array the tuple
    of its elements' sort keys.  Comparing two Arrays walks them with an
    explicit stack, once: Godot 4 asks ``x < y`` and then ``y < x`` for each
    pair of elements, which is exponential in the nesting depth; one
    three-way comparison per pair gives the same answers.
    """

    def __init__(self, dialect: Dialect, style: TextStyle) -> None:
        self.dialect = dialect
        self.style = style
        self.godot3 = style.major == 3
        self.memo: dict[int, tuple[tuple[Any, ...], int]] = {}  # id(container) -> (sort key, height)
        self.pools: dict[Any, int] = {}  # packed contents -> a number standing for them

    def type_index(self, name: str) -> int:
        type_id = self.dialect.type_id(name)
        if type_id is None:
            raise EncodeError(f"{self.dialect.name} has no {name} type")
        return type_id

    def leaf(self, value: Any) -> tuple[Any, ...]:
        if spec_for(value) is None:
            # A resource of a resource file as a key (its writer's ResourceEncoder writes it): an
            # Object, which the engine orders by address; here it has no order, as a never-less type.
            return self.type_index("Object"), _NEVER, None
        spec = spec_of(value)
        name = spec.name
        tid = self.type_index(name)
        if name in _PLAIN_TYPES:
            return tid, _PLAIN, str(value) if isinstance(value, str) else value
        if spec.ordered:  # a vector (the row says so): compared component by component
            approx = self.godot3 and spec.component == REAL  # Godot 3 compares real vectors approximately
            return tid, _VEC_APPROX if approx else _VEC, tuple(value)
        if name == "RID":
            return tid, _PLAIN, value.id
        if name.startswith("Packed") and self.godot3:  # Godot 4 has no OP_LESS for packed arrays
            return tid, _POOL, self.pool_id(name, value)
        return tid, _NEVER, None

    def pool_id(self, name: str, value: Any) -> int:
        """A number per distinct contents: Godot 3's pool ``<`` only asks whether two differ."""
        content: Any
        if isinstance(value, (bytes, bytearray, memoryview)):
            content = bytes(value)
        elif name in _FLOAT_POOLS:
            content = tuple(value.data)
            if any(x != x for x in content):  # NaN differs from everything, itself included
                self.pools[object()] = n = len(self.pools)
                return n
        else:
            content = tuple(value)
        return self.pools.setdefault((name, content), len(self.pools))

    def compile(self, root: Any) -> tuple[tuple[Any, ...], int]:
        """The sort key of ``root`` and its height (container levels), without recursion."""
        memo = self.memo
        stack: list[list[Any]] = []  # [container, children iterator, element sort keys or None, height]
        value = root
        while True:
            kids = _children(value)
            result: tuple[tuple[Any, ...], int] | None
            if kids is None:
                result = self.leaf(value), 0
            else:
                result = memo.get(id(value))
                if result is None:
                    if len(stack) >= MAX_KEY_DEPTH:
                        raise EncodeError(f"a Dictionary key nests deeper than {MAX_KEY_DEPTH} levels")
                    is_array = isinstance(value, (list, tuple))
                    stack.append([value, iter(kids), [] if is_array else None, 0])
            while True:  # hand results up until some container has a next child
                if result is not None:
                    if not stack:
                        return result
                    frame = stack[-1]
                    if frame[2] is not None:
                        frame[2].append(result[0])
                    if result[1] > frame[3]:
                        frame[3] = result[1]
                frame = stack[-1]
                value = next(frame[1], _END)
                if value is not _END:
                    break
                stack.pop()
                container, height = frame[0], frame[3] + 1
                if height > MAX_KEY_DEPTH:
                    raise EncodeError(f"a Dictionary key nests deeper than {MAX_KEY_DEPTH} levels")
                tid = self.type_index(spec_of(container).name)
                key = (tid, _ARRAY, tuple(frame[2])) if frame[2] is not None else (tid, _NEVER, None)
                result = memo[id(container)] = key, height

    def less(self, a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
        """``a < b`` for two sort keys."""
        if a[0] != b[0]:
            return a[0] < b[0]  # type: ignore[no-any-return]
        kind = a[1]
        if kind == _PLAIN:
            return a[2] < b[2]  # type: ignore[no-any-return]
        if kind == _ARRAY:
            return self._array_less_3(a, b) if self.godot3 else self._array_cmp_4(a, b) < 0
        if kind == _VEC:
            return _vector_less(a[2], b[2], _exact_equal)
        if kind == _VEC_APPROX:
            return _vector_less(a[2], b[2], _is_equal_approx_f32)
        if kind == _POOL:
            # DEFAULT_OP_ARRAY_LT: shorter is less, else "less" when any element differs (the
            # engine reads past the shorter one): in all, "less" exactly when the contents differ.
            return a[2] != b[2]  # type: ignore[no-any-return]
        return False

    def _array_cmp_4(self, a: tuple[Any, ...], b: tuple[Any, ...]) -> int:
        """Godot 4 ``Array::operator<`` as a three-way comparison (-1, 0, 1).

        The engine returns at the first pair with ``x < y`` (true) or ``y < x``
        (false), else compares the sizes.
        """
        stack: list[tuple[tuple[Any, ...], tuple[Any, ...], int]] = []
        while True:
            if a[0] == b[0] and a[1] == _ARRAY:
                stack.append((a[2], b[2], 0))
            else:
                r = -1 if self.less(a, b) else 1 if self.less(b, a) else 0
                if r:
                    return r
            while stack:
                xs, ys, i = stack[-1]
                if i < len(xs) and i < len(ys):
                    stack[-1] = (xs, ys, i + 1)
                    a, b = xs[i], ys[i]
                    break
                stack.pop()
                if len(xs) != len(ys):
                    return -1 if len(xs) < len(ys) else 1
            else:
                return 0

    def _array_less_3(self, a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
        """Godot 3's OP_LESS for Arrays, quirks included: false when ``b`` is shorter, else
        true as soon as one element is not less than its partner."""
        stack: list[list[Any]] = []  # [elements of a, elements of b, index]
        while True:
            if a[0] == b[0] and a[1] == _ARRAY:
                xs, ys = a[2], b[2]
                if len(ys) < len(xs) or not xs:
                    r = False
                else:
                    stack.append([xs, ys, 0])
                    a, b = xs[0], ys[0]
                    continue
            else:
                r = self.less(a, b)
            while stack:
                frame = stack[-1]
                if not r:
                    stack.pop()
                    r = True
                    continue
                frame[2] += 1
                if frame[2] < len(frame[0]):
                    a, b = frame[0][frame[2]], frame[1][frame[2]]
                    break
                stack.pop()
                r = False
            else:
                return r

    def sort(self, pairs: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
        """The pairs of a Dictionary in the order the engine prints them."""
        if all(type(pair[0]) is str for pair in pairs):
            # Plain String keys, the common Dictionary: every engine compares them code point by code point
            # (String::operator<), as Python does; what the general path below gives them, without it.
            return sorted(pairs, key=_key_of)
        string_like = self.style.string_like_keys
        entries = []
        for pair in pairs:
            key = self.compile(pair[0])[0]
            entries.append((key, str(pair[0]) if string_like and isinstance(pair[0], str) else None, pair))
        if self._total(entries):
            # Distinct keys of a strict total order: every correct sort gives the one sorted order.
            entries.sort(key=lambda e: (e[0][0], e[0][2]))
        elif self._distinct_pools(entries):
            entries = _all_less_order(entries)
        else:
            less = self.less

            def entry_less(x: tuple[Any, Any, Any], y: tuple[Any, Any, Any]) -> bool:
                if x[1] is not None and y[1] is not None:
                    return x[1] < y[1]  # type: ignore[no-any-return]
                return less(x[0], y[0])

            _IntroSort(entry_less).sort(entries)
        return [e[2] for e in entries]

    @staticmethod
    def _distinct_pools(entries: list[tuple[Any, Any, Any]]) -> bool:
        """Whether the keys are Godot 3 pool arrays of one type with different contents: then
        every key is "less" than every other one (see :meth:`less`)."""
        if not entries or entries[0][0][1] != _POOL:
            return False
        tid = entries[0][0][0]
        if any(key[0] != tid or key[1] != _POOL for key, _, _ in entries):
            return False
        return len({key[2] for key, _, _ in entries}) == len(entries)

    def _total(self, entries: list[tuple[Any, Any, Any]]) -> bool:
        """Whether the keys are distinct scalars that ``(type id, value)`` orders as the engine does."""
        seen = set()
        string_types = set()
        for key, text, _ in entries:
            if key[1] != _PLAIN or key[2] != key[2]:  # NaN is a tie with everything
                return False
            if text is not None:
                string_types.add(key[0])
            seen.add((key[0], key[2]))
        # 4.4+ sorts String and StringName keys together, across the other types: not a total order.
        return len(seen) == len(entries) and len(string_types) < 2


def _key_of(pair: tuple[Any, Any]) -> Any:
    return pair[0]


def _all_less_order(items: list[Any]) -> list[Any]:
    """What :class:`_IntroSort` leaves when every item is "less" than every other one.

    Each pivot is the middle item and every partition stops at it, so the introsort moves
    nothing; the final insertion sort then reverses the first 16 items and puts each later
    one at index 1 (the unguarded insert stops there).  Doing those n*n/2 comparisons (as
    the engine does) takes 17 s in Python for 10,000 keys; this takes none.
    ``test_all_less_order_is_the_introsort`` checks it against the port.
    """
    n = len(items)
    if n <= _IntroSort.THRESHOLD:
        return items[::-1]
    return [items[15]] + items[:15:-1] + items[14::-1]


def _exact_equal(a: float, b: float) -> bool:
    return a == b

class _IntroSort:
    """Godot's ``SortArray`` (introsort + final insertion sort), validation on.

    A port rather than ``sorted()`` because keys that compare as ties (NaN,
    two Dictionaries, Vector2s that are approximately equal in Godot 3) end
    up in the order this particular algorithm leaves them.
    """

    THRESHOLD = 16

    def __init__(self, less: _Fn[[Any, Any], bool]) -> None:
        self.less = less

    def sort(self, a: list[Any]) -> None:
        n = len(a)
        if n:
            self.introsort(a, 0, n, 2 * (n.bit_length() - 1))
            self.final_insertion_sort(a, 0, n)

    def median_of_3(self, x: Any, y: Any, z: Any) -> Any:
        less = self.less
        if less(x, y):
            return y if less(y, z) else z if less(x, z) else x
        return x if less(x, z) else z if less(y, z) else y

    def introsort(self, a: list[Any], first: int, last: int, max_depth: int) -> None:
        while last - first > self.THRESHOLD:
            if max_depth == 0:
                self.partial_sort(a, first, last, last)
                return
            max_depth -= 1
            pivot = self.median_of_3(a[first], a[first + (last - first) // 2], a[last - 1])
            cut = self.partitioner(a, first, last, pivot)
            self.introsort(a, cut, last, max_depth)
            last = cut

    def partitioner(self, a: list[Any], first: int, last: int, pivot: Any) -> int:
        less, lo, hi = self.less, first, last
        while True:
            while less(a[first], pivot):
                if first == hi - 1:
                    break
                first += 1
            last -= 1
            while less(pivot, a[last]):
                if last == lo:
                    break
                last -= 1
            if not first < last:
                return first
            a[first], a[last] = a[last], a[first]
            first += 1

    def partial_sort(self, a: list[Any], first: int, last: int, middle: int) -> None:
        self.make_heap(a, first, middle)
        for i in range(middle, last):
            if self.less(a[i], a[first]):
                self.pop_heap_to(a, first, middle, i, a[i])
        self.sort_heap(a, first, middle)

    def make_heap(self, a: list[Any], first: int, last: int) -> None:
        if last - first < 2:
            return
        length = last - first
        parent = (length - 2) // 2
        while True:
            self.adjust_heap(a, first, parent, length, a[first + parent])
            if parent == 0:
                return
            parent -= 1

    def sort_heap(self, a: list[Any], first: int, last: int) -> None:
        while last - first > 1:
            self.pop_heap_to(a, first, last - 1, last - 1, a[last - 1])
            last -= 1

    def pop_heap_to(self, a: list[Any], first: int, last: int, result: int, value: Any) -> None:
        a[result] = a[first]
        self.adjust_heap(a, first, 0, last - first, value)

    def adjust_heap(self, a: list[Any], first: int, hole: int, length: int, value: Any) -> None:
        top = hole
        child = 2 * hole + 2
        while child < length:
            if self.less(a[first + child], a[first + child - 1]):
                child -= 1
            a[first + hole] = a[first + child]
            hole = child
            child = 2 * (child + 1)
        if child == length:
            a[first + hole] = a[first + child - 1]
            hole = child - 1
        parent = (hole - 1) // 2
        while hole > top and self.less(a[first + parent], value):
            a[first + hole] = a[first + parent]
            hole = parent
            parent = (hole - 1) // 2
        a[first + hole] = value

    def unguarded_linear_insert(self, a: list[Any], last: int, value: Any) -> None:
        nxt = last - 1
        while self.less(value, a[nxt]):
            if nxt == 0:
                break
            a[last] = a[nxt]
            last = nxt
            nxt -= 1
        a[last] = value

    def linear_insert(self, a: list[Any], first: int, last: int) -> None:
        value = a[last]
        if self.less(value, a[first]):
            a[first + 1:last + 1] = a[first:last]
            a[first] = value
        else:
            self.unguarded_linear_insert(a, last, value)

    def insertion_sort(self, a: list[Any], first: int, last: int) -> None:
        for i in range(first + 1, last):
            self.linear_insert(a, first, i)

    def final_insertion_sort(self, a: list[Any], first: int, last: int) -> None:
        if last - first > self.THRESHOLD:
            self.insertion_sort(a, first, first + self.THRESHOLD)
            for i in range(first + self.THRESHOLD, last):
                self.unguarded_linear_insert(a, i, a[i])
        else:
            self.insertion_sort(a, first, last)

