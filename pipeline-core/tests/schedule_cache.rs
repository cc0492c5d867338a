//! The schedule cache (`pipeline-schedules.toml`): its format (errors at
//! their line, the writer read back unchanged), the algorithm hash (blind
//! to comments and layout, not to edits), and the macro's choice: a block
//! that names funcs, then a usable entry, then the auto-scheduler, with
//! `SCHEDULE` saying which and why; an entry that is used computes what the
//! interpreter computes, lowered and (`compiled.rs`) built by cargo, which
//! rebuilds when the file changes.

use pipeline_core::interp;
use pipeline_core::schedule::cache::{
    algorithm_hash, CacheFile, CacheSource, Entry, Key, Target, CACHE_ENV, FILE_NAME, SPACE_VERSION,
};
use std::path::PathBuf;

mod corpus;
use corpus::*;

#[path = "schedule_cache/compiled.rs"]
mod compiled;

const BLUR: &str = "
    fn blur3x3(input: Image<u16, 2>) -> Image<u16, 2> {
        let clamped = input.clamp_edge();
        blur_x(x, y) = (clamped(x - 1, y) as u32 + clamped(x, y) as u32 + clamped(x + 1, y) as u32) / 3;
        out(x, y) = ((blur_x(x, y - 1) + blur_x(x, y) + blur_x(x, y + 1)) / 3) as u16;
        out
    }
";

/// A hand schedule unlike the auto-scheduler's, so that `SCHEDULE` shows
/// which one was used.
const TUNED: &str =
    "blur_x.compute_at(out, y).vectorize(x, 16);\nout.parallel(y).vectorize(x, 16);\n";

/// Another, for a second entry.
const TILED: &str =
    "blur_x.compute_root().parallel(y);\nout.tile(x, y, xo, yo, xi, yi, 8, 4).parallel(yo);\n";

fn hash_of(source: &str, name: &str) -> u64 {
    algorithm_hash(&source.parse().unwrap(), name).unwrap()
}

fn entry(name: &str, algorithm: u64, arch: &str, schedule: &str) -> Entry {
    Entry {
        key: Key {
            name: name.into(),
            target: Target::Cpu,
            algorithm,
            arch: arch.into(),
            isa: match arch {
                "x86_64" => "avx2".into(),
                _ => "scalar".into(),
            },
            processor: String::new(),
            size: "large".into(),
            layout: String::new(),
            space: SPACE_VERSION,
        },
        schedule: schedule.into(),
        time_ns: Some(1_234_000),
        date: Some("2026-11-26".into()),
        machine: Some("test machine".into()),
        line: 0,
    }
}

fn source_of(entries: Vec<Entry>) -> CacheSource {
    CacheSource {
        path: PathBuf::from("/crate/pipeline-schedules.toml"),
        text: Ok(CacheFile { entries }.to_text()),
    }
}

/// The expansion of `source` with the cache `cache`.
fn expand(source: &str, cache: CacheSource) -> String {
    pipeline_core::expand_with_cache(source.parse().unwrap(), Some(cache)).to_string()
}

/// Every `SCHEDULE` of an expansion, in order.
fn schedules(expansion: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = expansion;
    while let Some(at) = rest.find("const SCHEDULE : & str = \"") {
        rest = &rest[at + "const SCHEDULE : & str = \"".len()..];
        let end = rest.find("\" ;").unwrap();
        out.push(rest[..end].replace("\\n", "\n"));
        rest = &rest[end..];
    }
    out
}

#[test]
fn the_writer_is_read_back_unchanged() {
    let mut odd = entry(
        "blur3x3",
        0x0123_4567_89ab_cdef,
        "aarch64",
        "weird \"\"\" quotes \\ and\n\ttabs\n",
    );
    odd.key.size = "input=640x480,out=640x480".into();
    odd.key.layout = "rgb.dim(0).set_stride(3)".into();
    odd.key.target = Target::Cuda;
    odd.time_ns = None;
    odd.date = None;
    odd.machine = Some("quotes \" and newline\n".into());
    let file = CacheFile {
        entries: vec![entry("blur3x3", u64::MAX, "x86_64", TUNED), odd],
    };
    let text = file.to_text();
    let mut read = CacheFile::parse(&text).unwrap_or_else(|e| panic!("{e:?}\n{text}"));
    let lines: Vec<usize> = read.entries.iter().map(|e| e.line).collect();
    assert!(lines
        .iter()
        .all(|&l| text.lines().nth(l - 1) == Some("[[pipeline]]")));
    read.entries.iter_mut().for_each(|e| e.line = 0);
    assert_eq!(read, file, "{text}");
    assert_eq!(read.to_text(), text);
}

