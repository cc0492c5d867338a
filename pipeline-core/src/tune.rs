//! Candidate schedules for the offline tuner (`cargo pipeline tune`, in
//! `pipeline-build`; this module does no I/O). The tuner starts from the
//! auto-scheduler's choice, then climbs: it times a round of candidates,
//! keeps the fastest, and proposes its neighbours, as the Halide autotuner
//! (Ragan-Kelley et al. 2013, section 5) and VizGen's hill climbing do.
//!
//! - [`Tunable::seeds`]: the auto-scheduler's choices under several machine
//!   models (threads, vector width, L2) and without fusion, the default
//!   first; the same schedule from two models is proposed once.
//! - [`Tunable::mutations`]: every schedule one step away from a given one:
//!   a split, tile or vector width halved or doubled, a fused func moved to
//!   another loop of its consumer, computed at root, or without its sliding
//!   window, a func inlined or an inlined one computed (at root, at a
//!   loop of its consumer, in a sliding window), a parallel or unrolled
//!   loop made plain.
//! - [`Tunable::combination`]: two steps from one schedule taken at once
//!   (the tuner combines the steps that each made it faster).
//!
//! Every candidate is checked and lowered exactly as a cache entry is
//! (`schedule::cache::choose`), so what the tuner times is what the macro
//! will accept; what fails is returned with its reason, never a panic.
//! Candidates are schedule text, the body of a block: a cache entry's value.

use crate::front::check::CheckedPipeline;
use crate::front::schedule::BlockOptions;
use crate::ir::Pipeline;
use crate::schedule::auto::Machine;
use crate::schedule::cache::{self, Key};
use crate::schedule::Schedule;
use proc_macro2::{Delimiter, TokenStream, TokenTree};
use std::collections::HashSet;

/// One schedule to time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    /// The body of a `schedule` block, one statement per line.
    pub schedule: String,
    /// Where it came from (`auto`, `auto with l2=256K`, `blur_x: split 32 -> 64`).
    pub origin: String,
}

/// A candidate that does not check or lower.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejected {
    /// The schedule text.
    pub schedule: String,
    /// Where it came from.
    pub origin: String,
    /// Why the macro would not take it.
    pub reason: String,
}

/// One pipeline of a `pipeline!` invocation, ready to tune.
pub struct Tunable {
    tokens: TokenStream,
    checked: CheckedPipeline,
    /// What the pipeline's block declares (layouts), before scheduling.
    user: Schedule,
    block: Option<BlockOptions>,
}

/// The names of the pipelines of a `pipeline!` invocation, in order.
pub fn pipeline_names(source: &str) -> Result<Vec<String>, String> {
    let tokens: TokenStream = source.parse().map_err(|e| format!("{e:?}"))?;
    let program: crate::front::parse::Program = syn::parse2(tokens).map_err(|e| e.to_string())?;
    Ok(program
        .pipelines
        .iter()
        .map(|p| p.sig.ident.to_string())
        .collect())
}

impl Tunable {
    /// Pipeline `name` of the text of a `pipeline!` invocation, as the
    /// macro sees it (`PIPELINE_SCHEDULE` included: under `tuned`, a
    /// pipeline with a block is tuned as if the block said only `auto;`).
    pub fn from_source(source: &str, name: &str) -> Result<Tunable, String> {
        crate::on_big_stack(|| {
            let (tokens, checked, mut user, mut block) = crate::with_cpu_block(source, name)?;
            crate::schedule_override(&checked, &mut user, block.as_mut());
            Ok(Tunable {
                tokens,
                checked,
                user,
                block,
            })
        })
    }

    /// The pipeline's name.
    pub fn name(&self) -> String {
        self.checked.ident.to_string()
    }

    /// The checked pipeline (for the interpreter).
    pub fn pipeline(&self) -> &Pipeline {
        &self.checked.pipeline
    }

    /// The strides the block declares of each input's dimensions.
    pub fn input_strides(&self) -> &[Vec<Option<usize>>] {
        &self.user.input_strides
    }

