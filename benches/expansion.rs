//! Compile time of the macro itself: the expansion of generated pipelines
//! (what a user pays on every build, before rustc sees the generated code).
//! `cargo bench --bench expansion`.
//!
//! - `stencil_chain/N`: N funcs, each a 3-tap stencil of the previous one,
//!   alternately along x and y, under the automatic schedule (no block).
//! - `stencil_chain/N hand`: the same under a hand schedule that computes
//!   every func at root, vectorized, in parallel strips.
//! - `examples`: every pipeline of the examples, as the macro expands them.
//!
//! `EXPANSION_ONCE=N` expands the N-func chain once instead (see `main`).
//!
//! The benches build the macro crate optimized (`opt-level` 3 in the bench
//! profile); a user's build runs it at their `build-override` level (0 by
//! default), some 5 to 10 times slower.

use criterion::{criterion_group, Criterion};
use proc_macro2::TokenStream;
use std::hint::black_box;

/// A chain of `n` 3-tap stencils, alternately along x and y.
fn stencil_chain(n: usize, hand: bool) -> String {
    let mut body = String::from(
        "let c = input.clamp_edge();\nf0(x, y) = c(x - 1, y) + c(x, y) + c(x + 1, y);\n",
    );
    for k in 1..n {
        let p = k - 1;
        body += &if k % 2 == 0 {
            format!("f{k}(x, y) = (f{p}(x - 1, y) + f{p}(x, y) + f{p}(x + 1, y)) * 0.25;\n")
        } else {
            format!("f{k}(x, y) = (f{p}(x, y - 1) + f{p}(x, y) + f{p}(x, y + 1)) * 0.25;\n")
        };
    }
    let mut source = format!(
        "pub fn chain(input: Image<f32, 2>) -> Image<f32, 2> {{\n{body}f{}\n}}\n",
        n - 1
    );
    if hand {
        source += "schedule chain {\n";
        for k in 0..n {
            source += &format!(
                "    f{k}.compute_root().split(y, yo, yi, 32).parallel(yo).vectorize(x, 8);\n"
            );
        }
        source += "}\n";
    }
    source
}

/// The bodies of every `pipeline! { .. }` in the examples.
fn examples() -> Vec<(String, String)> {
    bodies(&["examples"])
}