#[test]
fn malformed_files_are_errors_at_their_line() {
    let good = entry("blur3x3", 1, "x86_64", TUNED);
    let text = CacheFile {
        entries: vec![good.clone()],
    }
    .to_text();
    let header = text.lines().position(|l| l == "[[pipeline]]").unwrap() + 1;
    let line_of = |key: &str| text.lines().position(|l| l.starts_with(key)).unwrap() + 1;
    let cases = [
        (
            text.replace("target = \"cpu\"", "target = \"gpu\""),
            line_of("target"),
            "unknown target",
        ),
        (
            text.replace("algorithm = \"0000000000000001\"", "algorithm = \"xyz\""),
            line_of("algorithm"),
            "not an algorithm hash",
        ),
        (
            text.replace("space = 1", "space = \"1\""),
            line_of("space"),
            "is an integer",
        ),
        (
            text.replace("isa = \"avx2\"", "isa = 2"),
            line_of("isa"),
            "is a string",
        ),
        (
            text.replace("isa = \"avx2\"", "isa_level = \"avx2\""),
            line_of("isa"),
            "unknown field `isa_level`",
        ),
        (text.replace("isa = \"avx2\"\n", ""), header, "no `isa`"),
        (
            text.replace("isa = \"avx2\"", "isa = \"avx3\""),
            line_of("isa"),
            "`avx3` is not a level of x86_64: scalar, sse4.1, avx2, avx512, avx512vbmi",
        ),
        (
            text.replace("arch = \"x86_64\"", "arch = \"aarch64\""),
            line_of("isa"),
            "`avx2` is not a level of aarch64: scalar",
        ),
        (
            text.replace("arch = \"x86_64\"", "arch = \"x86-64\""),
            line_of("arch"),
            "not a `target_arch`",
        ),
        (
            text.replace("name = \"blur3x3\"", "name = \"blur 3\""),
            line_of("name"),
            "not a pipeline's name",
        ),
        (
            format!("{text}{}", &text[text.find("[[pipeline]]").unwrap()..]),
            text.lines().count() + 1,
            "a second entry for `blur3x3`",
        ),
        (
            text.replace("out.parallel", "out\"\"\"\"\"\"parallel"),
            line_of("out.parallel"),
            "6 quotes in a row",
        ),
    ];
    for (bad, line, what) in cases {
        match CacheFile::parse(&bad) {
            Err((l, m)) => assert!(
                l == line && m.contains(what),
                "expected line {line}, `{what}`; got line {l}: {m}\n{bad}"
            ),
            Ok(_) => panic!("parsed:\n{bad}"),
        }
    }
    // Another architecture, level or size class is another entry, not a
    // second one.
    let mut other = good.clone();
    other.key.arch = "aarch64".into();
    other.key.isa = "scalar".into();
    let mut small = good.clone();
    small.key.size = "out=64x64".into();
    let mut wider = good.clone();
    wider.key.isa = "avx512vbmi".into();
    assert!(CacheFile::parse(
        &CacheFile {
            entries: vec![good, other, small, wider]
        }
        .to_text()
    )
    .is_ok());
}

