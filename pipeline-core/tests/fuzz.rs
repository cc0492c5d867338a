//! Token-level fuzzing of the macro's expansion: `pipeline_core::expand`
//! must never panic and never take long, whatever tokens it is given.
//!
//! Every `pipeline!` invocation of the repository (`corpus::sources`) is
//! parsed to tokens and mutated 1 to 4 times, anywhere in its tree of
//! groups: a token deleted, duplicated or swapped with a neighbour of its
//! group, an identifier replaced by another of the same source or by a
//! keyword, type or directive name, a literal by an extreme one (`0`,
//! `i64::MAX`, `18446744073709551616`, `1e309`, `300u8`, ...), a group
//! deleted, duplicated or given another delimiter, a punctuation mark
//! replaced. Each case is then expanded under `catch_unwind` and timed.
//!
//! The test fails on a panic (the case's seed, its mutations, its tokens,
//! and the same panic on a smaller input: fewer mutations, then tokens
//! deleted one at a time while it still panics at the same place) and on a
//! case whose expansion takes more than 2 s of its thread's CPU time (timed
//! again alone after the run).
//!
//! The default run is 20,000 cases over every core: 24 s on the 2 cores of
//! a Zen 4 (2026-11-26; on a busier machine 20,000 once took 115 s, when
//! long sums still took seconds to expand). Most cases are mutated into a
//! compile error early; the ones that still expand to code, and the
//! 2,000-term sums of tests/large_expressions.rs, take most of the time.
//! `PIPELINE_FUZZ_CASES=N` runs N cases instead (the first 20,000 are the
//! default run's: case k's seed depends on k alone), and
//! `PIPELINE_FUZZ_SEED=S` replays the one case of seed S, printing its
//! tokens and expansion:
//!
//! ```text
//! PIPELINE_FUZZ_CASES=1000000 cargo test -p pipeline-core --test fuzz -- --nocapture
//! PIPELINE_FUZZ_SEED=12345 cargo test -p pipeline-core --test fuzz -- --nocapture
//! ```

mod corpus;

use corpus::Rng;
use proc_macro2::{Delimiter, Group, Punct, Spacing, TokenStream, TokenTree};
use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Cases of the default run.
const DEFAULT_CASES: usize = 20_000;

/// The longest an expansion may take.
const TIME_LIMIT: Duration = Duration::from_secs(2);

/// A case still running after this long is reported and the process ends:
/// a loop that never terminates would otherwise hang the test.
const HANG_LIMIT: Duration = Duration::from_secs(120);

/// How many expansions the minimization of one panic may try.
const MINIMIZE_BUDGET: usize = 2_000;

/// Identifiers a mutation may put in place of another: keywords, types,
/// directives, built-ins and the usual variables (one per word).
const IDENTS: &str = "\
    u8 u16 u32 u64 i8 i16 i32 i64 f32 f64 bool usize Image Func RDom Param \
    schedule compute_at compute_root compute_inline store_at vectorize parallel \
    unroll split tile reorder bound update auto estimate dim set_stride cuda \
    gpu_tile let fn for in if else pub mut self as x y c r rdom sum product \
    maximum minimum min max clamp abs absd lerp select saturating_cast sqrt exp \
    fma width height extent clamp_edge mirror mirror_interior wrap constant true \
    false NaN inf INFINITY _";

/// Literals (as source text; some lex to several tokens) a mutation may put
/// in place of another.
const LITERALS: &[&str] = &[
    "0",
    "1",
    "-1",
    "2",
    "255",
    "256",
    "65536",
    "2147483648",
    "4294967296",
    "9223372036854775807",
    "-9223372036854775808",
    "9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    "340282366920938463463374607431768211456",
    "0x7fff_ffff_ffff_ffff",
    "0b1",
    "1e309",
    "-1e309",
    "1e-320",
    "3.5e38f32",
    "0.0",
    "-0.0",
    "0.5",
    "1.0f64",
    "300u8",
    "-129i8",
    "4294967296i32",
    "18446744073709551616u64",
    "1usize",
    "7u128",
    "f32::NAN",
    "f64::INFINITY",
    "'a'",
    "\"text\"",
    "b'x'",
];

/// Punctuation a mutation may put in place of another.
const PUNCTS: &[char] = &[
    '+', '-', '*', '/', '%', ',', ';', '.', ':', '=', '<', '>', '!', '&', '|', '^', '#', '?', '@',
    '~', '$',
];

