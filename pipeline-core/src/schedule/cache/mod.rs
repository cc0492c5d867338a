//! The schedule cache: tuned schedules kept in the user's crate, in
//! `pipeline-schedules.toml` beside its `Cargo.toml` (`pipeline::guide::scheduling`,
//! *Tuned schedules*). The macro reads it at expansion (pipeline-macros
//! reads the file, this module parses it: pipeline-core does no I/O); the
//! tuner writes it with [`CacheFile::to_text`].
//!
//! One `[[pipeline]]` entry per key: the pipeline's name, the hash of its
//! algorithm, the architecture and the instruction-set level it was tuned
//! at, the processor it serves (optional), the size class, the input
//! layout the block declares, the version of the schedule space, and CPU
//! or GPU. The value is
//! the body of a `schedule` block, as `NAME::SCHEDULE` prints it, plus what
//! was measured:
//!
//! ```toml
//! [[pipeline]]
//! name = "blur"
//! target = "cpu"
//! algorithm = "5f0e9d4c3b2a1908"
//! arch = "x86_64"
//! isa = "avx512"
//! processor = "AuthenticAMD family 25 model 17"
//! size = "large"
//! space = 1
//! time_ns = 1830000
//! date = "2026-11-26"
//! machine = "AMD Ryzen 9 7950X"
//! schedule = """
//! blur_x.compute_at(out, y).vectorize(x, 16);
//! out.parallel(y).vectorize(x, 16);
//! """
//! ```
//!
//! An entry is only a proposal: the macro checks its schedule exactly like a
//! user's block and falls back to the auto-scheduler, saying why in
//! `SCHEDULE`, when it does not check or lower. An entry serves only
//! processors at its level (`pipeline::rt::isa()`, exactly) and, when it
//! names one, only that processor (`pipeline::rt::processor()`): a
//! schedule tuned on one processor can be slower than the auto-scheduler's
//! on another, so the others run the auto-scheduler's (ARCHITECTURE.md,
//! *The schedule cache*). An entry that names its processor wins over one
//! of the same level that does not.

pub mod choose;
mod toml;

use crate::ir::Pipeline;
use crate::schedule::auto::Estimates;
use proc_macro2::{Delimiter, TokenStream, TokenTree};
use std::fmt::Write;
use std::path::PathBuf;
use toml::Value;

/// The cache's file name, beside the user's `Cargo.toml`.
pub const FILE_NAME: &str = "pipeline-schedules.toml";

/// The environment variable that names another cache file (absolute, or
/// relative to the crate's `Cargo.toml`): tests, and crates that keep the
/// file elsewhere. Set to the empty string, it turns the cache off.
pub const CACHE_ENV: &str = "PIPELINE_SCHEDULE_CACHE";

/// The version of the schedule space: the directives and what each means.
/// An entry tuned in another version is stale (a directive it uses may
/// mean something else now); bump it with any such change.
pub const SPACE_VERSION: u32 = 1;

/// Where a schedule runs. The macro reads CPU entries only; GPU entries
/// are kept apart for the CUDA path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// Compiled by the macro, for the processor.
    Cpu,
    /// Compiled by `pipeline-build`, for CUDA.
    Cuda,
}

impl Target {
    /// The name in the file.
    pub fn as_str(self) -> &'static str {
        match self {
            Target::Cpu => "cpu",
            Target::Cuda => "cuda",
        }
    }
}

/// What an entry must match to be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Key {
    /// The pipeline's name.
    pub name: String,
    /// CPU or GPU.
    pub target: Target,
    /// [`algorithm_hash`] of the pipeline it was tuned for.
    pub algorithm: u64,
    /// The `target_arch` it was tuned on (`x86_64`, `aarch64`).
    pub arch: String,
    /// The instruction-set level it was tuned at (`pipeline::rt::isa()`
    /// there: `avx2`, `avx512vbmi`; `scalar` off x86_64): it serves
    /// processors at that level only.
    pub isa: String,
    /// The processor it serves, as `pipeline::rt::processor()` names it
    /// (`AuthenticAMD family 25 model 17`), or empty: every processor at
    /// its level. x86_64 only.
    pub processor: String,
    /// [`size_class`]: `large`, or the estimated extents.
    pub size: String,
    /// [`layout`]: the input strides the block declares, or empty.
    pub layout: String,
    /// [`SPACE_VERSION`] when it was tuned.
    pub space: u32,
}

