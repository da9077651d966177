"""`torch.lobpcg`: k extreme eigenpairs of a symmetric (generalized) eigenproblem A x = l B x by
LOBPCG, dense case: PyTorch's default "ortho" method (Duersch et al. 2018: the search basis
[X, P, W] kept B-orthonormal by SVQB sweeps, "backward stable" convergence test) and its
"basic" one (Knyazev 2001: a Rayleigh-Ritz step on the raw basis [X, P, iK R], no
orthogonalization, so it can break down where "ortho" does not).

Written over the public torchish API, as PyTorch's is over its own, and following PyTorch's
sequence of steps so that results agree to rounding (including its quirks: the first step's
residual uses E = 0, the initial X is `randn((m, n))` per batch element). It decides on values
(convergence, dropped columns), so it runs eagerly; it is not traceable under `compile`.
An A that requires grad goes through PyTorch's `LOBPCGAutogradFunction` node, whose backward
is the eigenpairs' derivative (B = I only, as PyTorch's).
"""


def _torch():
    import torchish
    return torchish


def _mm(A, X):   # A None stands for the identity (B omitted)
    return X if A is None else A @ X


def _qform(A, S):
    return S.mT @ _mm(A, S)


def _symeig(M, largest=False):
    T = _torch()
    E, Z = T.linalg.eigh(M, UPLO="U")
    return (E.flip(-1), Z.flip(-1)) if largest else (E, Z)