/// A token tree that can be edited in place (proc_macro2's groups cannot).
#[derive(Clone)]
enum Tok {
    /// An identifier, punctuation mark or literal.
    Leaf(TokenTree),
    /// A delimited group.
    Group(Delimiter, Vec<Tok>),
}

fn to_toks(stream: TokenStream) -> Vec<Tok> {
    stream
        .into_iter()
        .map(|t| match t {
            TokenTree::Group(g) => Tok::Group(g.delimiter(), to_toks(g.stream())),
            leaf => Tok::Leaf(leaf),
        })
        .collect()
}

fn to_stream(toks: &[Tok]) -> TokenStream {
    toks.iter()
        .map(|t| match t {
            Tok::Leaf(leaf) => leaf.clone(),
            Tok::Group(d, inner) => TokenTree::Group(Group::new(*d, to_stream(inner))),
        })
        .collect()
}

/// Tokens from source text the fuzzer itself wrote (always valid).
fn lex(text: &str) -> Vec<Tok> {
    to_toks(text.parse().expect("a fragment of valid tokens"))
}

/// The path of every token of the tree: the indices of the groups it lies
/// in, then its index in its own sequence.
fn positions(toks: &[Tok], prefix: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
    for (i, t) in toks.iter().enumerate() {
        prefix.push(i);
        out.push(prefix.clone());
        if let Tok::Group(_, inner) = t {
            positions(inner, prefix, out);
        }
        prefix.pop();
    }
}

/// The sequence that holds the token at `path`.
fn sequence<'a>(toks: &'a mut Vec<Tok>, path: &[usize]) -> &'a mut Vec<Tok> {
    match path {
        [_] => toks,
        [first, rest @ ..] => match &mut toks[*first] {
            Tok::Group(_, inner) => sequence(inner, rest),
            Tok::Leaf(_) => unreachable!("a path goes through groups"),
        },
        [] => unreachable!("a path is never empty"),
    }
}

fn at<'a>(toks: &'a [Tok], path: &[usize]) -> &'a Tok {
    let tok = &toks[path[0]];
    match (tok, &path[1..]) {
        (_, []) => tok,
        (Tok::Group(_, inner), rest) => at(inner, rest),
        (Tok::Leaf(_), _) => unreachable!("a path goes through groups"),
    }
}

fn show(toks: &[Tok]) -> String {
    to_stream(toks).to_string()
}

/// Tokens for a report: their beginning and end where they are long (the
/// seed replays the whole case).
fn show_short(toks: &[Tok]) -> String {
    const KEEP: usize = 1500;
    let text = show(toks);
    let chars: Vec<char> = text.chars().collect();
    if chars.len() <= 2 * KEEP {
        return text;
    }
    let head: String = chars[..KEEP].iter().collect();
    let tail: String = chars[chars.len() - KEEP..].iter().collect();
    format!("{head} ... ({} characters in all) ... {tail}", chars.len())
}

fn show_path(path: &[usize]) -> String {
    path.iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(".")
}

/// The kinds of mutation.
#[derive(Clone, Copy, Debug)]
enum Mutation {
    DeleteToken,
    DuplicateToken,
    SwapTokens,
    ReplaceIdent,
    ReplaceLiteral,
    DeleteGroup,
    DuplicateGroup,
    ChangeDelimiter,
    ReplacePunct,
}

const MUTATIONS: [Mutation; 9] = [
    Mutation::DeleteToken,
    Mutation::DuplicateToken,
    Mutation::SwapTokens,
    Mutation::ReplaceIdent,
    Mutation::ReplaceLiteral,
    Mutation::DeleteGroup,
    Mutation::DuplicateGroup,
    Mutation::ChangeDelimiter,
    Mutation::ReplacePunct,
];

