//! Which values of a vectorized loop are the same in every lane
//! (*uniform*), which are ramps `base + i * stride`, and which conditions
//! provably hold in every lane: the classification the rest of the vector
//! code is chosen by.

use super::*;

impl Lanes<'_, '_> {
    /// Whether `e` has the same value in every lane (memoized by node).
    pub(super) fn is_uniform(&self, e: &Expr) -> bool {
        let key = e as *const Expr;
        if let Some(&u) = self.uniform.borrow().get(&key) {
            return u;
        }
        let u = crate::deep(|| self.classify(e));
        self.uniform.borrow_mut().insert(key, u);
        u
    }

    fn classify(&self, e: &Expr) -> bool {
        let (f, k) = self.stage.get();
        let coord_uniform = |c: Option<Coord>| {
            c.and_then(|c| self.coords.borrow().get(&c).cloned())
                .is_none_or(|v| matches!(v, Lane::Uni(_)))
        };
        match &e.kind {
            ExprKind::Loop(l) => l != self.var,
            ExprKind::Var(d) => coord_uniform(f.map(|f| Coord::Pure(f, *d))),
            ExprKind::RVar(r) => coord_uniform(f.zip(k).map(|(f, k)| Coord::Reduction(f, k, *r))),
            ExprKind::LetVar(id) => self.let_uniform.borrow().get(id).copied().unwrap_or(true),
            ExprKind::Let { id, value, body } => {
                let v = self.is_uniform(value);
                self.let_uniform.borrow_mut().insert(*id, v);
                v && self.is_uniform(body)
            }
            _ => {
                let mut all = true;
                e.for_each_child(|c| all &= self.is_uniform(c));
                all
            }
        }
    }

    /// Whether `cond`, a comparison of a ramp with a uniform value (or a
    /// conjunction of such), is provably true in every lane: true in the
    /// first lane and in the last, between which a ramp is monotonic. The
    /// proof is by [`provably_true`] on the condition with the loop's
    /// variable replaced by each end's value.
    pub(super) fn holds_in_every_lane(&self, cond: &Expr) -> bool {
        let comparison = |e: &Expr| match &e.kind {
            ExprKind::Binary(BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge, a, b) => {
                let uniform = |x: &Expr| self.is_uniform(x);
                let ramp = |x: &Expr| self.ramp(x).is_some();
                (ramp(a) && uniform(b)) || (uniform(a) && ramp(b))
            }
            _ => false,
        };
        let mut linear = true;
        cond.visit(&mut |n| {
            if n.ty == Type::Bool && !matches!(n.kind, ExprKind::Binary(BinOp::And, ..)) {
                linear &= comparison(n);
            }
        });
        linear && self.holds_in_the_ends(cond)
    }

    /// Whether `cond` holds in the first lane and the last, or else does
    /// for every value of the enclosing loops of constant range that it
    /// names (`vectorize(x, 16).unroll(x, 2)`: the guard of the last pair
    /// of vectors holds in both), when they have at most 64 combinations.
    fn holds_in_the_ends(&self, cond: &Expr) -> bool {
        let holds = |c: &Expr| holds_in_first_and_last(c, self.var, self.first, self.w);
        if holds(cond) {
            return true;
        }
        let constant = self.g.constant_loops.borrow();
        let used: Vec<&(LoopVar, i128, i128)> = constant
            .iter()
            .filter(|(v, _, _)| cond.uses_loop(v))
            .collect();
        if used.is_empty() {
            return false;
        }
        let combinations = used.iter().try_fold(1i128, |n, (_, lo, hi)| {
            n.checked_mul(hi - lo + 1).filter(|&n| n <= 64)
        });
        let Some(combinations) = combinations else {
            return false;
        };
        (0..combinations).all(|mut k| {
            let mut c = cond.clone();
            for (v, lo, hi) in &used {
                let n = hi - lo + 1;
                c = c.with_loop(v, &Expr::i64(lo + k % n));
                k /= n;
            }
            holds(&c)
        })
    }

    /// `e` as `base + i * stride` in lane `i` (stride 0: uniform), if it is
    /// an integer affine in the loop.
    pub(super) fn ramp(&self, e: &Expr) -> Option<(Code, i128)> {
        crate::deep(|| self.ramp_here(e))
    }

    fn ramp_here(&self, e: &Expr) -> Option<(Code, i128)> {
        let (f, k) = self.stage.get();
        if self.is_uniform(e) {
            return Some((self.g.expr(e, f, k), 0));
        }
        if !e.ty.is_int() {
            return None;
        }
        let ty = rust_type(e.ty);
        let coord = |c: Coord| match self.coords.borrow().get(&c) {
            Some(Lane::Ramp(b, s)) => Some((b.clone(), *s)),
            _ => None,
        };
        match &e.kind {
            ExprKind::Loop(_) => {
                let id = self.g.named(Name::Loop(self.var.clone()));
                Some((code!(#id), 1))
            }
            ExprKind::Var(d) => coord(Coord::Pure(f?, *d)),
            ExprKind::RVar(r) => coord(Coord::Reduction(f?, k?, *r)),
            ExprKind::Unary(UnOp::Neg, a) => {
                let (b, s) = self.ramp(a)?;
                Some((code!((#b).wrapping_neg()), -s))
            }
            ExprKind::Binary(op @ (BinOp::Add | BinOp::Sub), a, b) => {
                let ((x, sx), (y, sy)) = (self.ramp(a)?, self.ramp(b)?);
                Some(if *op == BinOp::Add {
                    (code!((#x).wrapping_add(#y)), sx + sy)
                } else {
                    (code!((#x).wrapping_sub(#y)), sx - sy)
                })
            }
            ExprKind::Binary(BinOp::Mul, a, b) => {
                let (r, c) = match (a.as_int(), b.as_int()) {
                    (_, Some(c)) => (a, c),
                    (Some(c), _) => (b, c),
                    _ => return None,
                };
                let (base, s) = self.ramp(r)?;
                let lit = int_lit(e.ty, c);
                Some((code!((#base).wrapping_mul(#lit)), s.checked_mul(c)?))
            }
            // Truncation keeps a ramp a ramp.
            ExprKind::Cast(a) if a.ty.is_int() && e.ty.bits() <= a.ty.bits() => {
                let (b, s) = self.ramp(a)?;
                Some((code!(((#b) as #ty)), s))
            }
            _ => None,
        }
    }
}