#[test]
fn the_algorithm_hash_ignores_layout_and_comments_but_not_edits() {
    let base = hash_of(BLUR, "blur3x3");
    let reformatted = "
        /// A doc comment, which is an attribute.
        fn blur3x3 ( input : Image<u16, 2> ) -> Image<u16, 2> {
            // A comment.
            let clamped = input.clamp_edge();   /* another */
            blur_x(x, y) = (clamped(x - 1, y) as u32
                + clamped(x, y) as u32 + clamped(x + 1, y) as u32) / 3;
            out(x, y) = ((blur_x(x, y - 1) + blur_x(x, y) + blur_x(x, y + 1)) / 3) as u16;
            out
        }
        schedule blur3x3 { out.parallel(y); }
    ";
    assert_eq!(hash_of(reformatted, "blur3x3"), base);
    let edited = BLUR.replace("/ 3) as u16", "/ 4) as u16");
    assert_ne!(hash_of(&edited, "blur3x3"), base);
    let renamed = BLUR.replace("blur_x", "bx");
    assert_ne!(hash_of(&renamed, "blur3x3"), base);
    // Visibility, schedule blocks and other pipelines are not part of it.
    let others = format!(
        "pub {BLUR}\nfn other(input: Image<u8, 2>) -> Image<u8, 2> {{ out(x, y) = input(x, y); out }}"
    );
    assert_eq!(hash_of(&others, "blur3x3"), base);
    assert_ne!(hash_of(&others, "other"), base);
    // Tokens that a `macro_rules!` macro passed on arrive in invisible
    // groups: the same algorithm.
    let tokens: proc_macro2::TokenStream = BLUR.parse().unwrap();
    let wrapped: proc_macro2::TokenStream = tokens
        .into_iter()
        .map(|t| match t {
            proc_macro2::TokenTree::Group(g) if g.delimiter() == proc_macro2::Delimiter::Brace => {
                let inner = proc_macro2::Group::new(proc_macro2::Delimiter::None, g.stream());
                let body = std::iter::once(proc_macro2::TokenTree::Group(inner)).collect();
                proc_macro2::TokenTree::Group(proc_macro2::Group::new(
                    proc_macro2::Delimiter::Brace,
                    body,
                ))
            }
            t => t,
        })
        .collect();
    assert_eq!(algorithm_hash(&wrapped, "blur3x3"), Some(base));
    // A template the pipeline may call is part of its algorithm.
    let with_template = format!("{BLUR}\nfn t(f: Func) -> Func {{ g(x, y) = f(x, y); g }}");
    assert_ne!(hash_of(&with_template, "blur3x3"), base);
    // The hash is a constant of the format: the same text, the same value
    // on every toolchain (FNV-1a of our own token spelling).
    // (FNV's published test vectors.)
    let fnv1a = pipeline_core::schedule::cache::fnv1a;
    assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
    assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
    assert_eq!(fnv1a(b"foobar"), 0x8594_4171_f739_67e8);
}

#[test]
fn a_usable_entry_is_chosen_over_the_auto_scheduler() {
    let hash = hash_of(BLUR, "blur3x3");
    let out = expand(
        BLUR,
        source_of(vec![entry("blur3x3", hash, "x86_64", TUNED)]),
    );
    // x86_64's: every variant's, then avx2's and the auto-scheduler's own;
    // then the other targets'.
    let s = schedules(&out);
    assert_eq!(s.len(), 4, "{out}");
    let provenance = "// from pipeline-schedules.toml line 4: tuned on x86_64 (avx2), 1.234 ms, 2026-11-26, test machine";
    let tuned = "blur_x.compute_at(out, y).vectorize(x, 16);";
    let none = "auto-scheduler: pipeline-schedules.toml has no entry for `blur3x3` for this target_arch, level and processor (it has x86_64 at avx2)";
    let auto = "chosen by the auto-scheduler";
    let (avx2, others) = s[0].split_once("// at the other levels:\n").unwrap();
    assert!(
        avx2.contains("// at avx2:\nschedule blur3x3 {")
            && avx2.contains(provenance)
            && avx2.contains(tuned),
        "{}",
        s[0]
    );
    assert!(
        others.starts_with("schedule blur3x3 {") && others.contains(none) && others.contains(auto),
        "{}",
        s[0]
    );
    assert!(
        s[1].contains(provenance) && s[1].contains(tuned),
        "{}",
        s[1]
    );
    assert!(s[2].contains(none) && s[2].contains(auto), "{}", s[2]);
    assert!(s[3].contains(none) && s[3].contains(auto), "{}", s[3]);
    // The entry, `required_region` and `schedule()` dispatch on the level.
    for dispatch in [
        "match :: pipeline :: rt :: isa () { :: pipeline :: rt :: Isa :: Avx2 => blur3x3 :: __avx2 :: __run (input , out) , _ => blur3x3 :: __auto :: __run (input , out) , }",
        "{ :: pipeline :: rt :: Isa :: Avx2 => __avx2 :: required_region (input , out) , _ => __auto :: required_region (input , out) , }",
        "{ :: pipeline :: rt :: Isa :: Avx2 => __avx2 :: SCHEDULE , _ => __auto :: SCHEDULE , }",
    ] {
        assert!(out.contains(dispatch), "{dispatch}\n{out}");
    }
    assert!(out.contains("# [cfg (target_arch = \"x86_64\")]"), "{out}");
    assert!(
        out.contains("# [cfg (not (any (target_arch = \"x86_64\")))]"),
        "{out}"
    );
    // The file is an input of the crate.
    assert!(
        out.contains(":: core :: include_bytes ! (\"/crate/pipeline-schedules.toml\")"),
        "{out}"
    );
}