/// Applies one mutation chosen by `seed` to `toks` and describes it. A kind
/// with no token to apply to (no literal in the tree) deletes a token
/// instead; an empty tree stays empty.
fn mutate(toks: &mut Vec<Tok>, seed: u64, source_idents: &[String]) -> String {
    let mut rng = Rng(seed | 1);
    let mut all = Vec::new();
    positions(toks, &mut Vec::new(), &mut all);
    if all.is_empty() {
        return "nothing to mutate".into();
    }
    let kind = *rng.pick(&MUTATIONS);
    let of_kind = |want: fn(&Tok) -> bool| -> Vec<Vec<usize>> {
        all.iter().filter(|p| want(at(toks, p))).cloned().collect()
    };
    let targets = match kind {
        Mutation::ReplaceIdent => of_kind(|t| matches!(t, Tok::Leaf(TokenTree::Ident(_)))),
        Mutation::ReplaceLiteral => of_kind(|t| matches!(t, Tok::Leaf(TokenTree::Literal(_)))),
        Mutation::ReplacePunct => of_kind(|t| matches!(t, Tok::Leaf(TokenTree::Punct(_)))),
        Mutation::DeleteGroup | Mutation::DuplicateGroup | Mutation::ChangeDelimiter => {
            of_kind(|t| matches!(t, Tok::Group(..)))
        }
        _ => all.clone(),
    };
    let (kind, path) = if targets.is_empty() {
        (Mutation::DeleteToken, rng.pick(&all).clone())
    } else {
        (kind, rng.pick(&targets).clone())
    };
    let index = *path.last().unwrap();
    let before = match at(toks, &path) {
        Tok::Leaf(t) => t.to_string(),
        Tok::Group(d, _) => format!("{d:?} group"),
    };
    let where_ = show_path(&path);
    let seq = sequence(toks, &path);
    let mut splice = |with: Vec<Tok>| {
        let text = show(&with);
        seq.splice(index..=index, with);
        text
    };
    match kind {
        Mutation::DeleteToken | Mutation::DeleteGroup => {
            seq.remove(index);
            format!("delete `{before}` at {where_}")
        }
        Mutation::DuplicateToken | Mutation::DuplicateGroup => {
            let copy = seq[index].clone();
            seq.insert(index, copy);
            format!("duplicate `{before}` at {where_}")
        }
        Mutation::SwapTokens => {
            // Another token of the group where there is one.
            let other = (index + 1 + rng.below(seq.len().max(2) - 1)) % seq.len();
            seq.swap(index, other);
            format!("swap `{before}` at {where_} with its group's token {other}")
        }
        Mutation::ReplaceIdent => {
            let with = if !source_idents.is_empty() && rng.chance(40) {
                rng.pick(source_idents).as_str()
            } else {
                *rng.pick(&IDENTS.split_whitespace().collect::<Vec<_>>())
            };
            let text = splice(lex(with));
            format!("replace `{before}` at {where_} with `{text}`")
        }
        Mutation::ReplaceLiteral => {
            let literal: &&str = rng.pick(LITERALS);
            let text = splice(lex(literal));
            format!("replace `{before}` at {where_} with `{text}`")
        }
        Mutation::ChangeDelimiter => {
            let delimiters = [
                Delimiter::Parenthesis,
                Delimiter::Bracket,
                Delimiter::Brace,
                Delimiter::None,
            ];
            let Tok::Group(old, _) = &mut seq[index] else {
                unreachable!("the target is a group")
            };
            let others: Vec<Delimiter> = delimiters.into_iter().filter(|d| d != old).collect();
            let d = *rng.pick(&others);
            *old = d;
            format!("make the {before} at {where_} a {d:?} group")
        }
        Mutation::ReplacePunct => {
            let spacing = if rng.chance(50) {
                Spacing::Alone
            } else {
                Spacing::Joint
            };
            let ch = *rng.pick(PUNCTS);
            seq[index] = Tok::Leaf(TokenTree::Punct(Punct::new(ch, spacing)));
            format!("replace `{before}` at {where_} with `{ch}` ({spacing:?})")
        }
    }
}

/// One invocation of the repository, ready to mutate.
struct Source {
    /// The pipelines it defines, to say which source a case came from.
    label: String,
    tokens: Vec<Tok>,
    /// Its distinct identifiers.
    idents: Vec<String>,
}

fn idents_of(toks: &[Tok], out: &mut Vec<String>) {
    for t in toks {
        match t {
            Tok::Leaf(TokenTree::Ident(i)) => {
                let s = i.to_string();
                if !out.contains(&s) {
                    out.push(s);
                }
            }
            Tok::Group(_, inner) => idents_of(inner, out),
            Tok::Leaf(_) => {}
        }
    }
}

/// The repository's invocations as text, each with the names of its
/// pipelines (text, since tokens cannot be shared between threads).
fn load_texts() -> Vec<(String, String)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for (text, name) in corpus::sources() {
        match out.iter_mut().find(|(t, _)| *t == text) {
            Some((_, names)) => names.push(name),
            None => out.push((text, vec![name])),
        }
    }
    out.into_iter()
        .map(|(text, names)| (names.join("+"), text))
        .collect()
}

