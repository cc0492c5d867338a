//! Checking of `schedule NAME { ... }` blocks (DESIGN.md 4.9).
//!
//! Each statement is a chain of directives on one func: `f.split(x, xo, xi,
//! 8).parallel(xo);`. This pass checks that the pipeline, the funcs, the
//! directives, their arities and the variables they name exist (variables
//! introduced by `split`/`tile` count from that point on), reporting errors at
//! the directive's tokens. Loop synthesis from these directives is the
//! scheduling issue's work; until then the compiler computes every func at
//! root (see `SCHEDULE`), which never changes results.

use super::check::CheckedPipeline;
use super::parse::ScheduleItem;
use quote::ToTokens;
use syn::Error;

/// One checked directive.
#[derive(Clone, Debug)]
pub struct Directive {
    /// Func name as written (`gauss[1]` for family members).
    pub func: String,
    /// Directive name.
    pub name: String,
    /// Its arguments as written.
    pub args: Vec<String>,
}

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

/// Checks a schedule block against its pipeline.
pub fn check_schedule(
    item: &ScheduleItem,
    pipeline: &CheckedPipeline,
) -> Result<Vec<Directive>, Error> {
    let p = &pipeline.pipeline;
    let cuda = item.target.is_some();
    let mut out = Vec::new();
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
                    m,
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
                match func_names.iter().position(|n| *n == args[0]) {
                    None => {
                        errors.push(Error::new_spanned(
                            &m.args[0],
                            format!("`{}` is not a func of pipeline `{}`", args[0], p.name),
                        ));
                        ok = false;
                    }
                    Some(g) if !vars[g].contains(&args[1]) && args[1] != "__root" => {
                        errors.push(Error::new_spanned(
                            &m.args[1],
                            format!("`{}` is not a loop variable of `{}`", args[1], args[0]),
                        ));
                        ok = false;
                    }
                    _ => {}
                }
            }
            for &i in &defines {
                vars[f].push(args[i].clone());
            }
            if ok {
                out.push(Directive {
                    func: fname.clone(),
                    name,
                    args,
                });
            }
        }
    }
    match super::check::combine(errors) {
        Some(e) => Err(e),
        None => Ok(out),
    }
}
