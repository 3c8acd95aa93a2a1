"""OpenSimplex 3D noise over numpy arrays, bit-for-bit equal to the ``opensimplex`` package.

Crafter's world generator calls ``opensimplex.OpenSimplex(seed).noise3(x, y, z)`` once per cell and
noise layer (about 160,000 pure-Python calls per world). :func:`noise3` evaluates the same
algorithm (Kurt Spencer's OpenSimplex, as ported by ``opensimplex`` 0.4) on whole arrays. Every
arithmetic operation is the one the scalar code performs, in the same order, so the results are
identical floats, not approximations: the generated worlds are the same cell for cell.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TypeAlias

import numpy as np

from llmgym.envs.crafter.jit import njit

__all__ = ["NoiseGrid", "OpenSimplexNoise", "permutation"]

Vertex: TypeAlias = tuple[np.ndarray, ...]
"""A lattice vertex per point, six arrays: its coordinates ``(xsv, ysv, zsv)`` and the point's
offset from it ``(dx, dy, dz)``."""
Offset: TypeAlias = tuple[int | np.ndarray, int | np.ndarray, int | np.ndarray]
"""A vertex's lattice offset ``(i, j, k)`` from the base vertex: numbers, or arrays of one per
point."""

_MASK64 = (1 << 64) - 1
_GRADIENTS3 = np.array(
    [
        [-11, 4, 4], [-4, 11, 4], [-4, 4, 11], [11, 4, 4], [4, 11, 4], [4, 4, 11],
        [-11, -4, 4], [-4, -11, 4], [-4, -4, 11], [11, -4, 4], [4, -11, 4], [4, -4, 11],
        [-11, 4, -4], [-4, 11, -4], [-4, 4, -11], [11, 4, -4], [4, 11, -4], [4, 4, -11],
        [-11, -4, -4], [-4, -11, -4], [-4, -4, -11], [11, -4, -4], [4, -11, -4], [4, -4, -11],
    ],
    dtype=np.float64,
).reshape(-1)  # fmt: skip
_STRETCH = -1.0 / 6
_SQUISH = 1.0 / 3
_NORM = 103
_CHUNK = 8192


def _lcg_steps(count: int) -> tuple[np.ndarray, np.ndarray]:
    """``(a_k, c_k)`` for ``k = 1..count``: ``k`` steps of opensimplex's 64-bit LCG take a seed
    ``s`` to ``a_k * s + c_k`` (mod 2**64)."""
    multipliers, increments = [], []
    a, c = 1, 0
    for _ in range(count):
        a = (a * _LCG_MULTIPLIER) & _MASK64
        c = (c * _LCG_MULTIPLIER + _LCG_INCREMENT) & _MASK64
        multipliers.append(a)
        increments.append(c)
    return np.array(multipliers, np.uint64), np.array(increments, np.uint64)


_LCG_MULTIPLIER, _LCG_INCREMENT = 6364136223846793005, 1442695040888963407
_LCG_A, _LCG_C = _lcg_steps(3 + 256)


def permutation(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The permutation table and 3D gradient index table of ``OpenSimplex(seed)``."""
    # the LCG's states after 4..259 steps, all at once (uint64 arithmetic wraps mod 2**64),
    # read as the signed 64-bit integers the scalar code works with
    states = (_LCG_A[3:] * np.uint64(seed & _MASK64) + _LCG_C[3:]).view(np.int64).tolist()
    perm = [0] * 256
    source = list(range(256))
    for state, i in zip(states, range(255, -1, -1), strict=True):
        r = (state + 31) % (i + 1)
        perm[i] = source[r]
        source[r] = source[i]
    table = np.array(perm, dtype=np.int64)
    return table, (table % (len(_GRADIENTS3) // 3)) * 3


class OpenSimplexNoise:
    """``opensimplex.OpenSimplex(seed).noise3`` for arrays of points."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self._perm, self._grad_index = permutation(seed)

    def _extrapolate(
        self,
        xsb: np.ndarray,
        ysb: np.ndarray,
        zsb: np.ndarray,
        dx: np.ndarray,
        dy: np.ndarray,
        dz: np.ndarray,
    ) -> np.ndarray:
        perm = self._perm
        index = self._grad_index[(perm[(perm[xsb & 0xFF] + ysb) & 0xFF] + zsb) & 0xFF]
        g = _GRADIENTS3
        return g[index] * dx + g[index + 1] * dy + g[index + 2] * dz

    def _contribution(
        self,
        xsb: np.ndarray,
        ysb: np.ndarray,
        zsb: np.ndarray,
        dx: np.ndarray,
        dy: np.ndarray,
        dz: np.ndarray,
    ) -> np.ndarray:
        attn = 2 - dx * dx - dy * dy - dz * dz
        positive = attn > 0
        attn = attn * attn
        value = attn * attn * self._extrapolate(xsb, ysb, zsb, dx, dy, dz)
        return np.where(positive, value, 0.0)

    def noise3(self, x: np.ndarray, y: np.ndarray, z: np.ndarray | float) -> np.ndarray:
        """Noise at the points ``(x, y, z)`` (broadcast together), each value in [-1, 1]."""
        x, y, z = np.broadcast_arrays(
            np.asarray(x, dtype=np.float64),
            np.asarray(y, dtype=np.float64),
            np.asarray(z, dtype=np.float64),
        )
        shape = x.shape
        x, y, z = x.ravel(), y.ravel(), z.ravel()
        out = np.empty_like(x)
        for begin in range(0, len(x), _CHUNK):  # chunks that stay in cache
            end = begin + _CHUNK
            out[begin:end] = self._noise3(x[begin:end], y[begin:end], z[begin:end])
        return out.reshape(shape)

    def _noise3(self, x: np.ndarray, y: np.ndarray, z: np.ndarray) -> np.ndarray:
        order, regions = _region_vertices(x, y, z)
        values = np.empty_like(x)
        for lo, hi, vertices in regions:
            values[lo:hi] = self._sum_contributions(vertices)
        out = np.empty_like(x)
        out[order] = values
        return out / _NORM

    def _sum_contributions(self, vertices: Sequence[Vertex]) -> np.ndarray:
        """The vertices' contributions added up in order (the scalar code's order of sums)."""
        value = self._contribution(*vertices[0])
        for vertex in vertices[1:]:
            value = value + self._contribution(*vertex)
        return value


class NoiseGrid:
    """OpenSimplex noise at fixed points, for any seed, a few gathers per point.

    Which lattice vertices a point adds up, and with which weights, depends on the point alone;
    a seed only chooses the gradient at each lattice vertex. The geometry is worked out once
    (by the same code as :meth:`OpenSimplexNoise.noise3`), and :meth:`evaluate` then does per
    point only what depends on the seed, with the same float operations in the same order:
    ``OpenSimplexNoise(seed).noise3(x, y, z)`` equals ``NoiseGrid(x, y, z).evaluate(seed)``.
    """

    _SLOTS = 8  # the octahedron adds up 8 vertices, the two tetrahedra 6

    def __init__(self, x: np.ndarray, y: np.ndarray, z: np.ndarray | float) -> None:
        x, y, z = (
            a.ravel()
            for a in np.broadcast_arrays(
                np.asarray(x, dtype=np.float64),
                np.asarray(y, dtype=np.float64),
                np.asarray(z, dtype=np.float64),
            )
        )
        count = len(x)
        shape = (self._SLOTS, count)
        keys = np.zeros(shape, np.int64)
        self._dx, self._dy, self._dz = np.zeros(shape), np.zeros(shape), np.zeros(shape)
        self._weight = np.zeros(shape)
        self._positive = np.zeros(shape, bool)
        self._octahedron = np.zeros(count, bool)
        order, regions = _region_vertices(x, y, z)
        for lo, hi, vertices in regions:
            points = order[lo:hi]
            self._octahedron[points] = len(vertices) == self._SLOTS
            for slot, vertex in enumerate(vertices):
                xsv, ysv, zsv, dx, dy, dz = (np.broadcast_to(a, (hi - lo,)) for a in vertex)
                attn = 2 - dx * dx - dy * dy - dz * dz
                squared = attn * attn
                self._weight[slot, points] = squared * squared
                self._positive[slot, points] = attn > 0
                self._dx[slot, points], self._dy[slot, points], self._dz[slot, points] = dx, dy, dz
                # the permutation lookups only use the low 8 bits of each lattice coordinate
                keys[slot, points] = ((xsv & 0xFF) << 16) | ((ysv & 0xFF) << 8) | (zsv & 0xFF)
        lattice, self._vertex = np.unique(keys, return_inverse=True)
        # point-major: a point's slots lie together in memory
        self._vertex = np.ascontiguousarray(self._vertex.reshape(shape).T, dtype=np.int32)
        self._geometry = np.ascontiguousarray(
            np.stack([self._dx, self._dy, self._dz, self._weight], axis=-1).transpose(1, 0, 2)
        )
        self._positive = np.ascontiguousarray(self._positive.T)
        del self._dx, self._dy, self._dz, self._weight
        self._lattice = (lattice >> 16, (lattice >> 8) & 0xFF, lattice & 0xFF)

    def __len__(self) -> int:
        return len(self._octahedron)

    def evaluate(self, noise: OpenSimplexNoise, points: np.ndarray | None = None) -> np.ndarray:
        """The noise of ``noise``'s seed at the grid's ``points`` (indices; all when None)."""
        perm, grad_index = noise._perm, noise._grad_index
        lx, ly, lz = self._lattice
        index = grad_index[(perm[(perm[lx] + ly) & 0xFF] + lz) & 0xFF]
        if points is None:
            points = np.arange(len(self))
        gradients = _GRADIENTS3.reshape(-1, 3)[index // 3]
        return _sum_contributions(
            self._vertex, self._geometry, self._positive, self._octahedron, gradients, points
        )


@njit
def _sum_contributions(
    vertex: np.ndarray,
    geometry: np.ndarray,
    positive: np.ndarray,
    octahedron: np.ndarray,
    gradients: np.ndarray,
    points: np.ndarray,
) -> np.ndarray:
    """Each point's vertex contributions (the gradient at the vertex dotted with the point's
    offset ``geometry[p, slot, :3]``, times the weight ``geometry[p, slot, 3]``; zero where the
    weight's base is not positive) added up in the scalar code's order: six, and two more in
    the octahedron."""
    out = np.empty(points.size)
    for n in range(points.size):
        p = points[n]
        value = 0.0
        for slot in range(8 if octahedron[p] else 6):
            g, d = gradients[vertex[p, slot]], geometry[p, slot]
            extrapolated = g[0] * d[0] + g[1] * d[1] + g[2] * d[2]
            contribution = d[3] * extrapolated if positive[p, slot] else 0.0
            value = contribution if slot == 0 else value + contribution
        out[n] = value / _NORM
    return out


def _region_vertices(
    x: np.ndarray, y: np.ndarray, z: np.ndarray
) -> tuple[np.ndarray, list[tuple[int, int, list[Vertex]]]]:
    """The points grouped by region of the stretched-cube super-cell, and the vertices whose
    contributions each point adds up, in the scalar code's order: ``(order, regions)``, where
    ``order`` sorts the points by region and each region is ``(lo, hi, vertices)`` over the
    sorted points ``lo:hi``."""
    stretch = (x + y + z) * _STRETCH
    xs, ys, zs = x + stretch, y + stretch, z + stretch
    xsb, ysb, zsb = np.floor(xs), np.floor(ys), np.floor(zs)
    squish = (xsb + ysb + zsb) * _SQUISH
    xins, yins, zins = xs - xsb, ys - ysb, zs - zsb
    in_sum = xins + yins + zins
    dx0, dy0, dz0 = x - (xsb + squish), y - (ysb + squish), z - (zsb + squish)
    # group the points by region (0: lower tetrahedron, 1: octahedron, 2: upper)
    region = (in_sum > 1).astype(np.int8) + (in_sum >= 2)
    order = np.argsort(region, kind="stable")
    bounds = np.searchsorted(region[order], [0, 1, 2, 3])
    columns = [
        a[order]
        for a in (
            xsb.astype(np.int64), ysb.astype(np.int64), zsb.astype(np.int64),
            xins, yins, zins, in_sum, dx0, dy0, dz0,
        )
    ]  # fmt: skip
    regions = []
    for index, method in enumerate((_lower, _middle, _upper)):
        lo, hi = int(bounds[index]), int(bounds[index + 1])
        if hi > lo:
            regions.append((lo, hi, method(*(column[lo:hi] for column in columns))))
    return order, regions


# The three regions of the stretched-cube super-cell. Each adds up the contributions of the
# region's own lattice vertices and of two extra vertices chosen per point, with the scalar
# code's float operations in its order (its branches turned into ``np.where``). A vertex is
# ``(xsv, ysv, zsv, dx, dy, dz)``: its lattice coordinates and the point's offset from it.


def _lower(
    xsb: np.ndarray,
    ysb: np.ndarray,
    zsb: np.ndarray,
    xins: np.ndarray,
    yins: np.ndarray,
    zins: np.ndarray,
    in_sum: np.ndarray,
    dx0: np.ndarray,
    dy0: np.ndarray,
    dz0: np.ndarray,
) -> list[Vertex]:
    """Inside the tetrahedron at (0,0,0)."""
    base = (xsb, ysb, zsb, dx0, dy0, dz0)
    a_point, a_score, b_point, b_score = _two_closest((1, 2, 4), xins, yins, zins, np.greater)
    wins = 1 - in_sum
    origin_close = (wins > a_score) | (wins > b_score)
    closest = np.where(b_score > a_score, b_point, a_point)
    extra = _select(
        origin_close,
        _lower_extra_with_origin(base, closest),
        _lower_extra_without_origin(base, a_point | b_point),
    )
    return [base, *_vertices(base, _NEXT_TO_ORIGIN), *extra]


def _upper(
    xsb: np.ndarray,
    ysb: np.ndarray,
    zsb: np.ndarray,
    xins: np.ndarray,
    yins: np.ndarray,
    zins: np.ndarray,
    in_sum: np.ndarray,
    dx0: np.ndarray,
    dy0: np.ndarray,
    dz0: np.ndarray,
) -> list[Vertex]:
    """Inside the tetrahedron at (1,1,1)."""
    base = (xsb, ysb, zsb, dx0, dy0, dz0)
    a_point, a_score, b_point, b_score = _two_closest((6, 5, 3), xins, yins, zins, np.less)
    wins = 3 - in_sum
    corner_close = (wins < a_score) | (wins < b_score)
    closest = np.where(b_score < a_score, b_point, a_point)
    extra = _select(
        corner_close,
        _upper_extra_with_corner(base, closest),
        _upper_extra_without_corner(base, a_point & b_point),
    )
    vertices = _vertices(base, (*_NEXT_TO_CORNER, (1, 1, 1)))
    return [*vertices, *extra]


def _middle(
    xsb: np.ndarray,
    ysb: np.ndarray,
    zsb: np.ndarray,
    xins: np.ndarray,
    yins: np.ndarray,
    zins: np.ndarray,
    in_sum: np.ndarray,
    dx0: np.ndarray,
    dy0: np.ndarray,
    dz0: np.ndarray,
) -> list[Vertex]:
    """Inside the octahedron between the two tetrahedra."""
    base = (xsb, ysb, zsb, dx0, dy0, dz0)
    w = np.where
    a_point, a_far, b_point, b_far = _middle_two_closest(xins, yins, zins)
    same_side = a_far == b_far
    extra = _select(
        same_side & a_far,
        _middle_extra_far(base, a_point & b_point),
        _select(
            same_side & ~a_far,
            _middle_extra_near(base, a_point | b_point),
            _middle_extra_split(base, w(a_far, a_point, b_point), w(a_far, b_point, a_point)),
        ),
    )
    vertices = _vertices(base, (*_NEXT_TO_ORIGIN, *_NEXT_TO_CORNER))
    return [*vertices, *extra]


_NEXT_TO_ORIGIN = ((1, 0, 0), (0, 1, 0), (0, 0, 1))
"""The lattice vertices next to (0,0,0), in the scalar code's order."""
_NEXT_TO_CORNER = ((1, 1, 0), (1, 0, 1), (0, 1, 1))
"""The lattice vertices next to (1,1,1), in the scalar code's order."""


def _vertices(base: Vertex, offsets: Iterable[Offset]) -> list[Vertex]:
    """The vertices at ``offsets`` ``(i, j, k)`` (numbers, or arrays of one per point) from the
    base vertex ``base``; the point's offset from each is ``dx0 - i - (i + j + k) * squish``
    (and likewise for y and z), computed as the scalar code computes it."""
    xsb, ysb, zsb, dx0, dy0, dz0 = base
    vertices: list[Vertex] = []
    for i, j, k in offsets:
        squish = (i + j + k) * _SQUISH
        vertices.append(
            (xsb + i, ysb + j, zsb + k, dx0 - i - squish, dy0 - j - squish, dz0 - k - squish)
        )
    return vertices


def _select(
    mask: np.ndarray, if_true: Sequence[Vertex], if_false: Sequence[Vertex]
) -> list[Vertex]:
    """Vertex by vertex and coordinate by coordinate, ``if_true`` where ``mask``, else
    ``if_false``."""
    return [
        tuple(np.where(mask, t, f) for t, f in zip(true, false, strict=True))
        for true, false in zip(if_true, if_false, strict=True)
    ]


def _two_closest(
    points: tuple[int, int, int],
    xins: np.ndarray,
    yins: np.ndarray,
    zins: np.ndarray,
    closer: Callable[[np.ndarray, np.ndarray], np.ndarray],
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The two of the vertices ``points`` (bit codes, for x, y and z) whose scores (``xins``,
    ``yins``, ``zins``) win by ``closer``: ``(a_point, a_score, b_point, b_score)``."""
    x_point, y_point, z_point = points
    first = ~closer(yins, xins) & closer(zins, yins)
    second = ~first & closer(yins, xins) & closer(zins, xins)
    b_score = np.where(first, zins, yins)
    b_point = np.where(first, z_point, np.full(xins.shape, y_point))
    a_score = np.where(second, zins, xins)
    a_point = np.where(second, z_point, np.full(xins.shape, x_point))
    return a_point, a_score, b_point, b_score


def _middle_two_closest(
    xins: np.ndarray, yins: np.ndarray, zins: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The octahedron's two closest vertices (bit codes) and whether each is on the (1,1,1) side:
    ``(a_point, a_far, b_point, b_far)``."""
    w = np.where
    p1 = xins + yins
    a_far = p1 > 1
    a_score = w(a_far, p1 - 1, 1 - p1)
    a_point = w(a_far, 3, 4)
    p2 = xins + zins
    b_far = p2 > 1
    b_score = w(b_far, p2 - 1, 1 - p2)
    b_point = w(b_far, 5, 2)
    p3 = yins + zins
    p3_far = p3 > 1
    score = w(p3_far, p3 - 1, 1 - p3)
    replace_a = (a_score <= b_score) & (a_score < score)
    replace_b = ~replace_a & (a_score > b_score) & (b_score < score)
    a_point = w(replace_a, w(p3_far, 6, 1), a_point)
    a_far = w(replace_a, p3_far, a_far)
    b_point = w(replace_b, w(p3_far, 6, 1), b_point)
    b_far = w(replace_b, p3_far, b_far)
    return a_point, a_far, b_point, b_far


def _lower_extra_with_origin(base: Vertex, c: np.ndarray) -> list[Vertex]:
    """The lower tetrahedron's two extra vertices when (0,0,0) is one of the two closest
    vertices and ``c`` the other."""
    w = np.where
    cx, cy, cz = (c & 1) == 0, (c & 2) == 0, (c & 4) == 0
    return _vertices(
        base,
        [
            (w(cx, -1, 1), w(cy, w(cx, 0, -1), 1), w(cz, 0, 1)),
            (w(cx, 0, 1), w(cy, w(cx, -1, 0), 1), w(cz, -1, 1)),
        ],
    )


def _lower_extra_without_origin(base: Vertex, c: np.ndarray) -> list[Vertex]:
    """The lower tetrahedron's two extra vertices when the two closest vertices are others
    (``c``: their bit codes or-ed)."""
    w = np.where
    cx, cy, cz = (c & 1) == 0, (c & 2) == 0, (c & 4) == 0
    return _vertices(
        base,
        [
            (w(cx, 0, 1), w(cy, 0, 1), w(cz, 0, 1)),
            (w(cx, -1, 1), w(cy, -1, 1), w(cz, -1, 1)),
        ],
    )


def _upper_extra_with_corner(base: Vertex, c: np.ndarray) -> tuple[Vertex, Vertex]:
    """The upper tetrahedron's two extra vertices when (1,1,1) is one of the two closest
    vertices and ``c`` the other.

    Transcribed rather than made with :func:`_vertices`: the scalar code computes the y offset
    of ``(…, ysb + 2, …)`` as ``(dy0 - 1 - 3 * squish) - 1``, which can round differently."""
    xsb, ysb, zsb, dx0, dy0, dz0 = base
    w = np.where
    s = _SQUISH
    cx, cy, cz = (c & 1) != 0, (c & 2) != 0, (c & 4) != 0
    base_dy = dy0 - 1 - 3 * s
    return (
        (w(cx, xsb + 2, xsb), w(cy, w(cx, ysb + 1, ysb + 2), ysb), w(cz, zsb + 1, zsb),
         w(cx, dx0 - 2 - 3 * s, dx0 - 3 * s), w(cy, w(cx, base_dy, base_dy - 1), dy0 - 3 * s),
         w(cz, dz0 - 1 - 3 * s, dz0 - 3 * s)),
        (w(cx, xsb + 1, xsb), w(cy, w(cx, ysb + 2, ysb + 1), ysb), w(cz, zsb + 2, zsb),
         w(cx, dx0 - 1 - 3 * s, dx0 - 3 * s), w(cy, w(cx, base_dy - 1, base_dy), dy0 - 3 * s),
         w(cz, dz0 - 2 - 3 * s, dz0 - 3 * s)),
    )  # fmt: skip


def _upper_extra_without_corner(base: Vertex, c: np.ndarray) -> list[Vertex]:
    """The upper tetrahedron's two extra vertices when the two closest vertices are others
    (``c``: their bit codes and-ed)."""
    w = np.where
    cx, cy, cz = (c & 1) != 0, (c & 2) != 0, (c & 4) != 0
    return _vertices(
        base,
        [
            (w(cx, 1, 0), w(cy, 1, 0), w(cz, 1, 0)),
            (w(cx, 2, 0), w(cy, 2, 0), w(cz, 2, 0)),
        ],
    )


def _middle_extra_far(base: Vertex, c: np.ndarray) -> list[Vertex]:
    """The octahedron's two extra vertices when both closest vertices are on the (1,1,1) side
    (``c``: their bit codes and-ed)."""
    w = np.where
    s1x, s1y = (c & 1) != 0, (c & 2) != 0
    return _vertices(base, [(1, 1, 1), (w(s1x, 2, 0), w(s1x, 0, w(s1y, 2, 0)), w(s1x | s1y, 0, 2))])


def _middle_extra_near(base: Vertex, c: np.ndarray) -> list[Vertex]:
    """The octahedron's two extra vertices when both closest vertices are on the (0,0,0) side
    (``c``: their bit codes or-ed)."""
    w = np.where
    s0x = (c & 1) == 0
    s0y = ~s0x & ((c & 2) == 0)
    s0z = ~s0x & ~s0y
    return [base, *_vertices(base, [(w(s0x, -1, 1), w(s0y, -1, 1), w(s0z, -1, 1))])]


def _middle_extra_split(base: Vertex, c1: np.ndarray, c2: np.ndarray) -> list[Vertex]:
    """The octahedron's two extra vertices when the closest vertices are on opposite sides
    (``c1`` on the (1,1,1) side, ``c2`` on the (0,0,0) side).

    The second is transcribed rather than made with :func:`_vertices`: the scalar code computes
    its offsets as ``(d0 - 2 * squish) - 2``, which can round differently."""
    xsb, ysb, zsb, dx0, dy0, dz0 = base
    w = np.where
    s = _SQUISH
    m0x = (c1 & 1) == 0
    m0y = ~m0x & ((c1 & 2) == 0)
    m0z = ~m0x & ~m0y
    m1x = (c2 & 1) != 0
    m1y = ~m1x & ((c2 & 2) != 0)
    m1z = ~m1x & ~m1y
    return [
        *_vertices(base, [(w(m0x, -1, 1), w(m0y, -1, 1), w(m0z, -1, 1))]),
        (w(m1x, xsb + 2, xsb), w(m1y, ysb + 2, ysb), w(m1z, zsb + 2, zsb),
         w(m1x, dx0 - 2 * s - 2, dx0 - 2 * s), w(m1y, dy0 - 2 * s - 2, dy0 - 2 * s),
         w(m1z, dz0 - 2 * s - 2, dz0 - 2 * s)),
    ]  # fmt: skip