    /// Whether the macro would read a cache entry for it: without a block,
    /// or with one that only states facts. A block that schedules funcs
    /// wins over the cache, so tuning it would change nothing.
    pub fn consults_cache(&self) -> bool {
        crate::schedule_env() != Some("auto") && crate::consults_cache(self.block.as_ref())
    }

    /// The key of the CPU entry that serves it on `at` (`target_arch` and
    /// level).
    pub fn key(&self, at: (&str, &str)) -> Key {
        cache::key_for(
            &self.tokens,
            &self.checked.pipeline,
            self.block.as_ref().map(|b| &b.estimates),
            &self.user.input_strides,
            at,
        )
    }

    /// The input layout the block declares, as statements (empty, or
    /// `input.dim(0).set_stride(3);`): every candidate states it, as a
    /// cache entry must.
    fn layout_statements(&self) -> String {
        let l = cache::layout(&self.checked.pipeline, &self.user.input_strides);
        l.split("; ")
            .filter(|s| !s.is_empty())
            .map(|s| format!("{s};\n"))
            .collect()
    }

    /// Checks `schedule` exactly as the macro checks a cache entry, and
    /// lowers it.
    pub fn lower(&self, schedule: &str) -> Result<crate::Lowered, String> {
        crate::on_big_stack(|| {
            cache::choose::lowered_text(&self.checked, &self.user, schedule, "the tuner")
        })
    }

    /// Whether the macro would take `schedule` as a cache entry: `Err`
    /// says why not.
    pub fn check(&self, schedule: &str) -> Result<(), String> {
        self.lower(schedule).map(|_| ())
    }

    /// The auto-scheduler's choice under `machine`, as entry text.
    fn auto(&self, machine: &Machine, fuse: bool) -> Result<String, String> {
        let (_, plan) = crate::on_big_stack(|| {
            crate::auto_complete(
                &self.checked,
                &self.user,
                self.block.as_ref(),
                machine,
                fuse,
            )
        })
        .map_err(|e| e.to_string())?;
        Ok(format!(
            "{}{}",
            self.layout_statements(),
            plan.text(&self.checked.pipeline)
        ))
    }

    /// The auto-scheduler's choices: first the one the macro makes
    /// without a cache (`machine`, the build's model), then under other
    /// models and without fusion, each schedule once.
    pub fn seeds(&self, machine: &Machine) -> (Vec<Candidate>, Vec<Rejected>) {
        let mut models = vec![(machine.clone(), true, "auto".to_string())];
        for threads in [4, 16, 64] {
            for vector_bytes in [32, 64] {
                for l2 in [256 << 10, 1 << 20, 4 << 20] {
                    let m = Machine {
                        threads,
                        vector_bytes,
                        l2_bytes: l2,
                    };
                    let origin = format!("auto with PIPELINE_MACHINE={}", m.describe());
                    models.push((m, true, origin));
                }
            }
        }
        models.push((
            machine.clone(),
            false,
            "auto without fusion (every func at root)".into(),
        ));
        let mut sorted = Sorted::default();
        for (m, fuse, origin) in models {
            match self.auto(&m, fuse) {
                Ok(text) => self.offer(&mut sorted, text, origin),
                Err(reason) => sorted.rejected.push(Rejected {
                    schedule: String::new(),
                    origin,
                    reason,
                }),
            }
        }
        (sorted.out, sorted.rejected)
    }

    /// Every schedule one step from `schedule`, checked: the legal ones,
    /// and the others with their reasons. Text that does not parse as
    /// statements gives no neighbours.
    pub fn mutations(&self, schedule: &str) -> (Vec<Candidate>, Vec<Rejected>) {
        let Some(stmts) = parse_statements(schedule) else {
            return (Vec::new(), Vec::new());
        };
        let mut sorted = Sorted {
            seen: HashSet::from([normalized(schedule)]),
            ..Sorted::default()
        };
        for (next, origin) in neighbours(&self.checked.pipeline, &stmts) {
            self.offer(&mut sorted, print_statements(&next), origin);
        }
        (sorted.out, sorted.rejected)
    }

