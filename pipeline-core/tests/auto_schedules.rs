//! The auto-scheduler on every pipeline of the repository: its schedule
//! lowers, gives the interpreter's results at odd sizes (1x1 included), and
//! is the one the golden file records, so that a change of choice is a
//! reviewed change (`PIPELINE_BLESS=1 cargo test -p pipeline-core --test
//! auto_schedules` rewrites the file).

use pipeline_core::interp;
use std::path::Path;

mod corpus;
use corpus::*;

/// The schedule text of `name`'s automatic schedule, and its lowering.
fn automatic(source: &str, name: &str) -> (pipeline_core::ir::Pipeline, pipeline_core::Lowered) {
    let bare = without_schedules(source);
    let (p, sched) =
        pipeline_core::scheduled_from_source(&bare, name).unwrap_or_else(|e| panic!("{name}: {e}"));
    let lowered = pipeline_core::lower_pipeline(&p, &sched).unwrap_or_else(|e| {
        panic!(
            "{name}: the automatic schedule does not lower: {}\n{}",
            e.message,
            sched.note.clone().unwrap_or_default()
        )
    });
    (p, lowered)
}

#[test]
fn automatic_schedules_equal_the_interpreter() {
    let mut compared = 0;
    for (k, (source, name)) in sources().iter().enumerate() {
        let (p, lowered) = automatic(source, name);
        let mut rng = Rng(0x5EED + k as u64);
        // Outputs of 1x1, 6x4, 17x10 and 66x39 (inputs one wider all round).
        for &(w, h) in &[(2usize, 2usize), (7, 5), (18, 11), (67, 40)] {
            let (inputs, outputs) = images(&p, w, h, &mut rng);
            let params = params_of(&p);
            let mut want = outputs.clone();
            let mut got = outputs;
            let expected = interp::run(&p, &inputs, &params, &mut want);
            let actual = pipeline_core::exec::run_lowered(&lowered, &inputs, &params, &mut got);
            match (expected, actual) {
                (Ok(()), Ok(())) => {
                    for (o, (g, e)) in got.iter().zip(&want).enumerate() {
                        let same = same_bits(g, e);
                        assert!(
                            same,
                            "{name} output {o} at {w}x{h} differs from the interpreter under\n{}\n{}",
                            lowered.schedule, lowered.text()
                        );
                    }
                    compared += 1;
                }
                (Err(_), Err(_)) => {}
                (e, a) => panic!(
                    "{name} at {w}x{h}: interpreter {e:?}, lowered {a:?}\n{}",
                    lowered.schedule
                ),
            }
        }
    }
    println!("{compared} comparisons");
    assert!(compared > 60);
}

#[test]
fn automatic_schedules_match_the_golden_file() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/auto_schedules/golden.txt");
    let mut text = String::new();
    for (source, name) in sources() {
        let (_, lowered) = automatic(&source, &name);
        text += &lowered.schedule;
        text += "\n";
    }
    if std::env::var_os("PIPELINE_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &text).unwrap();
        return;
    }
    let golden = std::fs::read_to_string(&path).unwrap_or_default();
    if golden != text {
        let first = golden
            .lines()
            .zip(text.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(golden.lines().count().min(text.lines().count()));
        panic!(
            "the auto-scheduler now chooses differently (first difference at line {}):\n  golden: {:?}\n  now:    {:?}\nReview the change (and raise schedule::auto::VERSION if it is one), then run with PIPELINE_BLESS=1 to accept it.",
            first + 1,
            golden.lines().nth(first).unwrap_or(""),
            text.lines().nth(first).unwrap_or("")
        );
    }
}

// One test per decision rule, on small pipelines.

use pipeline_core::schedule::auto::{choose, Decision, Estimates, Machine, Options, Plan};
use pipeline_core::schedule::{ComputeLevel, Schedule};

/// The auto-scheduler's plan for pipeline `name` of `source` (no block).
fn plan(source: &str, name: &str, machine: &Machine) -> (pipeline_core::ir::Pipeline, Plan) {
    let p = pipeline_core::pipeline_from_source(source, name).unwrap();
    let pinned = vec![false; p.funcs.len()];
    let plan = choose(
        &p,
        &Schedule::default_for(&p),
        &Options {
            machine,
            estimates: &Estimates::default(),
            pinned: &pinned,
            fuse: true,
        },
    );
    (p, plan)
}

