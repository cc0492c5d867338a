//! Calls: loads of funcs, inputs and views (boundary conditions included),
//! the built-in functions, inline reductions (`sum(-1..=1, |i| ..)`),
//! methods, and the natural extents of what a load reads.

use super::*;
use std::sync::Arc;

impl<'p> Elab<'p> {
    pub(super) fn call(&mut self, c: &'p syn::ExprCall, env: &Env, ctx: &Ctx) -> Result<Val> {
        // A call of a func value: `f(x, y)`, `g[1](x, y)`, `input.mirror()(x, y)`, `t(f)(x, y)`.
        let callee_name = match &*c.func {
            // `saturating_cast::<u8>` carries generic arguments, so it is no plain ident.
            syn::Expr::Path(p) if p.qself.is_none() && p.path.segments.len() == 1 => {
                Some(p.path.segments[0].ident.to_string())
            }
            _ => None,
        };
        let is_local = callee_name.as_ref().is_some_and(|n| env.contains_key(n));
        if is_local || !matches!(&*c.func, syn::Expr::Path(_)) {
            if let Some(f) = self.func_value(&c.func, env)? {
                return self.load(&f, c, env, ctx);
            }
            if is_local {
                let n = callee_name.unwrap();
                return err(&c.func, format!("`{n}` is not a func and cannot be called"));
            }
            return err(&c.func, "expected a func to call");
        }
        let Some(name) = callee_name else {
            return err(&c.func, "expected a func or built-in name");
        };
        if let syn::Expr::Path(p) = &*c.func {
            if name.is_empty() || p.path.segments.len() != 1 {
                return err(&c.func, "expected a func or built-in name");
            }
        }
        if self.templates.iter().any(|t| t.sig.ident == name) {
            if let Some(f) = self.func_value(&c.func, env)? {
                return self.load(&f, c, env, ctx);
            }
            return err(c, format!("`{name}(..)` returns a func; call the result with coordinates: `{name}(..)(x, y)`"));
        }
        self.builtin(&name, c, env, ctx)
    }