/// The invocations as tokens, for one thread.
fn parse_sources(texts: &[(String, String)]) -> Vec<Source> {
    texts
        .iter()
        .map(|(label, text)| {
            let tokens = lex(text);
            let mut idents = Vec::new();
            idents_of(&tokens, &mut idents);
            Source {
                label: label.clone(),
                tokens,
                idents,
            }
        })
        .collect()
}

/// A mixer from a case's number to its seed (splitmix64), so that
/// neighbouring cases share nothing.
fn case_seed(k: u64) -> u64 {
    let mut z = k.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A case: which source, and the seed of each of its mutations.
struct Case {
    seed: u64,
    source: usize,
    plan: Vec<u64>,
}

impl Case {
    fn from_seed(seed: u64, sources: usize) -> Case {
        let mut rng = Rng(seed | 1);
        let source = rng.below(sources);
        let count = 1 + rng.below(4);
        let plan = (0..count).map(|_| rng.next()).collect();
        Case { seed, source, plan }
    }

    /// The mutated tokens and what each mutation did.
    fn build(&self, sources: &[Source]) -> (Vec<Tok>, Vec<String>) {
        let source = &sources[self.source];
        let mut toks = source.tokens.clone();
        let steps = self
            .plan
            .iter()
            .map(|&s| mutate(&mut toks, s, &source.idents))
            .collect();
        (toks, steps)
    }
}

/// What an expansion did.
enum Outcome {
    Code,
    Error,
    /// The panic's message and location.
    Panic(String),
}

thread_local! {
    /// Whether this thread's panics are the fuzzer's to record.
    static CAPTURING: Cell<bool> = const { Cell::new(false) };
    /// The message of this thread's last caught panic.
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// The CPU time the calling thread has run, where Linux reports it: unlike
/// wall time, other processes on a busy machine do not add to it (a CI
/// machine running other tests made the 2,000-term sums take 2.8 s of wall
/// time, 0.4 s of CPU).
fn thread_cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = stat.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(ns))
}

/// Expands `toks` under `catch_unwind`, timed by the thread's CPU time (or
/// wall time where that is not known).
fn expand(toks: &[Tok]) -> (Outcome, Duration) {
    let stream = to_stream(toks);
    CAPTURING.with(|c| c.set(true));
    let cpu = thread_cpu_time();
    let start = Instant::now();
    let result = std::panic::catch_unwind(|| {
        pipeline_core::expand(stream)
            .into_iter()
            .any(|t| matches!(&t, TokenTree::Ident(i) if i == "compile_error"))
    });
    let elapsed = match (cpu, thread_cpu_time()) {
        (Some(before), Some(after)) => after.saturating_sub(before),
        _ => start.elapsed(),
    };
    CAPTURING.with(|c| c.set(false));
    let outcome = match result {
        Ok(false) => Outcome::Code,
        Ok(true) => Outcome::Error,
        Err(_) => Outcome::Panic(
            LAST_PANIC
                .with(|p| p.borrow_mut().take())
                .unwrap_or_else(|| "(no message)".into()),
        ),
    };
    (outcome, elapsed)
}