/// The plan of the func called `f`.
fn of<'a>(
    p: &pipeline_core::ir::Pipeline,
    plan: &'a Plan,
    f: &str,
) -> &'a pipeline_core::schedule::auto::FuncPlan {
    let id = p.funcs.iter().position(|g| g.name == f).unwrap();
    plan.funcs[id]
        .as_ref()
        .unwrap_or_else(|| panic!("no plan for {f}"))
}

/// Asserts that `f` joins the group of `head`, computed for each of its
/// strips (`compute_at(head, yo)`).
fn assert_per_strip(p: &pipeline_core::ir::Pipeline, plan: &Plan, f: &str, head: &str) {
    let id = p.funcs.iter().position(|g| g.name == head).unwrap();
    let plan_f = of(p, plan, f);
    assert_eq!(
        plan_f.decision,
        Decision::Fused { head: id },
        "{}",
        plan.report
    );
    assert_eq!(plan_f.directives[0], format!("compute_at({head}, yo)"));
}

/// Lowers the automatic schedule of `source` and compares it with the
/// interpreter at a few sizes.
fn agrees(source: &str, name: &str) {
    let (p, lowered) = automatic(source, name);
    let mut rng = Rng(7);
    for &(w, h) in &[(2usize, 2usize), (9, 7), (70, 45)] {
        let (inputs, outputs) = images(&p, w, h, &mut rng);
        let params = params_of(&p);
        let mut want = outputs.clone();
        let mut got = outputs;
        interp::run(&p, &inputs, &params, &mut want).unwrap();
        pipeline_core::exec::run_lowered(&lowered, &inputs, &params, &mut got).unwrap();
        assert_eq!(
            format!("{:?}", got),
            format!("{:?}", want),
            "{name} at {w}x{h}"
        );
    }
}

const POINTWISE: &str = "
    pub fn pointwise(input: Image<u8, 2>) -> (Image<f32, 2>, Image<f32, 2>) {
        a(x, y) = input(x, y) as f32 * 2.0;
        b(x, y) = a(x, y) + 1.0;
        c(x, y) = b(x, y) * b(x, y) - a(x, y);
        e(x, y) = exp(c(x, y));
        out(x, y) = e(x, y) + e(x, y) * 0.5;
        g(x, y) = sqrt(out(x, y)) + exp(out(x, y) * 0.25) * 3.0;
        out2(x, y) = g(x, y) - 1.0;
        out3(x, y) = g(x, y) + 1.0;
        (out2, out3)
    }";

#[test]
fn pointwise_chains_are_inlined_unless_work_would_be_repeated() {
    let (p, plan) = plan(POINTWISE, "pointwise", &Machine::default());
    // Read once, trivial, or read by one consumer at one point (one value).
    for f in ["a", "b", "c", "e", "out"] {
        assert_eq!(
            of(&p, &plan, f).decision,
            Decision::Inline,
            "{f}: {}",
            plan.report
        );
    }
    // `g` calls exp and is read by two outputs: computed once, at root.
    let g = of(&p, &plan, "g");
    assert_eq!(g.decision, Decision::Head, "{}", plan.report);
    assert_eq!(g.directives[0], "compute_root()");
    agrees(POINTWISE, "pointwise");
}

const STENCILS: &str = "
    pub fn stencils(input: Image<u16, 2>) -> Image<u16, 2> {
        let clamped = input.clamp_edge();
        bx(x, y) = (clamped(x - 1, y) as u32 + clamped(x, y) as u32 + clamped(x + 1, y) as u32) / 3;
        by(x, y) = (bx(x, y - 1) + bx(x, y) + bx(x, y + 1)) / 3;
        out(x, y) = ((by(x, y - 1) + 2 * by(x, y) + by(x, y + 1)) / 4) as u16;
        out
    }";

#[test]
fn stencil_chains_slide_down_the_strips_of_their_output() {
    let (p, plan) = plan(STENCILS, "stencils", &Machine::default());
    let head = p.outputs[0];
    for f in ["bx", "by"] {
        let fp = of(&p, &plan, f);
        assert_eq!(
            fp.decision,
            Decision::Fused { head },
            "{f}: {}",
            plan.report
        );
        assert_eq!(
            fp.directives[..2],
            ["store_at(out, yo)", "compute_at(out, yi)"]
        );
    }
    let out = of(&p, &plan, "out");
    assert!(out
        .directives
        .iter()
        .any(|d| d.starts_with("split(y, yo, yi, ")));
    assert!(out.directives.contains(&"parallel(yo)".to_string()));
    // A u16 output: 32 lanes fill a 64-byte register.
    assert!(out.directives.contains(&"vectorize(x, 32)".to_string()));
    // `bx` is needed 2 rows beyond each strip, `by` 1 row (its halo is
    // carried over as the strip slides).
    assert!(
        plan.report.contains("bx (+4 rows)") && plan.report.contains("by (+2 rows)"),
        "{}",
        plan.report
    );
    agrees(STENCILS, "stencils");
}