/// One tuned schedule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// What it must match.
    pub key: Key,
    /// The body of a `schedule` block.
    pub schedule: String,
    /// Its measured time in nanoseconds (informational).
    pub time_ns: Option<u64>,
    /// When it was measured (informational).
    pub date: Option<String>,
    /// What it was measured on (informational).
    pub machine: Option<String>,
    /// The line of its `[[pipeline]]` header in the file it was read from
    /// (0 for an entry not read from a file).
    pub line: usize,
}

/// The entries of a cache file, in file order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CacheFile {
    /// One per key (name, target, arch, level, processor, size class,
    /// layout).
    pub entries: Vec<Entry>,
}

/// The fields of an entry, in the order the writer puts them.
const FIELDS: [&str; 13] = [
    "name",
    "target",
    "algorithm",
    "arch",
    "isa",
    "processor",
    "size",
    "layout",
    "space",
    "time_ns",
    "date",
    "machine",
    "schedule",
];

impl CacheFile {
    /// Parses the text of a cache file; an error is the 1-based line and
    /// what is wrong there.
    pub fn parse(text: &str) -> Result<CacheFile, (usize, String)> {
        let mut entries: Vec<Entry> = Vec::new();
        for table in toml::parse(text, "pipeline")? {
            let entry = entry(&table)?;
            if let Some(first) = entries.iter().find(|e| same_slot(&e.key, &entry.key)) {
                return Err((
                    table.line,
                    format!(
                        "a second entry for `{}` ({}, {} at {}{}, size {}{}): line {} has the first, and the cache keeps one",
                        entry.key.name,
                        entry.key.target.as_str(),
                        entry.key.arch,
                        entry.key.isa,
                        entry.key.on_processor(),
                        entry.key.size,
                        if entry.key.layout.is_empty() { String::new() } else { format!(", layout {}", entry.key.layout) },
                        first.line
                    ),
                ));
            }
            entries.push(entry);
        }
        Ok(CacheFile { entries })
    }

    /// The file's text: [`CacheFile::parse`] gives back these entries.
    pub fn to_text(&self) -> String {
        let mut s = String::from(
            "# Tuned schedules, read by the `pipeline!` macro at compile time (see\n\
             # `pipeline::guide::scheduling`). Written by `cargo pipeline tune`.\n",
        );
        for e in &self.entries {
            let k = &e.key;
            s += "\n[[pipeline]]\n";
            let _ = writeln!(s, "name = {}", toml::basic(&k.name));
            let _ = writeln!(s, "target = {}", toml::basic(k.target.as_str()));
            let _ = writeln!(s, "algorithm = \"{:016x}\"", k.algorithm);
            let _ = writeln!(s, "arch = {}", toml::basic(&k.arch));
            let _ = writeln!(s, "isa = {}", toml::basic(&k.isa));
            if !k.processor.is_empty() {
                let _ = writeln!(s, "processor = {}", toml::basic(&k.processor));
            }
            let _ = writeln!(s, "size = {}", toml::basic(&k.size));
            if !k.layout.is_empty() {
                let _ = writeln!(s, "layout = {}", toml::basic(&k.layout));
            }
            let _ = writeln!(s, "space = {}", k.space);
            if let Some(t) = e.time_ns {
                let _ = writeln!(s, "time_ns = {t}");
            }
            if let Some(d) = &e.date {
                let _ = writeln!(s, "date = {}", toml::basic(d));
            }
            if let Some(m) = &e.machine {
                let _ = writeln!(s, "machine = {}", toml::basic(m));
            }
            let _ = writeln!(s, "schedule = {}", toml::basic_multi_line(&e.schedule));
        }
        s
    }