/// Routes panics on capturing threads to `LAST_PANIC` while it lives, and
/// restores the previous hook when dropped.
struct QuietPanics {
    previous: Arc<dyn Fn(&std::panic::PanicHookInfo<'_>) + Send + Sync>,
}

impl QuietPanics {
    fn install() -> QuietPanics {
        let previous: Arc<dyn Fn(&std::panic::PanicHookInfo<'_>) + Send + Sync> =
            Arc::from(std::panic::take_hook());
        let chained = previous.clone();
        std::panic::set_hook(Box::new(move |info| {
            if !CAPTURING.with(Cell::get) {
                return chained(info);
            }
            let payload = info.payload();
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "(a non-string payload)".into());
            let location = info
                .location()
                .map_or(String::new(), |l| format!(" at {}:{}", l.file(), l.line()));
            LAST_PANIC.with(|p| *p.borrow_mut() = Some(format!("{message}{location}")));
        }));
        QuietPanics { previous }
    }
}

impl Drop for QuietPanics {
    fn drop(&mut self) {
        if std::thread::panicking() {
            // The hook cannot change now; the capturing flag is off on
            // this thread, so ours passes its panics on anyway.
            return;
        }
        drop(std::panic::take_hook());
        let previous = self.previous.clone();
        std::panic::set_hook(Box::new(move |info| previous(info)));
    }
}

/// Where a panic message says it happened.
fn location(message: &str) -> &str {
    message.rsplit(" at ").next().unwrap_or(message)
}

/// A smaller input that panics at the same place: the fewest of the case's
/// mutations, then tokens deleted (and groups replaced by their contents)
/// one at a time while the panic stays.
fn minimize(case: &Case, sources: &[Source], message: &str) -> (Vec<String>, String) {
    let mut budget = MINIMIZE_BUDGET;
    let mut still_panics = |toks: &[Tok]| -> bool {
        if budget == 0 {
            return false;
        }
        budget -= 1;
        matches!(expand(toks).0, Outcome::Panic(m) if location(&m) == location(message))
    };
    // Fewer mutations: each alone, then all but one, until none can go.
    let mut plan = case.plan.clone();
    let subset = |plan: Vec<u64>| Case {
        seed: case.seed,
        source: case.source,
        plan,
    };
    if let Some(&one) = plan
        .iter()
        .find(|&&s| still_panics(&subset(vec![s]).build(sources).0))
    {
        plan = vec![one];
    }
    let mut k = 0;
    while plan.len() > 1 && k < plan.len() {
        let mut fewer = plan.clone();
        fewer.remove(k);
        if still_panics(&subset(fewer.clone()).build(sources).0) {
            plan = fewer;
        } else {
            k += 1;
        }
    }
    let (mut toks, steps) = subset(plan).build(sources);
    // Shorter: walk the tree's positions once, from the last (deleting it
    // leaves the earlier paths valid).
    let mut all = Vec::new();
    positions(&toks, &mut Vec::new(), &mut all);
    for path in all.iter().rev() {
        let index = *path.last().unwrap();
        let mut deleted = toks.clone();
        sequence(&mut deleted, path).remove(index);
        if still_panics(&deleted) {
            toks = deleted;
            continue;
        }
        if let Tok::Group(_, inner) = at(&toks, path) {
            let inner = inner.clone();
            let mut flattened = toks.clone();
            sequence(&mut flattened, path).splice(index..=index, inner);
            if still_panics(&flattened) {
                toks = flattened;
            }
        }
    }
    (steps, show_short(&toks))
}

/// A case that failed, ready to print.
struct Failure {
    seed: u64,
    source: String,
    problem: String,
    steps: Vec<String>,
    tokens: String,
    /// For a panic: the smaller input's mutations and tokens, and the
    /// seeds of the other cases that panicked at the same place.
    minimized: Option<(Vec<String>, String)>,
    same_place: Vec<u64>,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "case PIPELINE_FUZZ_SEED={} ({}): {}",
            self.seed, self.source, self.problem
        )?;
        writeln!(f, "  mutations:")?;
        for s in &self.steps {
            writeln!(f, "    {s}")?;
        }
        writeln!(f, "  tokens: {}", self.tokens)?;
        if let Some((steps, tokens)) = &self.minimized {
            writeln!(f, "  minimized, with {} of its mutations:", steps.len())?;
            for s in steps {
                writeln!(f, "    {s}")?;
            }
            writeln!(f, "  minimized tokens: {tokens}")?;
        }
        if !self.same_place.is_empty() {
            let shown: Vec<String> = self
                .same_place
                .iter()
                .take(10)
                .map(u64::to_string)
                .collect();
            writeln!(
                f,
                "  {} more cases panicked at the same place, seeds {}{}",
                self.same_place.len(),
                shown.join(", "),
                if self.same_place.len() > 10 {
                    ", ..."
                } else {
                    ""
                }
            )?;
        }
        Ok(())
    }
}

/// What the workers found.
#[derive(Default)]
struct Tally {
    cases: usize,
    code: usize,
    errors: usize,
    panics: Vec<(Case, String)>,
    slow: Vec<(Case, Duration)>,
    /// The slowest expansion: its time, seed and source.
    slowest: (Duration, u64, usize),
}

impl Tally {
    fn add(&mut self, other: Tally) {
        self.cases += other.cases;
        self.code += other.code;
        self.errors += other.errors;
        self.panics.extend(other.panics);
        self.slow.extend(other.slow);
        self.slowest = self.slowest.max(other.slowest);
    }
}

