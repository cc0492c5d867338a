//! Loads and boundary maps that do not change in a loop, bound once
//! before it (`Gen::hoist_loads`): a convolution's weights, the mirrored
//! row of a boundary condition along a row.

use super::captures::Name;
use super::*;

/// A node [`Gen::hoist_loads`] binds before its loop, the value bound (the
/// node, or a map with the loop's coordinates replaced by their values),
/// and the stage whose coordinates that value names.
type Hoist<'s> = (&'s Expr, Expr, Option<FuncId>, Option<usize>);

impl Gen<'_> {
    /// Binds, before serial loop `body` runs, each load in it whose
    /// coordinates do not vary (constants, parameters, symbols bound outside
    /// it) from a buffer it does not write, and which every iteration
    /// evaluates: `weight(-3)` in a convolution's taps. LLVM cannot move
    /// such a load out of the loop itself, as it cannot tell that the
    /// loop's stores (through other views' raw pointers) leave it unchanged.
    /// The caller runs the bindings only when the loop runs at least once,
    /// so they read only what the loop would have read. Boundary
    /// conditions' maps of coordinates that do not vary are bound with them
    /// ([`Gen::take_invariant_maps`]).
    pub(super) fn hoist_loads(&self, body: &Stmt) -> (Vec<Code>, Vec<(Expr, Code)>) {
        let mut written = Vec::new();
        funcs_written(body, &mut written);
        let mut found: Vec<&Expr> = Vec::new();
        each_unguarded_expr(body, &mut |e| {
            self.take_invariant_loads(e, &written, &mut found)
        });
        let mut maps = Vec::new();
        self.take_invariant_maps(body, None, &mut Vec::new(), &mut maps);
        // (node, its value outside the loop, the stage it is read in): a
        // load is its own value; a map's uses the loop's coordinates'
        // values.
        let loads = found
            .into_iter()
            .map(|load| (load, load.clone(), None, None));
        let hoists = maps.into_iter().chain(loads);
        // Taps read a weight, and map a coordinate, several times: one
        // binding each value.
        let mut binds = Vec::new();
        let mut scope: Vec<(Expr, Code)> = Vec::new();
        for (node, value, f, k) in hoists {
            let id = match scope.iter().find(|(v, _)| *v == value) {
                Some((_, id)) => id.clone(),
                None => {
                    let id = word!("__h{}", self.hoisted.borrow().len());
                    let (ty, v) = (rust_type(value.ty), self.expr(&value, f, k));
                    binds.push(code!(let #id: #ty = #v;));
                    scope.push((value, id.clone()));
                    id
                }
            };
            self.hoisted.borrow_mut().insert(node, id);
        }
        (binds, scope)
    }

    /// Adds to `found` the boundary conditions' maps of coordinates in `s`
    /// that do not vary in the loop being hoisted from (`mirror(y)` along a
    /// row, where the map's branches and remainders would run for every
    /// vector), each with its value before the loop: those
    /// [`Gen::hoist_loads`] binds too. A map is arithmetic that never
    /// fails, so one under a condition or a select's branch is computed
    /// ahead as well. `coords` holds the coordinates bound inside the loop
    /// so far, which the code computes from their values; `stage` is the
    /// store's.
    fn take_invariant_maps<'s>(
        &self,
        s: &'s Stmt,
        stage: Option<(FuncId, Option<usize>)>,
        coords: &mut Vec<(Coord, &'s Expr)>,
        found: &mut Vec<Hoist<'s>>,
    ) {
        let mut exprs = |e: &'s Expr, stage, coords: &[(Coord, &'s Expr)]| {
            self.take_invariant_maps_in(e, stage, coords, found)
        };
        match s {
            Stmt::Allocate { body, .. } | Stmt::For { body, .. } => {
                self.take_invariant_maps(body, stage, coords, found)
            }
            Stmt::LetSym { value, body, .. } => {
                exprs(value, stage, coords);
                self.take_invariant_maps(body, stage, coords, found)
            }
            Stmt::LetCoord { coord, value, body } => {
                coords.push((*coord, value));
                self.take_invariant_maps(body, stage, coords, found);
                coords.pop();
            }
            Stmt::If { cond, body } => {
                exprs(cond, stage, coords);
                self.take_invariant_maps(body, stage, coords, found)
            }
            Stmt::Block(stmts) => stmts
                .iter()
                .for_each(|s| self.take_invariant_maps(s, stage, coords, found)),
            Stmt::Store {
                func,
                update,
                args,
                value,
            } => {
                let stage = Some((*func, *update));
                args.iter()
                    .chain([value])
                    .for_each(|e| exprs(e, stage, coords));
            }
            Stmt::CopyToOutput { .. } => {}
        }
    }

    /// The binding of load or boundary map `e` that an enclosing loop
    /// hoisted: by node, or for a load by value (a load of a copy of the
    /// loop's body, `lanes::assuming`, whose nodes are others; the loads
    /// hoisted use no coordinate or `let`, so equal loads are the same
    /// read).
    pub(super) fn hoisted_value(&self, e: &Expr) -> Option<Code> {
        match e.kind {
            ExprKind::Load { .. } | ExprKind::Boundary { .. } => {}
            _ => return None,
        }
        if let Some(id) = self.hoisted.borrow().get(&(e as *const Expr)) {
            return Some(id.clone());
        }
        if !matches!(e.kind, ExprKind::Load { .. }) {
            return None;
        }
        let scopes = self.hoisted_scopes.borrow();
        scopes
            .iter()
            .rev()
            .flatten()
            .find(|(l, _)| l == e)
            .map(|(_, id)| id.clone())
    }

    /// [`Gen::take_invariant_maps`] in expression `e`.
    fn take_invariant_maps_in<'s>(
        &self,
        e: &'s Expr,
        stage: Option<(FuncId, Option<usize>)>,
        coords: &[(Coord, &'s Expr)],
        found: &mut Vec<Hoist<'s>>,
    ) {
        crate::deep(|| {
            if matches!(e.kind, ExprKind::Boundary { .. })
                && !self.hoisted.borrow().contains_key(&(e as *const Expr))
                && self.is_fixed(e, stage, coords)
            {
                let (f, k) = (stage.map(|s| s.0), stage.and_then(|s| s.1));
                let inner = |c: Coord| {
                    let (_, v) = coords.iter().rev().find(|(k, _)| *k == c)?;
                    Some(Expr::cast(Type::I32, (*v).clone()))
                };
                let outside = e
                    .rewrite(&mut |n| {
                        let c = match (&n.kind, f, k) {
                            (ExprKind::Var(d), Some(f), _) => inner(Coord::Pure(f, *d)),
                            (ExprKind::RVar(r), Some(f), Some(k)) => {
                                inner(Coord::Reduction(f, k, *r))
                            }
                            _ => None,
                        };
                        c.unwrap_or(n)
                    })
                    .unshared();
                found.push((e, outside, f, k));
                return;
            }
            e.for_each_child(|c| self.take_invariant_maps_in(c, stage, coords, found));
        })
    }

    /// Whether `e` has one value in every iteration of the loop being
    /// hoisted from: it reads no memory and no `let`, and its symbols, loop
    /// variables and coordinates are bound outside that loop, or are
    /// coordinates bound inside it from such values.
    pub(super) fn is_fixed(
        &self,
        e: &Expr,
        stage: Option<(FuncId, Option<usize>)>,
        coords: &[(Coord, &Expr)],
    ) -> bool {
        let readable = |name: Name| self.readable.borrow().contains(&name);
        let coord = |c: Coord| match coords.iter().rev().find(|(k, _)| *k == c) {
            Some((_, value)) => self.is_fixed(value, stage, &[]),
            None => readable(Name::Coord(c)),
        };
        !e.any(&mut |n| match &n.kind {
            ExprKind::Sym(k) => !readable(Name::LocalSym(*k)),
            ExprKind::Loop(v) => !readable(Name::Loop(v.clone())),
            ExprKind::Var(d) => !stage.is_some_and(|(f, _)| coord(Coord::Pure(f, *d))),
            ExprKind::RVar(r) => {
                !matches!(stage, Some((f, Some(k))) if coord(Coord::Reduction(f, k, *r)))
            }
            ExprKind::LetVar(_) | ExprKind::Let { .. } | ExprKind::Load { .. } => true,
            _ => false,
        })
    }

    /// Adds to `found` the loads in `e`, evaluated whenever `e` is, that
    /// [`Gen::hoist_loads`] can move out of the loop.
    fn take_invariant_loads<'e>(&self, e: &'e Expr, written: &[FuncId], found: &mut Vec<&'e Expr>) {
        crate::deep(|| self.take_invariant_loads_here(e, written, found))
    }

    fn take_invariant_loads_here<'e>(
        &self,
        e: &'e Expr,
        written: &[FuncId],
        found: &mut Vec<&'e Expr>,
    ) {
        match &e.kind {
            ExprKind::Load { source, args, .. } => {
                let readable = match source {
                    Source::Input(_) => true,
                    Source::Func(g) => {
                        !written.contains(g) && self.readable.borrow().contains(&Name::Reader(*g))
                    }
                };
                // No loop variable, not even an enclosing loop's: a load at
                // constants and symbols.
                let fixed = |a: &Expr| {
                    !a.any(&mut |n| matches!(n.kind, ExprKind::Loop(_)))
                        && self.is_fixed(a, None, &[])
                };
                if readable
                    && args.iter().all(fixed)
                    && !self.hoisted.borrow().contains_key(&(e as *const Expr))
                {
                    found.push(e);
                } else {
                    args.iter()
                        .for_each(|a| self.take_invariant_loads(a, written, found));
                }
            }
            // Only the condition of a select, and the left operand of a
            // short-circuit operator, are evaluated every time.
            ExprKind::Select(c, _, _) => self.take_invariant_loads(c, written, found),
            ExprKind::Binary(BinOp::And | BinOp::Or, a, _) if a.ty == Type::Bool => {
                self.take_invariant_loads(a, written, found)
            }
            _ => e.for_each_child(|c| self.take_invariant_loads(c, written, found)),
        }
    }
}

