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
        crate::deep(|| self.expr_here(e, f, update))
    }

    fn expr_here(&self, e: &Expr, f: Option<FuncId>, update: Option<usize>) -> String {
        let p = self.pipeline;
        let sub = |x: &Expr| self.expr(x, f, update);
        match &e.kind {
            ExprKind::Int(v) => {
                if matches!(e.ty, Type::I32 | Type::I64) {
                    v.to_string()
                } else {
                    format!("{v}{}", e.ty)
                }
            }
            ExprKind::Float(v) => {
                if e.ty == Type::F32 {
                    format!("{:?}", *v as f32)
                } else {
                    format!("{v:?}f64")
                }
            }
            ExprKind::Bool(b) => b.to_string(),
            ExprKind::Var(d) => f
                .and_then(|f| p.funcs[f].vars.get(*d).cloned())
                .unwrap_or_else(|| format!("v{d}")),
            ExprKind::RVar(r) => match (f, update) {
                (Some(f), Some(k)) => p.funcs[f].updates[k].rdom[*r].name.clone(),
                _ => format!("r{r}"),
            },
            ExprKind::Param(i) => p.params[*i].name.clone(),
            ExprKind::InputMin(i, d) => format!("{}.min({d})", p.inputs[*i].name),
            ExprKind::InputExtent(i, d) => format!("{}.extent({d})", p.inputs[*i].name),
            ExprKind::Sym(s) => self
                .syms
                .get(*s)
                .cloned()
                .unwrap_or_else(|| format!("s{s}")),
            ExprKind::LetVar(id) => format!("t{id}"),
            ExprKind::Loop(v) => format!("{}.{}", p.funcs[v.func].name, v.name),
            ExprKind::Let { id, value, body } => {
                format!("{{ let t{id} = {}; {} }}", sub(value), sub(body))
            }
            ExprKind::Unary(op, a) => match op {
                UnOp::Neg => format!("-{}", sub(a)),
                UnOp::Not => format!("!{}", sub(a)),
                UnOp::Abs => format!("abs({})", sub(a)),
            },
            ExprKind::Binary(op @ (BinOp::Min | BinOp::Max), a, b) => {
                format!("{}({}, {})", op.symbol(), sub(a), sub(b))
            }
            ExprKind::Binary(BinOp::Add, a, b) if b.as_int().is_some_and(|v| v < 0) => {
                format!("({} - {})", sub(a), -b.as_int().unwrap())
            }
            ExprKind::Binary(op, a, b) => {
                let sym = match (op, a.ty) {
                    (BinOp::And, Type::Bool) => "&&",
                    (BinOp::Or, Type::Bool) => "||",
                    _ => op.symbol(),
                };
                format!("({} {sym} {})", sub(a), sub(b))
            }
            ExprKind::Select(c, a, b) => format!("select({}, {}, {})", sub(c), sub(a), sub(b)),
            ExprKind::Cast(a) => format!("({} as {})", sub(a), e.ty),
            ExprKind::SaturatingCast(a) => format!("saturating_cast::<{}>({})", e.ty, sub(a)),
            ExprKind::Math(m, args) => format!(
                "{}({})",
                m.name(),
                args.iter().map(sub).collect::<Vec<_>>().join(", ")
            ),
            ExprKind::Load { source, args, .. } => {
                let name = match source {
                    Source::Func(g) => p.funcs[*g].name.clone(),
                    Source::Input(i) => p.inputs[*i].name.clone(),
                };
                format!(
                    "{name}({})",
                    args.iter().map(sub).collect::<Vec<_>>().join(", ")
                )
            }
            ExprKind::Boundary { mode, coord, .. } => {
                let m = match mode {
                    BoundaryMode::ClampEdge | BoundaryMode::GuardedClamp => "clamp_edge",
                    BoundaryMode::Mirror => "mirror",
                    BoundaryMode::MirrorInterior => "mirror_interior",
                    BoundaryMode::Wrap => "wrap",
                };
                format!("{m}({})", sub(coord))
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
