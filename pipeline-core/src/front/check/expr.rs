//! Expressions: literals, names, operators with the promotion rules of
//! the guide's *Expressions and types*, casts, and block values.

use super::*;
use std::sync::Arc;

impl<'p> Elab<'p> {
    pub(super) fn expr(&mut self, e: &'p syn::Expr, env: &Env, ctx: &Ctx) -> Result<Val> {
        crate::deep(|| self.expr_here(e, env, ctx))
    }

    fn expr_here(&mut self, e: &'p syn::Expr, env: &Env, ctx: &Ctx) -> Result<Val> {
        match e {
            syn::Expr::Lit(l) => self.literal(&l.lit),
            syn::Expr::Paren(p) => self.expr(&p.expr, env, ctx),
            syn::Expr::Group(g) => self.expr(&g.expr, env, ctx),
            syn::Expr::Path(_) => self.name(e, env),
            syn::Expr::Unary(u) => {
                let v = self.expr(&u.expr, env, ctx)?;
                match u.op {
                    syn::UnOp::Neg(_) => match v {
                        Val::IntLit(i) => Ok(Val::IntLit(-i)),
                        Val::FloatLit(f) => Ok(Val::FloatLit(-f)),
                        Val::Typed(t) if t.ty == Type::Bool => err(u, "cannot negate a bool; use `!`"),
                        Val::Typed(t) => Ok(Val::Typed(Expr::new(ExprKind::Unary(UnOp::Neg, Arc::new(t.clone())), t.ty))),
                    },
                    syn::UnOp::Not(_) => match v {
                        Val::IntLit(i) => Ok(Val::IntLit(!i)),
                        Val::FloatLit(_) => err(u, "`!` applies to bools and integers"),
                        Val::Typed(t) if t.ty.is_float() => err(u, "`!` applies to bools and integers"),
                        Val::Typed(t) => Ok(Val::Typed(Expr::new(ExprKind::Unary(UnOp::Not, Arc::new(t.clone())), t.ty))),
                    },
                    _ => err(u, "this operator is not part of the DSL"),
                }
            }
            syn::Expr::Binary(b) => self.binary(b, env, ctx),
            syn::Expr::Cast(c) => {
                let Some(ty) = scalar_type(&c.ty) else {
                    return err(&c.ty, "cast to a scalar type: u8 u16 u32 u64 i8 i16 i32 i64 f32 f64");
                };
                let v = self.expr(&c.expr, env, ctx)?;
                self.cast(v, ty, c)
            }
            syn::Expr::Call(c) => self.call(c, env, ctx),
            syn::Expr::MethodCall(m) => self.method(m, env, ctx),
            syn::Expr::If(i) => {
                let cond = self.expr(&i.cond, env, ctx)?;
                let cond = self.coerce(cond, Type::Bool, &i.cond)?;
                let a = self.block_value(&i.then_branch.stmts, env, ctx, &i.then_branch)?;
                let Some((_, else_e)) = &i.else_branch else {
                    return err(i, "`if` needs an `else` branch: both branches give the value");
                };
                let b = self.expr(else_e, env, ctx)?;
                let (a, b, _) = self.unify(a, b, i)?;
                Ok(Val::Typed(Expr::select(cond, a, b)))
            }
            syn::Expr::Block(b) => self.block_value(&b.block.stmts, env, ctx, b),
            syn::Expr::Index(ix) => err(ix, "a func family member must be called with coordinates: `g[1](x, y)`"),
            syn::Expr::Range(r) => err(r, "a range can only appear in `rdom(..)`, an inline reduction like `sum(-1..=1, |i| ..)` or a compile-time `for` loop"),
            syn::Expr::Closure(c) => err(c, "closures can only appear as the body of an inline reduction: `sum(-1..=1, |i| ..)`"),
            other => err(other, "this kind of expression is not part of the DSL"),
        }
    }