    /// The entries that could serve `key` on some architecture, level and
    /// processor, sorted into usable and stale; `key.arch`, `key.isa` and
    /// `key.processor` are not compared.
    pub fn lookup(&self, key: &Key) -> Lookup<'_> {
        let mut found = Lookup::default();
        for e in self
            .entries
            .iter()
            .filter(|e| e.key.name == key.name && e.key.target == key.target)
        {
            if e.key.size != key.size || e.key.layout != key.layout {
                found.other.push(e);
            } else if e.key.algorithm != key.algorithm {
                found.stale.push((
                    e,
                    format!(
                        "the algorithm's hash differs: the pipeline changed since it was tuned (entry {:016x}, pipeline {:016x})",
                        e.key.algorithm, key.algorithm
                    ),
                ));
            } else if e.key.space != key.space {
                found.stale.push((
                    e,
                    format!("it was tuned in schedule space v{}, and this version of pipeline reads v{}", e.key.space, key.space),
                ));
            } else {
                found.fresh.push(e);
            }
        }
        found
    }
}

/// What [`CacheFile::lookup`] found for a pipeline.
#[derive(Debug, Default)]
pub struct Lookup<'a> {
    /// Entries matching the whole key but the architecture, level and
    /// processor (at most one per architecture, level and processor).
    pub fresh: Vec<&'a Entry>,
    /// Entries that would match but were tuned for another algorithm or
    /// schedule space, with why.
    pub stale: Vec<(&'a Entry, String)>,
    /// The pipeline's entries for other size classes or layouts.
    pub other: Vec<&'a Entry>,
}

impl Entry {
    /// Where it comes from and what was measured, for `SCHEDULE`:
    /// `from pipeline-schedules.toml line 3: tuned on x86_64 (avx2), ...`.
    pub fn provenance(&self, file: &str) -> String {
        let mut s = format!(
            "from {file} line {}: tuned on {} ({}{})",
            self.line,
            self.key.arch,
            self.key.isa,
            self.key.on_processor()
        );
        if let Some(t) = self.time_ns {
            let _ = write!(s, ", {:.3} ms", t as f64 / 1e6);
        }
        if let Some(d) = &self.date {
            let _ = write!(s, ", {d}");
        }
        if let Some(m) = &self.machine {
            let _ = write!(s, ", {m}");
        }
        s
    }
}

impl Key {
    /// ` on PROCESSOR` for an entry that names its processor, else empty.
    pub fn on_processor(&self) -> String {
        on(&self.processor)
    }
}

/// ` on PROCESSOR`, or empty for no processor.
pub(crate) fn on(processor: &str) -> String {
    match processor {
        "" => String::new(),
        p => format!(" on {p}"),
    }
}

/// Whether `name` reads as `pipeline::rt::processor()` names a processor:
/// `VENDOR family N model M`.
pub fn is_processor_name(name: &str) -> bool {
    let words: Vec<&str> = name.split(' ').collect();
    let number = |w: &str| !w.is_empty() && w.len() <= 10 && w.bytes().all(|b| b.is_ascii_digit());
    matches!(words.as_slice(),
        [vendor @ .., "family", f, "model", m]
            if !vendor.is_empty()
                && vendor.iter().all(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_graphic()))
                && number(f)
                && number(m))
}

/// Whether two keys claim the same place in the file.
pub fn same_slot(a: &Key, b: &Key) -> bool {
    a.name == b.name
        && a.target == b.target
        && a.arch == b.arch
        && a.isa == b.isa
        && a.processor == b.processor
        && a.size == b.size
        && a.layout == b.layout
}

