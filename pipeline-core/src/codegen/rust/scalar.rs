//! The scalar emitter: expressions as Rust expressions of one lane (a
//! loop's body where it is not vectorized, coordinates, bounds, and the
//! lane loops of the vector emitter), with the DSL's semantics.

use super::*;

/// Symbol `s` of the bounds program: `__s[s]`.
pub(super) fn sym(s: SymId) -> Code {
    let i = unsuffixed_lit!(s);
    code!(__s[#i])
}

/// `(x OP y)` for a comparison `op`.
fn comparison(op: BinOp, x: &Code, y: &Code) -> Code {
    match op {
        BinOp::Eq => code!((#x == #y)),
        BinOp::Ne => code!((#x != #y)),
        BinOp::Lt => code!((#x < #y)),
        BinOp::Le => code!((#x <= #y)),
        BinOp::Gt => code!((#x > #y)),
        _ => code!((#x >= #y)),
    }
}

/// `code`, the scalar emitter's code of `e`, as an operand that binds
/// tighter than any operator (a method call's receiver, the operand of
/// `as`). Most of what the emitter writes already is one: a name, a
/// literal, `__s[k]`, a parenthesized negative, operator or cast, a call
/// (`__min(a, b)`, `<f32>::sqrt(x)`) or a chain of method calls
/// (`a.wrapping_add(b)`). A load (an `unsafe` block) and a `let` (a block)
/// are parenthesized. Each parenthesis is a token tree that rustc parses
/// and that crosses the bridge from the macro to the compiler: the
/// 100-func chain had 8,000 around single names, then 6,000 around calls
/// and groups.
pub(super) fn operand(e: &Expr, code: Code) -> Code {
    match e.kind {
        ExprKind::Load { .. } | ExprKind::Let { .. } => parenthesized(code),
        _ => code,
    }
}

impl Gen<'_> {
    /// A symbol: an element of the global bounds array, or a local.
    pub(super) fn sym(&self, s: SymId) -> Code {
        if s < self.b.syms.len() {
            sym(s)
        } else {
            let id = self.named(Name::LocalSym(s));
            code!(#id)
        }
    }

    /// The coordinates of a load or store of func `of` (None: an input),
    /// inside the stage `k` of func `f`; folded dimensions wrap.
    pub(super) fn coords(
        &self,
        args: &[Expr],
        of: Option<FuncId>,
        f: Option<FuncId>,
        k: Option<usize>,
    ) -> Code {
        let folds = of
            .and_then(|g| self.folds.borrow().get(&g).cloned())
            .unwrap_or_default();
        let a: Vec<Code> = args
            .iter()
            .enumerate()
            .map(|(d, a)| {
                let e = operand(a, self.expr(a, f, k));
                match folds.get(d).copied().flatten() {
                    Some(n) => {
                        let n = suffixed_lit!(i64, n);
                        code!((#e as i64).rem_euclid(#n))
                    }
                    None => code!(#e as i64),
                }
            })
            .collect();
        code!([#(#a),*])
    }

    /// Emits an expression inside the stage `update` of func `f`.
    pub(super) fn expr(&self, e: &Expr, f: Option<FuncId>, k: Option<usize>) -> Code {
        crate::deep(|| self.expr_here(e, f, k))
    }

    /// A chain of binary operations down the left operands of `e`, emitted
    /// flat in one pass: float `+ -` or `* /` of one precedence as `a + b -
    /// c` (not `((a + b) - c)`: Rust's operators associate to the left, so
    /// the order of evaluation and every rounding are the same), and
    /// wrapping integer `+ - *` as `(a).wrapping_add(b).wrapping_mul(c)`
    /// (method calls apply in order). A sum of thousands of terms then
    /// nests no parentheses, which made rustc overflow its stack parsing
    /// the expansion; and the tokens are put together once, not copied
    /// again at every level (a flat stream is not one token tree, as a
    /// parenthesized group is).
    fn chain(&self, e: &Expr, f: Option<FuncId>, k: Option<usize>) -> Code {
        let float = e.ty.is_float();
        let class = |op: BinOp| match op {
            BinOp::Add | BinOp::Sub if float => Some(0),
            BinOp::Mul | BinOp::Div if float => Some(1),
            BinOp::Add | BinOp::Sub | BinOp::Mul if !float => Some(0),
            _ => None,
        };
        let ExprKind::Binary(first, _, _) = &e.kind else {
            unreachable!("a chain starts at a binary node")
        };
        let c = class(*first);
        // The operators and right operands, from the top down, and the
        // leftmost operand.
        let mut links = Vec::new();
        let mut left = e;
        while let ExprKind::Binary(op, a, b) = &left.kind {
            if c.is_none() || class(*op) != c || left.ty.is_float() != float {
                break;
            }
            links.push((*op, &**b));
            left = a;
        }
        let x = self.expr(left, f, k);
        links.reverse();
        // `a.wrapping_sub(1i64)`, not `a.wrapping_add((-1i64))`: three
        // tokens fewer, a few thousand times in a chain of stencils.
        let (ops, ys): (Vec<BinOp>, Vec<Code>) = links
            .iter()
            .map(|&(op, b)| match (&b.kind, op) {
                (ExprKind::Int(v), BinOp::Add | BinOp::Sub)
                    if !float && *v < 0 && *v != b.ty.int_min() =>
                {
                    let flipped = if op == BinOp::Add {
                        BinOp::Sub
                    } else {
                        BinOp::Add
                    };
                    (flipped, (int_lit(b.ty, -*v)))
                }
                _ => (op, (self.expr(b, f, k))),
            })
            .unzip();
        if float {
            let ops = ops.iter().map(|op| {
                Code::word(match op {
                    BinOp::Add => "+",
                    BinOp::Sub => "-",
                    BinOp::Mul => "*",
                    _ => "/",
                })
            });
            code!((#x #(#ops #ys)*))
        } else {
            let methods = ops.iter().map(|op| {
                let name = match op {
                    BinOp::Add => "wrapping_add",
                    BinOp::Sub => "wrapping_sub",
                    _ => "wrapping_mul",
                };
                Code::word(name)
            });
            let x = operand(left, x);
            code!(#x #(.#methods(#ys))*)
        }
    }

    fn expr_here(&self, e: &Expr, f: Option<FuncId>, k: Option<usize>) -> Code {
        if let Some(id) = self.hoisted_value(e) {
            return code!(#id);
        }
        let code = |x: &Expr| self.expr(x, f, k);
        let sub = |x: &Expr| code(x);
        match &e.kind {
            ExprKind::Int(v) => int_lit(e.ty, *v),
            ExprKind::Float(v) => float_lit(e.ty, *v),
            ExprKind::Bool(b) => code!(#b),
            ExprKind::Var(d) => {
                let id = self.named(Name::Coord(Coord::Pure(
                    f.expect("a pure variable outside a stage"),
                    *d,
                )));
                code!(#id)
            }
            ExprKind::RVar(r) => {
                let id = self.named(Name::Coord(Coord::Reduction(
                    f.expect("an rvar outside a stage"),
                    k.expect("an rvar outside an update"),
                    *r,
                )));
                code!(#id)
            }
            ExprKind::Param(i) => {
                let id = ident(names::param(*i));
                code!(#id)
            }
            ExprKind::InputMin(i, d) => {
                let id = ident(names::input_min(*i, *d));
                code!(#id)
            }
            ExprKind::InputExtent(i, d) => {
                let id = ident(names::input_extent(*i, *d));
                code!(#id)
            }
            ExprKind::Sym(s) => self.sym(*s),
            ExprKind::Loop(v) => {
                let id = self.named(Name::Loop(v.clone()));
                code!(#id)
            }
            ExprKind::LetVar(id) => let_var(*id),
            ExprKind::Let { id, value, body } => {
                let_binding(*id, value.ty, code(value), code(body))
            }
            ExprKind::Unary(op, x) => {
                let a = operand(x, code(x));
                match (op, e.ty) {
                    (UnOp::Neg, t) if t.is_int() => code!(#a.wrapping_neg()),
                    (UnOp::Neg, _) => code!((-#a)),
                    (UnOp::Not, _) => code!((!#a)),
                    (UnOp::Abs, t) if t.is_signed() => code!(#a.wrapping_abs()),
                    (UnOp::Abs, t) if t.is_float() => code!(#a.abs()),
                    (UnOp::Abs, _) => code!(#a),
                }
            }
            // Chains of + - * (and float /) are emitted flat, in one pass.
            ExprKind::Binary(BinOp::Add | BinOp::Sub | BinOp::Mul, a, _)
                if a.ty.is_int() || a.ty.is_float() =>
            {
                self.chain(e, f, k)
            }
            ExprKind::Binary(BinOp::Div, a, _) if a.ty.is_float() => self.chain(e, f, k),
            ExprKind::Binary(op, a, b) => {
                let operand_ty = a.ty;
                let (x, y) = (code(a), code(b));
                if operand_ty.is_int() {
                    let oty = rust_type(operand_ty);
                    // By a positive power of two, Euclidean division is a
                    // shift (arithmetic for signed operands: the floor) and
                    // the remainder a mask; LLVM keeps `div_euclid(2)` as a
                    // division with its sign fix-ups (the pyramid's `x / 2`
                    // and `x % 2`, per pixel).
                    let power = b
                        .as_int()
                        .filter(|&d| d > 0 && d.count_ones() == 1 && d <= operand_ty.int_max())
                        .map(|d| d.trailing_zeros());
                    match (op, power) {
                        (BinOp::Div, Some(k)) => {
                            let x = operand(a, x);
                            return code!((#x >> #k));
                        }
                        (BinOp::Rem, Some(k)) => {
                            let (x, mask) =
                                ((operand(a, x)), (int_lit(operand_ty, (1i128 << k) - 1)));
                            return code!((#x & #mask));
                        }
                        _ => {}
                    }
                    match op {
                        BinOp::Add | BinOp::Sub | BinOp::Mul => unreachable!("chains, above"),
                        BinOp::Div => code!(<#oty as ::pipeline::rt::IntOps>::div_e(#x, #y)),
                        BinOp::Rem => code!(<#oty as ::pipeline::rt::IntOps>::rem_e(#x, #y)),
                        // `core::cmp`'s, imported under these names at the
                        // top of the function and module (`generate`).
                        BinOp::Min => code!(__min(#x, #y)),
                        BinOp::Max => code!(__max(#x, #y)),
                        BinOp::And => code!((#x & #y)),
                        BinOp::Or => code!((#x | #y)),
                        BinOp::Xor => code!((#x ^ #y)),
                        BinOp::Shl => {
                            code!(<#oty as ::pipeline::rt::IntOps>::shl_w(#x, (#y) as u32))
                        }
                        BinOp::Shr => {
                            code!(<#oty as ::pipeline::rt::IntOps>::shr_w(#x, (#y) as u32))
                        }
                        BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
                            comparison(*op, &x, &y)
                        }
                    }
                } else if operand_ty.is_float() {
                    let oty = rust_type(operand_ty);
                    match op {
                        BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div => {
                            unreachable!("chains, above")
                        }
                        BinOp::Rem => code!(<#oty as ::pipeline::rt::FloatOps>::rem_f(#x, #y)),
                        BinOp::Min => code!(<#oty as ::pipeline::rt::FloatOps>::min_f(#x, #y)),
                        BinOp::Max => code!(<#oty as ::pipeline::rt::FloatOps>::max_f(#x, #y)),
                        BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
                            comparison(*op, &x, &y)
                        }
                        other => unreachable!("{other:?} on floats is rejected by the checker"),
                    }
                } else {
                    match op {
                        BinOp::And => code!((#x && #y)),
                        BinOp::Or => code!((#x || #y)),
                        BinOp::Xor => code!((#x ^ #y)),
                        BinOp::Eq => code!((#x == #y)),
                        BinOp::Ne => code!((#x != #y)),
                        BinOp::Lt => {
                            let (x, y) = (operand(a, x), operand(b, y));
                            code!((!#x & #y))
                        }
                        BinOp::Le => code!((#x <= #y)),
                        BinOp::Gt => {
                            let (x, y) = (operand(a, x), operand(b, y));
                            code!((#x & !#y))
                        }
                        BinOp::Ge => code!((#x >= #y)),
                        other => unreachable!("{other:?} on bools is rejected by the checker"),
                    }
                }
            }
            ExprKind::Select(c, a, b) => {
                let (c, a, b) = (sub(c), sub(a), sub(b));
                code!((if #c { #a } else { #b }))
            }
            ExprKind::Cast(a) => {
                let (x, ty) = (operand(a, code(a)), rust_type(e.ty));
                code!((#x as #ty))
            }
            ExprKind::SaturatingCast(a) => {
                let (from, ty) = (rust_type(a.ty), rust_type(e.ty));
                let x = sub(a);
                code!(<#from as ::pipeline::rt::SaturatingCast<#ty>>::saturating_cast(#x))
            }
            ExprKind::Math(m, args) => {
                let ty = rust_type(e.ty);
                let x = sub(&args[0]);
                let y = args.get(1).map(&sub);
                let z = args.get(2).map(&sub);
                match m {
                    MathFn::Sqrt => code!(<#ty>::sqrt(#x)),
                    MathFn::Exp | MathFn::FastExp => code!(<#ty>::exp(#x)),
                    MathFn::Log | MathFn::FastLog => code!(<#ty>::ln(#x)),
                    MathFn::Pow => code!(<#ty>::powf(#x, #y)),
                    MathFn::Sin => code!(<#ty>::sin(#x)),
                    MathFn::Cos => code!(<#ty>::cos(#x)),
                    MathFn::Tan => code!(<#ty>::tan(#x)),
                    MathFn::Atan2 => code!(<#ty>::atan2(#x, #y)),
                    MathFn::Floor => code!(<#ty>::floor(#x)),
                    MathFn::Ceil => code!(<#ty>::ceil(#x)),
                    MathFn::Round => code!(<#ty>::round(#x)),
                    MathFn::Trunc => code!(<#ty>::trunc(#x)),
                    MathFn::Fma => code!(<#ty>::mul_add(#x, #y, #z)),
                }
            }
            ExprKind::Load { source, args, .. } => {
                let of = match source {
                    Source::Func(g) => Some(*g),
                    Source::Input(_) => None,
                };
                let c = self.coords(args, of, f, k);
                let view = match source {
                    Source::Input(i) => ident(input_name(*i)),
                    Source::Func(g) if Some(*g) == f => self.writer(*g),
                    Source::Func(g) => ident(reader_name(*g)),
                };
                self.element_load(*source, e.ty, &view, c)
            }
            ExprKind::Boundary {
                mode,
                coord,
                min,
                extent,
            } => {
                let (c, lo, n) = (sub(coord), sub(min), sub(extent));
                let helper = ident(names::boundary_map(*mode).to_string());
                code!(::pipeline::rt::#helper(#c, #lo, #n))
            }
        }
    }
}