#[test]
fn each_level_and_architecture_runs_its_own_entry() {
    let hash = hash_of(BLUR, "blur3x3");
    let mut wide = entry("blur3x3", hash, "x86_64", TILED);
    wide.key.isa = "avx512vbmi".into();
    let arm = entry("blur3x3", hash, "aarch64", TILED);
    let entries = vec![entry("blur3x3", hash, "x86_64", TUNED), wide, arm];
    let out = expand(BLUR, source_of(entries));
    assert!(
        out.contains("match :: pipeline :: rt :: isa () { :: pipeline :: rt :: Isa :: Avx2 => blur3x3 :: __avx2 :: __run (input , out) , :: pipeline :: rt :: Isa :: Avx512Vbmi => blur3x3 :: __avx512vbmi :: __run (input , out) , _ => blur3x3 :: __auto :: __run (input , out) , }"),
        "{out}"
    );
    // x86_64's four, aarch64's entry (its only level: no dispatch), the
    // others'.
    let s = schedules(&out);
    assert_eq!(s.len(), 6, "{s:?}");
    assert!(
        s[0].contains("// at avx2:")
            && s[0].contains("// at avx512vbmi:")
            && s[0].contains("// at the other levels:"),
        "{}",
        s[0]
    );
    assert!(
        s[2].contains("tuned on x86_64 (avx512vbmi)") && s[2].contains("out.tile("),
        "{}",
        s[2]
    );
    assert!(
        s[4].contains("tuned on aarch64 (scalar)") && s[4].contains("out.tile("),
        "{}",
        s[4]
    );
    assert!(
        s[5].contains("(it has x86_64 at avx2, x86_64 at avx512vbmi, aarch64 at scalar)"),
        "{}",
        s[5]
    );
    assert!(
        out.contains("# [cfg (target_arch = \"aarch64\")]")
            && out.contains(
                "# [cfg (not (any (target_arch = \"x86_64\" , target_arch = \"aarch64\")))]"
            ),
        "{out}"
    );
    assert_eq!(out.matches("pub fn __run").count(), 3, "{out}");
    // A level's variant has the one kernel that level runs; the
    // auto-scheduler's, those the other levels run (the AVX2 kernel serves
    // only AVX2 where an AVX-512 one serves the levels above it).
    let module = |m: &str| {
        let from = out.find(&format!("pub mod {m} ")).unwrap();
        let rest = &out[from + 8..];
        let to = [rest.find("pub mod "), rest.find("# [cfg (not")]
            .into_iter()
            .flatten()
            .min()
            .map_or(out.len(), |t| from + 8 + t);
        &out[from..to]
    };
    let kernel = |token: &str| {
        format!("__kernel (unsafe {{ :: pipeline :: rt :: simd :: {token} :: new_unchecked () }}")
    };
    let scalar = "__kernel (:: pipeline :: rt :: simd :: Scalar ,";
    let avx2 = module("__avx2");
    assert!(
        avx2.contains(&kernel("Avx2"))
            && !avx2.contains(&kernel("Avx512"))
            && !avx2.contains(scalar),
        "{avx2}"
    );
    let vbmi = module("__avx512vbmi");
    assert!(
        !vbmi.contains(&kernel("Avx2")) && !vbmi.contains(scalar),
        "{vbmi}"
    );
    let auto = module("__auto");
    assert!(
        auto.contains(&kernel("Avx512"))
            && auto.contains(scalar)
            && !auto.contains(&kernel("Avx2")),
        "{auto}"
    );
    // Without entries, every kernel.
    let alone = expand(BLUR, source_of(Vec::new()));
    assert!(
        alone.contains(&kernel("Avx2")) && alone.contains(&kernel("Avx512")),
        "{alone}"
    );
}