    fn builtin(&mut self, name: &str, c: &'p syn::ExprCall, env: &Env, ctx: &Ctx) -> Result<Val> {
        let args: Vec<&'p syn::Expr> = c.args.iter().collect();
        let want = |n: usize| -> Result<()> {
            if args.len() != n {
                err(
                    c,
                    format!("`{name}` takes {n} argument(s), found {}", args.len()),
                )
            } else {
                Ok(())
            }
        };
        match name {
            "min" | "max" => {
                want(2)?;
                let op = if name == "min" {
                    BinOp::Min
                } else {
                    BinOp::Max
                };
                let a = self.expr(args[0], env, ctx)?;
                let b = self.expr(args[1], env, ctx)?;
                let (x, y, ty) = self.unify(a, b, c)?;
                if ty == Type::Bool {
                    return err(c, format!("`{name}` applies to numbers"));
                }
                Ok(Val::Typed(Expr::binary(op, x, y)))
            }
            "clamp" => {
                want(3)?;
                let v = self.expr(args[0], env, ctx)?;
                let lo = self.expr(args[1], env, ctx)?;
                let hi = self.expr(args[2], env, ctx)?;
                let lo_v = self.apply(BinOp::Max, v, lo, c)?;
                self.apply(BinOp::Min, lo_v, hi, c)
            }
            "abs" => {
                want(1)?;
                let v = self.expr(args[0], env, ctx)?;
                match v {
                    Val::IntLit(i) => Ok(Val::IntLit(i.abs())),
                    Val::FloatLit(f) => Ok(Val::FloatLit(f.abs())),
                    Val::Typed(e) if e.ty == Type::Bool => err(args[0], "`abs` applies to numbers"),
                    Val::Typed(e) => Ok(Val::Typed(Expr::new(
                        ExprKind::Unary(UnOp::Abs, Arc::new(e.clone())),
                        e.ty,
                    ))),
                }
            }
            "absd" => {
                want(2)?;
                let a = self.expr(args[0], env, ctx)?;
                let b = self.expr(args[1], env, ctx)?;
                let (x, y, ty) = self.unify(a, b, c)?;
                if ty == Type::Bool {
                    return err(c, "`absd` applies to numbers");
                }
                if ty.is_float() {
                    let d = Expr::binary(BinOp::Sub, x, y);
                    return Ok(Val::Typed(Expr::new(
                        ExprKind::Unary(UnOp::Abs, Arc::new(d)),
                        ty,
                    )));
                }
                let u = ty.to_unsigned();
                let (ia, ib) = (self.next_let(), self.next_let());
                Ok(Val::Typed(Expr::bind(ia, x, |x| {
                    Expr::bind(ib, y, |y| {
                        let gt = Expr::binary(BinOp::Gt, x.clone(), y.clone());
                        let (ux, uy) = (Expr::cast(u, x), Expr::cast(u, y));
                        Expr::select(
                            gt,
                            Expr::binary(BinOp::Sub, ux.clone(), uy.clone()),
                            Expr::binary(BinOp::Sub, uy, ux),
                        )
                    })
                })))
            }
            "lerp" => {
                want(3)?;
                let a = self.expr(args[0], env, ctx)?;
                let b = self.expr(args[1], env, ctx)?;
                let t = self.expr(args[2], env, ctx)?;
                let (x, y, ty) = self.unify(a, b, c)?;
                if !ty.is_float() {
                    return err(
                        c,
                        format!("`lerp` interpolates floats, found {ty}; convert with `as f32`"),
                    );
                }
                let t = self.coerce(t, ty, args[2])?;
                let d = Expr::binary(BinOp::Sub, y, x.clone());
                Ok(Val::Typed(Expr::binary(
                    BinOp::Add,
                    x,
                    Expr::binary(BinOp::Mul, d, t),
                )))
            }
            "select" => {
                want(3)?;
                let cond = self.expr(args[0], env, ctx)?;
                let cond = self.coerce(cond, Type::Bool, args[0])?;
                let a = self.expr(args[1], env, ctx)?;
                let b = self.expr(args[2], env, ctx)?;
                let (x, y, _) = self.unify(a, b, c)?;
                Ok(Val::Typed(Expr::select(cond, x, y)))
            }
            "saturating_cast" => {
                want(1)?;
                let ty = match &*c.func {
                    syn::Expr::Path(p) => match &p.path.segments[0].arguments {
                        syn::PathArguments::AngleBracketed(a) if a.args.len() == 1 => {
                            match &a.args[0] {
                                syn::GenericArgument::Type(t) => {
                                    scalar_type(t).filter(|t| *t != Type::Bool)
                                }
                                _ => None,
                            }
                        }
                        _ => None,
                    },
                    _ => None,
                };
                let Some(ty) = ty else {
                    return err(&c.func, "write the target type: `saturating_cast::<u8>(v)`");
                };
                let v = self.expr(args[0], env, ctx)?;
                let e = self.default(v, args[0])?;
                if e.ty == Type::Bool {
                    return err(args[0], "`saturating_cast` converts numbers");
                }
                Ok(Val::Typed(Expr::new(
                    ExprKind::SaturatingCast(Arc::new(e)),
                    ty,
                )))
            }
            "sum" | "product" | "maximum" | "minimum" => self.inline_reduction(name, c, env, ctx),
            "rdom" => err(
                c,
                "`rdom(..)` can only appear in `for r in rdom(..) { ... }`",
            ),
            _ => {
                if let Some(m) = MathFn::from_name(name) {
                    want(m.arity())?;
                    let mut vals = Vec::new();
                    for a in &args {
                        vals.push(self.expr(a, env, ctx)?);
                    }
                    let ty = vals
                        .iter()
                        .filter_map(|v| match v {
                            Val::Typed(e) => Some(e.ty),
                            _ => None,
                        })
                        .next()
                        .unwrap_or(Type::F32);
                    if !ty.is_float() {
                        return err(
                            c,
                            format!("`{name}` takes floats, found {ty}; convert with `as f32`"),
                        );
                    }
                    let mut es = Vec::new();
                    for (v, a) in vals.into_iter().zip(&args) {
                        es.push(self.coerce(v, ty, a)?);
                    }
                    return Ok(Val::Typed(Expr::new(ExprKind::Math(m, es), ty)));
                }
                err(
                    &c.func,
                    format!("unknown name `{name}`: not a func, template or built-in"),
                )
            }
        }
    }