fn env_number(name: &str) -> Option<u64> {
    let value = std::env::var(name).ok()?;
    Some(
        value
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name}={value}: expected a number")),
    )
}

/// Runs cases `0..count` on every core, with a watchdog for hangs.
fn run_all(count: usize, texts: &[(String, String)]) -> Tally {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let next = AtomicUsize::new(0);
    let done = AtomicBool::new(false);
    // What each worker is expanding, and since when.
    let running: Vec<Mutex<Option<(Instant, u64)>>> =
        (0..threads).map(|_| Mutex::new(None)).collect();
    std::thread::scope(|s| {
        let workers: Vec<_> = running
            .iter()
            .map(|slot| {
                let next = &next;
                s.spawn(move || {
                    let sources = &parse_sources(texts);
                    let mut tally = Tally::default();
                    loop {
                        let k = next.fetch_add(1, Ordering::Relaxed);
                        if k >= count {
                            break;
                        }
                        let case = Case::from_seed(case_seed(k as u64), sources.len());
                        let (toks, _) = case.build(sources);
                        *slot.lock().unwrap() = Some((Instant::now(), case.seed));
                        let (outcome, took) = expand(&toks);
                        *slot.lock().unwrap() = None;
                        tally.cases += 1;
                        tally.slowest = tally.slowest.max((took, case.seed, case.source));
                        if took > TIME_LIMIT {
                            tally
                                .slow
                                .push((Case::from_seed(case.seed, sources.len()), took));
                        }
                        match outcome {
                            Outcome::Code => tally.code += 1,
                            Outcome::Error => tally.errors += 1,
                            Outcome::Panic(message) => tally.panics.push((case, message)),
                        }
                    }
                    tally
                })
            })
            .collect();
        s.spawn(|| {
            let sources = &parse_sources(texts);
            while !done.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(200));
                for slot in &running {
                    if let Some((start, seed)) = *slot.lock().unwrap() {
                        if start.elapsed() > HANG_LIMIT {
                            let case = Case::from_seed(seed, sources.len());
                            let (toks, steps) = case.build(sources);
                            eprintln!(
                                "case PIPELINE_FUZZ_SEED={seed} ({}) has been expanding for {:?}:\n    {}\n  tokens: {}",
                                sources[case.source].label,
                                start.elapsed(),
                                steps.join("\n    "),
                                show_short(&toks)
                            );
                            std::process::exit(1);
                        }
                    }
                }
            }
        });
        let mut total = Tally::default();
        for w in workers {
            total.add(w.join().expect("a worker thread"));
        }
        done.store(true, Ordering::Relaxed);
        total
    })
}

/// Replays the case of one seed, printing it and its expansion.
fn replay(seed: u64, sources: &[Source]) -> Option<Failure> {
    let case = Case::from_seed(seed, sources.len());
    let (toks, steps) = case.build(sources);
    let label = &sources[case.source].label;
    println!("case PIPELINE_FUZZ_SEED={seed} ({label}):");
    for s in &steps {
        println!("    {s}");
    }
    println!("  tokens: {}", show(&toks));
    let (outcome, took) = expand(&toks);
    println!("  expanded in {took:.2?}");
    let failure = |problem: String| Failure {
        seed,
        source: label.clone(),
        problem,
        steps: steps.clone(),
        tokens: show_short(&toks),
        minimized: None,
        same_place: Vec::new(),
    };
    match outcome {
        Outcome::Panic(message) => Some(failure(format!("panicked: {message}"))),
        _ if took > TIME_LIMIT => Some(failure(format!("took {took:.2?}"))),
        _ => {
            let out = pipeline_core::expand(to_stream(&toks)).to_string();
            let shown: String = out.chars().take(4000).collect();
            println!("  expansion ({} chars): {shown}", out.len());
            None
        }
    }
}