#[test]
fn a_group_wider_than_the_cache_is_cut_into_column_tiles() {
    let machine = Machine::parse("l2=16K").unwrap();
    let (p, plan) = plan(STENCILS, "stencils", &machine);
    let out = of(&p, &plan, "out");
    let tile = out
        .directives
        .iter()
        .find(|d| d.starts_with("split(x, xo, xi, "))
        .unwrap_or_else(|| panic!("{}", plan.report));
    // bx and by keep 4 rows of u32 each (3 rows folded to 4): 32 bytes a
    // column; half of the 16 KiB L2 holds 256 columns.
    assert_eq!(tile, "split(x, xo, xi, 256)");
    assert_eq!(of(&p, &plan, "bx").directives[0], "store_at(out, xo)");
}

const REDUCTION: &str = "
    pub fn columns(input: Image<u16, 2>) -> Image<u32, 2> {
        colsum(x) = 0u32;
        for r in rdom(0..input.height() - 2) {
            colsum(x) += input(x, r) as u32;
        }
        out(x, y) = colsum(x) + input(x, y) as u32;
        out
    }";

#[test]
fn a_reductions_pure_loops_are_vectorized() {
    let (p, plan) = plan(REDUCTION, "columns", &Machine::default());
    let colsum = of(&p, &plan, "colsum");
    assert_eq!(colsum.decision, Decision::Head);
    assert_eq!(
        colsum.directives,
        [
            "compute_root()",
            "vectorize(x, 16)",
            "update(0).reorder(x, r).vectorize(x, 16)"
        ],
        "{}",
        plan.report
    );
    agrees(REDUCTION, "columns");
}

const LOOKUP: &str = "
    pub fn tone(input: Image<u8, 2>) -> (Image<f32, 2>, Image<f32, 2>) {
        curve(i) = (i as f32 / 255.0) * (i as f32 / 255.0);
        mapped(x, y) = curve(input(x, y) as i32);
        scaled(x, y) = input(x, y) as f32 * 0.5;
        (mapped, scaled)
    }";

#[test]
fn a_func_that_gathers_keeps_32_byte_vectors() {
    let (p, plan) = plan(LOOKUP, "tone", &Machine::default());
    // `mapped` reads `curve` at a coordinate computed from the input: a
    // gather, no faster in wider registers. `scaled` reads at its point.
    let mapped = of(&p, &plan, "mapped");
    assert!(
        mapped.directives.contains(&"vectorize(x, 8)".to_string()),
        "{}",
        plan.report
    );
    let scaled = of(&p, &plan, "scaled");
    assert!(
        scaled.directives.contains(&"vectorize(x, 16)".to_string()),
        "{}",
        plan.report
    );
    agrees(LOOKUP, "tone");
}

const REDUCED: &str = "
    pub fn sums(input: Image<f32, 2>) -> Image<f32, 2> {
        let clamped = input.clamp_edge();
        bright(x, y) = clamp(clamped(x, y), 0.0, 1.0);
        acc(x, y) = 0.0;
        for r in rdom(0..4) {
            acc(x, y) += bright(4 * x + r, y);
        }
        out(x, y) = acc(x, y) + bright(x, y);
        out
    }";

#[test]
fn a_cheap_func_read_by_a_reduction_is_computed_not_inlined() {
    let (p, plan) = plan(REDUCED, "sums", &Machine::default());
    // Inlined, `bright`'s clamps would run in each of the reduction's 4
    // iterations, its boundary condition included.
    let bright = of(&p, &plan, "bright");
    assert_ne!(bright.decision, Decision::Inline, "{}", plan.report);
    agrees(REDUCED, "sums");
}

const SCAN: &str = "
    pub fn rows(input: Image<u16, 2>) -> Image<u32, 2> {
        ps(x, y) = input(x, y) as u32;
        for r in rdom(1..input.width() - 2) {
            ps(r, y) = ps(r - 1, y) + ps(r, y);
        }
        out(x, y) = ps(x, y) * 2;
        out
    }";