fn entry(table: &toml::Table) -> Result<Entry, (usize, String)> {
    for f in &table.fields {
        if !FIELDS.contains(&f.key.as_str()) {
            return Err((
                f.line,
                format!(
                    "unknown field `{}`: an entry holds {}",
                    f.key,
                    FIELDS.join(", ")
                ),
            ));
        }
    }
    let field = |key: &str| table.fields.iter().find(|f| f.key == key);
    let missing = |key: &str| {
        (
            table.line,
            format!("this entry has no `{key}` (each entry needs name, target, algorithm, arch, isa, size, space and schedule)"),
        )
    };
    let string = |key: &str| -> Result<Option<String>, (usize, String)> {
        match field(key) {
            None => Ok(None),
            Some(f) => match &f.value {
                Value::Str(s) => Ok(Some(s.clone())),
                Value::Int(_) => Err((
                    f.line,
                    format!("`{key}` is a string, e.g. `{key} = \"...\"`"),
                )),
            },
        }
    };
    let integer = |key: &str, max: u64| -> Result<Option<u64>, (usize, String)> {
        match field(key) {
            None => Ok(None),
            Some(f) => match f.value {
                Value::Int(v) if v >= 0 && v as u64 <= max => Ok(Some(v as u64)),
                Value::Int(v) => Err((f.line, format!("`{key} = {v}` is out of range"))),
                Value::Str(_) => Err((f.line, format!("`{key}` is an integer, e.g. `{key} = 1`"))),
            },
        }
    };
    let required = |key: &str| string(key)?.ok_or_else(|| missing(key));
    let line_of = |key: &str| field(key).map_or(table.line, |f| f.line);

    let name = required("name")?;
    if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
        return Err((
            line_of("name"),
            format!("`{name}` is not a pipeline's name"),
        ));
    }
    let target = match required("target")?.as_str() {
        "cpu" => Target::Cpu,
        "cuda" => Target::Cuda,
        other => {
            return Err((
                line_of("target"),
                format!("unknown target `{other}`: it is \"cpu\" or \"cuda\""),
            ))
        }
    };
    let hash = required("algorithm")?;
    let algorithm = (hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| u64::from_str_radix(&hash, 16).ok())
        .flatten()
        .ok_or_else(|| {
            (
                line_of("algorithm"),
                format!("`{hash}` is not an algorithm hash (16 hexadecimal digits)"),
            )
        })?;
    let arch = required("arch")?;
    if arch.is_empty() || !arch.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err((
            line_of("arch"),
            format!("`{arch}` is not a `target_arch` (e.g. \"x86_64\", \"aarch64\")"),
        ));
    }
    let isa = required("isa")?;
    // A CPU entry's level is one the kernels dispatch on: x86_64's, or
    // scalar (the only level elsewhere).
    let levels: Vec<&str> = crate::codegen::kernels::LEVELS
        .iter()
        .map(|(n, _)| *n)
        .filter(|&n| arch == "x86_64" || n == "scalar")
        .collect();
    if target == Target::Cpu && !levels.contains(&isa.as_str()) {
        return Err((
            line_of("isa"),
            format!("`{isa}` is not a level of {arch}: {}", levels.join(", ")),
        ));
    }
    let processor = string("processor")?.unwrap_or_default();
    if field("processor").is_some() {
        if arch != "x86_64" || target != Target::Cpu {
            return Err((
                line_of("processor"),
                "only x86_64 CPU entries name a processor".to_string(),
            ));
        }
        if !is_processor_name(&processor) {
            return Err((
                line_of("processor"),
                format!("`{processor}` is not a processor as `pipeline::rt::processor()` names one (e.g. \"AuthenticAMD family 25 model 17\")"),
            ));
        }
    }
    let space = integer("space", u32::MAX as u64)?.ok_or_else(|| missing("space"))? as u32;
    Ok(Entry {
        key: Key {
            name,
            target,
            algorithm,
            arch,
            isa,
            processor,
            size: required("size")?,
            layout: string("layout")?.unwrap_or_default(),
            space,
        },
        schedule: required("schedule")?,
        time_ns: integer("time_ns", i64::MAX as u64)?,
        date: string("date")?,
        machine: string("machine")?,
        line: table.line,
    })
}