    fn block_value(
        &mut self,
        stmts: &'p [syn::Stmt],
        env: &Env,
        ctx: &Ctx,
        whole: impl ToTokens,
    ) -> Result<Val> {
        let mut inner = env.clone();
        // Typed values are bound once (a `Let` node), not substituted at every
        // use, so nested lets cannot grow the code exponentially.
        let mut bound: Vec<(usize, Expr)> = Vec::new();
        for (i, s) in stmts.iter().enumerate() {
            match s {
                syn::Stmt::Local(l) => {
                    let syn::Pat::Ident(pi) = &l.pat else {
                        return err(&l.pat, "`let` binds a single name");
                    };
                    let Some(init) = &l.init else {
                        return err(l, "`let` needs a value");
                    };
                    let v = match self.expr(&init.expr, &inner, ctx)? {
                        Val::Typed(e) if !fold_constants(&e).is_cheap_leaf() => {
                            let id = self.next_let();
                            let var = Expr::new(ExprKind::LetVar(id), e.ty);
                            bound.push((id, e));
                            Val::Typed(var)
                        }
                        other => other,
                    };
                    inner.insert(pi.ident.to_string(), Binding::Scalar(v));
                }
                syn::Stmt::Expr(e, None) if i + 1 == stmts.len() => {
                    let value = self.expr(e, &inner, ctx)?;
                    if bound.is_empty() {
                        return Ok(value);
                    }
                    let mut body = self.default(value, e)?;
                    for (id, v) in bound.into_iter().rev() {
                        let ty = body.ty;
                        body = Expr::new(
                            ExprKind::Let {
                                id,
                                value: Arc::new(v),
                                body: Arc::new(body),
                            },
                            ty,
                        );
                    }
                    return Ok(Val::Typed(body));
                }
                other => return err(other, "a block holds `let` bindings followed by its value"),
            }
        }
        err(whole, "this block has no value; end it with an expression")
    }

    pub(super) fn next_let(&mut self) -> usize {
        self.lets += 1;
        self.lets
    }

    fn literal(&mut self, lit: &syn::Lit) -> Result<Val> {
        match lit {
            syn::Lit::Int(i) => {
                let v: i128 = match i.base10_parse::<u128>() {
                    Ok(v) if v <= i128::MAX as u128 => v as i128,
                    _ => return err(i, "integer literal is too large"),
                };
                match i.suffix() {
                    "" => Ok(Val::IntLit(v)),
                    s => match Type::from_name(s) {
                        Some(t) if t.is_int() => {
                            if v > t.int_max() {
                                return err(
                                    i,
                                    format!(
                                        "literal {v} does not fit in {t} (max {})",
                                        t.int_max()
                                    ),
                                );
                            }
                            Ok(Val::Typed(Expr::int(t, v)))
                        }
                        Some(t) if t.is_float() => Ok(Val::Typed(Expr::float(t, v as f64))),
                        _ => err(i, format!("unknown literal suffix `{s}`")),
                    },
                }
            }
            syn::Lit::Float(f) => {
                let v: f64 = f
                    .base10_parse()
                    .map_err(|_| Error::new_spanned(f, "bad float literal"))?;
                match f.suffix() {
                    "" => Ok(Val::FloatLit(v)),
                    "f32" => Ok(Val::Typed(Expr::float(Type::F32, v))),
                    "f64" => Ok(Val::Typed(Expr::float(Type::F64, v))),
                    s => err(f, format!("unknown literal suffix `{s}`")),
                }
            }
            syn::Lit::Bool(b) => Ok(Val::Typed(Expr::bool(b.value))),
            other => err(
                other,
                "only numbers and `true`/`false` are literals in the DSL",
            ),
        }
    }

    pub(super) fn name(&mut self, e: &'p syn::Expr, env: &Env) -> Result<Val> {
        let Some(id) = ident_of(e) else {
            return err(e, "expected a name; paths are not part of the DSL");
        };
        let name = id.to_string();
        match env.get(&name) {
            Some(Binding::Var(d)) => Ok(Val::Typed(Expr::new(ExprKind::Var(*d), Type::I32))),
            Some(Binding::RVar(r)) => Ok(Val::Typed(Expr::new(ExprKind::RVar(*r), Type::I32))),
            Some(Binding::Scalar(v)) => Ok(v.clone()),
            Some(Binding::Poisoned) => Err(cascade()),
            None if self.is_family(&name) => err(
                id,
                format!("`{name}` is a func family; call a member: `{name}[0](x, y)`"),
            ),
            Some(Binding::Func(_)) => err(
                id,
                format!("`{name}` is a func; call it with coordinates, e.g. `{name}(x, y)`"),
            ),
            None => {
                if self.rvar_names.contains(&name) {
                    err(id, format!("`{name}` is a reduction variable and is only visible inside its `for .. in rdom(..)` loop"))
                } else if self.templates.iter().any(|t| t.sig.ident == name) {
                    err(
                        id,
                        format!("`{name}` is a template; call it with funcs: `{name}(f)`"),
                    )
                } else {
                    err(id, format!("unknown name `{name}`"))
                }
            }
        }
    }

