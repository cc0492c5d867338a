//! Loop synthesis for the breadth-first schedule: every live func is
//! computed over its whole realized region before its consumers run
//! (Halide's `compute_root`), its pure stage with the outermost loop in
//! parallel, its updates serially in definition order.
//!
//! Runs after inlining and bounds inference; the loops' bounds are the
//! bounds program's symbols. Guarantees: every store of a stage lies in the
//! func's realized region (its loops cover exactly that region, or, for
//! updates, what bounds inference included for them).
//!
//! ```text
//! allocate blur_x[...] {
//!   parallel for y in blur_x.min.y..=blur_x.max.y { for x in .. { blur_x(x, y) = .. } }
//!   parallel for y in out.min.y..=out.max.y { for x in .. { out(x, y) = .. } }
//! }
//! ```

use crate::analysis::bounds::BoundsProgram;
use crate::ir::*;

/// Whether an output func is computed straight into the caller's buffer
/// (pure, and read by no other func) or into a buffer of its own and copied.
pub fn writes_output_directly(p: &Pipeline, f: FuncId) -> bool {
    p.funcs[f].updates.is_empty() && p.consumers(f).is_empty()
}

/// Builds the loop nest of the whole pipeline.
pub fn synthesize(p: &Pipeline, b: &BoundsProgram) -> Stmt {
    let live = p.live_funcs();
    let mut stages = Vec::new();
    for &f in &live {
        stages.push(pure_stage(p, b, f));
        for k in 0..p.funcs[f].updates.len() {
            stages.push(update_stage(p, b, f, k));
        }
    }
    for (k, &f) in p.outputs.iter().enumerate() {
        if !writes_output_directly(p, f) {
            stages.push(Stmt::CopyToOutput { func: f, output: k });
        }
    }
    let mut body = Stmt::Block(stages);
    for &f in live.iter().rev() {
        if !p.outputs.contains(&f) || !writes_output_directly(p, f) {
            body = Stmt::Allocate {
                func: f,
                body: Box::new(body),
            };
        }
    }
    body
}

fn pure_stage(p: &Pipeline, b: &BoundsProgram, f: FuncId) -> Stmt {
    let func = &p.funcs[f];
    let args = (0..func.dims())
        .map(|d| Expr::new(ExprKind::Var(d), Type::I32))
        .collect();
    let mut body = Stmt::Store {
        func: f,
        update: None,
        args,
        value: func.pure.clone(),
    };
    for d in 0..func.dims() {
        let (lo, hi) = b.realized[f][d];
        let outermost = d + 1 == func.dims();
        body = Stmt::For {
            var: LoopVar::Pure(f, d),
            min: Expr::sym(lo),
            max: Expr::sym(hi),
            kind: if outermost {
                ForKind::Parallel
            } else {
                ForKind::Serial
            },
            body: Box::new(body),
        };
    }
    body
}

fn update_stage(p: &Pipeline, b: &BoundsProgram, f: FuncId, k: usize) -> Stmt {
    let u = &p.funcs[f].updates[k];
    let mut body = Stmt::Store {
        func: f,
        update: Some(k),
        args: u.args.clone(),
        value: u.value.clone(),
    };
    // Reduction variables innermost (first rdom dimension innermost), then
    // the pure variables that appear on the left-hand side.
    for (r, dim) in u.rdom.iter().enumerate() {
        let lo = Expr::cast(Type::I64, dim.min.clone());
        let hi = Expr::binary(
            BinOp::Sub,
            Expr::binary(
                BinOp::Add,
                lo.clone(),
                Expr::cast(Type::I64, dim.extent.clone()),
            ),
            Expr::i64(1),
        );
        body = Stmt::For {
            var: LoopVar::Reduction(f, k, r),
            min: crate::analysis::simplify::simplify(&lo),
            max: crate::analysis::simplify::simplify(&hi),
            kind: ForKind::Serial,
            body: Box::new(body),
        };
    }
    for (d, a) in u.args.iter().enumerate() {
        if matches!(a.kind, ExprKind::Var(_)) {
            let (lo, hi) = b.consumed[f][d];
            body = Stmt::For {
                var: LoopVar::Pure(f, d),
                min: Expr::sym(lo),
                max: Expr::sym(hi),
                kind: ForKind::Serial,
                body: Box::new(body),
            };
        }
    }
    body
}
