//! `PIPELINE_SCHEDULE` at build time, in a test binary of its own (it sets
//! the process's environment): `auto` replaces every block by the
//! auto-scheduler's choice and leaves the cache unread; `tuned` lets the
//! cache's entry replace a block that names funcs, and makes such a
//! pipeline one the tuner tunes.

use pipeline_core::schedule::cache::{
    algorithm_hash, CacheFile, CacheSource, Entry, Key, Target, SPACE_VERSION,
};
use pipeline_core::tune::Tunable;
use std::path::PathBuf;

const SOURCE: &str = "
    fn blur3x3(input: Image<u16, 2>) -> Image<u16, 2> {
        let clamped = input.clamp_edge();
        blur_x(x, y) = (clamped(x - 1, y) as u32 + clamped(x, y) as u32 + clamped(x + 1, y) as u32) / 3;
        out(x, y) = ((blur_x(x, y - 1) + blur_x(x, y) + blur_x(x, y + 1)) / 3) as u16;
        out
    }
    schedule blur3x3 { out.parallel(y); }
";

fn cache() -> CacheSource {
    let hash = algorithm_hash(&SOURCE.parse().unwrap(), "blur3x3").unwrap();
    let entry = Entry {
        key: Key {
            name: "blur3x3".into(),
            target: Target::Cpu,
            algorithm: hash,
            arch: std::env::consts::ARCH.into(),
            isa: match std::env::consts::ARCH {
                "x86_64" => "avx2".into(),
                _ => "scalar".into(),
            },
            processor: String::new(),
            size: "large".into(),
            layout: String::new(),
            space: SPACE_VERSION,
        },
        schedule:
            "blur_x.compute_at(out, y).vectorize(x, 16);\nout.parallel(y).vectorize(x, 16);\n"
                .into(),
        time_ns: None,
        date: None,
        machine: None,
        line: 0,
    };
    CacheSource {
        path: PathBuf::from("/crate/pipeline-schedules.toml"),
        text: Ok(CacheFile {
            entries: vec![entry],
        }
        .to_text()),
    }
}

fn expansion() -> String {
    pipeline_core::expand_with_cache(SOURCE.parse().unwrap(), Some(cache())).to_string()
}

#[test]
fn the_schedule_override_chooses_between_block_auto_and_cache() {
    let tunable = || {
        Tunable::from_source(SOURCE, "blur3x3")
            .unwrap()
            .consults_cache()
    };
    std::env::remove_var("PIPELINE_SCHEDULE");
    let out = expansion();
    assert!(
        out.contains("out . parallel (y)") || out.contains("out.parallel(y)"),
        "{out}"
    );
    assert!(
        !out.contains("pipeline-schedules.toml line"),
        "the block wins: {out}"
    );
    assert!(!tunable(), "a block that names funcs is not tuned");

    std::env::set_var("PIPELINE_SCHEDULE", "auto");
    let out = expansion();
    assert!(out.contains("chosen by the auto-scheduler"), "{out}");
    assert!(
        !out.contains("include_bytes"),
        "auto leaves the cache unread: {out}"
    );
    assert!(
        !tunable(),
        "under auto the cache is not read, so nothing is tuned"
    );

    std::env::set_var("PIPELINE_SCHEDULE", "tuned");
    let out = expansion();
    assert!(out.contains("from pipeline-schedules.toml line"), "{out}");
    assert!(tunable(), "under tuned the block counts as facts only");
    std::env::remove_var("PIPELINE_SCHEDULE");
}

#[test]
fn only_the_kernel_a_level_runs_is_built() {
    // No block: vectorized by the auto-scheduler under any PIPELINE_SCHEDULE
    // the other test of this binary sets meanwhile.
    let source =
        "fn brighten(input: Image<f32, 2>) -> Image<f32, 2> { out(x, y) = input(x, y) * 2.0; out }";
    let expand = || pipeline_core::expand(source.parse().unwrap()).to_string();
    // The instances of the generic kernel that the dispatch calls.
    let scalar_kernel = "__kernel (:: pipeline :: rt :: simd :: Scalar ,";
    let avx2_kernel = "__kernel (unsafe { :: pipeline :: rt :: simd :: Avx2 :: new_unchecked () }";
    std::env::remove_var("PIPELINE_KERNELS");
    let all = expand();
    assert!(
        all.contains(scalar_kernel) && all.contains(avx2_kernel),
        "{all}"
    );
    std::env::set_var("PIPELINE_KERNELS", "only:avx2");
    let one = expand();
    assert!(one.contains(avx2_kernel), "{one}");
    assert!(!one.contains(scalar_kernel), "no scalar kernel: {one}");
    assert!(one.contains("KernelUnavailable"), "{one}");
    // Below every vector kernel, the scalar one alone.
    std::env::set_var("PIPELINE_KERNELS", "only:sse4.1");
    let scalar = expand();
    assert!(
        scalar.contains(scalar_kernel) && !scalar.contains(avx2_kernel),
        "{scalar}"
    );
    std::env::remove_var("PIPELINE_KERNELS");
}