/// The bodies of every `pipeline! { .. }` in the `.rs` files of `dirs`
/// (and their subdirectories), each with its file's stem.
fn bodies(dirs: &[&str]) -> Vec<(String, String)> {
    let mut files = Vec::new();
    let mut stack: Vec<std::path::PathBuf> = dirs
        .iter()
        .map(|d| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(d))
        .collect();
    while let Some(dir) = stack.pop() {
        for path in std::fs::read_dir(&dir)
            .expect("a readable directory")
            .filter_map(|e| e.ok().map(|e| e.path()))
        {
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    let mut out = Vec::new();
    for path in files {
        let text = std::fs::read_to_string(&path).expect("readable example");
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        let mut rest = text.as_str();
        while let Some(i) = rest.find("pipeline! {") {
            let body = &rest[i + "pipeline! {".len()..];
            let mut depth = 1;
            let end = body
                .char_indices()
                .find_map(|(k, ch)| {
                    match ch {
                        '{' => depth += 1,
                        '}' => depth -= 1,
                        _ => {}
                    }
                    (depth == 0).then_some(k)
                })
                .expect("balanced braces");
            out.push((name.clone(), body[..end].to_string()));
            rest = &body[end..];
        }
    }
    out
}

fn tokens(source: &str) -> TokenStream {
    source.parse().expect("the generated source tokenizes")
}

/// Fails the bench if an expansion is a compile error: timing an error
/// would time the wrong thing.
fn expand_checked(source: &str) -> TokenStream {
    let out = pipeline_core::expand(tokens(source));
    assert!(!out.to_string().contains("compile_error"), "{out}");
    out
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("stencil_chain");
    group.sample_size(10);
    for n in [30, 100] {
        for hand in [false, true] {
            let source = stencil_chain(n, hand);
            expand_checked(&source);
            let label = if hand {
                format!("{n} hand")
            } else {
                n.to_string()
            };
            group.bench_function(label, |b| {
                b.iter(|| pipeline_core::expand(tokens(black_box(&source))))
            });
        }
    }
    group.finish();
    let sources = examples();
    for (_, s) in &sources {
        expand_checked(s);
    }
    c.bench_function("examples", |b| {
        b.iter(|| {
            for (_, s) in &sources {
                black_box(pipeline_core::expand(tokens(s)));
            }
        })
    });
}

criterion_group!(benches, bench);

/// `EXPANSION_ONCE=N` (optionally `EXPANSION_HAND=1`): expands the N-func
/// chain once and exits, for an instruction count, which a busy machine
/// does not disturb as it does times:
/// `EXPANSION_ONCE=100 valgrind --tool=callgrind target/release/deps/expansion-<hash>`
/// (the binary `cargo bench --bench expansion --no-run` names);
/// `EXPANSION_PRINT=1` also prints the expansion, `EXPANSION_NO_LEX=1`
/// leaves out lexing the generated text (the compiler's work inside
/// rustc, proc-macro2's here). `EXPANSION_DUMP=DIR`
/// writes the expansion of every `pipeline!` body in examples/, tests/ and
/// benches/ (and both 100-func chains) to DIR, one file each: a change
/// meant to leave the generated code alone is checked by comparing two
/// dumps.
fn main() {
    if let Some(dir) = std::env::var_os("EXPANSION_DUMP") {
        dump(std::path::Path::new(&dir));
        return;
    }
    if let Ok(n) = std::env::var("EXPANSION_ONCE") {
        let n: usize = n
            .parse()
            .unwrap_or_else(|_| panic!("EXPANSION_ONCE={n} is not a count"));
        let hand = std::env::var_os("EXPANSION_HAND").is_some();
        let input = tokens(&stencil_chain(n, hand));
        let out = if std::env::var_os("EXPANSION_NO_LEX").is_some() {
            // The generated text handed to a lexer that drops it: what the
            // macro does inside rustc, without proc-macro2's own lexer
            // (which the compiler's replaces there) in the count.
            let options = pipeline_core::ExpandOptions {
                lex: Some(|_| Some(TokenStream::new())),
                ..Default::default()
            };
            black_box(pipeline_core::expand_with_options(input, None, options))
        } else {
            black_box(pipeline_core::expand(input))
        };
        if std::env::var_os("EXPANSION_PRINT").is_some() {
            println!("{out}");
        }
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}

/// Writes every expansion `EXPANSION_DUMP` names (see `main`).
fn dump(dir: &std::path::Path) {
    std::fs::create_dir_all(dir).expect("a writable dump directory");
    let mut all = bodies(&["examples", "tests", "benches"]);
    all.push(("chain100".into(), stencil_chain(100, false)));
    all.push(("chain100_hand".into(), stencil_chain(100, true)));
    let (mut written, mut errors, mut skipped) = (0, 0, Vec::new());
    for (k, (name, body)) in all.iter().enumerate() {
        // A body whose text is not Rust tokens (a `macro_rules!` template's
        // `$name` pieces) cannot be expanded here.
        let Ok(input) = body.parse::<TokenStream>() else {
            skipped.push(name.as_str());
            continue;
        };
        let out = pipeline_core::expand(input).to_string();
        errors += out.contains("compile_error") as usize;
        std::fs::write(dir.join(format!("{k:03}_{name}.rs")), out).expect("written");
        written += 1;
    }
    eprintln!(
        "{written} expansions in {} ({errors} of them compile errors, the ui cases among them); skipped, not Rust tokens: {skipped:?}",
        dir.display()
    );
}
