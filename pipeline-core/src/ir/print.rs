//! The readable text form of expressions and lowered statements: what
//! `NAME::LOWERED` shows, in the DSL's own syntax where it has one.

use super::*;
use crate::schedule::LoopKind;
use std::fmt::Write;

/// Names for the leaves of expressions.
pub struct Names<'a> {
    /// The pipeline (func, input and param names).
    pub pipeline: &'a Pipeline,
    /// Names of bounds symbols.
    pub syms: &'a [String],
}

impl Names<'_> {
    /// Prints an expression in the context of func `f`'s stage `update`.
    pub fn expr(&self, e: &Expr, f: Option<FuncId>, update: Option<usize>) -> String {
        let mut out = String::new();
        self.expr_into(e, f, update, &mut out);
        out
    }

    /// [`Names::expr`], written onto `out` (one string for the whole
    /// tree, not one per node).
    fn expr_into(&self, e: &Expr, f: Option<FuncId>, update: Option<usize>, out: &mut String) {
        crate::deep(|| self.expr_here(e, f, update, out))
    }

    fn expr_here(&self, e: &Expr, f: Option<FuncId>, update: Option<usize>, out: &mut String) {
        let p = self.pipeline;
        let sub = |x: &Expr, out: &mut String| self.expr_into(x, f, update, out);
        let list = |args: &[Expr], out: &mut String| {
            for (i, a) in args.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                sub(a, out);
            }
        };
        match &e.kind {
            ExprKind::Int(v) => {
                if matches!(e.ty, Type::I32 | Type::I64) {
                    let _ = write!(out, "{v}");
                } else {
                    let _ = write!(out, "{v}{}", e.ty);
                }
            }
            ExprKind::Float(v) => {
                if e.ty == Type::F32 {
                    let _ = write!(out, "{:?}", *v as f32);
                } else {
                    let _ = write!(out, "{v:?}f64");
                }
            }
            ExprKind::Bool(b) => {
                let _ = write!(out, "{b}");
            }
            ExprKind::Var(d) => match f.and_then(|f| p.funcs[f].vars.get(*d)) {
                Some(name) => out.push_str(name),
                None => {
                    let _ = write!(out, "v{d}");
                }
            },
            ExprKind::RVar(r) => match (f, update) {
                (Some(f), Some(k)) => out.push_str(&p.funcs[f].updates[k].rdom[*r].name),
                _ => {
                    let _ = write!(out, "r{r}");
                }
            },
            ExprKind::Param(i) => out.push_str(&p.params[*i].name),
            ExprKind::InputMin(i, d) => {
                let _ = write!(out, "{}.min({d})", p.inputs[*i].name);
            }
            ExprKind::InputExtent(i, d) => {
                let _ = write!(out, "{}.extent({d})", p.inputs[*i].name);
            }
            ExprKind::Sym(s) => match self.syms.get(*s) {
                Some(name) => out.push_str(name),
                None => {
                    let _ = write!(out, "s{s}");
                }
            },
            ExprKind::LetVar(id) => {
                let _ = write!(out, "t{id}");
            }
            ExprKind::Loop(v) => {
                out.push_str(&p.funcs[v.func].name);
                out.push('.');
                out.push_str(&v.name);
            }
            ExprKind::Let { id, value, body } => {
                let _ = write!(out, "{{ let t{id} = ");
                sub(value, out);
                out.push_str("; ");
                sub(body, out);
                out.push_str(" }");
            }
            ExprKind::Unary(op, a) => {
                out.push_str(match op {
                    UnOp::Neg => "-",
                    UnOp::Not => "!",
                    UnOp::Abs => "abs(",
                });
                sub(a, out);
                if *op == UnOp::Abs {
                    out.push(')');
                }
            }
            ExprKind::Binary(op @ (BinOp::Min | BinOp::Max), a, b) => {
                out.push_str(op.symbol());
                out.push('(');
                sub(a, out);
                out.push_str(", ");
                sub(b, out);
                out.push(')');
            }
            ExprKind::Binary(BinOp::Add, a, b) if b.as_int().is_some_and(|v| v < 0) => {
                out.push('(');
                sub(a, out);
                let _ = write!(out, " - {})", -b.as_int().unwrap());
            }
            ExprKind::Binary(op, a, b) => {
                let sym = match (op, a.ty) {
                    (BinOp::And, Type::Bool) => "&&",
                    (BinOp::Or, Type::Bool) => "||",
                    _ => op.symbol(),
                };
                out.push('(');
                sub(a, out);
                out.push(' ');
                out.push_str(sym);
                out.push(' ');
                sub(b, out);
                out.push(')');
            }
            ExprKind::Select(c, a, b) => {
                out.push_str("select(");
                sub(c, out);
                out.push_str(", ");
                sub(a, out);
                out.push_str(", ");
                sub(b, out);
                out.push(')');
            }
            ExprKind::Cast(a) => {
                out.push('(');
                sub(a, out);
                out.push_str(" as ");
                out.push_str(e.ty.name());
                out.push(')');
            }
            ExprKind::SaturatingCast(a) => {
                let _ = write!(out, "saturating_cast::<{}>(", e.ty);
                sub(a, out);
                out.push(')');
            }
            ExprKind::Math(m, args) => {
                let _ = write!(out, "{}(", m.name());
                list(args, out);
                out.push(')');
            }
            ExprKind::Load { source, args, .. } => {
                out.push_str(match source {
                    Source::Func(g) => &p.funcs[*g].name,
                    Source::Input(i) => &p.inputs[*i].name,
                });
                out.push('(');
                list(args, out);
                out.push(')');
            }
            ExprKind::Boundary { mode, coord, .. } => {
                out.push_str(match mode {
                    BoundaryMode::ClampEdge | BoundaryMode::GuardedClamp => "clamp_edge",
                    BoundaryMode::Mirror => "mirror",
                    BoundaryMode::MirrorInterior => "mirror_interior",
                    BoundaryMode::Wrap => "wrap",
                });
                out.push('(');
                sub(coord, out);
                out.push(')');
            }
        }
    }

    /// Prints a statement tree, indented.
    pub fn stmt(&self, s: &Stmt, indent: usize, out: &mut String) {
        let pad = "  ".repeat(indent);
        let p = self.pipeline;
        match s {
            Stmt::Allocate {
                func,
                region,
                fold,
                body,
            } => {
                let f = &p.funcs[*func];
                let dims: Vec<String> = region
                    .iter()
                    .zip(fold)
                    .map(|((lo, hi), fold)| match fold {
                        Some(n) => format!("folded mod {n}"),
                        None => format!(
                            "{}..={}",
                            self.expr(lo, None, None),
                            self.expr(hi, None, None)
                        ),
                    })
                    .collect();
                let _ = writeln!(
                    out,
                    "{pad}allocate {}[{}] over [{}] {{",
                    f.name,
                    f.ty,
                    dims.join(", ")
                );
                self.stmt(body, indent + 1, out);
                let _ = writeln!(out, "{pad}}}");
            }
            Stmt::For {
                var,
                min,
                max,
                kind,
                body,
                ..
            } => {
                let k = match kind {
                    LoopKind::Serial => "for",
                    LoopKind::Parallel => "parallel for",
                    LoopKind::Vectorized => "vectorized for",
                    LoopKind::Unrolled => "unrolled for",
                    LoopKind::GpuBlock => "gpu block for",
                    LoopKind::GpuThread => "gpu thread for",
                };
                let _ = writeln!(
                    out,
                    "{pad}{k} {}.{} in {}..={} {{",
                    p.funcs[var.func].name,
                    var.name,
                    self.expr(min, None, None),
                    self.expr(max, None, None)
                );
                self.stmt(body, indent + 1, out);
                let _ = writeln!(out, "{pad}}}");
            }
            Stmt::LetSym { sym, value, body } => {
                let name = self
                    .syms
                    .get(*sym)
                    .cloned()
                    .unwrap_or_else(|| format!("s{sym}"));
                let _ = writeln!(out, "{pad}let {name} = {}", self.expr(value, None, None));
                self.stmt(body, indent, out);
            }
            Stmt::LetCoord { coord, value, body } => {
                let name = match *coord {
                    Coord::Pure(f, d) => p.funcs[f].vars[d].clone(),
                    Coord::Reduction(f, k, r) => p.funcs[f].updates[k].rdom[r].name.clone(),
                };
                let _ = writeln!(out, "{pad}let {name} = {}", self.expr(value, None, None));
                self.stmt(body, indent, out);
            }
            Stmt::Store {
                func,
                update,
                args,
                value,
            } => {
                let f = Some(*func);
                let args: Vec<String> = args.iter().map(|a| self.expr(a, f, *update)).collect();
                let _ = writeln!(
                    out,
                    "{pad}{}({}) = {}",
                    p.funcs[*func].name,
                    args.join(", "),
                    self.expr(value, f, *update)
                );
            }
            Stmt::If { cond, body } => {
                let _ = writeln!(out, "{pad}if {} {{", self.expr(cond, None, None));
                self.stmt(body, indent + 1, out);
                let _ = writeln!(out, "{pad}}}");
            }
            Stmt::CopyToOutput { func, output } => {
                let _ = writeln!(
                    out,
                    "{pad}copy {} into output {output}",
                    p.funcs[*func].name
                );
            }
            Stmt::Block(v) => v.iter().for_each(|s| self.stmt(s, indent, out)),
        }
    }
}