class _Worker:
    """One matrix's iteration. Attribute names (X, E, R, S, ivars, fvars, bvars, tvars) are
    those PyTorch's worker shows a `tracker` callback."""

    def __init__(self, A, B, X, iK, iparams, fparams, bparams, method, tracker):
        T = _torch()
        self.A, self.B, self.X, self.iK, self.method = A, B, X, iK, method
        self.iparams, self.fparams, self.bparams = iparams, fparams, bparams
        self.tracker = tracker
        m, n = iparams["m"], iparams["n"]
        self.E = T.zeros((n,), dtype=X.dtype)
        self.R = T.zeros((m, n), dtype=X.dtype)
        self.S = T.zeros((m, 3 * n), dtype=X.dtype)
        self.ivars, self.fvars, self.bvars, self.tvars = {"istep": 0}, {"_": 0.0}, {}, {}

    # -- the iteration ------------------------------------------------------------------
    def run(self):
        self.step()
        while not (self.bvars.get("force_stop", False) or self.ivars["iterations_left"] == 0
                   or self.ivars["converged_count"] >= self.iparams["k"]):
            self.step()

    def step(self):
        T = _torch()
        iv = self.ivars
        if iv["istep"] == 0:
            x_norm = float(T.norm(self.X))
            self.fvars.update(X_norm=x_norm,
                              A_norm=float(T.norm(_mm(self.A, self.X))) / x_norm,
                              B_norm=float(T.norm(_mm(self.B, self.X))) / x_norm)
            iv.update(iterations_left=self.iparams["niter"], converged_count=0,
                      converged_end=0)
            self._first() if self.method == "ortho" else self._first_basic()
        else:
            self._next() if self.method == "ortho" else self._next_basic()
        iv["iterations_left"] -= 1
        iv["istep"] += 1
        if self.tracker is not None:
            self.tracker(self)

    def _first(self):
        n, largest = self.iparams["n"], self.bparams["largest"]
        Ri = self._rayleigh_ritz(self.X)
        _, Z = _symeig(_qform(_qform(self.A, self.X), Ri), largest)
        self.X = self.X @ (Ri @ Z)
        # (E keeps its zeros here: PyTorch's first residual is A X)
        self._residual()
        self._count_converged()
        self.S[:, :n] = self.X
        W = self._ortho(self.R, self.X)
        self.ivars["converged_end"] = n + W.shape[-1]
        self.S[:, n:n + W.shape[-1]] = W

    def _next(self):
        n, largest = self.iparams["n"], self.bparams["largest"]
        nc, ns = self.ivars["converged_count"], self.ivars["converged_end"]
        basis = self.S[:, nc:ns]
        E, Z = _symeig(_qform(self.A, basis), largest)
        free = n - nc   # pairs not yet converged
        self.X[:, nc:] = basis @ Z[:, :free]
        self.E[nc:] = E[:free]
        # P: the rest of the Ritz basis, orthogonalized against the new X's coefficients
        T = _torch()
        P = basis @ (Z[:, free:] @ T.linalg.qr(Z[:free, free:].mT).Q)
        npc = P.shape[-1]
        self._residual()
        nc = self._count_converged()
        self.S[:, :n] = self.X
        self.S[:, n:n + npc] = P
        W = self._ortho(self.R[:, nc:], self.S[:, :n + npc])
        self.ivars["converged_end"] = n + npc + W.shape[-1]
        self.S[:, n + npc:n + npc + W.shape[-1]] = W

    # -- method="basic" (PyTorch takes any method other than "ortho" for it) -------------
    def _first_basic(self):
        n = self.iparams["n"]
        Ri = self._rayleigh_ritz(self.X)
        E, Z = _symeig(_qform(_qform(self.A, self.X), Ri), self.bparams["largest"])
        # in place, as PyTorch's: a caller's X holds the iterate afterwards
        self.X[:] = self.X @ (Ri @ Z)
        self.E[:] = E
        self._residual()
        self._count_converged()
        self.S[:, :n] = self.X
        W = _mm(self.iK, self.R)
        self.ivars["converged_end"] = n + W.shape[-1]
        self.S[:, n:n + W.shape[-1]] = W

    def _next_basic(self):
        n = self.iparams["n"]
        nc, ns = self.ivars["converged_count"], self.ivars["converged_end"]
        basis = self.S[:, nc:ns]
        Ri = self._rayleigh_ritz(basis)
        E, Z = _symeig(_qform(_qform(self.A, basis), Ri), self.bparams["largest"])
        C = basis @ Ri   # the Ritz vectors' coefficients act on the B-normalized basis
        self.X[:, nc:] = C @ Z[:, :n - nc]
        self.E[nc:] = E[:n - nc]
        # (PyTorch's P takes Ritz vectors n .. 2n - nc, skipping the first nc after X's)
        P = C @ Z[:, n:2 * n - nc]
        npc = P.shape[-1]
        self._residual()
        nc = self._count_converged()
        self.S[:, :n] = self.X
        self.S[:, n:n + npc] = P
        W = _mm(self.iK, self.R[:, nc:])
        self.ivars["converged_end"] = n + npc + W.shape[-1]
        self.S[:, n + npc:n + npc + W.shape[-1]] = W

    def _residual(self):
        self.R = _mm(self.A, self.X) - _mm(self.B, self.X) * self.E

    def _count_converged(self):
        T = _torch()
        X, E, R = self.X, self.E, self.R
        scale = self.fvars["A_norm"] + T.abs(E[:X.shape[-1]]) * self.fvars["B_norm"]
        rerr = T.norm(R, 2, (0,)) / (T.norm(X, 2, (0,)) * scale)
        count = 0
        for ok in (rerr < self.fparams["tol"]).tolist():   # a prefix, to keep the order
            if not ok:
                break
            count += 1
        before = self.ivars["converged_count"]
        if count < before:
            raise AssertionError(f"the number of converged eigenpairs (was {before}, got "
                                 f"{count}) cannot decrease")
        self.ivars["converged_count"] = count
        self.tvars["rerr"] = rerr
        return count

    # -- B-orthonormal bases --------------------------------------------------------------
    def _rayleigh_ritz(self, S):
        """Ri with Ri^T S^T B S Ri = I (upper triangular up to a diagonal scaling), which
        turns the projected generalized problem into a standard one."""
        T = _torch()
        SBS = _qform(self.B, S)
        d = SBS.diagonal(0, -2, -1) ** -0.5
        U = T.linalg.cholesky(SBS * d * d.reshape(-1, 1), upper=True)
        return T.linalg.solve_triangular(U, d.diag_embed(), upper=True, left=False)

    def _svqb(self, U, drop, tau):
        """U's columns made B-orthonormal through the eigendecomposition of the scaled
        Gram matrix; eigenvalues under tau * max are raised to it (or dropped)."""
        T = _torch()
        if U.numel() == 0:
            return U
        UBU = _qform(self.B, U)
        d = UBU.diagonal(0, -2, -1)
        nonzero = T.where(abs(d) != 0.0)[0]
        if len(nonzero) < len(d):   # exact zero columns: no direction to scale
            U = U[:, nonzero]
            if U.numel() == 0:
                return U
            UBU = _qform(self.B, U)
            d = UBU.diagonal(0, -2, -1)
        dc = (d ** -0.5).reshape(-1, 1)
        E, Z = _symeig((UBU * dc) * dc.mT)
        t = tau * abs(E).max()
        if drop:
            keep = T.where(E > t)[0]
            E, Z, dc = E[keep], Z[:, keep], dc[keep]
        else:
            E[T.where(E < t)[0]] = t
        return (U * dc.mT) @ (Z * E ** -0.5)

    def _ortho(self, U, V):
        """U made B-orthonormal and B-orthogonal to V (may lose columns with dropping)."""
        T = _torch()
        fp, ip = self.fparams, self.iparams
        tol = fp["ortho_tol"]
        use_drop = self.bparams["ortho_use_drop"]
        for key in [key for key in self.fvars if key.startswith("ortho_")
                    and key.endswith("_rerr")]:
            del self.fvars[key]
        self.ivars.pop("ortho_i", 0)
        self.ivars.pop("ortho_j", 0)
        BV_norm = T.norm(_mm(self.B, V))
        BU = _mm(self.B, U)
        VBU = V.mT @ BU
        i = j = 0
        for i in range(ip["ortho_i_max"]):
            U = U - V @ VBU
            drop, tau = False, fp["ortho_tol_drop"]
            for j in range(ip["ortho_j_max"]):
                if use_drop:
                    U = self._svqb(U, drop, tau)
                    drop, tau = True, fp["ortho_tol_replace"]
                else:
                    U = self._svqb(U, False, fp["ortho_tol_replace"])
                if U.numel() == 0:   # every column of U lay in span(V)
                    self.ivars["ortho_i"], self.ivars["ortho_j"] = i, j
                    return U
                BU = _mm(self.B, U)
                UBU = U.mT @ BU
                gap = T.norm(UBU - T.eye(UBU.shape[-1], dtype=UBU.dtype))
                rerr = float(gap) / float(T.norm(BU) * T.norm(U))
                self.fvars[f"ortho_UBUmI_rerr[{i}, {j}]"] = rerr
                if rerr < tol:
                    break
            VBU = V.mT @ BU
            rerr = float(T.norm(VBU)) / float(BV_norm * T.norm(U))
            self.fvars[f"ortho_VBU_rerr[{i}]"] = rerr
            if rerr < tol:
                break
            if self.iparams["m"] < U.shape[-1] + V.shape[-1]:
                if self.B is None:
                    raise AssertionError("B must not be None")
                raise ValueError(f"Overdetermined shape of U: #B-cols(={self.B.shape[-1]}) >= "
                                 f"#U-cols(={U.shape[-1]}) + #V-cols(={V.shape[-1]}) must hold")
        self.ivars["ortho_i"], self.ivars["ortho_j"] = i, j
        return U


