//! Every compile-fail case of the UI suite, expanded directly: the compiler
//! must report an error (and never panic), and each case must report exactly
//! the one mistake it is about.

use std::path::Path;

fn macro_body(source: &str) -> &str {
    let start = source.find("pipeline! {").expect("a pipeline! invocation") + "pipeline! {".len();
    let end = source
        .rfind("}\n\nfn main")
        .expect("the invocation ends before main");
    &source[start..end]
}

fn cases(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            cases(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn every_ui_case_is_one_error_and_no_panic() {
    let mut files = Vec::new();
    cases(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/ui"),
        &mut files,
    );
    assert!(
        files.len() >= 15,
        "the UI suite has a case per kind of mistake"
    );
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let tokens: proc_macro2::TokenStream = macro_body(&text).parse().unwrap();
        let out = std::panic::catch_unwind(|| pipeline_core::expand(tokens).to_string())
            .unwrap_or_else(|_| panic!("{}: the macro panicked", file.display()));
        let errors = out.matches("compile_error").count();
        assert_eq!(
            errors,
            1,
            "{}: expected one error, got:\n{out}",
            file.display()
        );
        println!("{}: {}", file.file_name().unwrap().to_string_lossy(), out);
    }
}
