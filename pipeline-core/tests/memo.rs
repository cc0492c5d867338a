//! Expansions remembered across builds (`pipeline_core::memo`): what the
//! memo gives back is the expansion itself, for every pipeline of the
//! repository; an expansion with an error is never kept; a key holds the
//! invocation, the settings and the schedule cache.

mod corpus;

use pipeline_core::memo::Memo;
use pipeline_core::schedule::cache::CacheSource;
use pipeline_core::ExpandOptions;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;

thread_local! {
    static STORE: RefCell<HashMap<String, String>> = RefCell::new(HashMap::new());
    static GOT: Cell<usize> = const { Cell::new(0) };
    static PUT: Cell<usize> = const { Cell::new(0) };
}

fn get(key: &str) -> Option<String> {
    let found = STORE.with(|s| s.borrow().get(key).cloned());
    if found.is_some() {
        GOT.set(GOT.get() + 1);
    }
    found
}

fn put(key: &str, record: &str) {
    PUT.set(PUT.get() + 1);
    STORE.with(|s| s.borrow_mut().insert(key.to_string(), record.to_string()));
}

fn expand(source: &str, cache: Option<CacheSource>, memo: bool) -> String {
    let options = ExpandOptions {
        memo: memo.then_some(Memo { get, put }),
        ..ExpandOptions::default()
    };
    pipeline_core::expand_with_options(source.parse().unwrap(), cache, options).to_string()
}

/// The counts of records found and stored since the last call.
fn counts() -> (usize, usize) {
    (GOT.replace(0), PUT.replace(0))
}

/// Every invocation of the examples and tests, expanded with the memo
/// (kept), then again (given back without expanding), is what it is
/// without one.
#[test]
fn remembered_expansions_are_the_expansions() {
    let mut invocations: Vec<String> = corpus::sources().into_iter().map(|(s, _)| s).collect();
    invocations.dedup();
    assert!(invocations.len() > 20, "{} invocations", invocations.len());
    STORE.with(|s| s.borrow_mut().clear());
    counts();
    for source in &invocations {
        let fresh = expand(source, None, false);
        assert_eq!(counts(), (0, 0), "no memo, nothing kept");
        let first = expand(source, None, true);
        assert_eq!(first, fresh, "{source}");
        let kept = !fresh.contains("compile_error");
        assert_eq!(counts(), (0, usize::from(kept)), "{source}");
        let again = expand(source, None, true);
        assert_eq!(again, fresh, "given back: {source}");
        assert_eq!(counts(), (usize::from(kept), 0), "{source}");
    }
}

/// An expansion with an error is not kept, and the error comes back on the
/// next expansion too.
#[test]
fn errors_are_not_remembered() {
    let source = "pub fn bad(input: Image<u8, 2>) -> Image<u8, 2> { out(x, y) = nope(x, y); out }";
    counts();
    let first = expand(source, None, true);
    assert!(first.contains("compile_error"), "{first}");
    assert_eq!(counts(), (0, 0));
    assert_eq!(expand(source, None, true), first);
    assert_eq!(counts(), (0, 0));
    // An error found after the pipeline checks (here a malformed schedule
    // cache, reported while the pipeline is still generated) is not kept
    // either: a replay would leave it out.
    let source =
        "pub fn copy(input: Image<u8, 2>) -> Image<u8, 2> { out(x, y) = input(x, y); out }";
    let malformed = || CacheSource {
        path: "pipeline-schedules.toml".into(),
        text: Ok("[[[".to_string()),
    };
    let first = expand(source, Some(malformed()), true);
    assert!(first.contains("compile_error"), "{first}");
    assert!(first.contains("fn copy"), "{first}");
    assert_eq!(counts(), (0, 0));
    assert_eq!(expand(source, Some(malformed()), true), first);
    assert_eq!(counts(), (0, 0));
}

/// Another invocation, another schedule cache or the same cache file with
/// other text is another key; the same is the same key.
#[test]
fn keys_hold_what_an_expansion_depends_on() {
    let source =
        "pub fn copy(input: Image<u8, 2>) -> Image<u8, 2> { out(x, y) = input(x, y); out }";
    let cache = |text: &str| CacheSource {
        path: "pipeline-schedules.toml".into(),
        text: Ok(text.to_string()),
    };
    STORE.with(|s| s.borrow_mut().clear());
    counts();
    expand(source, None, true);
    expand(source, None, true);
    assert_eq!(counts(), (1, 1), "the same invocation");
    expand(&source.replace("out(x, y) =", "out(x, y)  ="), None, true);
    assert_eq!(counts(), (1, 0), "the same tokens, spaced otherwise");
    expand(&source.replace("input(x, y)", "input(y, x)"), None, true);
    assert_eq!(counts(), (0, 1), "another invocation");
    expand(source, Some(cache("")), true);
    expand(source, Some(cache("")), true);
    assert_eq!(counts(), (1, 1), "with a cache file");
    expand(source, Some(cache("# edited\n")), true);
    assert_eq!(counts(), (0, 1), "its text edited");
}
