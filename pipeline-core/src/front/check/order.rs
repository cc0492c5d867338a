//! Checks of the whole pipeline once every statement is elaborated: funcs
//! renumbered so each reads only funcs before it, and coordinates that
//! bounds inference could not bound.

use super::*;

impl<'p> Elab<'p> {
    /// Renumbers the funcs so that each reads only funcs before it (the IR's
    /// invariant, `ir::pipeline`). Definition order is such an order, except
    /// that a template called in place inside a definition makes its funcs
    /// after the func being defined, and an update may read a func defined
    /// after its func's pure definition: those readers move after what they
    /// read, the other funcs keep their order. Only updates can make a
    /// cycle, which is an error.
    pub(super) fn order_funcs(&mut self) -> Result<()> {
        let (p, sites) = (&mut self.pipe, &self.sites);
        let n = p.funcs.len();
        let reads: Vec<Vec<FuncId>> = (0..n).map(|f| p.callees(f)).collect();
        let mut placed = vec![false; n];
        let mut order = Vec::with_capacity(n);
        while order.len() < n {
            let next = (0..n).find(|&f| !placed[f] && reads[f].iter().all(|&g| placed[g]));
            let Some(f) = next else {
                // Each func left reads another one left: an update reads a
                // func that reads the update's func.
                for f in (0..n).filter(|&f| !placed[f]) {
                    for u in &p.funcs[f].updates {
                        let mut later = None;
                        let mut find = |e: &Expr| {
                            e.visit(&mut |n| {
                                if let ExprKind::Load {
                                    source: Source::Func(g),
                                    ..
                                } = n.kind
                                {
                                    if g != f && !placed[g] {
                                        later.get_or_insert(g);
                                    }
                                }
                            })
                        };
                        u.args.iter().for_each(&mut find);
                        find(&u.value);
                        if let Some(g) = later {
                            let (f, g) = (&p.funcs[f].name, &p.funcs[g].name);
                            return err(
                                sites[u.site],
                                format!("this update of `{f}` reads `{g}`, which reads `{f}`: a func can read itself only in its own updates"),
                            );
                        }
                    }
                }
                unreachable!("a cycle of funcs without updates");
            };
            placed[f] = true;
            order.push(f);
        }
        if order.iter().enumerate().all(|(i, &f)| i == f) {
            return Ok(());
        }
        let mut new_id = vec![0; n];
        for (i, &f) in order.iter().enumerate() {
            new_id[f] = i;
        }
        let renumber = |e: &Expr| {
            e.rewrite(&mut |mut e: Expr| {
                if let ExprKind::Load {
                    source: Source::Func(g),
                    ..
                } = &mut e.kind
                {
                    *g = new_id[*g];
                }
                e
            })
        };
        let mut funcs: Vec<Option<Func>> = p.funcs.drain(..).map(Some).collect();
        p.funcs = order.iter().map(|&f| funcs[f].take().unwrap()).collect();
        for func in &mut p.funcs {
            func.pure = renumber(&func.pure);
            for u in &mut func.updates {
                u.args = u.args.iter().map(renumber).collect();
                u.value = renumber(&u.value);
                for r in &mut u.rdom {
                    r.min = renumber(&r.min);
                    r.extent = renumber(&r.extent);
                }
            }
        }
        for o in &mut p.outputs {
            *o = new_id[*o];
        }
        Ok(())
    }

    /// Every coordinate must be bounded for bounds inference (the guide's *Calls and coordinates*).
    pub(super) fn check_bounded_coordinates(&mut self) {
        let values = crate::analysis::bounds::func_value_bounds(&self.pipe);
        let value_of = |g: FuncId| values[g].clone();
        let placeholder = |k: usize| Interval::new(Expr::sym(k), Expr::sym(k + 1));
        let mut errors = Vec::new();
        for func in &self.pipe.funcs {
            let vars: Vec<Interval> = (0..func.dims()).map(|d| placeholder(2 * d)).collect();
            let check = |e: &Expr, rvars: &[Interval], errors: &mut Vec<(usize, usize)>| {
                let scope = Scope::new(vars.clone(), rvars.to_vec(), &value_of);
                visit_loads(e, &scope, &mut |n| {
                    if let ExprKind::Load { args, site, .. } = &n.kind {
                        for (d, a) in args.iter().enumerate() {
                            if !bounds_of(a, &scope).is_bounded() {
                                errors.push((*site, d));
                            }
                        }
                    }
                });
            };
            check(&func.pure, &[], &mut errors);
            for u in &func.updates {
                let rvars: Vec<Interval> =
                    (0..u.rdom.len()).map(|r| placeholder(16 + 2 * r)).collect();
                check(&u.value, &rvars, &mut errors);
                for a in &u.args {
                    check(a, &rvars, &mut errors);
                }
                let scope = Scope::new(vars.clone(), rvars.clone(), &value_of);
                for (d, a) in u.args.iter().enumerate() {
                    if !bounds_of(a, &scope).is_bounded() {
                        errors.push((u.site, d));
                    }
                }
            }
        }
        errors.sort();
        errors.dedup();
        for (site, d) in errors {
            let call = self.sites[site];
            self.errors.push(Error::new_spanned(
                coordinate_tokens(call, d),
                format!(
                    "coordinate {} ({}) is data-dependent and unbounded, so the region to compute cannot be inferred; bound it with `clamp(v, lo, hi)` or read through a boundary condition such as `.clamp_edge()`",
                    d,
                    coord_name(d)
                ),
            ));
        }
    }
}