    fn inline_reduction(
        &mut self,
        name: &str,
        c: &'p syn::ExprCall,
        env: &Env,
        ctx: &Ctx,
    ) -> Result<Val> {
        if c.args.len() != 2 {
            return err(
                c,
                format!("`{name}` takes a domain and a closure: `{name}(-1..=1, |i| f(x + i, y))`"),
            );
        }
        let ranges: Vec<&'p syn::Expr> = match &c.args[0] {
            syn::Expr::Tuple(t) => t.elems.iter().collect(),
            syn::Expr::Paren(p) => vec![&*p.expr],
            e => vec![e],
        };
        let mut domain = Vec::new();
        for r in &ranges {
            let syn::Expr::Range(range) = r else {
                return err(r, "the domain of an inline reduction is a constant range `a..b` / `a..=b` or a tuple of them");
            };
            let (Some(s), Some(e)) = (&range.start, &range.end) else {
                return err(range, "the range needs both ends");
            };
            let lo = self.const_int(s, env)?;
            let mut hi = self.const_int(e, env)?;
            if matches!(range.limits, syn::RangeLimits::Closed(_)) {
                hi += 1;
            }
            if hi <= lo {
                return err(range, "the domain of an inline reduction is empty");
            }
            domain.push((lo, hi));
        }
        let count: i128 = domain.iter().map(|(a, b)| b - a).product();
        if count > 4096 {
            return err(&c.args[0], "inline reductions unroll at most 4096 points; use an rdom update for larger domains");
        }
        let syn::Expr::Closure(cl) = &c.args[1] else {
            return err(
                &c.args[1],
                "the second argument is a closure: `|i| ...` or `|(i, j)| ...`",
            );
        };
        let names: Vec<String> = match cl.inputs.iter().collect::<Vec<_>>().as_slice() {
            [syn::Pat::Ident(pi)] => vec![pi.ident.to_string()],
            [syn::Pat::Tuple(t)] => t
                .elems
                .iter()
                .map(|p| match p {
                    syn::Pat::Ident(pi) => Ok(pi.ident.to_string()),
                    o => err(o, "expected a name"),
                })
                .collect::<Result<_>>()?,
            _ => return err(&cl.inputs, "the closure takes one name or a tuple of names"),
        };
        if names.len() != domain.len() {
            return err(
                &cl.inputs,
                format!(
                    "the domain has {} dimension(s) but the closure binds {}",
                    domain.len(),
                    names.len()
                ),
            );
        }
        let op = match name {
            "sum" => BinOp::Add,
            "product" => BinOp::Mul,
            "maximum" => BinOp::Max,
            _ => BinOp::Min,
        };
        // Lexicographic order, first component innermost; a left fold.
        let mut point: Vec<i128> = domain.iter().map(|d| d.0).collect();
        let mut acc: Option<Val> = None;
        loop {
            let mut inner = env.clone();
            for (n, v) in names.iter().zip(&point) {
                inner.insert(n.clone(), Binding::Scalar(Val::IntLit(*v)));
            }
            let term = self.expr(&cl.body, &inner, ctx)?;
            acc = Some(match acc {
                None => term,
                Some(a) => self.apply(op, a, term, &cl.body)?,
            });
            let mut d = 0;
            loop {
                if d == point.len() {
                    return Ok(acc.unwrap());
                }
                point[d] += 1;
                if point[d] < domain[d].1 {
                    break;
                }
                point[d] = domain[d].0;
                d += 1;
            }
        }
    }

    pub(super) fn method(
        &mut self,
        m: &'p syn::ExprMethodCall,
        env: &Env,
        ctx: &Ctx,
    ) -> Result<Val> {
        let method = m.method.to_string();
        match method.as_str() {
            "width" | "height" | "extent" => {
                let Some(f) = self.func_value(&m.receiver, env)? else {
                    return err(&m.receiver, format!("`.{method}()` applies to an input image"));
                };
                let dim = match method.as_str() {
                    "width" => 0,
                    "height" => 1,
                    _ => {
                        if m.args.len() != 1 {
                            return err(m, "`.extent(d)` takes the dimension");
                        }
                        self.const_int(&m.args[0], env)? as usize
                    }
                };
                if method != "extent" && !m.args.is_empty() {
                    return err(m, format!("`.{method}()` takes no arguments"));
                }
                let Some(ext) = self.source_extents(&f) else {
                    return err(&m.receiver, "this func has no known extent");
                };
                match ext.get(dim) {
                    Some((_, e)) => Ok(Val::Typed(e.clone())),
                    None => err(m, format!("dimension {dim} is out of range: the source has {} dimension(s)", ext.len())),
                }
            }
            "clamp_edge" | "mirror" | "mirror_interior" | "wrap" | "constant" => err(
                m,
                format!("`.{method}()` gives a func; call it with coordinates: `{}.{method}()(x, y)`, or bind it: `let b = ....{method}();`", m.receiver.to_token_stream()),
            ),
            _ => {
                let _ = ctx;
                err(&m.method, format!("unknown method `{method}`; methods are `width`, `height`, `extent` and the boundary conditions"))
            }
        }
    }

    fn load(&mut self, f: &FuncRef, c: &'p syn::ExprCall, env: &Env, ctx: &Ctx) -> Result<Val> {
        if let FuncRef::Func(id) = f {
            if self.poisoned.contains(id) {
                return Err(cascade());
            }
        }
        let dims = self.dims_of(f);
        if c.args.len() != dims {
            return err(
                c,
                format!(
                    "`{}` has {} dimension(s) but is called with {} coordinate(s)",
                    c.func.to_token_stream(),
                    dims,
                    c.args.len()
                ),
            );
        }
        if let (FuncRef::Func(id), Some((def, in_update))) = (f, &ctx.defining) {
            if id == def && !in_update {
                return err(
                    c,
                    format!(
                        "`{}` is used in its own pure definition; a recursive definition needs an update: define it first, then `for r in rdom(..) {{ {}(r) = ... }}`",
                        self.pipe.funcs[*id].name, self.pipe.funcs[*id].name
                    ),
                );
            }
        }
        let mut args = Vec::new();
        for a in &c.args {
            let v = self.expr(a, env, ctx)?;
            args.push(self.coordinate(v, a)?);
        }
        let site = self.site(c);
        Ok(Val::Typed(self.load_ref(f, args, site)))
    }

    fn load_ref(&self, f: &FuncRef, args: Vec<Expr>, site: usize) -> Expr {
        match f {
            FuncRef::Func(id) => Expr::new(
                ExprKind::Load {
                    source: Source::Func(*id),
                    args,
                    site,
                },
                self.pipe.funcs[*id].ty,
            ),
            FuncRef::Input(i) => Expr::new(
                ExprKind::Load {
                    source: Source::Input(*i),
                    args,
                    site,
                },
                self.pipe.inputs[*i].ty,
            ),
            FuncRef::Bounded {
                inner,
                mode,
                constant,
            } => {
                let ext = self
                    .source_extents(inner)
                    .expect("checked when the boundary condition was made");
                let wrap = |m: BoundaryMode| -> Vec<Expr> {
                    args.iter()
                        .zip(&ext)
                        .map(|(a, (min, extent))| {
                            Expr::new(
                                ExprKind::Boundary {
                                    mode: m,
                                    coord: Arc::new(a.clone()),
                                    min: Arc::new(min.clone()),
                                    extent: Arc::new(extent.clone()),
                                },
                                Type::I32,
                            )
                        })
                        .collect()
                };
                match constant {
                    None => self.load_ref(inner, wrap(*mode), site),
                    Some(v) => {
                        let inside = args
                            .iter()
                            .zip(&ext)
                            .map(|(a, (min, extent))| {
                                Expr::binary(
                                    BinOp::And,
                                    Expr::binary(BinOp::Ge, a.clone(), min.clone()),
                                    Expr::binary(
                                        BinOp::Lt,
                                        Expr::binary(BinOp::Sub, a.clone(), min.clone()),
                                        extent.clone(),
                                    ),
                                )
                            })
                            .reduce(|x, y| Expr::binary(BinOp::And, x, y))
                            .unwrap_or_else(|| Expr::bool(true));
                        let load = self.load_ref(inner, wrap(BoundaryMode::GuardedClamp), site);
                        Expr::select(inside, load, v.clone())
                    }
                }
            }
        }
    }

    fn dims_of(&self, f: &FuncRef) -> usize {
        match f {
            FuncRef::Func(id) => self.pipe.funcs[*id].dims(),
            FuncRef::Input(i) => self.pipe.inputs[*i].dims,
            FuncRef::Bounded { inner, .. } => self.dims_of(inner),
        }
    }

    pub(super) fn value_type(&self, f: &FuncRef) -> Type {
        match f {
            FuncRef::Func(id) => self.pipe.funcs[*id].ty,
            FuncRef::Input(i) => self.pipe.inputs[*i].ty,
            FuncRef::Bounded { inner, .. } => self.value_type(inner),
        }
    }

    /// `(min, extent)` of each dimension of a source, as i32 expressions.
    pub(super) fn source_extents(&self, f: &FuncRef) -> Option<Vec<(Expr, Expr)>> {
        match f {
            FuncRef::Input(i) => Some(
                (0..self.pipe.inputs[*i].dims)
                    .map(|d| {
                        (
                            Expr::new(ExprKind::InputMin(*i, d), Type::I32),
                            Expr::new(ExprKind::InputExtent(*i, d), Type::I32),
                        )
                    })
                    .collect(),
            ),
            FuncRef::Func(id) => self.pipe.funcs[*id]
                .natural_extent
                .iter()
                .map(|e| e.clone().map(|e| (Expr::i32(0), e)))
                .collect(),
            FuncRef::Bounded { inner, .. } => self.source_extents(inner),
        }
    }

    /// The natural extent of each dimension of a func (the guide's *Sizes*): from
    /// the first read whose coordinate is `a * v + k`, `v / a` or `v + k` of
    /// that dimension's variable.
    pub(super) fn natural_extents(&self, id: FuncId) -> Vec<Option<Expr>> {
        let func = &self.pipe.funcs[id];
        (0..func.dims())
            .map(|d| {
                let mut found = None;
                func.pure.visit(&mut |e| {
                    if found.is_some() {
                        return;
                    }
                    if let ExprKind::Load { source, args, .. } = &e.kind {
                        for (k, a) in args.iter().enumerate() {
                            let Some(scale) = affine_in(a, d) else {
                                continue;
                            };
                            let src = match source {
                                Source::Input(i) => {
                                    Some(Expr::new(ExprKind::InputExtent(*i, k), Type::I32))
                                }
                                Source::Func(g) if *g != id => {
                                    self.pipe.funcs[*g].natural_extent[k].clone()
                                }
                                _ => None,
                            };
                            if let Some(src) = src {
                                found = Some(match scale {
                                    Scale::Same => src,
                                    Scale::Down(a) => Expr::binary(
                                        BinOp::Div,
                                        Expr::binary(BinOp::Add, src, Expr::i32(a - 1)),
                                        Expr::i32(a),
                                    ),
                                    Scale::Up(a) => Expr::binary(BinOp::Mul, src, Expr::i32(a)),
                                });
                                return;
                            }
                        }
                    }
                });
                found.map(|e| crate::analysis::simplify::simplify(&e))
            })
            .collect()
    }

    /// Evaluates a compile-time integer (family indices, loop ranges).
    pub(super) fn const_int(&mut self, e: &'p syn::Expr, env: &Env) -> Result<i128> {
        let ctx = Ctx { defining: None };
        match self.expr(e, env, &ctx)? {
            Val::IntLit(i) => Ok(i),
            Val::Typed(t) if t.as_int().is_some() => Ok(t.as_int().unwrap()),
            _ => err(e, "expected a compile-time integer (literals, compile-time loop variables and arithmetic on them)"),
        }
    }
}