    fn binary(&mut self, b: &'p syn::ExprBinary, env: &Env, ctx: &Ctx) -> Result<Val> {
        use syn::BinOp as S;
        let op = match b.op {
            S::Add(_) => BinOp::Add,
            S::Sub(_) => BinOp::Sub,
            S::Mul(_) => BinOp::Mul,
            S::Div(_) => BinOp::Div,
            S::Rem(_) => BinOp::Rem,
            S::BitAnd(_) | S::And(_) => BinOp::And,
            S::BitOr(_) | S::Or(_) => BinOp::Or,
            S::BitXor(_) => BinOp::Xor,
            S::Shl(_) => BinOp::Shl,
            S::Shr(_) => BinOp::Shr,
            S::Eq(_) => BinOp::Eq,
            S::Ne(_) => BinOp::Ne,
            S::Lt(_) => BinOp::Lt,
            S::Le(_) => BinOp::Le,
            S::Gt(_) => BinOp::Gt,
            S::Ge(_) => BinOp::Ge,
            _ => return err(b, "compound assignment is a statement: `f(x) += 1;`"),
        };
        let logical = matches!(b.op, S::And(_) | S::Or(_));
        let a = self.expr(&b.left, env, ctx)?;
        let c = self.expr(&b.right, env, ctx)?;
        if logical {
            let a = self.coerce(a, Type::Bool, &b.left)?;
            let c = self.coerce(c, Type::Bool, &b.right)?;
            return Ok(Val::Typed(Expr::binary(op, a, c)));
        }
        self.apply(op, a, c, b)
    }

    /// Applies a binary operator with the typing rules (the guide's *Expressions and types*).
    pub(super) fn apply(&mut self, op: BinOp, a: Val, c: Val, at: &dyn ToTokens) -> Result<Val> {
        // Literal with literal: fold, keeping the result untyped.
        match (&a, &c) {
            (Val::IntLit(x), Val::IntLit(y)) => {
                let (x, y) = (*x, *y);
                let v = match op {
                    BinOp::Add => x.checked_add(y),
                    BinOp::Sub => x.checked_sub(y),
                    BinOp::Mul => x.checked_mul(y),
                    BinOp::Div => Some(if y == 0 { 0 } else { x.div_euclid(y) }),
                    BinOp::Rem => Some(if y == 0 { 0 } else { x.rem_euclid(y) }),
                    BinOp::Min => Some(x.min(y)),
                    BinOp::Max => Some(x.max(y)),
                    BinOp::And => Some(x & y),
                    BinOp::Or => Some(x | y),
                    BinOp::Xor => Some(x ^ y),
                    _ => None,
                };
                if let Some(v) = v {
                    return Ok(Val::IntLit(v));
                }
            }
            (Val::IntLit(_) | Val::FloatLit(_), Val::IntLit(_) | Val::FloatLit(_))
                if matches!(
                    op,
                    BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Min | BinOp::Max
                ) =>
            {
                let f = |v: &Val| match v {
                    Val::IntLit(i) => *i as f64,
                    Val::FloatLit(f) => *f,
                    _ => 0.0,
                };
                let (x, y) = (f(&a), f(&c));
                return Ok(Val::FloatLit(match op {
                    BinOp::Add => x + y,
                    BinOp::Sub => x - y,
                    BinOp::Mul => x * y,
                    BinOp::Div => x / y,
                    BinOp::Min => x.min(y),
                    _ => x.max(y),
                }));
            }
            _ => {}
        }
        if matches!(op, BinOp::Shl | BinOp::Shr) {
            let a = match a {
                Val::Typed(t) => t,
                other => self.default(other, at)?,
            };
            if !a.ty.is_int() {
                return err(at, format!("shifts apply to integers, not {}", a.ty));
            }
            let c = match c {
                Val::IntLit(i) => Expr::int(a.ty, i),
                Val::Typed(t) if t.ty.is_int() => t,
                _ => return err(at, "the shift amount must be an integer"),
            };
            return Ok(Val::Typed(Expr::binary(op, a, c)));
        }
        let (x, y, ty) = self.unify(a, c, at)?;
        let bad = match op {
            BinOp::And | BinOp::Or | BinOp::Xor => ty.is_float(),
            BinOp::Eq | BinOp::Ne => false,
            _ if op.is_comparison() => ty == Type::Bool,
            _ => ty == Type::Bool,
        };
        if bad {
            return err(
                at,
                format!("operator `{}` does not apply to {}", op.symbol(), ty),
            );
        }
        Ok(Val::Typed(Expr::binary(op, x, y)))
    }