/// A stable 64-bit hash of the algorithm of pipeline `name` in `invocation`
/// (the tokens of a `pipeline!` invocation): the pipeline's item from `fn`
/// on, then every template of the invocation (a template it calls is part
/// of its algorithm), as the user's tokens. Comments, whitespace, doc
/// comments, attributes and visibility do not change it; schedule blocks
/// and other pipelines are not part of it. `None` when no pipeline has that
/// name. FNV-1a, written here: std's hasher may change between Rust
/// versions, and a committed file outlives a toolchain.
pub fn algorithm_hash(invocation: &TokenStream, name: &str) -> Option<u64> {
    let mut pipeline = None;
    let mut templates = String::new();
    for item in items(invocation.clone()) {
        let Some(at) = item
            .iter()
            .position(|t| matches!(t, TokenTree::Ident(i) if i == "fn"))
        else {
            continue;
        };
        let fn_item = &item[at..];
        let n = fn_item.len();
        let returns_func = n >= 4
            && matches!(&fn_item[n - 4], TokenTree::Punct(p) if p.as_char() == '-')
            && matches!(&fn_item[n - 3], TokenTree::Punct(p) if p.as_char() == '>')
            && matches!(&fn_item[n - 2], TokenTree::Ident(i) if i == "Func");
        if returns_func {
            templates.push('\n');
            normalized(fn_item.iter().cloned(), &mut templates);
        } else if matches!(fn_item.get(1), Some(TokenTree::Ident(i)) if i == name) {
            let mut text = String::new();
            normalized(fn_item.iter().cloned(), &mut text);
            pipeline = Some(text);
        }
    }
    pipeline.map(|p| fnv1a((p + &templates).as_bytes()))
}