#[test]
fn a_processors_entry_is_matched_before_its_levels() {
    const ZEN4: &str = "AuthenticAMD family 25 model 17";
    let hash = hash_of(BLUR, "blur3x3");
    // avx512vbmi: one entry for a processor and one for the level; avx2: a
    // processor's only.
    let mut wide = entry("blur3x3", hash, "x86_64", TUNED);
    wide.key.isa = "avx512vbmi".into();
    let mut zen4 = entry("blur3x3", hash, "x86_64", TILED);
    zen4.key.processor = ZEN4.into();
    let mut wide_zen4 = entry("blur3x3", hash, "x86_64", TILED);
    wide_zen4.key.isa = "avx512vbmi".into();
    wide_zen4.key.processor = ZEN4.into();
    let entries = vec![wide, zen4, wide_zen4];
    let text = CacheFile {
        entries: entries.clone(),
    }
    .to_text();
    assert!(text.contains(&format!("processor = \"{ZEN4}\"")), "{text}");
    let parsed = CacheFile::parse(&text).unwrap();
    assert_eq!(parsed.entries.len(), 3);
    assert_eq!(parsed.entries[1].key.processor, ZEN4);
    assert_eq!(parsed.entries[0].key.processor, "");
    assert_eq!(parsed.entries[2].key.isa, "avx512vbmi");
    let out = expand(BLUR, source_of(entries));
    let zen4 = "\"AuthenticAMD family 25 model 17\"";
    let arms = [
        format!("(:: pipeline :: rt :: Isa :: Avx2 , {zen4}) => blur3x3 :: __avx2_authenticamd_family_25_model_17 :: __run (input , out) ,"),
        format!("(:: pipeline :: rt :: Isa :: Avx512Vbmi , {zen4}) => blur3x3 :: __avx512vbmi_authenticamd_family_25_model_17 :: __run (input , out) ,"),
        "(:: pipeline :: rt :: Isa :: Avx512Vbmi , _) => blur3x3 :: __avx512vbmi :: __run (input , out) ,".to_string(),
        "_ => blur3x3 :: __auto :: __run (input , out) ,".to_string(),
    ];
    let dispatch = format!(
        "match (:: pipeline :: rt :: isa () , :: pipeline :: rt :: processor ()) {{ {} }}",
        arms.join(" ")
    );
    assert!(out.contains(&dispatch), "{dispatch}\n{out}");
    let s = schedules(&out);
    assert!(
        s[0].contains(&format!("// at avx2 on {ZEN4}:"))
            && s[0].contains(&format!("// at avx512vbmi on {ZEN4}:"))
            && s[0].contains("// at avx512vbmi:")
            && s[0].contains("// at the other levels and processors:"),
        "{}",
        s[0]
    );
    assert!(
        s.iter()
            .any(|s| s.contains(&format!("tuned on x86_64 (avx512vbmi on {ZEN4})"))),
        "{s:?}"
    );
    // Other processors at avx2 run the auto-scheduler's variant, which
    // keeps the AVX2 kernel for them.
    let from = out.find("pub mod __auto ").unwrap();
    let auto = &out[from..];
    assert!(
        auto.contains(":: pipeline :: rt :: simd :: Avx2 :: new_unchecked ()"),
        "{auto}"
    );
}

#[test]
fn processor_names_are_checked() {
    let hash = hash_of(BLUR, "blur3x3");
    let mut e = entry("blur3x3", hash, "x86_64", TUNED);
    e.key.processor = "AuthenticAMD family 25 model 17".into();
    let good = CacheFile { entries: vec![e] }.to_text();
    for (bad, why) in [
        ("AuthenticAMD 25 17", "is not a processor"),
        ("family 25 model 17", "is not a processor"),
        ("GenuineIntel family six model 143", "is not a processor"),
    ] {
        let text = good.replace("AuthenticAMD family 25 model 17", bad);
        let err = CacheFile::parse(&text).unwrap_err();
        assert!(err.1.contains(why), "{bad}: {err:?}");
        let line = 1 + text
            .lines()
            .position(|l| l.starts_with("processor"))
            .unwrap();
        assert_eq!(err.0, line, "{err:?}");
    }
    let arm = good
        .replace("\"x86_64\"", "\"aarch64\"")
        .replace("avx2", "scalar");
    let err = CacheFile::parse(&arm).unwrap_err();
    assert!(
        err.1.contains("only x86_64 CPU entries name a processor"),
        "{err:?}"
    );
    // A processor's entry and its level's are two slots; two of one
    // processor are one too many.
    let twice = format!("{good}{}", good.split_once("\n\n").unwrap().1);
    let err = CacheFile::parse(&twice).unwrap_err();
    assert!(
        err.1.contains(
            "a second entry for `blur3x3` (cpu, x86_64 at avx2 on AuthenticAMD family 25 model 17"
        ),
        "{err:?}"
    );
}

