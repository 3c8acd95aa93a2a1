"""OpenSimplex 3D noise over numpy arrays, bit-for-bit equal to the ``opensimplex`` package.

Crafter's world generator calls ``opensimplex.OpenSimplex(seed).noise3(x, y, z)`` once per cell and
noise layer (about 160,000 pure-Python calls per world). :func:`noise3` evaluates the same
algorithm (Kurt Spencer's OpenSimplex, as ported by ``opensimplex`` 0.4) on whole arrays. Every
arithmetic operation is the one the scalar code performs, in the same order, so the results are
identical floats, not approximations: the generated worlds are the same cell for cell.
"""

from __future__ import annotations

import numpy as np

__all__ = ["OpenSimplexNoise", "permutation"]

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


def _wrap64(value: int) -> int:
    """``value`` as a signed 64-bit integer (two's complement wrap-around)."""
    value &= _MASK64
    return value - (1 << 64) if value >> 63 else value


def permutation(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The permutation table and 3D gradient index table of ``OpenSimplex(seed)``."""
    perm = np.zeros(256, dtype=np.int64)
    grad_index = np.zeros(256, dtype=np.int64)
    source = list(range(256))
    for _ in range(3):
        seed = _wrap64(seed * 6364136223846793005 + 1442695040888963407)
    for i in range(255, -1, -1):
        seed = _wrap64(seed * 6364136223846793005 + 1442695040888963407)
        r = (seed + 31) % (i + 1)
        perm[i] = source[r]
        grad_index[i] = int((perm[i] % (len(_GRADIENTS3) / 3)) * 3)
        source[r] = source[i]
    return perm, grad_index


class OpenSimplexNoise:
    """``opensimplex.OpenSimplex(seed).noise3`` for arrays of points."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self._perm, self._grad_index = permutation(seed)

    def _extrapolate(self, xsb, ysb, zsb, dx, dy, dz):
        perm = self._perm
        index = self._grad_index[(perm[(perm[xsb & 0xFF] + ysb) & 0xFF] + zsb) & 0xFF]
        g = _GRADIENTS3
        return g[index] * dx + g[index + 1] * dy + g[index + 2] * dz

    def _contribution(self, xsb, ysb, zsb, dx, dy, dz):
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
        values = np.empty_like(x)
        for index, method in enumerate((self._lower, self._middle, self._upper)):
            lo, hi = bounds[index], bounds[index + 1]
            if hi > lo:
                values[lo:hi] = method(*(column[lo:hi] for column in columns))
        out = np.empty_like(x)
        out[order] = values
        return out / _NORM

    # The three regions of the stretched-cube super-cell, each a transcription of the scalar code
    # with branches turned into ``np.where``.

    def _lower(self, xsb, ysb, zsb, xins, yins, zins, in_sum, dx0, dy0, dz0):
        """Inside the tetrahedron at (0,0,0)."""
        w = np.where
        a_point = np.full(xsb.shape, 1)
        a_score = xins.copy()
        b_point = np.full(xsb.shape, 2)
        b_score = yins.copy()
        first = (a_score >= b_score) & (zins > b_score)
        second = ~first & (a_score < b_score) & (zins > a_score)
        b_score = w(first, zins, b_score)
        b_point = w(first, 4, b_point)
        a_score = w(second, zins, a_score)
        a_point = w(second, 4, a_point)
        wins = 1 - in_sum
        origin_close = (wins > a_score) | (wins > b_score)

        # (0,0,0) is one of the two closest vertices
        c = w(b_score > a_score, b_point, a_point)
        cx, cy, cz = (c & 1) == 0, (c & 2) == 0, (c & 4) == 0
        o_xsv0 = w(cx, xsb - 1, xsb + 1)
        o_xsv1 = w(cx, xsb, xsb + 1)
        o_dx0 = w(cx, dx0 + 1, dx0 - 1)
        o_dx1 = w(cx, dx0, dx0 - 1)
        o_ysv0 = w(cy, w(cx, ysb, ysb - 1), ysb + 1)
        o_ysv1 = w(cy, w(cx, ysb - 1, ysb), ysb + 1)
        o_dy0 = w(cy, w(cx, dy0, dy0 + 1), dy0 - 1)
        o_dy1 = w(cy, w(cx, dy0 + 1, dy0), dy0 - 1)
        o_zsv0 = w(cz, zsb, zsb + 1)
        o_zsv1 = w(cz, zsb - 1, zsb + 1)
        o_dz0 = w(cz, dz0, dz0 - 1)
        o_dz1 = w(cz, dz0 + 1, dz0 - 1)

        # otherwise the two extra vertices follow from the two closest
        c = a_point | b_point
        cx, cy, cz = (c & 1) == 0, (c & 2) == 0, (c & 4) == 0
        n_xsv0 = w(cx, xsb, xsb + 1)
        n_xsv1 = w(cx, xsb - 1, xsb + 1)
        n_dx0 = w(cx, dx0 - 2 * _SQUISH, dx0 - 1 - 2 * _SQUISH)
        n_dx1 = w(cx, dx0 + 1 - _SQUISH, dx0 - 1 - _SQUISH)
        n_ysv0 = w(cy, ysb, ysb + 1)
        n_ysv1 = w(cy, ysb - 1, ysb + 1)
        n_dy0 = w(cy, dy0 - 2 * _SQUISH, dy0 - 1 - 2 * _SQUISH)
        n_dy1 = w(cy, dy0 + 1 - _SQUISH, dy0 - 1 - _SQUISH)
        n_zsv0 = w(cz, zsb, zsb + 1)
        n_zsv1 = w(cz, zsb - 1, zsb + 1)
        n_dz0 = w(cz, dz0 - 2 * _SQUISH, dz0 - 1 - 2 * _SQUISH)
        n_dz1 = w(cz, dz0 + 1 - _SQUISH, dz0 - 1 - _SQUISH)

        o = origin_close
        ext = (
            (w(o, o_xsv0, n_xsv0), w(o, o_ysv0, n_ysv0), w(o, o_zsv0, n_zsv0),
             w(o, o_dx0, n_dx0), w(o, o_dy0, n_dy0), w(o, o_dz0, n_dz0)),
            (w(o, o_xsv1, n_xsv1), w(o, o_ysv1, n_ysv1), w(o, o_zsv1, n_zsv1),
             w(o, o_dx1, n_dx1), w(o, o_dy1, n_dy1), w(o, o_dz1, n_dz1)),
        )  # fmt: skip

        contribution = self._contribution
        value = contribution(xsb, ysb, zsb, dx0, dy0, dz0)
        dx1 = dx0 - 1 - _SQUISH
        dy1 = dy0 - 0 - _SQUISH
        dz1 = dz0 - 0 - _SQUISH
        value = value + contribution(xsb + 1, ysb, zsb, dx1, dy1, dz1)
        dx2 = dx0 - 0 - _SQUISH
        dy2 = dy0 - 1 - _SQUISH
        dz2 = dz1
        value = value + contribution(xsb, ysb + 1, zsb, dx2, dy2, dz2)
        dx3 = dx2
        dy3 = dy1
        dz3 = dz0 - 1 - _SQUISH
        value = value + contribution(xsb, ysb, zsb + 1, dx3, dy3, dz3)
        for vertex in ext:
            value = value + contribution(*vertex)
        return value

    def _upper(self, xsb, ysb, zsb, xins, yins, zins, in_sum, dx0, dy0, dz0):
        """Inside the tetrahedron at (1,1,1)."""
        w = np.where
        a_point = np.full(xsb.shape, 6)
        a_score = xins.copy()
        b_point = np.full(xsb.shape, 5)
        b_score = yins.copy()
        first = (a_score <= b_score) & (zins < b_score)
        second = ~first & (a_score > b_score) & (zins < a_score)
        b_score = w(first, zins, b_score)
        b_point = w(first, 3, b_point)
        a_score = w(second, zins, a_score)
        a_point = w(second, 3, a_point)
        wins = 3 - in_sum
        corner_close = (wins < a_score) | (wins < b_score)

        # (1,1,1) is one of the two closest vertices
        c = w(b_score < a_score, b_point, a_point)
        cx, cy, cz = (c & 1) != 0, (c & 2) != 0, (c & 4) != 0
        o_xsv0 = w(cx, xsb + 2, xsb)
        o_xsv1 = w(cx, xsb + 1, xsb)
        o_dx0 = w(cx, dx0 - 2 - 3 * _SQUISH, dx0 - 3 * _SQUISH)
        o_dx1 = w(cx, dx0 - 1 - 3 * _SQUISH, dx0 - 3 * _SQUISH)
        base_dy = dy0 - 1 - 3 * _SQUISH
        o_ysv0 = w(cy, w(cx, ysb + 1, ysb + 2), ysb)
        o_ysv1 = w(cy, w(cx, ysb + 2, ysb + 1), ysb)
        o_dy0 = w(cy, w(cx, base_dy, base_dy - 1), dy0 - 3 * _SQUISH)
        o_dy1 = w(cy, w(cx, base_dy - 1, base_dy), dy0 - 3 * _SQUISH)
        o_zsv0 = w(cz, zsb + 1, zsb)
        o_zsv1 = w(cz, zsb + 2, zsb)
        o_dz0 = w(cz, dz0 - 1 - 3 * _SQUISH, dz0 - 3 * _SQUISH)
        o_dz1 = w(cz, dz0 - 2 - 3 * _SQUISH, dz0 - 3 * _SQUISH)

        c = a_point & b_point
        cx, cy, cz = (c & 1) != 0, (c & 2) != 0, (c & 4) != 0
        n_xsv0 = w(cx, xsb + 1, xsb)
        n_xsv1 = w(cx, xsb + 2, xsb)
        n_dx0 = w(cx, dx0 - 1 - _SQUISH, dx0 - _SQUISH)
        n_dx1 = w(cx, dx0 - 2 - 2 * _SQUISH, dx0 - 2 * _SQUISH)
        n_ysv0 = w(cy, ysb + 1, ysb)
        n_ysv1 = w(cy, ysb + 2, ysb)
        n_dy0 = w(cy, dy0 - 1 - _SQUISH, dy0 - _SQUISH)
        n_dy1 = w(cy, dy0 - 2 - 2 * _SQUISH, dy0 - 2 * _SQUISH)
        n_zsv0 = w(cz, zsb + 1, zsb)
        n_zsv1 = w(cz, zsb + 2, zsb)
        n_dz0 = w(cz, dz0 - 1 - _SQUISH, dz0 - _SQUISH)
        n_dz1 = w(cz, dz0 - 2 - 2 * _SQUISH, dz0 - 2 * _SQUISH)

        o = corner_close
        ext = (
            (w(o, o_xsv0, n_xsv0), w(o, o_ysv0, n_ysv0), w(o, o_zsv0, n_zsv0),
             w(o, o_dx0, n_dx0), w(o, o_dy0, n_dy0), w(o, o_dz0, n_dz0)),
            (w(o, o_xsv1, n_xsv1), w(o, o_ysv1, n_ysv1), w(o, o_zsv1, n_zsv1),
             w(o, o_dx1, n_dx1), w(o, o_dy1, n_dy1), w(o, o_dz1, n_dz1)),
        )  # fmt: skip

        contribution = self._contribution
        dx3 = dx0 - 1 - 2 * _SQUISH
        dy3 = dy0 - 1 - 2 * _SQUISH
        dz3 = dz0 - 0 - 2 * _SQUISH
        value = contribution(xsb + 1, ysb + 1, zsb, dx3, dy3, dz3)
        dx2 = dx3
        dy2 = dy0 - 0 - 2 * _SQUISH
        dz2 = dz0 - 1 - 2 * _SQUISH
        value = value + contribution(xsb + 1, ysb, zsb + 1, dx2, dy2, dz2)
        dx1 = dx0 - 0 - 2 * _SQUISH
        dy1 = dy3
        dz1 = dz2
        value = value + contribution(xsb, ysb + 1, zsb + 1, dx1, dy1, dz1)
        dxc = dx0 - 1 - 3 * _SQUISH
        dyc = dy0 - 1 - 3 * _SQUISH
        dzc = dz0 - 1 - 3 * _SQUISH
        value = value + contribution(xsb + 1, ysb + 1, zsb + 1, dxc, dyc, dzc)
        for vertex in ext:
            value = value + contribution(*vertex)
        return value

    def _middle(self, xsb, ysb, zsb, xins, yins, zins, in_sum, dx0, dy0, dz0):
        """Inside the octahedron between the two tetrahedra."""
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

        same_side = a_far == b_far
        # both closest points on the (1,1,1) side
        c = a_point & b_point
        s1x, s1y = (c & 1) != 0, (c & 2) != 0
        f_ext0 = (xsb + 1, ysb + 1, zsb + 1,
                  dx0 - 1 - 3 * _SQUISH, dy0 - 1 - 3 * _SQUISH, dz0 - 1 - 3 * _SQUISH)  # fmt: skip
        f_ext1 = (
            w(s1x, xsb + 2, xsb),
            w(s1x, ysb, w(s1y, ysb + 2, ysb)),
            w(s1x | s1y, zsb, zsb + 2),
            w(s1x, dx0 - 2 - 2 * _SQUISH, dx0 - 2 * _SQUISH),
            w(s1x, dy0 - 2 * _SQUISH, w(s1y, dy0 - 2 - 2 * _SQUISH, dy0 - 2 * _SQUISH)),
            w(s1x | s1y, dz0 - 2 * _SQUISH, dz0 - 2 - 2 * _SQUISH),
        )
        # both closest points on the (0,0,0) side
        c = a_point | b_point
        s0x, s0y = (c & 1) == 0, (c & 2) == 0
        s0y = ~s0x & s0y
        s0z = ~s0x & ~s0y
        n_ext0 = (xsb, ysb, zsb, dx0, dy0, dz0)
        n_ext1 = (
            w(s0x, xsb - 1, xsb + 1),
            w(s0y, ysb - 1, ysb + 1),
            w(s0z, zsb - 1, zsb + 1),
            w(s0x, dx0 + 1 - _SQUISH, dx0 - 1 - _SQUISH),
            w(s0y, dy0 + 1 - _SQUISH, dy0 - 1 - _SQUISH),
            w(s0z, dz0 + 1 - _SQUISH, dz0 - 1 - _SQUISH),
        )
        # one on each side
        c1 = w(a_far, a_point, b_point)
        c2 = w(a_far, b_point, a_point)
        m0x = (c1 & 1) == 0
        m0y = ~m0x & ((c1 & 2) == 0)
        m0z = ~m0x & ~m0y
        m_ext0 = (
            w(m0x, xsb - 1, xsb + 1),
            w(m0y, ysb - 1, ysb + 1),
            w(m0z, zsb - 1, zsb + 1),
            w(m0x, dx0 + 1 - _SQUISH, dx0 - 1 - _SQUISH),
            w(m0y, dy0 + 1 - _SQUISH, dy0 - 1 - _SQUISH),
            w(m0z, dz0 + 1 - _SQUISH, dz0 - 1 - _SQUISH),
        )
        m1x = (c2 & 1) != 0
        m1y = ~m1x & ((c2 & 2) != 0)
        m1z = ~m1x & ~m1y
        m_ext1 = (
            w(m1x, xsb + 2, xsb),
            w(m1y, ysb + 2, ysb),
            w(m1z, zsb + 2, zsb),
            w(m1x, dx0 - 2 * _SQUISH - 2, dx0 - 2 * _SQUISH),
            w(m1y, dy0 - 2 * _SQUISH - 2, dy0 - 2 * _SQUISH),
            w(m1z, dz0 - 2 * _SQUISH - 2, dz0 - 2 * _SQUISH),
        )
        far = same_side & a_far
        near = same_side & ~a_far
        ext = [
            tuple(w(far, f, w(near, n, m)) for f, n, m in zip(fs, ns, ms, strict=True))
            for fs, ns, ms in ((f_ext0, n_ext0, m_ext0), (f_ext1, n_ext1, m_ext1))
        ]

        contribution = self._contribution
        dx1 = dx0 - 1 - _SQUISH
        dy1 = dy0 - 0 - _SQUISH
        dz1 = dz0 - 0 - _SQUISH
        value = contribution(xsb + 1, ysb, zsb, dx1, dy1, dz1)
        dx2 = dx0 - 0 - _SQUISH
        dy2 = dy0 - 1 - _SQUISH
        dz2 = dz1
        value = value + contribution(xsb, ysb + 1, zsb, dx2, dy2, dz2)
        dx3 = dx2
        dy3 = dy1
        dz3 = dz0 - 1 - _SQUISH
        value = value + contribution(xsb, ysb, zsb + 1, dx3, dy3, dz3)
        dx4 = dx0 - 1 - 2 * _SQUISH
        dy4 = dy0 - 1 - 2 * _SQUISH
        dz4 = dz0 - 0 - 2 * _SQUISH
        value = value + contribution(xsb + 1, ysb + 1, zsb, dx4, dy4, dz4)
        dx5 = dx4
        dy5 = dy0 - 0 - 2 * _SQUISH
        dz5 = dz0 - 1 - 2 * _SQUISH
        value = value + contribution(xsb + 1, ysb, zsb + 1, dx5, dy5, dz5)
        dx6 = dx0 - 0 - 2 * _SQUISH
        dy6 = dy4
        dz6 = dz5
        value = value + contribution(xsb, ysb + 1, zsb + 1, dx6, dy6, dz6)
        for vertex in ext:
            value = value + contribution(*vertex)
        return value