enum Scale {
    Same,
    Down(i128),
    Up(i128),
}

/// Recognizes `v`, `v + k`, `k + v`, `v - k`, `a * v + k`, `v / a` (and the
/// same under a boundary condition) for the pure variable of dimension `d`.
fn affine_in(e: &Expr, d: usize) -> Option<Scale> {
    let only_var = |e: &Expr| {
        let mut ok = true;
        e.visit(&mut |n| {
            if matches!(n.kind, ExprKind::Var(k) if k != d)
                || matches!(
                    n.kind,
                    ExprKind::RVar(_) | ExprKind::Load { .. } | ExprKind::Param(_)
                )
            {
                ok = false;
            }
        });
        ok
    };
    match &e.kind {
        ExprKind::Var(k) if *k == d => Some(Scale::Same),
        ExprKind::Boundary { coord, .. } => affine_in(coord, d),
        ExprKind::Cast(a) => affine_in(a, d),
        ExprKind::Binary(BinOp::Add | BinOp::Sub, a, b) if b.as_int().is_some() && only_var(a) => {
            affine_in(a, d)
        }
        ExprKind::Binary(BinOp::Add, a, b) if a.as_int().is_some() && only_var(b) => {
            affine_in(b, d)
        }
        ExprKind::Binary(BinOp::Mul, a, b) => match (a.as_int(), b.as_int()) {
            (Some(k), None) if k > 0 && matches!(b.kind, ExprKind::Var(v) if v == d) => {
                Some(Scale::Down(k))
            }
            (None, Some(k)) if k > 0 && matches!(a.kind, ExprKind::Var(v) if v == d) => {
                Some(Scale::Down(k))
            }
            _ => None,
        },
        ExprKind::Binary(BinOp::Div, a, b) => match b.as_int() {
            Some(k) if k > 0 && matches!(a.kind, ExprKind::Var(v) if v == d) => Some(Scale::Up(k)),
            _ => None,
        },
        _ => None,
    }
    .map(|s| match s {
        Scale::Same => Scale::Same,
        other => other,
    })
}
