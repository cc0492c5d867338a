//! The tuner's proposals (`pipeline_core::tune`) on every pipeline of the
//! repository: the first is the macro's own automatic choice, every other
//! either checks and lowers exactly as a cache entry would, and then gives
//! the interpreter's results at odd sizes, or is rejected with its reason;
//! none panics.

use pipeline_core::interp;
use pipeline_core::schedule::auto::Machine;
use pipeline_core::tune::{Candidate, Tunable};

mod corpus;
use corpus::*;

/// Runs `c` under the executor against the interpreter: `Err` on a
/// difference.
fn agrees(t: &Tunable, c: &Candidate, rng: &mut Rng) -> Result<(), String> {
    let lowered = t.lower(&c.schedule)?;
    let p = t.pipeline();
    for (w, h) in [(7usize, 5usize), (18, 11)] {
        let (inputs, outputs) = images(p, w, h, rng);
        let params = params_of(p);
        let (mut want, mut got) = (outputs.clone(), outputs);
        let expected = interp::run(p, &inputs, &params, &mut want);
        let actual = pipeline_core::exec::run_lowered(&lowered, &inputs, &params, &mut got);
        match (expected, actual) {
            (Ok(()), Ok(())) => {
                if let Some(k) = (0..got.len()).find(|&k| !same_bits(&got[k], &want[k])) {
                    return Err(format!(
                        "output {k} at {w}x{h} differs from the interpreter"
                    ));
                }
            }
            (Err(_), Err(_)) => {}
            (e, a) => {
                return Err(format!(
                    "at {w}x{h}: the interpreter {e:?}, the executor {a:?}"
                ))
            }
        }
    }
    Ok(())
}

#[test]
fn every_proposal_is_legal_and_agrees_with_the_interpreter_or_is_rejected_with_a_reason() {
    let machine = Machine::default();
    let (mut proposed, mut rejected) = (0, 0);
    for (k, (source, name)) in sources().iter().enumerate() {
        let bare = without_schedules(source);
        let t = Tunable::from_source(&bare, name).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(
            t.consults_cache(),
            "{name}: without a block, the cache is read"
        );
        let (seeds, bad) = t.seeds(&machine);
        assert!(bad.is_empty(), "{name}: a seed was rejected: {bad:?}");
        // The first seed is what the macro compiles without a cache.
        let (_, auto) = pipeline_core::scheduled_from_source(&bare, name).unwrap();
        let first = t.lower(&seeds[0].schedule).unwrap();
        let again = pipeline_core::lower_pipeline(t.pipeline(), &auto)
            .unwrap_or_else(|e| panic!("{name}: {}", e.message));
        assert_eq!(
            first.text(),
            again.text(),
            "{name}: the first seed is not the auto-scheduler's choice"
        );
        let mut rng = Rng(0x7E57 + k as u64);
        // The seeds, and the neighbours of the first two.
        let mut all = seeds.clone();
        for (i, seed) in seeds.iter().take(2).enumerate() {
            let (next, bad) = t.mutations(&seed.schedule);
            // Every schedule has a neighbour (a vector width at least):
            // none means its text did not parse as statements.
            assert!(
                i > 0 || !next.is_empty() || !bad.is_empty(),
                "{name}: no neighbours of\n{}",
                seed.schedule
            );
            for r in &bad {
                assert!(
                    !r.reason.is_empty(),
                    "{name}: `{}` rejected without a reason",
                    r.origin
                );
            }
            rejected += bad.len();
            all.extend(next);
        }
        for c in &all {
            agrees(&t, c, &mut rng).unwrap_or_else(|e| {
                panic!(
                    "{name}: the proposal ({}) fails: {e}\n{}",
                    c.origin, c.schedule
                )
            });
        }
        proposed += all.len();
    }
    eprintln!(
        "{proposed} proposals agreed with the interpreter, {rejected} were rejected with reasons"
    );
    assert!(
        proposed > 100,
        "too few proposals to mean anything: {proposed}"
    );
}

/// A two-stage blur, the tests' small pipeline.
const BLUR: &str = "fn blur(input: Image<u16, 2>) -> Image<u16, 2> {
        let c = input.clamp_edge();
        blur_x(x, y) = (c(x - 1, y) + c(x, y) + c(x + 1, y)) / 3;
        blur_y(x, y) = (blur_x(x, y - 1) + blur_x(x, y) + blur_x(x, y + 1)) / 3;
        blur_y
    }";

