//! Checking of `schedule NAME { ... }` blocks (DESIGN.md 4.9) and their
//! translation into a [`Schedule`].
//!
//! Each statement is a chain of directives on one func: `f.split(x, xo, xi,
//! 8).parallel(xo);`. This pass checks that the pipeline, the funcs, the
//! directives, their arities and the variables they name exist (variables
//! introduced by `split`/`tile` count from that point on) and that each can be
//! honoured, reporting errors at the directive's tokens. A func named in the
//! block starts from serial loops in its definition's order (as in Halide);
//! funcs not named keep the default schedule.
//!
//! Whether a `compute_at` can be honoured depends on the whole schedule and on
//! inlining, so loop synthesis checks it and reports at the directive.
//! `for cuda` blocks are checked only.

use super::check::CheckedPipeline;
use super::parse::ScheduleItem;
use crate::schedule::{ComputeLevel, Dim, LoopKind, Schedule, StageSchedule};
use quote::ToTokens;
use syn::Error;

/// (name, number of arguments, whether only in `for cuda` blocks)
const DIRECTIVES: &[(&str, usize, bool)] = &[
    ("split", 4, false),
    ("tile", 8, false),
    ("reorder", usize::MAX, false),
    ("vectorize", 2, false),
    ("unroll", 2, false),
    ("parallel", 1, false),
    ("compute_at", 2, false),
    ("store_at", 2, false),
    ("compute_root", 0, false),
    ("compute_inline", 0, false),
    ("bound", 3, false),
    ("gpu_tile", 8, true),
    ("gpu_blocks", usize::MAX, true),
    ("gpu_threads", usize::MAX, true),
];