#[test]
fn a_scans_rows_run_in_parallel() {
    let (p, plan) = plan(SCAN, "rows", &Machine::default());
    let ps = of(&p, &plan, "ps");
    // The scan runs along x in order; its rows are independent.
    assert_eq!(
        ps.directives.last().unwrap(),
        "update(0).parallel(y)",
        "{}",
        plan.report
    );
    agrees(SCAN, "rows");
}

const PYRAMID: &str = "
    pub fn levels(input: Image<f32, 2>) -> (Image<f32, 2>, Image<f32, 2>, Image<f32, 2>) {
        l0(x, y) = input.clamp_edge()(x, y);
        l1(x, y) = (l0(2 * x, 2 * y) + l0(2 * x + 1, 2 * y) + l0(2 * x, 2 * y + 1) + l0(2 * x + 1, 2 * y + 1)) * 0.25;
        l2(x, y) = (l1(2 * x, 2 * y) + l1(2 * x + 1, 2 * y) + l1(2 * x, 2 * y + 1) + l1(2 * x + 1, 2 * y + 1)) * 0.25;
        l3(x, y) = (l2(2 * x, 2 * y) + l2(2 * x + 1, 2 * y) + l2(2 * x, 2 * y + 1) + l2(2 * x + 1, 2 * y + 1)) * 0.25;
        (l1, l2, l3)
    }
    schedule levels {
        auto;
        estimate(input, 512, 192);
    }";

#[test]
fn small_pyramid_levels_are_not_split_into_more_tasks_than_rows() {
    let (p, sched) = pipeline_core::scheduled_from_source(PYRAMID, "levels").unwrap();
    let lowered =
        pipeline_core::lower_pipeline(&p, &sched).unwrap_or_else(|e| panic!("{}", e.message));
    // 96, 48 and 24 rows of 256, 128 and 64: the first in 12 parallel
    // strips of 8 rows, the others too small to share out.
    let text = &lowered.schedule;
    assert!(
        text.contains("l1.split(y, yo, yi, 8).parallel(yo).vectorize(x, 16);"),
        "{text}"
    );
    assert!(text.contains("l2.vectorize(x, 16);"), "{text}");
    assert!(text.contains("l3.vectorize(x, 16);"), "{text}");
    agrees(PYRAMID, "levels");
}

#[test]
fn what_the_user_pins_is_kept() {
    let source = format!(
        "{STENCILS}
        schedule stencils {{
            auto;
            bx.compute_root().parallel(y);
        }}"
    );
    let (p, sched) = pipeline_core::scheduled_from_source(&source, "stencils").unwrap();
    let id = |n: &str| p.funcs.iter().position(|g| g.name == n).unwrap();
    assert_eq!(sched.func(id("bx")).compute, ComputeLevel::Root);
    assert_eq!(
        sched.func(id("bx")).written,
        ["compute_root()", "parallel(y)"]
    );
    // `by` still slides inside the output's strips, which the
    // auto-scheduler chose.
    assert_eq!(
        sched.func(id("by")).compute,
        ComputeLevel::At {
            func: id("out"),
            var: "yi".into()
        }
    );
    assert!(sched
        .note
        .as_deref()
        .unwrap()
        .contains("the funcs the block names as written"));
    let lowered =
        pipeline_core::lower_pipeline(&p, &sched).unwrap_or_else(|e| panic!("{}", e.message));
    assert!(
        lowered.schedule.contains("bx.compute_root().parallel(y);"),
        "{}",
        lowered.schedule
    );
}

#[test]
fn producers_of_several_groups_are_computed_at_root() {
    let source = "
        pub fn shared(input: Image<f32, 2>) -> (Image<f32, 2>, Image<f32, 2>) {
            s(x, y) = input.clamp_edge()(x - 1, y) + input.clamp_edge()(x + 1, y);
            a(x, y) = s(x, y - 1) + s(x, y + 1);
            b(x, y) = s(x, y) * s(x + 1, y);
            half(x, y) = a(2 * x, 2 * y) + a(2 * x + 1, 2 * y + 1);
            (half, b)
        }";
    let (p, plan) = plan(source, "shared", &Machine::default());
    assert_eq!(
        of(&p, &plan, "s").decision,
        Decision::Head,
        "{}",
        plan.report
    );
    assert_eq!(of(&p, &plan, "s").directives[0], "compute_root()");
    // `half` alone reads `a`, at twice its resolution: `a` is computed for
    // each strip of `half`, the rows that strip reads.
    assert_per_strip(&p, &plan, "a", "half");
    agrees(source, "shared");
}