#[test]
fn a_block_that_names_funcs_wins_over_an_entry() {
    let hash = hash_of(BLUR, "blur3x3");
    let cache = || source_of(vec![entry("blur3x3", hash, "x86_64", TUNED)]);
    let blocked = format!("{BLUR}\nschedule blur3x3 {{ out.parallel(y); }}");
    let out = expand(&blocked, cache());
    let s = schedules(&out);
    assert_eq!(s.len(), 1, "{out}");
    assert!(
        !s[0].contains("pipeline-schedules.toml") && !out.contains("include_bytes"),
        "{out}"
    );
    // `auto;` with funcs named: the block still wins (the auto-scheduler
    // completes it).
    let partial = format!("{BLUR}\nschedule blur3x3 {{ auto; out.parallel(y); }}");
    let out = expand(&partial, cache());
    assert_eq!(schedules(&out).len(), 1, "{out}");
    assert!(!out.contains("include_bytes"), "{out}");
    // A block of facts only (`auto;`, an estimate) leaves the choice to the
    // cache, keyed by the block's size class.
    let facts = format!("{BLUR}\nschedule blur3x3 {{ auto; estimate(out, 640, 480); }}");
    let s = schedules(&expand(&facts, cache()));
    assert!(
        s.len() == 1
            && s[0].contains(
                "has no entry for `blur3x3` of size class `out=640x480` (it has `large` on line 4)"
            ),
        "{s:?}"
    );
    let mut sized = entry("blur3x3", hash, "x86_64", TUNED);
    sized.key.size = "out=640x480".into();
    let s = schedules(&expand(&facts, source_of(vec![sized])));
    assert!(
        s.len() == 4 && s[1].contains("from pipeline-schedules.toml"),
        "{s:?}"
    );
}

#[test]
fn stale_and_rejected_entries_fall_back_saying_why() {
    let hash = hash_of(BLUR, "blur3x3");
    let stale = entry("blur3x3", hash ^ 1, "x86_64", TUNED);
    let mut old_space = entry("blur3x3", hash, "aarch64", TUNED);
    old_space.key.space = SPACE_VERSION + 1;
    let s = schedules(&expand(BLUR, source_of(vec![stale, old_space])));
    assert_eq!(s.len(), 1, "{s:?}");
    assert!(
        s[0].contains("// auto-scheduler: the x86_64 (avx2) entry for `blur3x3` (pipeline-schedules.toml line 4) is stale (the algorithm's hash differs")
            && s[0].contains("the aarch64 (scalar) entry for `blur3x3` (pipeline-schedules.toml line 20) is stale (it was tuned in schedule space v2")
            && s[0].contains("// chosen by the auto-scheduler"),
        "{}",
        s[0]
    );
    let rejected = [
        ("nosuch.parallel(y);", "is rejected: `nosuch` is not a func of pipeline `blur3x3`"),
        ("auto;", "`auto;` belongs in blocks"),
        ("out.bound(x, 0, 64);", "`bound`"),
        ("input.dim(0).set_stride(3);", "its input layout is `input.dim(0).set_stride(3)`, and the pipeline's block declares none"),
        ("out.parallel(x);\nblur_x.store_at(out, y).compute_at(out, x);", "is rejected: it does not lower: "),
        ("} fn evil() {", "is rejected: "),
    ];
    for (text, why) in rejected {
        let out = expand(
            BLUR,
            source_of(vec![entry("blur3x3", hash, "x86_64", text)]),
        );
        let s = schedules(&out);
        assert!(
            s.len() == 1 && s[0].contains(why) && !out.contains("compile_error"),
            "{text}: {s:?}\n{out}"
        );
    }
    let none = schedules(&expand(
        BLUR,
        source_of(vec![entry("other", hash, "x86_64", TUNED)]),
    ));
    assert!(
        none[0].contains("// auto-scheduler: pipeline-schedules.toml has no entry for `blur3x3`"),
        "{none:?}"
    );
}

#[test]
fn a_malformed_file_is_one_error_naming_the_file_and_line() {
    let cache = CacheSource {
        path: PathBuf::from("/crate/pipeline-schedules.toml"),
        text: Ok("# tuned\n[[pipeline]]\nname = \"blur3x3\"\nshedule = \"\"\n".into()),
    };
    let two = format!("{BLUR}\n{}", BLUR.replace("blur3x3", "other"));
    let out = expand(&two, cache);
    assert_eq!(out.matches("compile_error").count(), 1, "{out}");
    assert!(
        out.contains("schedule cache /crate/pipeline-schedules.toml:4: unknown field `shedule`"),
        "{out}"
    );
    // Both pipelines are still generated.
    assert_eq!(schedules(&out).len(), 2);
    let unreadable = CacheSource {
        path: PathBuf::from("/crate/missing.toml"),
        text: Err("cannot be read: No such file".into()),
    };
    let out = expand(BLUR, unreadable);
    assert!(
        out.contains("schedule cache /crate/missing.toml: cannot be read"),
        "{out}"
    );
}

