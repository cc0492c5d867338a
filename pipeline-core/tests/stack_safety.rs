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