def lobpcg(A, k=None, B=None, X=None, n=None, iK=None, niter=None, tol=None, largest=None,
           method=None, tracker=None, ortho_iparams=None, ortho_fparams=None,
           ortho_bparams=None):
    if A.requires_grad or (B is not None and B.requires_grad):
        # as PyTorch: the symmetric part goes in, so that the gradient is symmetric too
        A_sym = (A + A.mT) / 2
        B_sym = (B + B.mT) / 2 if B is not None else None
        return _autograd_function().apply(A_sym, k, B_sym, X, n, iK, niter, tol, largest,
                                          method, tracker, ortho_iparams, ortho_fparams,
                                          ortho_bparams)
    return _lobpcg(A, k, B, X, n, iK, niter, tol, largest, method, tracker, ortho_iparams,
                   ortho_fparams, ortho_bparams)


def _lobpcg(A, k, B, X, n, iK, niter, tol, largest, method, tracker, ortho_iparams,
            ortho_fparams, ortho_bparams):
    T = _torch()
    if A.shape[-2] != A.shape[-1]:
        raise AssertionError(f"A must be square, got shape {A.shape}")
    if B is not None and A.shape != B.shape:
        raise AssertionError(f"A and B must have same shape, got {A.shape} vs {B.shape}")
    dtype = A.dtype if A.dtype in (T.float16, T.float32, T.float64) else T.float32
    if tol is None:
        tol = {T.float32: 1.2e-07, T.float64: 2.23e-16}[dtype] ** 0.5
    m = A.shape[-1]
    if k is None:
        k = 1 if X is None else X.shape[-1]
    n = (k if n is None else n) if X is None else X.shape[-1]
    if m < 3 * n:
        raise ValueError(f"LOBPCG algorithm is not applicable when the number of A rows (={m})"
                         f" is smaller than 3 x the number of requested eigenpairs (={n})")
    iparams = {"m": m, "n": n, "k": k, "niter": 1000 if niter is None else niter}
    fparams = {"tol": tol}
    bparams = {"largest": True if largest is None else largest}
    method = "ortho" if method is None else method
    if method == "ortho":   # (the ortho_* parameters are ignored by the other method)
        iparams.update(ortho_iparams or {})
        fparams.update(ortho_fparams or {})
        bparams.update(ortho_bparams or {})
        iparams.setdefault("ortho_i_max", 3)
        iparams.setdefault("ortho_j_max", 3)
        for key in ("ortho_tol", "ortho_tol_drop", "ortho_tol_replace"):
            fparams.setdefault(key, tol)
        bparams.setdefault("ortho_use_drop", False)

    def solve(A_, B_, X_, index=None):
        if X_ is None:
            X_ = T.randn((m, n), dtype=dtype)
        if not (X_.dim() == 2 and tuple(X_.shape) == (m, n)):
            raise AssertionError(f"X{'_' if index is not None else ''} shape mismatch: got "
                                 f"{X_.shape}, expected {(m, n)}")
        if index is not None:
            iparams["batch_index"] = index
        worker = _Worker(A_, B_, X_, iK, iparams, fparams, bparams, method, tracker)
        worker.run()
        return worker.E[:k], worker.X[:, :k]

    if A.dim() == 2:
        return solve(A, B, X)
    batch = tuple(A.shape[:-2])
    flat = lambda t: None if t is None else t.reshape((-1,) + tuple(t.shape[-2:]))  # noqa
    bA, bB, bX = flat(A), flat(B), flat(X)
    pairs = [solve(bA[i], None if bB is None else bB[i], None if bX is None else bX[i], i)
             for i in range(bA.shape[0])]
    E = T.stack([e for e, _ in pairs]).reshape(batch + (k,))
    V = T.stack([x for _, x in pairs]).reshape(batch + (m, k))
    return E, V