#[test]
fn neighbours_change_one_thing_each() {
    let source = format!("{BLUR}\n    schedule blur {{ auto; input.dim(0).set_stride(1); }}");
    let t = Tunable::from_source(&source, "blur").unwrap();
    let start = "input.dim(0).set_stride(1);\nblur_x.store_at(blur_y, yo).compute_at(blur_y, yi).vectorize(x, 16);\nblur_y.split(y, yo, yi, 32).parallel(yo).vectorize(x, 16);\n";
    t.check(start).unwrap();
    let (next, bad) = t.mutations(start);
    let origins: Vec<&str> = next.iter().map(|c| c.origin.as_str()).collect();
    for want in [
        "blur_x: vectorize factor 16 -> 8",
        "blur_x: vectorize factor 16 -> 32",
        "blur_x: no sliding window (store_at dropped)",
        "blur_x: computed at root",
        "blur_x: computed at blur_y.yo",
        "blur_x: inlined",
        "blur_y: split factor 32 -> 64",
        "blur_y: no parallel(yo)",
    ] {
        assert!(origins.contains(&want), "no `{want}` among {origins:?}");
    }
    // The output is never inlined, and the layout (a fact) never changes.
    assert!(!origins.iter().any(|o| o.starts_with("blur_y: inlined")));
    for c in &next {
        assert!(
            c.schedule.starts_with("input.dim(0).set_stride(1);\n"),
            "{}",
            c.schedule
        );
        let changed = c
            .schedule
            .lines()
            .zip(start.lines())
            .filter(|(a, b)| a != b)
            .count();
        // Column tiles move the funcs at the strips with them.
        let lines = if c.origin.contains("column tiles") {
            2
        } else {
            1
        };
        assert_eq!(changed, lines, "{}: {}", c.origin, c.schedule);
    }
    let tiles = next
        .iter()
        .find(|c| c.origin == "blur_y: strips in column tiles of 256")
        .unwrap_or_else(|| panic!("no column tiles among {origins:?}, rejected: {bad:?}"));
    assert_eq!(
        tiles.schedule,
        "input.dim(0).set_stride(1);\nblur_x.store_at(blur_y, xo).compute_at(blur_y, yi).vectorize(x, 16);\nblur_y.split(y, yo, yi, 32).split(x, xo, xi, 256).reorder(xi, yi, xo, yo).parallel(yo).vectorize(xi, 16);\n"
    );
    assert!(origins.contains(&"blur_y: strips in column tiles of 1024"));
    // `y` is no loop of blur_y once it is split: rejected, with the reason.
    let r = bad
        .iter()
        .find(|r| r.origin == "blur_x: computed at blur_y.y")
        .unwrap();
    assert!(
        r.reason.contains("is not a loop of `blur_y`"),
        "{}",
        r.reason
    );
    // The key carries the layout the block declares.
    assert_eq!(
        t.key(("x86_64", "avx2")).layout,
        "input.dim(0).set_stride(1)"
    );
}

#[test]
fn the_benchmark_invocation_replaces_only_the_pipelines_cpu_block() {
    let source = "fn a(input: Image<u8, 2>) -> Image<u8, 2> { f(x, y) = input(x, y) + 1; f }
    fn b(input: Image<u8, 2>) -> Image<u8, 2> { g(x, y) = input(x, y) * 2; g }
    schedule a { auto; }
    schedule b { g.vectorize(x, 32); }
    schedule a for cuda { f.gpu_tile(x, y, xo, yo, xi, yi, 16, 16); }";
    let t = Tunable::from_source(source, "a").unwrap();
    let text = t.invocation_with("f.vectorize(x, 16);\n");
    assert!(!text.contains("auto"), "{text}");
    assert!(text.contains("g . vectorize (x , 32)"), "{text}");
    assert!(text.contains("gpu_tile"), "{text}");
    assert!(
        text.ends_with("schedule a {\nf.vectorize(x, 16);\n}\n"),
        "{text}"
    );
    let (_, sched) = pipeline_core::scheduled_from_source(&text, "a").unwrap();
    assert!(sched.note.is_none() || !sched.note.as_deref().unwrap().contains("auto-scheduler"));
}

#[test]
fn an_inlined_func_is_computed_again_and_two_steps_combine() {
    let source = BLUR;
    let t = Tunable::from_source(source, "blur").unwrap();
    let start =
        "blur_x.compute_inline();\nblur_y.split(y, yo, yi, 32).parallel(yo).vectorize(x, 16);\n";
    t.check(start).unwrap();
    let (next, bad) = t.mutations(start);
    let find = |origin: &str| {
        next.iter()
            .find(|c| c.origin == origin)
            .unwrap_or_else(|| panic!("no `{origin}` among {next:?}\nrejected: {bad:?}"))
    };
    assert_eq!(
        find("blur_x: computed at root").schedule,
        "blur_x.compute_root().split(y, yo, yi, 16).parallel(yo).vectorize(x, 16);\nblur_y.split(y, yo, yi, 32).parallel(yo).vectorize(x, 16);\n"
    );
    find("blur_x: computed at blur_y.yi");
    find("blur_x: computed at blur_y.yo");
    let window = find("blur_x: computed at blur_y.yi in a sliding window over blur_y.yo");
    assert!(window
        .schedule
        .starts_with("blur_x.store_at(blur_y, yo).compute_at(blur_y, yi).vectorize(x, 16);"));

    // Two steps on different funcs combine; two on the same func do not.
    let base = Candidate {
        schedule: start.into(),
        origin: "start".into(),
    };
    let wider = find("blur_y: split factor 32 -> 64");
    let both = t.combination(&base, window, wider).unwrap().unwrap();
    assert_eq!(
        both.schedule,
        "blur_x.store_at(blur_y, yo).compute_at(blur_y, yi).vectorize(x, 16);\nblur_y.split(y, yo, yi, 64).parallel(yo).vectorize(x, 16);\n"
    );
    assert_eq!(both.origin, format!("{} + {}", window.origin, wider.origin));
    t.check(&both.schedule).unwrap();
    let narrower = find("blur_y: split factor 32 -> 16");
    assert!(t.combination(&base, wider, narrower).is_none());
    assert!(t.combination(&base, wider, wider).is_none());
}
