//! Statements of a pipeline body: `let` bindings of views, values and
//! templates, compile-time `for` loops (unrolled), reduction loops over an
//! `rdom`, and definitions (pure and update) of funcs and func families.

use super::*;

impl<'p> Elab<'p> {
    /// Elaborates the statements of a pipeline or template body; returns the
    /// tail expression.
    pub(super) fn body(
        &mut self,
        stmts: &'p [syn::Stmt],
        env: &mut Env,
        prefix: &str,
    ) -> Option<&'p syn::Expr> {
        for (i, stmt) in stmts.iter().enumerate() {
            let last = i + 1 == stmts.len();
            if let syn::Stmt::Expr(e, None) = stmt {
                if last && !matches!(e, syn::Expr::ForLoop(_)) {
                    return Some(e);
                }
            }
            if let Err(e) = self.stmt(stmt, env, prefix) {
                self.errors.push(e);
            }
        }
        None
    }

    fn stmt(&mut self, stmt: &'p syn::Stmt, env: &mut Env, prefix: &str) -> Result<()> {
        match stmt {
            syn::Stmt::Local(local) => self.let_stmt(local, env),
            syn::Stmt::Expr(e, semi) => {
                if semi.is_none() && !matches!(e, syn::Expr::ForLoop(_)) {
                    return err(
                        e,
                        "only the last statement may be the output; end this statement with `;`",
                    );
                }
                match e {
                    syn::Expr::Assign(a) => self.assign(&a.left, None, &a.right, env, prefix, None),
                    syn::Expr::Binary(b) if compound_op(&b.op).is_some() => self.assign(
                        &b.left,
                        compound_op(&b.op),
                        &b.right,
                        env,
                        prefix,
                        None,
                    ),
                    syn::Expr::ForLoop(f) => self.for_loop(f, env, prefix),
                    other => err(
                        other,
                        "expected a definition `f(x, y) = ...;`, an update `f(..) += ...;`, a `let`, or a `for` loop",
                    ),
                }
            }
            syn::Stmt::Item(item) => err(item, "items cannot be declared inside a pipeline body"),
            syn::Stmt::Macro(m) => err(m, "macros cannot be used inside a pipeline body"),
        }
    }

    fn let_stmt(&mut self, local: &'p syn::Local, env: &mut Env) -> Result<()> {
        let syn::Pat::Ident(pi) = &local.pat else {
            return err(&local.pat, "`let` binds a single name");
        };
        let Some(init) = &local.init else {
            return err(local, "`let` needs a value: `let g = input.clamp_edge();`");
        };
        if let Some((_, d)) = &init.diverge {
            return err(d, "`let ... else` is not part of the DSL");
        }
        let name = pi.ident.to_string();
        let binding = match self.func_value(&init.expr, env) {
            Ok(Some(f)) => {
                self.name_template_result(&f, &name);
                Ok(Binding::Func(f))
            }
            Ok(None) => {
                let ctx = Ctx { defining: None };
                self.expr(&init.expr, env, &ctx).map(Binding::Scalar)
            }
            Err(e) => Err(e),
        };
        match binding {
            Ok(b) => {
                env.insert(name, b);
                Ok(())
            }
            Err(e) => {
                env.insert(name, Binding::Poisoned);
                Err(e)
            }
        }
    }

    /// Resolves a func-valued expression: a name bound to a func or input, a
    /// family member `g[i]`, a boundary condition `f.clamp_edge()`, or a
    /// template call. `Ok(None)` when the expression is not func-shaped.
    pub(super) fn func_value(&mut self, e: &'p syn::Expr, env: &Env) -> Result<Option<FuncRef>> {
        match e {
            syn::Expr::Paren(p) => self.func_value(&p.expr, env),
            syn::Expr::Path(_) => {
                let Some(id) = ident_of(e) else {
                    return Ok(None);
                };
                match env.get(&id.to_string()) {
                    Some(Binding::Func(f)) => Ok(Some(f.clone())),
                    Some(Binding::Poisoned) => Err(cascade()),
                    None if self.is_family(&id.to_string()) => err(
                        id,
                        format!("`{id}` is a family of funcs; pick one with an index: `{id}[0]`"),
                    ),
                    _ => Ok(None),
                }
            }
            syn::Expr::Index(ix) => {
                let Some(fam) = ident_of(&ix.expr) else {
                    return err(
                        &ix.expr,
                        "expected the name of a func family, as in `gauss[l - 1]`",
                    );
                };
                let key = match self.family_scopes.last().and_then(|m| m.get(&fam.to_string())) {
                    Some(k) => *k,
                    None => return err(fam, format!("unknown func family `{fam}`; define a member first, e.g. `{fam}[0](x, y) = ...;`")),
                };
                let idx = self.const_int(&ix.index, env)?;
                match self.families[key].get(&idx) {
                    Some(f) => Ok(Some(f.clone())),
                    None => err(ix, format!("`{fam}[{idx}]` is not defined (yet)")),
                }
            }
            syn::Expr::MethodCall(m) => {
                let mode = match m.method.to_string().as_str() {
                    "clamp_edge" => BoundaryMode::ClampEdge,
                    "mirror" => BoundaryMode::Mirror,
                    "mirror_interior" => BoundaryMode::MirrorInterior,
                    "wrap" => BoundaryMode::Wrap,
                    "constant" => BoundaryMode::GuardedClamp,
                    _ => return Ok(None),
                };
                let Some(inner) = self.func_value(&m.receiver, env)? else {
                    return err(
                        &m.receiver,
                        format!("`.{}()` applies to an input or a func", m.method),
                    );
                };
                if self.source_extents(&inner).is_none() {
                    return err(
                        &m.receiver,
                        "a boundary condition needs a source with a known extent: an input, or a func whose size follows from the inputs (like `f(x, y) = input(2 * x, y)`)",
                    );
                }
                let constant = if mode == BoundaryMode::GuardedClamp {
                    if m.args.len() != 1 {
                        return err(m, "`constant(v)` takes the value used outside the source");
                    }
                    let ty = self.value_type(&inner);
                    let ctx = Ctx { defining: None };
                    let v = self.expr(&m.args[0], env, &ctx)?;
                    Some(self.coerce(v, ty, &m.args[0])?)
                } else {
                    if let Some(a) = m.args.first() {
                        return err(a, format!("`.{}()` takes no arguments", m.method));
                    }
                    None
                };
                Ok(Some(FuncRef::Bounded {
                    inner: Box::new(inner),
                    mode,
                    constant,
                }))
            }
            syn::Expr::Call(c) => {
                let Some(name) = ident_of(&c.func) else {
                    return Ok(None);
                };
                let Some(t) = self.templates.iter().position(|t| t.sig.ident == *name) else {
                    return Ok(None);
                };
                if env.contains_key(&name.to_string()) {
                    return Ok(None);
                }
                self.instantiate(t, c, env).map(Some)
            }
            _ => Ok(None),
        }
    }

    fn instantiate(&mut self, t: usize, call: &'p syn::ExprCall, env: &Env) -> Result<FuncRef> {
        let template = &self.templates[t];
        let params: Vec<&syn::PatType> = template
            .sig
            .inputs
            .iter()
            .filter_map(|a| match a {
                syn::FnArg::Typed(p) => Some(p),
                _ => None,
            })
            .collect();
        if params.len() != call.args.len() {
            return err(
                call,
                format!(
                    "template `{}` takes {} argument(s) but {} were given",
                    template.sig.ident,
                    params.len(),
                    call.args.len()
                ),
            );
        }
        if self.depth > 32 {
            return err(
                call,
                "templates nest more than 32 deep; is a template calling itself?",
            );
        }
        let mut inner_env = Env::default();
        for (p, arg) in params.iter().zip(&call.args) {
            let syn::Pat::Ident(pi) = &*p.pat else {
                return err(&p.pat, "expected a parameter name");
            };
            let is_func = matches!(&*p.ty, syn::Type::Path(tp) if tp.path.is_ident("Func"));
            let binding = if is_func {
                match self.func_value(arg, env)? {
                    Some(f) => Binding::Func(f),
                    None => return err(arg, format!("parameter `{}` of `{}` is a Func: pass a func, an input or e.g. `input.clamp_edge()`", pi.ident, template.sig.ident)),
                }
            } else if let Some(ty) = scalar_type(&p.ty) {
                let ctx = Ctx { defining: None };
                let v = self.expr(arg, env, &ctx)?;
                let e = self.coerce(v, ty, arg)?;
                if e.any(&mut |n| matches!(n.kind, ExprKind::Var(_) | ExprKind::RVar(_))) {
                    return err(
                        arg,
                        "a template's scalar argument cannot use pure or reduction variables",
                    );
                }
                Binding::Scalar(Val::Typed(e))
            } else {
                return err(&p.ty, "a template parameter is `Func` or a scalar type");
            };
            inner_env.insert(pi.ident.to_string(), binding);
        }
        self.instance += 1;
        let prefix = format!("{}#{}.", template.sig.ident, self.instance);
        self.depth += 1;
        let templates = self.templates;
        let template = &templates[t];
        let errors_before = self.errors.len();
        self.family_scopes.push(HashMap::default());
        let tail = self.body(&template.block.stmts, &mut inner_env, &prefix);
        self.depth -= 1;
        if self.errors.len() > errors_before {
            self.family_scopes.pop();
            let inner: Vec<Error> = self.errors.drain(errors_before..).collect();
            let mut e = Error::new_spanned(
                call,
                format!("in this use of template `{}`:", template.sig.ident),
            );
            for i in inner {
                e.combine(i);
            }
            return Err(e);
        }
        let result = match tail {
            None => err(
                &template.block,
                "a template ends with the func it returns as its tail expression",
            ),
            Some(tail) => match self.func_value(tail, &inner_env) {
                Ok(Some(f)) => Ok(f),
                Ok(None) => err(tail, "a template must return a func"),
                Err(e) => Err(e),
            },
        };
        self.family_scopes.pop();
        result
    }

    fn for_loop(&mut self, f: &'p syn::ExprForLoop, env: &mut Env, prefix: &str) -> Result<()> {
        if let syn::Expr::Call(c) = &*f.expr {
            if ident_of(&c.func).is_some_and(|i| i == "rdom") {
                return self.rdom_loop(f, c, env, prefix);
            }
        }
        let syn::Expr::Range(range) = &*f.expr else {
            return err(&f.expr, "a `for` loop runs over `rdom(..)` (an update) or a constant range like `1..4` (a compile-time loop)");
        };
        let syn::Pat::Ident(pi) = &*f.pat else {
            return err(&f.pat, "a compile-time loop binds one name");
        };
        let (Some(start), Some(end)) = (&range.start, &range.end) else {
            return err(range, "a compile-time loop needs both ends: `1..4`");
        };
        let lo = self.const_int(start, env)?;
        let mut hi = self.const_int(end, env)?;
        if matches!(range.limits, syn::RangeLimits::Closed(_)) {
            hi += 1;
        }
        if hi - lo > 64 {
            return err(range, "compile-time loops unroll at most 64 iterations");
        }
        for i in lo..hi {
            let mut inner = env.clone();
            inner.insert(pi.ident.to_string(), Binding::Scalar(Val::IntLit(i)));
            for stmt in &f.body.stmts {
                if let Err(e) = self.stmt(stmt, &mut inner, prefix) {
                    self.errors.push(e);
                }
            }
        }
        Ok(())
    }

    fn rdom_loop(
        &mut self,
        f: &'p syn::ExprForLoop,
        call: &'p syn::ExprCall,
        env: &mut Env,
        prefix: &str,
    ) -> Result<()> {
        let names: Vec<&syn::Ident> = match &*f.pat {
            syn::Pat::Ident(pi) => vec![&pi.ident],
            syn::Pat::Tuple(t) => t
                .elems
                .iter()
                .map(|p| match p {
                    syn::Pat::Ident(pi) => Ok(&pi.ident),
                    other => err(other, "expected a reduction variable name"),
                })
                .collect::<Result<_>>()?,
            other => return err(other, "bind the reduction variables: `for r in rdom(..)` or `for (rx, ry) in rdom(.., ..)`"),
        };
        if names.len() != call.args.len() {
            return err(
                &f.pat,
                format!(
                    "rdom has {} dimension(s) but the pattern binds {} name(s)",
                    call.args.len(),
                    names.len()
                ),
            );
        }
        if call.args.is_empty() {
            return err(call, "rdom needs at least one range, e.g. `rdom(0..256)`");
        }
        let mut rdom = Vec::new();
        let ctx = Ctx { defining: None };
        for (name, arg) in names.iter().zip(&call.args) {
            let syn::Expr::Range(r) = arg else {
                return err(
                    arg,
                    "each rdom dimension is a range `min..end` or `min..=max`",
                );
            };
            let (Some(start), Some(end)) = (&r.start, &r.end) else {
                return err(r, "an rdom range needs both ends");
            };
            let lo = self.expr(start, env, &ctx)?;
            let lo = self.coerce(lo, Type::I32, start)?;
            let hi = self.expr(end, env, &ctx)?;
            let hi = self.coerce(hi, Type::I32, end)?;
            let mut extent = Expr::binary(BinOp::Sub, hi, lo.clone());
            if matches!(r.limits, syn::RangeLimits::Closed(_)) {
                extent = Expr::binary(BinOp::Add, extent, Expr::i32(1));
            }
            for e in [&lo, &extent] {
                if e.any(&mut |n| {
                    matches!(
                        n.kind,
                        ExprKind::Var(_) | ExprKind::RVar(_) | ExprKind::Load { .. }
                    )
                }) {
                    return err(
                        r,
                        "rdom bounds may use scalar parameters, input extents and constants only",
                    );
                }
            }
            rdom.push(RDomDim {
                name: name.to_string(),
                min: lo,
                extent: crate::analysis::simplify::simplify(&extent),
            });
            self.rvar_names.push(name.to_string());
        }
        let mut inner = env.clone();
        for (i, name) in names.iter().enumerate() {
            inner.insert(name.to_string(), Binding::RVar(i));
        }
        for stmt in &f.body.stmts {
            let r = match stmt {
                syn::Stmt::Expr(syn::Expr::Assign(a), Some(_)) => {
                    self.assign(&a.left, None, &a.right, &mut inner, prefix, Some(&rdom))
                }
                syn::Stmt::Expr(syn::Expr::Binary(b), Some(_)) if compound_op(&b.op).is_some() => self.assign(
                    &b.left,
                    compound_op(&b.op),
                    &b.right,
                    &mut inner,
                    prefix,
                    Some(&rdom),
                ),
                syn::Stmt::Local(l) => self.let_stmt(l, &mut inner),
                syn::Stmt::Expr(syn::Expr::ForLoop(fl), _) => err(
                    fl,
                    "rdom loops do not nest; use one rdom with several dimensions: `for (rx, ry) in rdom(a..b, c..d)`",
                ),
                other => err(other, "an rdom loop body holds updates like `f(r) += ...;` (each ending with `;`)"),
            };
            if let Err(e) = r {
                self.errors.push(e);
            }
        }
        Ok(())
    }

    /// `lhs = rhs` or `lhs op= rhs`: a pure definition, an update, or the
    /// binding of a family member to a func value.
    #[allow(clippy::too_many_arguments)]
    fn assign(
        &mut self,
        lhs: &'p syn::Expr,
        op: Option<BinOp>,
        rhs: &'p syn::Expr,
        env: &mut Env,
        prefix: &str,
        rdom: Option<&Vec<RDomDim>>,
    ) -> Result<()> {
        match lhs {
            syn::Expr::Call(call) => {
                let target = self.definition_target(&call.func, env)?;
                match target {
                    Target::Existing(id) => self.update(
                        id,
                        call,
                        op,
                        rhs,
                        env,
                        rdom.map(|r| r.as_slice()).unwrap_or(&[]),
                    ),
                    Target::New { name, family } => {
                        if op.is_some() || rdom.is_some() {
                            if family.is_none() {
                                env.insert(name.clone(), Binding::Poisoned);
                            }
                            let what = if op.is_some() {
                                "updated"
                            } else {
                                "updated in an rdom loop"
                            };
                            return err(
                                lhs,
                                format!("`{name}` is {what} before it is defined; give it a pure definition first, e.g. `{name}(i) = 0;`"),
                            );
                        }
                        let id = self.pipe.funcs.len();
                        let result = self.pure_definition(
                            &format!("{prefix}{name}"),
                            &name,
                            family,
                            call,
                            rhs,
                            env,
                        );
                        if self.pipe.funcs.len() > id {
                            // Bind the name even when its definition failed, so
                            // that later uses do not report it as unknown.
                            if result.is_err() {
                                self.poisoned.push(id);
                            }
                            match family {
                                Some((key, idx)) => {
                                    self.families[key].insert(idx, FuncRef::Func(id));
                                }
                                None => {
                                    env.insert(name, Binding::Func(FuncRef::Func(id)));
                                }
                            }
                        }
                        result.map(|_| ())
                    }
                }
            }
            syn::Expr::Index(ix) => {
                if op.is_some() || rdom.is_some() {
                    return err(
                        lhs,
                        "a func family member is bound with `g[i] = template(..);`",
                    );
                }
                let (key, idx, name) = self.family_slot(ix, env)?;
                if self.families[key].contains_key(&idx) {
                    return err(lhs, format!("`{name}[{idx}]` is already defined"));
                }
                let Some(f) = self.func_value(rhs, env)? else {
                    return err(rhs, "the right-hand side must be a func, e.g. a template call `down2(gauss[l - 1])`");
                };
                self.name_template_result(&f, &format!("{prefix}{name}[{idx}]"));
                self.families[key].insert(idx, f);
                Ok(())
            }
            syn::Expr::Path(_) => {
                let name = ident_of(lhs).map(|i| i.to_string()).unwrap_or_default();
                err(lhs, format!("to name a func value write `let {name} = ...;`; to define a func write `{name}(x, y) = ...;`"))
            }
            other => err(other, "expected a func definition like `f(x, y) = ...`"),
        }
    }

    /// Gives the result func of a template instance the name it is bound to,
    /// and the instance's other funcs names under it (`gauss[1].reduce_x` for
    /// `reduce_x` of the `down2` call bound to `gauss[1]`), so that a
    /// schedule can name them.
    fn name_template_result(&mut self, f: &FuncRef, name: &str) {
        let FuncRef::Func(id) = f else {
            return;
        };
        let old = self.pipe.funcs[*id].name.clone();
        if !old.contains('#') || self.pipe.funcs.iter().any(|g| g.name == name) {
            return;
        }
        // The instance's prefix: `down2#3.` of `down2#3.reduce`.
        let instance = match old.find('.') {
            Some(dot) => old[..=dot].to_string(),
            None => old.clone(),
        };
        for g in &mut self.pipe.funcs {
            if g.name == old {
                g.name = name.to_string();
            } else if let Some(rest) = g.name.strip_prefix(&instance) {
                g.name = format!("{name}.{rest}");
            }
        }
    }

    fn family_slot(&mut self, ix: &'p syn::ExprIndex, env: &Env) -> Result<(usize, i128, String)> {
        let Some(fam) = ident_of(&ix.expr) else {
            return err(&ix.expr, "expected a func family name, as in `gauss[0]`");
        };
        let name = fam.to_string();
        let idx = self.const_int(&ix.index, env)?;
        let key = match env.get(&name) {
            Some(_) => {
                return err(
                    fam,
                    format!("`{name}` is already a func or value, not a family"),
                )
            }
            None => match self.family_scopes.last().and_then(|m| m.get(&name)) {
                Some(k) => *k,
                None => {
                    self.families.push(HashMap::default());
                    self.family_names.push(name.clone());
                    if let Some(m) = self.family_scopes.last_mut() {
                        m.insert(name.clone(), self.families.len() - 1);
                    }
                    self.families.len() - 1
                }
            },
        };
        Ok((key, idx, name))
    }

    fn definition_target(&mut self, callee: &'p syn::Expr, env: &Env) -> Result<Target> {
        match callee {
            syn::Expr::Index(ix) => {
                let (key, idx, name) = self.family_slot(ix, env)?;
                Ok(match self.families[key].get(&idx) {
                    Some(FuncRef::Func(id)) => Target::Existing(*id),
                    Some(_) => {
                        return err(
                            callee,
                            "this family member is not a func that can be updated",
                        )
                    }
                    None => Target::New {
                        name: format!("{name}[{idx}]"),
                        family: Some((key, idx)),
                    },
                })
            }
            _ => {
                let Some(id) = ident_of(callee) else {
                    return err(callee, "expected a func name");
                };
                let name = id.to_string();
                match env.get(&name) {
                    Some(Binding::Func(FuncRef::Func(f))) => Ok(Target::Existing(*f)),
                    Some(Binding::Func(FuncRef::Input(_))) => err(
                        id,
                        format!("`{name}` is an input image and cannot be defined"),
                    ),
                    Some(Binding::Func(_)) => err(
                        id,
                        format!(
                            "`{name}` is a view through a boundary condition and cannot be defined"
                        ),
                    ),
                    Some(Binding::Scalar(_)) | Some(Binding::Var(_)) | Some(Binding::RVar(_)) => {
                        err(id, format!("`{name}` is a scalar value, not a func"))
                    }
                    Some(Binding::Poisoned) => Err(cascade()),
                    None if self.is_family(&name) => err(
                        id,
                        format!(
                            "`{name}` is a func family; define a member: `{name}[0](x, y) = ...`"
                        ),
                    ),
                    None => {
                        if is_reserved(&name) {
                            return err(
                                id,
                                format!("`{name}` is a built-in and cannot name a func"),
                            );
                        }
                        Ok(Target::New { name, family: None })
                    }
                }
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn pure_definition(
        &mut self,
        name: &str,
        local: &str,
        family: Option<(usize, i128)>,
        call: &'p syn::ExprCall,
        rhs: &'p syn::Expr,
        env: &Env,
    ) -> Result<FuncId> {
        let mut vars = Vec::new();
        let mut inner = env.clone();
        for arg in &call.args {
            let Some(v) = ident_of(arg) else {
                return err(
                    arg,
                    "the arguments of a pure definition are distinct variable names, as in `f(x, y) = ...`; to set particular points use an update over an rdom",
                );
            };
            let vname = v.to_string();
            if vars.contains(&vname) {
                return err(v, format!("variable `{vname}` appears twice"));
            }
            if matches!(env.get(&vname), Some(Binding::Func(_))) || self.is_family(&vname) {
                return err(
                    v,
                    format!("`{vname}` names a func; pick another variable name"),
                );
            }
            inner.insert(vname.clone(), Binding::Var(vars.len()));
            vars.push(vname);
        }
        if vars.len() > 4 {
            return err(call, "funcs have at most 4 dimensions");
        }
        let id = self.pipe.funcs.len();
        self.pipe.funcs.push(Func {
            name: name.to_string(),
            natural_extent: vec![None; vars.len()],
            vars,
            ty: Type::I32,
            pure: Expr::i32(0),
            updates: Vec::new(),
        });
        // The func is visible in its own definition, so that using it there
        // is reported as recursion rather than as an unknown name.
        match family {
            Some((key, idx)) => {
                self.families[key].insert(idx, FuncRef::Func(id));
            }
            None => {
                inner.insert(local.to_string(), Binding::Func(FuncRef::Func(id)));
            }
        }
        let ctx = Ctx {
            defining: Some((id, false)),
        };
        let value = self.expr(rhs, &inner, &ctx)?;
        let value = fold_constants(&self.default(value, rhs)?);
        self.pipe.funcs[id].ty = value.ty;
        self.pipe.funcs[id].pure = value;
        self.pipe.funcs[id].natural_extent = self.natural_extents(id);
        Ok(id)
    }

    fn update(
        &mut self,
        id: FuncId,
        call: &'p syn::ExprCall,
        op: Option<BinOp>,
        rhs: &'p syn::Expr,
        env: &Env,
        rdom: &[RDomDim],
    ) -> Result<()> {
        let func = self.pipe.funcs[id].clone();
        if call.args.len() != func.dims() {
            return err(
                call,
                format!(
                    "`{}` has {} dimension(s) but is given {} coordinate(s)",
                    func.name,
                    func.dims(),
                    call.args.len()
                ),
            );
        }
        let mut inner = env.clone();
        let ctx = Ctx {
            defining: Some((id, true)),
        };
        // Unbound plain names on the left are the update's pure variables.
        for (d, arg) in call.args.iter().enumerate() {
            if let Some(v) = ident_of(arg) {
                inner.entry(v.to_string()).or_insert(Binding::Var(d));
            }
        }
        // A plain name on the left is a pure variable of the update, at its
        // position: the update runs for each of its values, and each writes
        // only its own slice of the func. A computed coordinate may read
        // them (a gather: `grid(x, y, level(8 * x + rx, 8 * y + ry)) += ..`
        // writes only column `(x, y)` of `grid`).
        let mut args = Vec::new();
        for (d, arg) in call.args.iter().enumerate() {
            let v = self.expr(arg, &inner, &ctx)?;
            let e = self.coordinate(v, arg)?;
            if let ExprKind::Var(k) = e.kind {
                if k != d {
                    return err(
                        arg,
                        format!(
                            "this pure variable is already the coordinate of position {k}: a pure variable of an update appears by itself at one position (use a reduction variable to write along a diagonal)"
                        ),
                    );
                }
            }
            args.push(e);
        }
        let site = self.site(call);
        let v = self.expr(rhs, &inner, &ctx)?;
        let value = match op {
            None => self.coerce(v, func.ty, rhs)?,
            Some(op) => {
                let old = Expr::new(
                    ExprKind::Load {
                        source: Source::Func(id),
                        args: args.clone(),
                        site,
                    },
                    func.ty,
                );
                let rhs_e = self.coerce(v, func.ty, rhs)?;
                Expr::binary(op, old, rhs_e)
            }
        };
        // A pure variable's iterations must be independent (so that loops
        // over it can be reordered and run in parallel): the func itself is
        // read only at that variable in its own dimension.
        let mut shifted = None;
        value.visit(&mut |n| {
            if let ExprKind::Load {
                source: Source::Func(g),
                args: read,
                site,
            } = &n.kind
            {
                for (d, a) in args.iter().enumerate() {
                    if *g == id && matches!(a.kind, ExprKind::Var(_)) && read[d] != *a {
                        shifted.get_or_insert((*site, d));
                    }
                }
            }
        });
        if let Some((site, d)) = shifted {
            let call = self.sites[site];
            return err(
                coordinate_tokens(call, d),
                format!(
                    "an update reads `{}` at pure variable `{}` of the left-hand side only as `{}` itself (its points are updated independently); to read other points make it a reduction variable",
                    func.name, func.vars[d], func.vars[d]
                ),
            );
        }
        self.pipe.funcs[id].updates.push(Update {
            rdom: rdom.to_vec(),
            args: args.iter().map(fold_constants).collect(),
            value: fold_constants(&value),
            site,
        });
        Ok(())
    }
}

enum Target {
    Existing(FuncId),
    New {
        name: String,
        family: Option<(usize, i128)>,
    },
}

fn compound_op(op: &syn::BinOp) -> Option<BinOp> {
    Some(match op {
        syn::BinOp::AddAssign(_) => BinOp::Add,
        syn::BinOp::SubAssign(_) => BinOp::Sub,
        syn::BinOp::MulAssign(_) => BinOp::Mul,
        syn::BinOp::DivAssign(_) => BinOp::Div,
        syn::BinOp::RemAssign(_) => BinOp::Rem,
        syn::BinOp::BitAndAssign(_) => BinOp::And,
        syn::BinOp::BitOrAssign(_) => BinOp::Or,
        syn::BinOp::BitXorAssign(_) => BinOp::Xor,
        syn::BinOp::ShlAssign(_) => BinOp::Shl,
        syn::BinOp::ShrAssign(_) => BinOp::Shr,
        _ => return None,
    })
}

fn is_reserved(name: &str) -> bool {
    matches!(
        name,
        "min"
            | "max"
            | "clamp"
            | "abs"
            | "absd"
            | "lerp"
            | "select"
            | "saturating_cast"
            | "sum"
            | "product"
            | "maximum"
            | "minimum"
            | "rdom"
    ) || MathFn::from_name(name).is_some()
}