    /// Brings two values to a common type (the guide's *Expressions and types*).
    pub(super) fn unify(
        &mut self,
        a: Val,
        b: Val,
        at: &dyn ToTokens,
    ) -> Result<(Expr, Expr, Type)> {
        let ty = match (&a, &b) {
            (Val::Typed(x), Val::Typed(y)) => match Type::unify(x.ty, y.ty) {
                Some(t) => t,
                None => {
                    return err(
                        at,
                        format!(
                            "mismatched types {} and {}; convert one side with `as`",
                            x.ty, y.ty
                        ),
                    )
                }
            },
            (Val::Typed(x), Val::IntLit(_)) | (Val::IntLit(_), Val::Typed(x)) => x.ty,
            (Val::Typed(x), Val::FloatLit(_)) | (Val::FloatLit(_), Val::Typed(x)) => {
                if x.ty.is_float() {
                    x.ty
                } else if x.ty == Type::Bool {
                    return err(at, "mismatched types bool and a float literal");
                } else {
                    Type::F32
                }
            }
            (Val::FloatLit(_), _) | (_, Val::FloatLit(_)) => Type::F32,
            _ => Type::I32,
        };
        let x = self.coerce_promote(a, ty, at)?;
        let y = self.coerce_promote(b, ty, at)?;
        Ok((x, y, ty))
    }

    /// Like [`Self::coerce`] but allows the implicit promotions of `unify`.
    fn coerce_promote(&mut self, v: Val, ty: Type, at: &dyn ToTokens) -> Result<Expr> {
        match v {
            Val::Typed(e) if e.ty != ty => Ok(Expr::cast(ty, e)),
            other => self.coerce(other, ty, at),
        }
    }

    /// Gives a value exactly type `ty`: literals take it (if they fit), typed
    /// values must already have it.
    pub(super) fn coerce(&mut self, v: Val, ty: Type, at: &dyn ToTokens) -> Result<Expr> {
        match v {
            Val::IntLit(i) => {
                if ty == Type::Bool {
                    err(at, "expected a bool, found an integer")
                } else if ty.is_float() {
                    Ok(Expr::float(ty, i as f64))
                } else if i < ty.int_min() || i > ty.int_max() {
                    err(
                        at,
                        format!(
                            "literal {i} does not fit in {ty} ({}..={})",
                            ty.int_min(),
                            ty.int_max()
                        ),
                    )
                } else {
                    Ok(Expr::int(ty, i))
                }
            }
            Val::FloatLit(f) => {
                if ty.is_float() {
                    Ok(Expr::float(ty, f))
                } else {
                    err(at, format!("expected {ty}, found a float literal"))
                }
            }
            Val::Typed(e) => {
                if e.ty == ty {
                    Ok(e)
                } else {
                    err(
                        at,
                        format!("expected {ty}, found {}; convert with `as {ty}`", e.ty),
                    )
                }
            }
        }
    }

    /// A lone value: integer literals are i32, float literals f32.
    pub(super) fn default(&mut self, v: Val, at: &dyn ToTokens) -> Result<Expr> {
        match v {
            Val::IntLit(i) => {
                if i < i32::MIN as i128 || i > i32::MAX as i128 {
                    err(at, format!("literal {i} does not fit in i32; give it a type with a suffix such as `{i}i64`"))
                } else {
                    Ok(Expr::i32(i))
                }
            }
            Val::FloatLit(f) => Ok(Expr::float(Type::F32, f)),
            Val::Typed(e) => Ok(e),
        }
    }

    pub(super) fn coordinate(&mut self, v: Val, at: &dyn ToTokens) -> Result<Expr> {
        let e = self.default(v, at)?;
        if e.ty.is_int() {
            Ok(Expr::cast(Type::I32, e))
        } else {
            err(
                at,
                format!(
                    "a coordinate must be an integer, found {}; convert with `as i32`",
                    e.ty
                ),
            )
        }
    }

    fn cast(&mut self, v: Val, ty: Type, at: &dyn ToTokens) -> Result<Val> {
        let e = match v {
            Val::IntLit(i) if ty.is_int() => return Ok(Val::Typed(Expr::int(ty, i))),
            Val::IntLit(i) if ty.is_float() => return Ok(Val::Typed(Expr::float(ty, i as f64))),
            Val::FloatLit(f) if ty.is_float() => return Ok(Val::Typed(Expr::float(ty, f))),
            other => self.default(other, at)?,
        };
        if ty == Type::Bool && e.ty != Type::Bool {
            return err(at, "cannot cast to bool; compare instead, e.g. `v != 0`");
        }
        if e.ty == Type::Bool && ty.is_float() {
            return err(at, "cannot cast bool to a float; cast to an integer first");
        }
        Ok(Val::Typed(Expr::cast(ty, e)))
    }
}