#[test]
fn mutated_invocations_expand_without_panics_in_bounded_time() {
    let texts = load_texts();
    let sources = parse_sources(&texts);
    assert!(sources.len() >= 20, "the repository's invocations");
    let quiet = QuietPanics::install();
    if let Some(seed) = env_number("PIPELINE_FUZZ_SEED") {
        let failure = replay(seed, &sources);
        drop(quiet);
        if let Some(f) = failure {
            panic!("{f}");
        }
        return;
    }
    let count = env_number("PIPELINE_FUZZ_CASES").map_or(DEFAULT_CASES, |n| n as usize);
    let start = Instant::now();
    let tally = run_all(count, &texts);
    let wall = start.elapsed();

    // One report per place that panicked, from its first case.
    let mut failures: Vec<Failure> = Vec::new();
    let mut places: Vec<(&str, usize)> = Vec::new();
    for (case, message) in &tally.panics {
        if let Some(&(_, k)) = places.iter().find(|(p, _)| *p == location(message)) {
            failures[k].same_place.push(case.seed);
            continue;
        }
        places.push((location(message), failures.len()));
        let (toks, steps) = case.build(&sources);
        failures.push(Failure {
            seed: case.seed,
            source: sources[case.source].label.clone(),
            problem: format!("panicked: {message}"),
            steps,
            tokens: show_short(&toks),
            minimized: Some(minimize(case, &sources, message)),
            same_place: Vec::new(),
        });
    }
    // A slow case counts only if it is slow alone too.
    for (case, took) in &tally.slow {
        let (toks, steps) = case.build(&sources);
        let (_, alone) = expand(&toks);
        if alone > TIME_LIMIT {
            failures.push(Failure {
                seed: case.seed,
                source: sources[case.source].label.clone(),
                problem: format!("took {took:.2?} ({alone:.2?} alone), over {TIME_LIMIT:?}"),
                steps,
                tokens: show_short(&toks),
                minimized: None,
                same_place: Vec::new(),
            });
        }
    }
    let (slowest, seed, source) = tally.slowest;
    println!(
        "fuzz: {} cases in {wall:.1?} on {} threads, {} panics, {} over {TIME_LIMIT:?} \
         ({} alone); slowest {:.1} ms (PIPELINE_FUZZ_SEED={seed}, {}); {} expanded to code, {} to compile errors",
        tally.cases,
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        tally.panics.len(),
        tally.slow.len(),
        failures.len() - places.len(),
        slowest.as_secs_f64() * 1e3,
        sources[source].label,
        tally.code,
        tally.errors,
    );
    drop(quiet);
    if !failures.is_empty() {
        let report: Vec<String> = failures.iter().map(Failure::to_string).collect();
        panic!("{} failing cases:\n{}", failures.len(), report.join("\n"));
    }
}

/// Every braced group of `toks`, at any depth.
fn brace_groups(toks: &[Tok], out: &mut Vec<Group>) {
    for t in toks {
        if let Tok::Group(d, inner) = t {
            if *d == Delimiter::Brace {
                out.push(Group::new(*d, to_stream(inner)));
            }
            brace_groups(inner, out);
        }
    }
}

/// The parser of common bodies (`front::quick`) reads a mutated body as
/// syn does or leaves it to syn: on the first quarter of the expansion
/// run's cases, every braced group of every case, the tree it builds is
/// syn's, and it builds none where syn finds an error.
#[test]
fn mutated_bodies_are_read_as_syn_reads_them() {
    // Deep trees (the 2,000-term sums) are built and dropped by recursion,
    // as in the macro, which runs on a stack of its own.
    std::thread::Builder::new()
        .stack_size(1 << 30)
        .spawn(compare_bodies)
        .unwrap()
        .join()
        .unwrap();
}

fn compare_bodies() {
    let texts = load_texts();
    let sources = parse_sources(&texts);
    // A quarter of the expansion run's cases: comparing syn's trees of the
    // long sums is most of the time.
    let count = env_number("PIPELINE_FUZZ_CASES").map_or(DEFAULT_CASES / 4, |n| n as usize);
    let (mut read, mut groups) = (0, 0);
    for k in 0..count {
        let case = Case::from_seed(case_seed(k as u64), sources.len());
        let (toks, steps) = case.build(&sources);
        let mut found = Vec::new();
        brace_groups(&toks, &mut found);
        for g in found {
            groups += 1;
            let Some(quick) = pipeline_core::front::quick::block(&g) else {
                continue;
            };
            read += 1;
            let stream = TokenStream::from(TokenTree::Group(g.clone()));
            match syn::parse2::<syn::Block>(stream) {
                Ok(block) => assert!(
                    quick == block,
                    "case {} ({steps:?}): read otherwise than syn reads it: {g}",
                    case.seed
                ),
                Err(e) => panic!(
                    "case {} ({steps:?}): read, where syn finds `{e}`: {g}",
                    case.seed
                ),
            }
        }
    }
    println!("{read} of {groups} bodies read");
    assert!(read * 2 > groups, "{read} of {groups} bodies read");
}