/// The items of an invocation: each ends with a top-level `{ .. }` (a body
/// or a schedule block) that the next item (`#[..]`, `pub`, `fn`,
/// `schedule`) or the end of the invocation follows.
fn items(tokens: TokenStream) -> Vec<Vec<TokenTree>> {
    let mut items = Vec::new();
    let mut current = Vec::new();
    let mut tokens = tokens.into_iter().peekable();
    while let Some(t) = tokens.next() {
        let brace = matches!(&t, TokenTree::Group(g) if g.delimiter() == Delimiter::Brace);
        current.push(t);
        let next_item = match tokens.peek() {
            None => true,
            Some(TokenTree::Punct(p)) => p.as_char() == '#',
            Some(TokenTree::Ident(i)) => i == "pub" || i == "fn" || i == "schedule",
            _ => false,
        };
        if brace && next_item {
            items.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        items.push(current);
    }
    items
}

/// FNV-1a, 64 bits.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// The tokens one space apart, groups with their delimiters, `#[doc = ..]`
/// attributes (doc comments) left out. Our own spelling rather than
/// `TokenStream`'s `Display`, whose spacing is the compiler's to change.
fn normalized(tokens: impl IntoIterator<Item = TokenTree>, out: &mut String) {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    let mut i = 0;
    while i < tokens.len() {
        if let TokenTree::Punct(p) = &tokens[i] {
            if p.as_char() == '#' {
                let bang =
                    matches!(tokens.get(i + 1), Some(TokenTree::Punct(q)) if q.as_char() == '!');
                let at = i + 1 + bang as usize;
                if let Some(TokenTree::Group(g)) = tokens.get(at) {
                    let is_doc = g.delimiter() == Delimiter::Bracket
                        && matches!(g.stream().into_iter().next(), Some(TokenTree::Ident(d)) if d == "doc");
                    if is_doc {
                        i = at + 1;
                        continue;
                    }
                }
            }
        }
        match &tokens[i] {
            // An invisible group (a fragment that a `macro_rules!` macro
            // passed on) is its tokens, as the source shows them.
            TokenTree::Group(g) if g.delimiter() == Delimiter::None => {
                crate::deep(|| normalized(g.stream(), out));
                i += 1;
                continue;
            }
            TokenTree::Group(g) => {
                let (open, close) = match g.delimiter() {
                    Delimiter::Parenthesis => ("(", ")"),
                    Delimiter::Brace => ("{", "}"),
                    _ => ("[", "]"),
                };
                out.push_str(open);
                out.push(' ');
                crate::deep(|| normalized(g.stream(), out));
                out.push_str(close);
            }
            TokenTree::Ident(t) => out.push_str(&t.to_string()),
            TokenTree::Punct(p) => out.push(p.as_char()),
            TokenTree::Literal(l) => out.push_str(&l.to_string()),
        }
        out.push(' ');
        i += 1;
    }
}

/// The size class a schedule is chosen for: `large` (what the
/// auto-scheduler assumes without estimates), or the block's estimates,
/// `name=WxH` each, inputs then outputs: `out=1920x1080`.
pub fn size_class(p: &Pipeline, estimates: Option<&Estimates>) -> String {
    let Some(e) = estimates else {
        return "large".into();
    };
    let named = p
        .inputs
        .iter()
        .map(|i| &i.name)
        .zip(&e.inputs)
        .chain(p.funcs.iter().map(|f| &f.name).zip(&e.funcs));
    let parts: Vec<String> = named
        .filter_map(|(name, extents)| {
            let extents = extents.as_ref()?;
            let dims: Vec<String> = extents.iter().map(|x| x.to_string()).collect();
            Some(format!("{name}={}", dims.join("x")))
        })
        .collect();
    if parts.is_empty() {
        "large".into()
    } else {
        parts.join(",")
    }
}

/// The input strides a block declares, as its directives
/// (`rgb.dim(0).set_stride(3)`, `; ` between inputs), or empty. Legality
/// depends on them (a schedule's vector loads read in place at the
/// declared stride), so they are part of the key.
pub fn layout(p: &Pipeline, strides: &[Vec<Option<usize>>]) -> String {
    let parts: Vec<String> = p
        .inputs
        .iter()
        .zip(strides)
        .filter_map(|(input, dims)| {
            let chain: Vec<String> = dims
                .iter()
                .enumerate()
                .filter_map(|(d, s)| s.map(|s| format!("dim({d}).set_stride({s})")))
                .collect();
            (!chain.is_empty()).then(|| format!("{}.{}", input.name, chain.join(".")))
        })
        .collect();
    parts.join("; ")
}

/// The key of the CPU entry that serves `pipeline` (checked from
/// `invocation`, the tokens of its `pipeline!` invocation) on `arch` at
/// level `isa`, given what its block, if any, declares: estimates and input
/// strides.
pub fn key_for(
    invocation: &TokenStream,
    pipeline: &Pipeline,
    estimates: Option<&Estimates>,
    strides: &[Vec<Option<usize>>],
    (arch, isa): (&str, &str),
) -> Key {
    Key {
        name: pipeline.name.clone(),
        target: Target::Cpu,
        algorithm: algorithm_hash(invocation, &pipeline.name).unwrap_or(0),
        arch: arch.into(),
        isa: isa.into(),
        processor: String::new(),
        size: size_class(pipeline, estimates),
        layout: layout(pipeline, strides),
        space: SPACE_VERSION,
    }
}

/// Where the macro looks for the cache.
#[derive(Clone, Debug)]
pub struct Location {
    /// The file (absolute when cargo runs the macro).
    pub path: PathBuf,
    /// Whether [`CACHE_ENV`] named it: then a missing file is an error.
    pub explicit: bool,
}

/// The cache file as the macro read it.
#[derive(Clone, Debug)]
pub struct CacheSource {
    /// The file, for `include_bytes!` (so cargo tracks it) and messages.
    pub path: PathBuf,
    /// Its text, or why it could not be read.
    pub text: Result<String, String>,
}

impl CacheSource {
    /// The name `SCHEDULE` shows: the file name alone, so that it does not
    /// depend on where the crate is checked out.
    pub fn shown(&self) -> String {
        self.path.file_name().map_or_else(
            || self.path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        )
    }
}

/// Where the cache of the crate being compiled is: [`CACHE_ENV`], else
/// [`FILE_NAME`] in `CARGO_MANIFEST_DIR`; `None` outside cargo or when
/// [`CACHE_ENV`] is empty.
pub fn location() -> Option<Location> {
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from);
    match std::env::var_os(CACHE_ENV) {
        Some(v) if v.is_empty() => None,
        Some(v) => {
            let path = PathBuf::from(v);
            let path = match manifest {
                Some(dir) if path.is_relative() => dir.join(path),
                _ => path,
            };
            Some(Location {
                path,
                explicit: true,
            })
        }
        None => Some(Location {
            path: manifest?.join(FILE_NAME),
            explicit: false,
        }),
    }
}

impl Location {
    /// The cache given the result of reading the file: `None` when there is
    /// no file where none was asked for.
    pub fn read(self, contents: std::io::Result<String>) -> Option<CacheSource> {
        let text = match contents {
            Ok(t) => Ok(t),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && !self.explicit => return None,
            Err(e) => Err(format!("cannot be read: {e}")),
        };
        Some(CacheSource {
            path: self.path,
            text,
        })
    }
}