    /// Both steps that took `base` to `a` and to `b` at once, checked: the
    /// tuner tries it when both were faster than `base`. `None` where the
    /// steps changed the same func differently.
    pub fn combination(
        &self,
        base: &Candidate,
        a: &Candidate,
        b: &Candidate,
    ) -> Option<Result<Candidate, Rejected>> {
        let text = combined(&base.schedule, &a.schedule, &b.schedule)?;
        let origin = format!("{} + {}", a.origin, b.origin);
        Some(match self.check(&text) {
            Ok(()) => Ok(Candidate {
                schedule: text,
                origin,
            }),
            Err(reason) => Err(Rejected {
                schedule: text,
                origin,
                reason,
            }),
        })
    }

    /// Checks a proposal not seen before and files it.
    fn offer(&self, sorted: &mut Sorted, text: String, origin: String) {
        if !sorted.seen.insert(normalized(&text)) {
            return;
        }
        match self.check(&text) {
            Ok(()) => sorted.out.push(Candidate {
                schedule: text,
                origin,
            }),
            Err(reason) => sorted.rejected.push(Rejected {
                schedule: text,
                origin,
                reason,
            }),
        }
    }

    /// The text of the invocation with `schedule` as the pipeline's CPU
    /// block (in place of the one it has, if any), for a benchmark crate.
    /// The other pipelines and their blocks are kept.
    pub fn invocation_with(&self, schedule: &str) -> String {
        let name = self.name();
        let tokens: Vec<TokenTree> = self.tokens.clone().into_iter().collect();
        let mut out = TokenStream::new();
        let mut i = 0;
        while i < tokens.len() {
            // `schedule NAME { .. }`, not `schedule NAME for cuda { .. }`.
            let is_block = matches!(&tokens[i], TokenTree::Ident(s) if s == "schedule")
                && matches!(tokens.get(i + 1), Some(TokenTree::Ident(n)) if *n == name)
                && matches!(tokens.get(i + 2), Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Brace);
            if is_block {
                i += 3;
                continue;
            }
            out.extend([tokens[i].clone()]);
            i += 1;
        }
        format!("{out}\nschedule {name} {{\n{schedule}}}\n")
    }
}

/// Proposals sorted into legal and rejected, each text once.
#[derive(Default)]
struct Sorted {
    seen: HashSet<String>,
    out: Vec<Candidate>,
    rejected: Vec<Rejected>,
}

/// Schedule text without whitespace, to tell candidates apart (here and
/// in the tuner's record of what it tried).
pub fn normalized(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).collect()
}

/// One statement of a block: `subject.directive(args).directive(args);`.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Statement {
    subject: String,
    directives: Vec<(String, Vec<String>)>,
}

/// The statements of a block's body, or `None` where it holds anything
/// else (the tuner's own text always parses).
fn parse_statements(text: &str) -> Option<Vec<Statement>> {
    let tokens: Vec<TokenTree> = text.parse::<TokenStream>().ok()?.into_iter().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let TokenTree::Ident(subject) = &tokens[i] else {
            return None;
        };
        let mut s = Statement {
            subject: subject.to_string(),
            directives: Vec::new(),
        };
        i += 1;
        // A func of a template's instance or of a compile-time loop is
        // named by a path, `blurred.blur_z`, `gauss[1].reduce_x`: indices,
        // and dots between names not followed by arguments.
        loop {
            match (tokens.get(i), tokens.get(i + 1), tokens.get(i + 2)) {
                (Some(TokenTree::Group(g)), ..) if g.delimiter() == Delimiter::Bracket => {
                    let index: String = g.to_string().split_whitespace().collect();
                    s.subject += &index;
                    i += 1;
                }
                (Some(TokenTree::Punct(dot)), Some(TokenTree::Ident(part)), next)
                    if dot.as_char() == '.'
                        && !matches!(next, Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Parenthesis) =>
                {
                    s.subject = format!("{}.{part}", s.subject);
                    i += 2;
                }
                _ => break,
            }
        }
        loop {
            match tokens.get(i) {
                Some(TokenTree::Punct(p)) if p.as_char() == ';' => {
                    i += 1;
                    break;
                }
                Some(TokenTree::Punct(p)) if p.as_char() == '.' => {
                    let (Some(TokenTree::Ident(d)), Some(TokenTree::Group(g))) =
                        (tokens.get(i + 1), tokens.get(i + 2))
                    else {
                        return None;
                    };
                    if g.delimiter() != Delimiter::Parenthesis {
                        return None;
                    }
                    s.directives.push((d.to_string(), arguments(g.stream())));
                    i += 3;
                }
                // `auto;` and the like have no directives.
                None if s.directives.is_empty() => return None,
                _ => return None,
            }
        }
        out.push(s);
    }
    Some(out)
}