#[test]
fn an_entry_that_is_used_computes_what_the_interpreter_computes() {
    let hash = hash_of(BLUR, "blur3x3");
    let schedules = [
        TUNED,
        "blur_x.store_at(out, yo).compute_at(out, yi).vectorize(x, 8);\nout.split(y, yo, yi, 4).parallel(yo).vectorize(x, 8);\n",
        "blur_x.compute_root().split(x, xo, xi, 4).parallel(y);\nout.tile(x, y, xo, yo, xi, yi, 8, 2).parallel(yo);\n",
    ];
    for text in schedules {
        let cache = source_of(vec![entry("blur3x3", hash, "x86_64", text)]);
        let (p, variants) = pipeline_core::variants_from_source(BLUR, "blur3x3", &cache).unwrap();
        assert_eq!(variants.cached.len(), 1, "{}", variants.fallback.schedule);
        let lowered = &variants.cached[0].lowered;
        assert!(
            lowered.schedule.contains("from pipeline-schedules.toml"),
            "{}",
            lowered.schedule
        );
        let mut rng = Rng(11);
        for &(w, h) in &[(1usize, 1usize), (7, 5), (37, 23), (70, 45)] {
            let (inputs, outputs) = images(&p, w, h, &mut rng);
            let params = params_of(&p);
            let mut want = outputs.clone();
            let mut got = outputs;
            interp::run(&p, &inputs, &params, &mut want).unwrap();
            pipeline_core::exec::run_lowered(lowered, &inputs, &params, &mut got).unwrap();
            assert!(
                same_bits(&got[0], &want[0]),
                "{w}x{h} under\n{}",
                lowered.schedule
            );
        }
    }
}

/// The blur's lowering by the auto-scheduler, and its schedule as an
/// entry holds it (`SCHEDULE`'s body).
fn auto_choice() -> (pipeline_core::Lowered, String) {
    let (p, auto) = pipeline_core::scheduled_from_source(BLUR, "blur3x3").unwrap();
    let auto = pipeline_core::lower_pipeline(&p, &auto).unwrap_or_else(|e| panic!("{}", e.message));
    let body: String = auto
        .schedule
        .lines()
        .skip(1)
        .filter(|l| *l != "}")
        .map(|l| format!("{l}\n"))
        .collect();
    (auto, body)
}

#[test]
fn the_auto_schedulers_choice_read_back_from_the_cache_is_the_same_schedule() {
    // What the tuner starts from: `SCHEDULE`'s body as an entry gives the
    // same loop nest.
    let (auto, body) = auto_choice();
    let cache = source_of(vec![entry(
        "blur3x3",
        hash_of(BLUR, "blur3x3"),
        "x86_64",
        &body,
    )]);
    let (_, variants) = pipeline_core::variants_from_source(BLUR, "blur3x3", &cache).unwrap();
    assert_eq!(variants.cached.len(), 1, "{}", variants.fallback.schedule);
    assert_eq!(variants.cached[0].lowered.text(), auto.text());
    assert!(variants.cached[0].lowered.same_code(&variants.fallback));
}

#[test]
fn an_entry_that_is_the_auto_schedulers_choice_adds_no_code() {
    // The tuner keeps the auto-scheduler's choice when nothing beat it:
    // such an entry runs the auto-scheduler's module, and says so in
    // `schedule()`; the auto-scheduler's module keeps the level's kernel.
    let (_, body) = auto_choice();
    let hash = hash_of(BLUR, "blur3x3");
    let mut same = entry("blur3x3", hash, "x86_64", &body);
    same.key.processor = "AuthenticAMD family 25 model 17".into();
    let level = entry("blur3x3", hash, "x86_64", TILED);
    let out = expand(BLUR, source_of(vec![same, level]));
    assert!(!out.contains("pub mod __avx2_authenticamd"), "{out}");
    assert!(out.contains("pub mod __avx2 "), "{out}");
    assert!(
        out.contains("(:: pipeline :: rt :: Isa :: Avx2 , \"AuthenticAMD family 25 model 17\") => blur3x3 :: __auto :: __run (input , out) ,"),
        "{out}"
    );
    let schedule_fn = &out[out.find("pub fn schedule ()").unwrap()..];
    let schedule_fn = &schedule_fn[..schedule_fn.find("pub const LOWERED").unwrap()];
    assert!(
        schedule_fn.contains("tuned on x86_64 (avx2 on AuthenticAMD family 25 model 17)")
            && schedule_fn.contains("__avx2 :: SCHEDULE")
            && schedule_fn.contains("__auto :: SCHEDULE"),
        "{schedule_fn}"
    );
    // The level's other processors run `__avx2`; this one runs the
    // auto-scheduler's module at avx2, which keeps that kernel (dropped
    // where every processor at avx2 runs `__avx2`).
    let auto_module = &out[out.find("pub mod __auto ").unwrap()..];
    assert!(
        auto_module.contains(":: pipeline :: rt :: simd :: Avx2 :: new_unchecked ()"),
        "{auto_module}"
    );
}

