//! Expansion of very large expressions on a stack of rustc's size (8 MiB):
//! every recursion over expressions in the passes must go through
//! `pipeline_core::deep`'s stack segments, or the macro crashes rustc with a
//! stack overflow instead of expanding.

/// Expands `source` on a thread with an 8 MiB stack, as rustc runs a proc
/// macro; the identifiers at the top level of the expansion (the expansion
/// is not printed: formatting 100,000 nested groups recurses too).
fn expand_on_8_mib(source: String) -> Vec<String> {
    std::thread::Builder::new()
        .stack_size(8 << 20)
        .spawn(move || {
            // rustc hands the macro its tokens already parsed; here the
            // string is parsed (by recursion over its groups) on a stack of
            // its own.
            let tokens: proc_macro2::TokenStream =
                stacker::grow(1 << 30, || source.parse().expect("tokens"));
            pipeline_core::expand(tokens)
                .into_iter()
                .filter_map(|t| match t {
                    proc_macro2::TokenTree::Ident(i) => Some(i.to_string()),
                    _ => None,
                })
                .collect()
        })
        .expect("spawn")
        .join()
        .expect("the expansion finished")
}

/// A sum of 100,000 terms, the size another macro might generate. Before,
/// each rewrite of the tree called its function through one closure per
/// level (quadratic, and a stack overflow at 20,000 terms), and the clone
/// of a tree and the search for loop-invariant loads recursed on the
/// caller's stack.
#[test]
fn a_sum_of_100_000_terms_expands() {
    let terms = vec!["1.0"; 100_000].join(" + ");
    let source = format!(
        "fn big(input: Image<f32, 2>) -> Image<f32, 2> {{ out(x, y) = input(x, y) + {terms}; out }}"
    );
    let idents = expand_on_8_mib(source);
    assert!(
        idents.iter().any(|i| i == "big"),
        "the function, not an error: {idents:?}"
    );
}

/// 10,000 nested parentheses: syn parses them by recursion, and drops the
/// tree by recursion too.
#[test]
fn ten_thousand_nested_parentheses_expand() {
    let depth = 10_000;
    let source = format!(
        "fn nested(input: Image<f32, 2>) -> Image<f32, 2> {{ out(x, y) = {}input(x, y){}; out }}",
        "(".repeat(depth),
        ")".repeat(depth)
    );
    let idents = expand_on_8_mib(source);
    assert!(idents.iter().any(|i| i == "nested"), "{idents:?}");
}

/// Whether the expansion is the pipeline's function, not a compile error.
fn expands_to(idents: &[String], name: &str) -> bool {
    idents.iter().any(|i| i == name) && !idents.iter().any(|i| i == "compile_error")
}

/// A chain of 1,000 funcs, each read once at its reader's point: the
/// auto-scheduler inlines them all into one expression 1,000 deep.
#[test]
fn a_chain_of_1000_funcs_expands() {
    let mut body = String::from("f0(x, y) = input(x, y);\n");
    for k in 1..1000 {
        body += &format!("f{k}(x, y) = f{}(x, y) * 0.5 + 1.0;\n", k - 1);
    }
    let source = format!("fn chain(input: Image<f32, 2>) -> Image<f32, 2> {{ {body} f999 }}");
    assert!(expands_to(&expand_on_8_mib(source), "chain"));
}

/// Compile-time loops nested 1,000 levels deep, and one of 1,000
/// iterations, which is a compile error (loops unroll at most 64).
#[test]
fn compile_time_loops_of_1000_levels_expand_or_are_errors() {
    let depth = 1000;
    let source = format!(
        "fn nested(input: Image<f32, 2>) -> Image<f32, 2> {{ {} g[l0](x, y) = input(x, y) * 2.0; {} g[0] }}",
        (0..depth).map(|k| format!("for l{k} in 0..1 {{")).collect::<String>(),
        "}".repeat(depth)
    );
    assert!(expands_to(&expand_on_8_mib(source), "nested"));

    let source = "fn levels(input: Image<f32, 2>) -> Image<f32, 2> {
        g[0](x, y) = input(x, y);
        for l in 1..1000 {
            g[l](x, y) = g[l - 1](x, y) * 0.5 + 1.0;
        }
        g[999]
    }"
    .to_string();
    let idents = expand_on_8_mib(source);
    assert!(idents.iter().any(|i| i == "compile_error"), "{idents:?}");
}

/// A pipeline holding a 100,000-deep expression, cloned and dropped on a
/// 1 MiB thread outside the macro: `Expr`'s drop, like its clone, goes on
/// new stack segments (the derived one recursed per level).
#[test]
fn deep_expressions_clone_and_drop_on_a_small_stack() {
    std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(|| {
            let terms = vec!["1.0"; 100_000].join(" + ");
            let source = format!(
                "fn big(input: Image<f32, 2>) -> Image<f32, 2> {{ out(x, y) = input(x, y) + {terms}; out }}"
            );
            let p = pipeline_core::pipeline_from_source(&source, "big").unwrap();
            let copy = p.clone();
            drop(p);
            drop(copy);
        })
        .expect("spawn")
        .join()
        .expect("dropped without overflowing");
}