def _eigenpairs_backward(D_grad, U_grad, A, D, U):
    """The gradient of A (symmetric) from those of k of its eigenpairs (D, U): the part in
    span(U) by the classic formula, the part outside it by solving, for each pair, the
    shifted system on the orthogonal complement (the Sylvester equation PyTorch solves with
    a characteristic polynomial; the solution is the same)."""
    T = _torch()
    m, k = U.shape[-2], U.shape[-1]
    Ut = U.mT
    F = D.unsqueeze(-2) - D.unsqueeze(-1)
    F = T.where(T.eye(k, dtype=T.bool), T.zeros((), dtype=F.dtype), 1 / F)
    inner = T.diag_embed(D_grad) + (Ut @ U_grad) * F
    grad = U @ inner @ Ut
    if k == m:
        return grad
    Q = T.linalg.qr(U, mode="complete").Q[..., k:]   # an orthonormal basis of span(U)'s complement
    Ao = Q.mT @ A @ Q
    shifted = Ao.unsqueeze(-3) - D[..., :, None, None] * T.eye(m - k, dtype=A.dtype)
    rhs = (Q.mT @ U_grad).mT.unsqueeze(-1)            # one column per eigenpair
    Y = T.linalg.solve(shifted, rhs).squeeze(-1).mT   # (m - k, k)
    return grad - Q @ Y @ Ut


_FUNCTION = []


def _autograd_function():
    """PyTorch's `LOBPCGAutogradFunction` (its node's name), made once torchish is loaded."""
    if _FUNCTION:
        return _FUNCTION[0]
    T = _torch()

    class LOBPCGAutogradFunction(T.autograd.Function):
        @staticmethod
        def forward(ctx, A, k=None, B=None, X=None, n=None, iK=None, niter=None, tol=None,
                    largest=None, method=None, tracker=None, ortho_iparams=None,
                    ortho_fparams=None, ortho_bparams=None):
            D, U = _lobpcg(A.detach(), k, None if B is None else B.detach(), X, n, iK, niter,
                           tol, largest, method, tracker, ortho_iparams, ortho_fparams,
                           ortho_bparams)
            ctx.save_for_backward(A, B, D, U)
            ctx.largest = largest
            return D, U

        @staticmethod
        def backward(ctx, D_grad, U_grad):
            A, B, D, U = ctx.saved_tensors
            complex_ = (T.complex64, T.complex128)
            if A.dtype in complex_ or B is not None and B.dtype in complex_:
                raise ValueError("lobpcg.backward does not support complex input yet. Note "
                                 "that lobpcg.forward does though.")
            if B is not None:
                raise ValueError("lobpcg.backward does not support backward with B != I yet.")
            if D_grad is None:
                D_grad = T.zeros_like(D)
            if U_grad is None:
                U_grad = T.zeros_like(U)
            return (_eigenpairs_backward(D_grad, U_grad, A, D, U),) + (None,) * 13

    _FUNCTION.append(LOBPCGAutogradFunction)
    return LOBPCGAutogradFunction


PLAIN = ["lobpcg"]