#[test]
fn a_pyramid_level_computes_its_resampled_pass_per_strip() {
    // Each level reads the horizontal pass at `2 y + k` (REDUCE) and the
    // upsampling reads its own at `y / 2 + k` (EXPAND); a producer read
    // at another resolution by several groups, or through a data-dependent
    // coordinate, stays at root.
    let source = "
        pub fn levels(input: Image<f32, 2>) -> (Image<f32, 2>, Image<f32, 2>) {
            rx(x, y) = input.mirror()(2 * x - 1, y) + input.mirror()(2 * x + 1, y);
            down(x, y) = rx(x, 2 * y - 1) + 2.0 * rx(x, 2 * y) + rx(x, 2 * y + 1);
            ux(x, y) = down(x / 2, y) + down(x / 2 + 1, y);
            up(x, y) = ux(x, y / 2) * 0.5 + ux(x, y / 2 + 1) * 0.5;
            let e = input.clamp_edge();
            table(i, j) = exp(e(i, j)) + sqrt(e(i, j) + 1.0) * 3.0 - exp(e(i, j) * 0.5);
            looked(x, y) = {
                let k = clamp(input(x, y) as i32, 0, 3);
                up(x, y) + table(k, y / 2) + table(k + 1, y / 2)
            };
            (down, looked)
        }";
    let (p, plan) = plan(source, "levels", &Machine::default());
    assert_per_strip(&p, &plan, "rx", "down");
    assert_per_strip(&p, &plan, "ux", "looked");
    // `down` is an output and read by `ux`: a head of its own.
    assert_eq!(of(&p, &plan, "down").decision, Decision::Head);
    let table = of(&p, &plan, "table");
    assert_eq!(table.decision, Decision::Head, "{}", plan.report);
    assert_eq!(table.directives[0], "compute_root()");
    agrees(source, "levels");
}

#[test]
fn machine_models_parse_and_refuse_nonsense() {
    let m = Machine::parse("threads=4, vector_bytes=64,l2=512K").unwrap();
    assert_eq!((m.threads, m.vector_bytes, m.l2_bytes), (4, 64, 512 << 10));
    assert_eq!(Machine::parse(&m.describe()).unwrap(), m);
    assert_eq!(Machine::parse("").unwrap(), Machine::default());
    for (bad, says) in [
        ("threads", "is not `key=value`"),
        ("cores=4", "unknown key `cores`"),
        ("vector_bytes=24", "16, 32 or 64"),
        ("l2=lots", "is not a size"),
        ("threads=0", "between 1 and 4096"),
    ] {
        let e = Machine::parse(bad).unwrap_err();
        assert!(e.contains(says), "{bad}: {e}");
    }
}

#[test]
fn long_chains_are_cut_into_groups_of_bounded_size() {
    use pipeline_core::schedule::auto::MAX_GROUP_MEMBERS;
    let n = MAX_GROUP_MEMBERS + 4;
    let mut source = String::from(
        "pub fn chain(input: Image<f32, 2>) -> Image<f32, 2> {\n f0(x, y) = input.clamp_edge()(x, y);\n",
    );
    for k in 1..=n {
        let (p, dx, dy) = (k - 1, k % 2, 1 - k % 2);
        source += &format!(
            " f{k}(x, y) = (f{p}(x - {dx}, y - {dy}) + f{p}(x, y) + f{p}(x + {dx}, y + {dy})) * 0.25;\n"
        );
    }
    source += &format!(" f{n}\n}}\n");
    let (p, plan) = plan(&source, "chain", &Machine::default());
    let heads: Vec<&str> = (1..n)
        .filter(|&k| of(&p, &plan, &format!("f{k}")).decision == Decision::Head)
        .map(|k| p.funcs[k].name.as_str())
        .collect();
    let fused = |h: usize| {
        plan.funcs
            .iter()
            .filter(|fp| {
                fp.as_ref()
                    .is_some_and(|fp| fp.decision == Decision::Fused { head: h })
            })
            .count()
    };
    // The output's group takes the eight stages before it; the next stage
    // heads a group of its own, at root.
    assert_eq!(fused(p.outputs[0]), MAX_GROUP_MEMBERS, "{}", plan.report);
    assert!(!heads.is_empty(), "{}", plan.report);
    for h in 0..p.funcs.len() {
        assert!(fused(h) <= MAX_GROUP_MEMBERS);
    }
    agrees(&source, "chain");
}