#[test]
fn the_key_of_a_pipeline_holds_what_its_block_declares() {
    let key = pipeline_core::cache_key_from_source(BLUR, "blur3x3", ("x86_64", "avx2")).unwrap();
    assert_eq!(
        (
            key.size.as_str(),
            key.layout.as_str(),
            key.arch.as_str(),
            key.space
        ),
        ("large", "", "x86_64", SPACE_VERSION)
    );
    assert_eq!(key.algorithm, hash_of(BLUR, "blur3x3"));
    let declared = format!(
        "{BLUR}\nschedule blur3x3 {{ auto; estimate(input, 642, 482); estimate(out, 640, 480); input.dim(0).set_stride(2); }}"
    );
    let key =
        pipeline_core::cache_key_from_source(&declared, "blur3x3", ("aarch64", "scalar")).unwrap();
    assert_eq!(key.size, "input=642x482,out=640x480");
    assert_eq!(key.layout, "input.dim(0).set_stride(2)");
}

/// The hash walks the user's tokens, not syn's trees: 10,000 nested
/// parentheses expand with a cache on a stack of rustc's size.
#[test]
fn deeply_nested_pipelines_hash_on_rustcs_stack() {
    let depth = 10_000;
    let source = format!(
        "fn nested(input: Image<f32, 2>) -> Image<f32, 2> {{ out(x, y) = {}input(x, y){}; out }}",
        "(".repeat(depth),
        ")".repeat(depth)
    );
    let found = std::thread::Builder::new()
        .stack_size(8 << 20)
        .spawn(move || {
            let tokens: proc_macro2::TokenStream =
                stacker::grow(1 << 30, || source.parse().expect("tokens"));
            let cache = source_of(vec![entry("nested", 0, "x86_64", "out.parallel(y);")]);
            pipeline_core::expand_with_cache(tokens, Some(cache))
                .into_iter()
                .any(|t| matches!(t, proc_macro2::TokenTree::Ident(i) if i == "nested"))
        })
        .unwrap()
        .join()
        .expect("the expansion finished");
    assert!(found);
}

/// A hand edit can leave anything: every one-character deletion or
/// insertion of a written file parses or is an error at a line of the
/// file, never a panic.
#[test]
fn any_small_edit_parses_or_is_an_error_at_a_line() {
    let mut odd = entry("blur3x3", 7, "x86_64", "a \"quoted\" \\ text\n\ttab é\n");
    odd.key.layout = "input.dim(0).set_stride(2)".into();
    let text = CacheFile {
        entries: vec![entry("blur3x3", 1, "aarch64", TUNED), odd],
    }
    .to_text();
    let lines = text.lines().count() + 1;
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut edits = 0;
    for &(at, ch) in &chars {
        let mut variants = vec![format!("{}{}", &text[..at], &text[at + ch.len_utf8()..])];
        for insert in [
            '"', '\'', '\\', '\n', '\r', '[', ']', '=', '#', '_', '0', 'u', 'é', '\u{1}',
        ] {
            variants.push(format!("{}{insert}{}", &text[..at], &text[at..]));
        }
        for edited in variants {
            let result = std::panic::catch_unwind(|| CacheFile::parse(&edited));
            match result {
                Ok(Ok(_)) => {}
                Ok(Err((line, message))) => assert!(
                    (1..=lines).contains(&line) && !message.is_empty(),
                    "line {line}: {message}\n{edited}"
                ),
                Err(_) => panic!("the parser panicked on\n{edited}"),
            }
            edits += 1;
        }
    }
    assert!(edits > 5000);
}