/// The comma-separated arguments of a directive, as text.
fn arguments(stream: TokenStream) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for t in stream {
        match &t {
            TokenTree::Punct(p) if p.as_char() == ',' => {
                out.push(std::mem::take(&mut current));
            }
            _ => {
                // `gauss[1]`, `-1`: no space before an index or a punct.
                let tight = matches!(&t, TokenTree::Punct(_))
                    || matches!(&t, TokenTree::Group(g) if g.delimiter() == Delimiter::Bracket);
                if !current.is_empty() && !tight {
                    current.push(' ');
                }
                current += &t.to_string();
            }
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

fn print_statements(stmts: &[Statement]) -> String {
    let mut s = String::new();
    for st in stmts {
        s += &st.subject;
        for (d, args) in &st.directives {
            s += &format!(".{d}({})", args.join(", "));
        }
        s += ";\n";
    }
    s
}

/// The integer argument `k` of a directive, if it is one.
fn int_arg(args: &[String], k: usize) -> Option<i64> {
    args.get(k)?.parse().ok()
}

/// Every schedule one step from `stmts`, with what the step was. Only
/// statements about funcs change (an input's layout is a fact).
fn neighbours(p: &Pipeline, stmts: &[Statement]) -> Vec<(Vec<Statement>, String)> {
    let mut out = Vec::new();
    let func_of = |name: &str| p.funcs.iter().position(|f| f.name == name);
    for (i, st) in stmts.iter().enumerate() {
        let Some(f) = func_of(&st.subject) else {
            continue;
        };
        let name = &st.subject;
        let with = |directives: Vec<(String, Vec<String>)>| {
            let mut next = stmts.to_vec();
            next[i].directives = directives;
            next
        };
        // Factors: a split's, a tile's, a vector width, an unroll.
        for (j, (d, args)) in st.directives.iter().enumerate() {
            let factor_args: &[usize] = match (d.as_str(), args.len()) {
                ("split", 4) => &[3],
                ("tile", 8) => &[6, 7],
                ("vectorize", 2) | ("unroll", 2) => &[1],
                _ => &[],
            };
            for &k in factor_args {
                let Some(n) = int_arg(args, k) else { continue };
                for m in [n / 2, n * 2] {
                    let lowest = if d == "vectorize" { 2 } else { 1 };
                    if m < lowest || m > 4096 || m == n {
                        continue;
                    }
                    let mut ds = st.directives.clone();
                    ds[j].1[k] = m.to_string();
                    out.push((with(ds), format!("{name}: {d} factor {n} -> {m}")));
                }
            }
            if d == "parallel" || d == "unroll" {
                let mut ds = st.directives.clone();
                ds.remove(j);
                out.push((with(ds), format!("{name}: no {d}({})", args.join(", "))));
            }
        }
        let has = |d: &str| st.directives.iter().any(|(x, _)| x == d);
        let without = |names: &[&str]| -> Vec<(String, Vec<String>)> {
            st.directives
                .iter()
                .filter(|(d, _)| !names.contains(&d.as_str()))
                .cloned()
                .collect()
        };
        if let Some((_, at)) = st.directives.iter().find(|(d, _)| d == "compute_at") {
            if has("store_at") {
                out.push((
                    with(without(&["store_at"])),
                    format!("{name}: no sliding window (store_at dropped)"),
                ));
            }
            let mut ds = without(&["compute_at", "store_at"]);
            ds.insert(0, ("compute_root".into(), Vec::new()));
            out.push((with(ds), format!("{name}: computed at root")));
            // Another loop of the consumer it is computed in.
            if let (Some(host), Some(level)) = (at.first(), at.get(1)) {
                for other in loops_of(stmts, host, p) {
                    if other != *level {
                        let mut ds = st.directives.clone();
                        for (d, args) in ds.iter_mut() {
                            if d == "compute_at" || (d == "store_at" && args.get(1) == Some(level))
                            {
                                args[1] = other.clone();
                            }
                        }
                        out.push((with(ds), format!("{name}: computed at {host}.{other}")));
                    }
                }
            }
        }
        out.extend(column_tiles(p, stmts, i, f));
        if !p.outputs.contains(&f) && p.funcs[f].updates.is_empty() && !has("compute_inline") {
            out.push((
                with(vec![("compute_inline".into(), Vec::new())]),
                format!("{name}: inlined"),
            ));
        }
        if has("compute_inline") {
            for (directives, how) in uninlined(p, stmts, f) {
                out.push((with(directives), format!("{name}: {how}")));
            }
        }
    }
    out
}

/// A statement's directives: names and arguments.
type Directives = Vec<(String, Vec<String>)>;

/// Directive `name(args)`.
fn directive(name: &str, args: &[&str]) -> (String, Vec<String>) {
    (
        name.to_string(),
        args.iter().map(|a| a.to_string()).collect(),
    )
}

/// Statement `i`'s (about func `f`) strips of rows cut into column tiles, 256 and 1024
/// columns wide, the funcs stored or computed per strip moved into each
/// tile: the rows a sliding window keeps are then as wide as a tile, not
/// as the image (a 5x5 Gaussian of 4096 columns ran 10% faster on a Zen 4
/// with them in L1). Only a func whose first dimension is not split
/// otherwise than by its vectors, and which hosts funcs at its strips.
fn column_tiles(
    p: &Pipeline,
    stmts: &[Statement],
    i: usize,
    f: usize,
) -> Vec<(Vec<Statement>, String)> {
    let (st, func) = (&stmts[i], &p.funcs[f]);
    let Some(x) = func.vars.first() else {
        return Vec::new();
    };
    // The pure stage's directives (an update's follow `update(k)`).
    let pure = st
        .directives
        .iter()
        .position(|(d, _)| d == "update")
        .unwrap_or(st.directives.len());
    let Some((at, yo, yi)) = st.directives[..pure]
        .iter()
        .enumerate()
        .find_map(|(k, (d, a))| {
            (d == "split" && a.len() == 4 && a[0] != *x && func.vars.contains(&a[0]))
                .then(|| (k, a[1].clone(), a[2].clone()))
        })
    else {
        return Vec::new();
    };
    let shaped = st.directives[..pure].iter().any(|(d, a)| {
        matches!(d.as_str(), "tile" | "reorder")
            || (matches!(d.as_str(), "split" | "unroll") && a.first() == Some(x))
    });
    let (xo, xi) = (format!("{x}o"), format!("{x}i"));
    let taken = loops_of(stmts, &st.subject, p);
    if shaped || taken.contains(&xo) || taken.contains(&xi) {
        return Vec::new();
    }
    let per_strip = |d: &str, a: &[String]| {
        matches!(d, "store_at" | "compute_at") && a.len() == 2 && a[0] == st.subject && a[1] == yo
    };
    let hosts = stmts
        .iter()
        .flat_map(|s| &s.directives)
        .any(|(d, a)| per_strip(d, a));
    if !hosts {
        return Vec::new();
    }
    [256, 1024]
        .into_iter()
        .map(|t| {
            let mut next = stmts.to_vec();
            let ds = &mut next[i].directives;
            for (d, a) in ds[..pure].iter_mut() {
                if d == "vectorize" && a.first() == Some(x) {
                    a[0] = xi.clone();
                }
            }
            ds.insert(at + 1, directive("split", &[x, &xo, &xi, &t.to_string()]));
            ds.insert(at + 2, directive("reorder", &[&xi, &yi, &xo, &yo]));
            for s in next.iter_mut() {
                for (d, a) in s.directives.iter_mut() {
                    if per_strip(d, a) {
                        a[1] = xo.clone();
                    }
                }
            }
            (
                next,
                format!("{}: strips in column tiles of {t}", st.subject),
            )
        })
        .collect()
}

/// Ways to compute an inlined func `f` instead: at root, split and
/// parallel over its outermost dimension, and, where one func reads it,
/// at each loop of that consumer, with a sliding window over its
/// innermost split; vectorized at the schedule's widest factor.
fn uninlined(p: &Pipeline, stmts: &[Statement], f: usize) -> Vec<(Directives, String)> {
    let func = &p.funcs[f];
    let Some(inner) = func.vars.first() else {
        return Vec::new();
    };
    let lanes = stmts
        .iter()
        .flat_map(|s| &s.directives)
        .filter(|(d, args)| d == "vectorize" && args.len() == 2)
        .filter_map(|(_, args)| int_arg(args, 1))
        .max()
        .unwrap_or(8);
    let vector = directive("vectorize", &[inner, &lanes.to_string()]);
    let mut out = Vec::new();
    let mut root = vec![directive("compute_root", &[])];
    if func.vars.len() > 1 {
        let outer = func.vars.last().unwrap();
        let (o, i) = (format!("{outer}o"), format!("{outer}i"));
        root.push(directive("split", &[outer, &o, &i, "16"]));
        root.push(directive("parallel", &[&o]));
    }
    root.push(vector.clone());
    out.push((root, "computed at root".to_string()));
    let consumers = p.consumers(f);
    let [c] = consumers[..] else {
        return out;
    };
    let host = &p.funcs[c].name;
    // The consumer's splits, innermost last: (outer, inner) loop names.
    let splits: Vec<(String, String)> = stmts
        .iter()
        .filter(|s| s.subject == *host)
        .flat_map(|s| &s.directives)
        .filter(|(d, args)| d == "split" && args.len() == 4)
        .map(|(_, args)| (args[1].clone(), args[2].clone()))
        .collect();
    for level in loops_of(stmts, host, p) {
        out.push((
            vec![directive("compute_at", &[host, &level]), vector.clone()],
            format!("computed at {host}.{level}"),
        ));
    }
    if let Some((o, i)) = splits.last() {
        out.push((
            vec![
                directive("store_at", &[host, o]),
                directive("compute_at", &[host, i]),
                vector,
            ],
            format!("computed at {host}.{i} in a sliding window over {host}.{o}"),
        ));
    }
    out
}

/// The statements of `text` with both changes that `a` and `b` each made
/// to `base` (the tuner's neighbours change one statement each): `None`
/// where they changed the same statement differently, are one schedule, or
/// do not parse as statements of the same funcs.
pub fn combined(base: &str, a: &str, b: &str) -> Option<String> {
    let (base, a, b) = (
        parse_statements(base)?,
        parse_statements(a)?,
        parse_statements(b)?,
    );
    if base.len() != a.len() || base.len() != b.len() {
        return None;
    }
    let mut out = Vec::new();
    for ((s, x), y) in base.iter().zip(&a).zip(&b) {
        if s.subject != x.subject || s.subject != y.subject {
            return None;
        }
        out.push(match (x != s, y != s) {
            (true, true) if x != y => return None,
            (_, true) => y.clone(),
            _ => x.clone(),
        });
    }
    (out != a && out != b).then(|| print_statements(&out))
}

/// The loops of func `host` that a statement can name: its variables and
/// the loops its splits and tiles make.
fn loops_of(stmts: &[Statement], host: &str, p: &Pipeline) -> Vec<String> {
    let mut out: Vec<String> = p
        .funcs
        .iter()
        .find(|f| f.name == host)
        .map(|f| f.vars.clone())
        .unwrap_or_default();
    for st in stmts.iter().filter(|s| s.subject == host) {
        for (d, args) in &st.directives {
            let made: &[usize] = match (d.as_str(), args.len()) {
                ("split", 4) => &[1, 2],
                ("tile", 8) => &[2, 3, 4, 5],
                _ => &[],
            };
            for &k in made {
                if !out.contains(&args[k]) {
                    out.push(args[k].clone());
                }
            }
        }
    }
    out
}