/// The funcs that `s` stores to or allocates.
fn funcs_written(s: &Stmt, out: &mut Vec<FuncId>) {
    if let Stmt::Store { func, .. } | Stmt::Allocate { func, .. } = s {
        out.push(*func);
    }
    s.children().iter().for_each(|c| funcs_written(c, out));
}

/// Calls `f` on every expression of `s` that each execution of `s`
/// evaluates: not those under a condition, nor in a loop that may run no
/// iteration (only loops of constant extent and split vectors are entered).
fn each_unguarded_expr<'s>(s: &'s Stmt, f: &mut impl FnMut(&'s Expr)) {
    match s {
        Stmt::Allocate { body, .. } => each_unguarded_expr(body, f),
        Stmt::LetSym { value, body, .. } | Stmt::LetCoord { value, body, .. } => {
            f(value);
            each_unguarded_expr(body, f);
        }
        Stmt::Block(stmts) => stmts.iter().for_each(|s| each_unguarded_expr(s, f)),
        // A loop runs its body if its bounds are constants in order, or
        // if it is a split's vectors (`lanes::lanes_of`), whose every
        // iteration of the loop around runs at least one lane.
        Stmt::For {
            min,
            max,
            body,
            kind,
            ..
        } => {
            if matches!((min.as_int(), max.as_int()), (Some(lo), Some(hi)) if lo <= hi)
                || (*kind == LoopKind::Vectorized && lanes::lanes_of(min, max).is_some())
            {
                each_unguarded_expr(body, f);
            }
        }
        Stmt::Store { args, value, .. } => args.iter().chain([value]).for_each(f),
        Stmt::If { .. } | Stmt::CopyToOutput { .. } => {}
    }
}