/// Checks a schedule block against its pipeline and applies it to `schedule`.
pub fn check_schedule(
    item: &ScheduleItem,
    pipeline: &CheckedPipeline,
    schedule: &mut Schedule,
) -> Result<(), Error> {
    let p = &pipeline.pipeline;
    let cuda = item.target.is_some();
    let mut named = vec![false; p.funcs.len()];
    let mut errors = Vec::new();
    let func_names: Vec<String> = p.funcs.iter().map(|f| f.name.replace(' ', "")).collect();
    let mut vars: Vec<Vec<String>> = p.funcs.iter().map(|f| f.vars.clone()).collect();
    for (f, func) in p.funcs.iter().enumerate() {
        for u in &func.updates {
            vars[f].extend(u.rdom.iter().map(|r| r.name.clone()));
        }
    }
    for stmt in &item.body.stmts {
        let syn::Stmt::Expr(expr, Some(_)) = stmt else {
            errors.push(Error::new_spanned(
                stmt,
                "a schedule holds directive chains like `f.parallel(y);`, each ending with `;`",
            ));
            continue;
        };
        // Unwind the chain: receiver first.
        let mut chain = Vec::new();
        let mut cur = expr;
        while let syn::Expr::MethodCall(m) = cur {
            chain.push(m);
            cur = &m.receiver;
        }
        chain.reverse();
        let fname = cur.to_token_stream().to_string().replace(' ', "");
        let Some(f) = func_names.iter().position(|n| *n == fname) else {
            errors.push(Error::new_spanned(
                cur,
                format!("`{fname}` is not a func of pipeline `{}`", p.name),
            ));
            continue;
        };
        if chain.is_empty() {
            errors.push(Error::new_spanned(
                expr,
                "expected directives after the func name, e.g. `f.compute_root();`",
            ));
        }
        if !cuda && !named[f] {
            named[f] = true;
            schedule.funcs[f].pure = StageSchedule::serial(&p.funcs[f].vars);
            schedule.funcs[f].written.clear();
        }
        for m in chain {
            let name = m.method.to_string();
            let Some(&(_, arity, gpu_only)) = DIRECTIVES.iter().find(|d| d.0 == name) else {
                errors.push(Error::new_spanned(
                    &m.method,
                    format!(
                        "unknown directive `{name}`; directives are {}",
                        DIRECTIVES
                            .iter()
                            .map(|d| d.0)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ));
                continue;
            };
            if gpu_only && !cuda {
                errors.push(Error::new_spanned(
                    &m.method,
                    format!(
                        "`{name}` belongs in a `schedule {} for cuda {{ ... }}` block",
                        p.name
                    ),
                ));
                continue;
            }
            if arity != usize::MAX && m.args.len() != arity {
                errors.push(Error::new_spanned(
                    directive(m),
                    format!("`{name}` takes {arity} argument(s), found {}", m.args.len()),
                ));
                continue;
            }
            let args: Vec<String> = m
                .args
                .iter()
                .map(|a| a.to_token_stream().to_string().replace(' ', ""))
                .collect();
            // Which arguments name existing variables, and which introduce new ones.
            let (uses, defines): (Vec<usize>, Vec<usize>) = match name.as_str() {
                "split" => (vec![0], vec![1, 2]),
                "tile" | "gpu_tile" => (vec![0, 1], vec![2, 3, 4, 5]),
                "reorder" | "gpu_blocks" | "gpu_threads" => ((0..args.len()).collect(), vec![]),
                "vectorize" | "unroll" | "parallel" | "bound" => (vec![0], vec![]),
                _ => (vec![], vec![]),
            };
            let mut ok = true;
            for &i in &uses {
                if !vars[f].contains(&args[i]) {
                    errors.push(Error::new_spanned(
                        &m.args[i],
                        format!(
                            "`{}` is not a variable of `{fname}` (its variables: {})",
                            args[i],
                            vars[f].join(", ")
                        ),
                    ));
                    ok = false;
                }
            }
            if matches!(name.as_str(), "compute_at" | "store_at") {
                // The loop is checked after the whole block, in loop
                // synthesis: the consumer's splits may come later.
                if !func_names.iter().any(|n| *n == args[0]) {
                    errors.push(Error::new_spanned(
                        &m.args[0],
                        format!("`{}` is not a func of pipeline `{}`", args[0], p.name),
                    ));
                    ok = false;
                }
            }
            for &i in &defines {
                vars[f].push(args[i].clone());
            }
            if ok && !cuda {
                match apply(&mut schedule.funcs[f], p, f, &name, &args, m) {
                    Ok(()) => {
                        schedule.funcs[f]
                            .written
                            .push(format!("{name}({})", args.join(", ")));
                        // Loops the directive made (`x_v` of a vectorize) can be named next.
                        for d in &schedule.funcs[f].pure.dims {
                            if !vars[f].contains(&d.name) {
                                vars[f].push(d.name.clone());
                            }
                        }
                    }
                    Err(e) => errors.push(e),
                }
            }
        }
    }
    match super::check::combine(errors) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// The tokens of one directive, `name(args)` without its receiver chain, so
/// that errors underline just that directive.
fn directive(m: &syn::ExprMethodCall) -> proc_macro2::TokenStream {
    let (method, args) = (&m.method, &m.args);
    quote::quote!(#method #args)
}

fn factor(m: &syn::ExprMethodCall, i: usize) -> Result<i64, Error> {
    match &m.args[i] {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(n),
            ..
        }) => match n.base10_parse::<i64>() {
            Ok(v) if (1..=1 << 20).contains(&v) => Ok(v),
            _ => Err(Error::new_spanned(
                n,
                "a split factor is a positive integer",
            )),
        },
        other => Err(Error::new_spanned(
            other,
            "a split factor is an integer literal, e.g. `8`",
        )),
    }
}

fn split(
    stage: &mut StageSchedule,
    old: &str,
    outer: &str,
    inner: &str,
    n: i64,
    m: &syn::ExprMethodCall,
) -> Result<(), Error> {
    stage
        .split(old, outer, inner, n)
        .map_err(|e| Error::new_spanned(directive(m), e))
}

/// Applies one checked directive to a func's schedule.
fn apply(
    fs: &mut crate::schedule::FuncSchedule,
    p: &crate::ir::Pipeline,
    f: crate::ir::FuncId,
    name: &str,
    args: &[String],
    m: &syn::ExprMethodCall,
) -> Result<(), Error> {
    let stage = &mut fs.pure;
    match name {
        "split" => split(stage, &args[0], &args[1], &args[2], factor(m, 3)?, m),
        "tile" => {
            let (nx, ny) = (factor(m, 6)?, factor(m, 7)?);
            split(stage, &args[0], &args[2], &args[4], nx, m)?;
            split(stage, &args[1], &args[3], &args[5], ny, m)?;
            reorder(stage, &[&args[4], &args[5], &args[2], &args[3]], m)
        }
        "reorder" => {
            let vars: Vec<&String> = args.iter().collect();
            reorder(stage, &vars, m)
        }
        "vectorize" | "unroll" => {
            let n = factor(m, 1)?;
            let kind = if name == "vectorize" {
                LoopKind::Vectorized
            } else {
                LoopKind::Unrolled
            };
            // A fresh name for the inner loop: `x_v`, then `x_v2`, ...
            let suffix = if name == "vectorize" { "v" } else { "u" };
            let mut inner = format!("{}_{suffix}", args[0]);
            let mut k = 1;
            while stage.position(&inner).is_some() || stage.splits.iter().any(|s| s.old == inner) {
                k += 1;
                inner = format!("{}_{suffix}{k}", args[0]);
            }
            split(stage, &args[0], &args[0], &inner, n, m)?;
            let pos = stage.position(&inner).expect("just split");
            stage.dims[pos].kind = kind;
            Ok(())
        }
        "parallel" => {
            let Some(pos) = stage.position(&args[0]) else {
                return Err(Error::new_spanned(
                    directive(m),
                    format!("`{}` is not a loop of this func", args[0]),
                ));
            };
            // Each iteration must write its own slab of one dimension: the
            // loop is a dimension of the func or the outer loop of a split of one.
            let var = &args[0];
            let slab = stage.roots.contains(var)
                || stage
                    .split_creating_outer(var)
                    .is_some_and(|s| stage.roots.contains(&s.old));
            if !slab {
                return Err(Error::new_spanned(
                    directive(m),
                    format!("`{var}` cannot run in parallel: a parallel loop runs over a dimension of the func or the outer variable of a split of one, so that its iterations write disjoint slabs"),
                ));
            }
            stage.dims[pos].kind = LoopKind::Parallel;
            Ok(())
        }
        "compute_root" => {
            fs.compute = ComputeLevel::Root;
            Ok(())
        }
        "compute_at" | "store_at" => {
            let Some(g) = p
                .funcs
                .iter()
                .position(|h| h.name.replace(' ', "") == args[0])
            else {
                return Err(Error::new_spanned(
                    directive(m),
                    format!("`{}` is not a func", args[0]),
                ));
            };
            if g == f {
                return Err(Error::new_spanned(
                    directive(m),
                    "a func cannot be computed or stored inside its own loops",
                ));
            }
            if name == "compute_at" {
                fs.compute = ComputeLevel::At {
                    func: g,
                    var: args[1].clone(),
                };
                fs.at_tokens = Some(directive(m));
            } else {
                fs.store = Some((g, args[1].clone()));
                fs.store_tokens = Some(directive(m));
            }
            Ok(())
        }
        "bound" => {
            let Some(d) = p.funcs[f].vars.iter().position(|v| *v == args[0]) else {
                return Err(Error::new_spanned(
                    directive(m),
                    format!("`{}` is not a dimension of `{}`", args[0], p.funcs[f].name),
                ));
            };
            let literal = |i: usize| -> Result<i64, Error> {
                let text = args[i].replace(' ', "");
                text.parse::<i64>()
                    .map_err(|_| Error::new_spanned(&m.args[i], "a bound is an integer literal"))
            };
            let (min, extent) = (literal(1)?, literal(2)?);
            if extent < 0 {
                return Err(Error::new_spanned(
                    &m.args[2],
                    "a bound's extent cannot be negative",
                ));
            }
            fs.bounds.retain(|b| b.0 != d);
            fs.bounds.push((d, min, extent));
            Ok(())
        }
        "compute_inline" => {
            if p.outputs.contains(&f) {
                return Err(Error::new_spanned(
                    directive(m),
                    "an output cannot be inlined",
                ));
            }
            if !p.funcs[f].updates.is_empty() {
                return Err(Error::new_spanned(
                    directive(m),
                    "a func with update definitions cannot be inlined",
                ));
            }
            fs.compute = ComputeLevel::Inline;
            Ok(())
        }
        _ => Ok(()),
    }
}

fn reorder(
    stage: &mut StageSchedule,
    vars: &[&String],
    m: &syn::ExprMethodCall,
) -> Result<(), Error> {
    let mut positions = Vec::new();
    for v in vars {
        match stage.position(v) {
            Some(p) if !positions.contains(&p) => positions.push(p),
            Some(_) => {
                return Err(Error::new_spanned(
                    directive(m),
                    format!("`{v}` appears twice in `reorder`"),
                ))
            }
            None => {
                return Err(Error::new_spanned(
                    directive(m),
                    format!("`{v}` is not a loop of this func"),
                ))
            }
        }
    }
    let dims: Vec<Dim> = positions.iter().map(|&p| stage.dims[p].clone()).collect();
    positions.sort();
    for (p, d) in positions.into_iter().zip(dims) {
        stage.dims[p] = d;
    }
    Ok(())
}
