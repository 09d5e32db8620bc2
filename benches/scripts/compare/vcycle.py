"""vcycle: one V(2,2) weighted-Jacobi cycle of -Laplace(u) = f, Dirichlet 0.

NumpyMultigrid is the project's discretisation written in vectorised NumPy:
a cell-centred n x n grid of spacing h (doubled per level), the 5-point
operator (d u - sum of neighbours) / h^2 with neighbours outside the grid
left out and d = 4 + (number of the cell's sides on the boundary) (the
ghost cell of a Dirichlet side is -u). On each level: two sweeps of
u' = (1-w) u + w (h^2 f + nb) / d, the residual restricted by the mean of
each 2x2 block, a zero coarse correction, recursion, bilinear prolongation
between cell centres (weights 3/4, 1/4 per axis, ghost -e outside) added,
two sweeps. The coarsest level is solved exactly (a sparse LU factored
once, outside the timing).

PyamgVcycle is a different hierarchy: smoothed aggregation on the same
matrix, one V-cycle with two weighted-Jacobi sweeps before and after
(setup outside the timing).
"""

import numpy as np

from .common import OMEGA


def boundary_count(n):
    """e: the number of boundary sides of each cell of an n x n grid."""
    e = np.zeros((n, n), dtype=np.float32)
    e[0, :] += 1
    e[-1, :] += 1
    e[:, 0] += 1
    e[:, -1] += 1
    return e


def laplacian(n, h2):
    """The level's operator as a sparse matrix (row-major unknowns)."""
    import scipy.sparse as sp

    one = np.ones(n)
    t = sp.diags([-one[:-1], -one[:-1]], [-1, 1], shape=(n, n))
    eye = sp.identity(n)
    d = (4.0 + boundary_count(n).astype(np.float64)).ravel()
    a = sp.kron(eye, t) + sp.kron(t, eye) + sp.diags(d)
    return (a / h2).tocsc()


def neighbours(u):
    p = np.pad(u, 1)
    return p[1:-1, :-2] + p[1:-1, 2:] + p[:-2, 1:-1] + p[2:, 1:-1]


def prolong_axis0(e):
    """Bilinear interpolation along axis 0 with ghost -e at both ends."""
    g = np.concatenate([-e[:1], e, -e[-1:]], axis=0)
    out = np.empty((2 * e.shape[0],) + e.shape[1:], dtype=e.dtype)
    out[0::2] = np.float32(0.75) * g[1:-1] + np.float32(0.25) * g[:-2]
    out[1::2] = np.float32(0.75) * g[1:-1] + np.float32(0.25) * g[2:]
    return out


class NumpyMultigrid:
    """Cycles on an n x n grid with `levels` levels, float32."""

    def __init__(self, f, levels, spacing, omega=OMEGA):
        from scipy.sparse.linalg import splu

        n = f.shape[0]
        self.levels = levels
        self.omega = np.float32(omega)
        self.h2 = [np.float32((spacing * 2**k) ** 2) for k in range(levels)]
        self.d = [np.float32(4.0) + boundary_count(n >> k) for k in range(levels)]
        self.f = [None] * levels
        self.f[0] = np.asarray(f, dtype=np.float32)
        self.u = [np.zeros((n >> k, n >> k), dtype=np.float32) for k in range(levels)]
        nc = n >> (levels - 1)
        self.coarse = splu(laplacian(nc, float(self.h2[-1])))

    def smooth(self, k, sweeps):
        u, f, d, h2, w = self.u[k], self.f[k], self.d[k], self.h2[k], self.omega
        for _ in range(sweeps):
            u = (np.float32(1.0) - w) * u + w * (h2 * f + neighbours(u)) / d
        self.u[k] = u

    def cycle_at(self, k):
        if k == self.levels - 1:
            sol = self.coarse.solve(self.f[k].astype(np.float64).ravel())
            self.u[k] = sol.reshape(self.f[k].shape).astype(np.float32)
            return
        self.smooth(k, 2)
        u = self.u[k]
        r = self.f[k] - (self.d[k] * u - neighbours(u)) / self.h2[k]
        self.f[k + 1] = np.float32(0.25) * (r[0::2, 0::2] + r[1::2, 0::2]
                                            + r[0::2, 1::2] + r[1::2, 1::2])
        self.u[k + 1] = np.zeros_like(self.f[k + 1])
        self.cycle_at(k + 1)
        e = prolong_axis0(prolong_axis0(self.u[k + 1]).T).T
        self.u[k] = u + e
        self.smooth(k, 2)

    def run(self):
        """One V(2,2) cycle from the current solution."""
        self.cycle_at(0)

    def output(self):
        return self.u[0]


class PyamgVcycle:
    """One smoothed-aggregation V-cycle as a preconditioner application."""

    def __init__(self, f, levels, spacing):
        import pyamg

        n = f.shape[0]
        a = laplacian(n, spacing * spacing).tocsr()
        jacobi = ("jacobi", {"omega": OMEGA, "iterations": 2})
        self.ml = pyamg.smoothed_aggregation_solver(
            a, max_levels=levels, presmoother=jacobi, postsmoother=jacobi)
        self.m = self.ml.aspreconditioner(cycle="V")
        self.b = np.asarray(f, dtype=np.float64).ravel()
        self.x = None

    def run(self):
        self.x = self.m.matvec(self.b)

    def output(self):
        return self.x


def verify(dump_dir, meta, load):
    """max |diff| of two NumPy cycles against hipacc's, from the dump."""
    n = meta["size"]
    f = load(dump_dir, "vcycle.f.f32", (n, n))
    mg = NumpyMultigrid(f, meta["vcycle_levels"], meta["vcycle_spacing"])
    out = []
    for i in (1, 2):
        mg.run()
        ref = load(dump_dir, f"vcycle.u{i}.f32", (n, n))
        out.append(float(np.max(np.abs(mg.output() - ref)) / max(1e-30, np.max(np.abs(ref)))))
    return out
