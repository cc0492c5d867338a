//! The cache through cargo: a generated crate with a `pipeline-schedules.toml`
//! beside its `Cargo.toml` is built and run at every level the processor
//! has; each level runs its own entry, or the auto-scheduler's schedule
//! where it has none (`schedule()` says which), and computes what the
//! interpreter computes; an entry for the processor wins over its level's,
//! and another processor's serves only that one; an edit of the file, and
//! its removal, rebuild the crate.

use super::*;
use pipeline_core::interp::{Image, Value};
use pipeline_core::ir::Type;
use std::path::Path;
use std::process::Command;

const W: usize = 37;
const H: usize = 23;

/// The crate: the blur on a W x H input of a fixed pattern, printing at
/// each level the processor has the level, the schedule it runs, its
/// output and the processor's name.
fn write_crate(dir: &Path) {
    std::fs::create_dir_all(dir.join("src")).unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let manifest = format!(
        "[package]\nname = \"schedule_cache_crate\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n[dependencies]\npipeline = {{ path = {:?} }}\n\n[profile.dev]\ndebug = 0\nincremental = false\n\n[profile.dev.build-override]\nopt-level = 2\n\n[workspace]\n",
        root.canonicalize().unwrap()
    );
    std::fs::write(dir.join("Cargo.toml"), manifest).unwrap();
    let main = format!(
        "use pipeline::{{pipeline, Buffer}};\npipeline! {{\n{BLUR}\n}}\nfn main() {{\n    let data: Vec<u16> = (0..{W} * {H}).map(|i| (i * 7919 % 1000) as u16).collect();\n    let input = Buffer::<u16, 2>::from_vec(data, [{W}, {H}]).unwrap();\n    for level in pipeline::rt::Isa::available() {{\n        let mut out = Buffer::<u16, 2>::new([{W}, {H}]);\n        let schedule = pipeline::rt::with_isa(level, || {{\n            blur3x3(&input.view(), &mut out.view_mut()).unwrap();\n            blur3x3::schedule()\n        }});\n        let values: Vec<String> = out.as_slice().iter().map(|v| v.to_string()).collect();\n        println!(\"{{}}\t{{:?}}\t{{}}\t{{}}\", level.name(), schedule, values.join(\" \"), pipeline::rt::processor());\n    }}\n}}\n"
    );
    std::fs::write(dir.join("src/main.rs"), main).unwrap();
}

/// A run of the crate at one level: the level's name, the schedule it
/// ran, its output and the processor's name.
type Run = (String, String, Vec<String>, String);

/// Builds and runs the crate, as processor `processor` if given.
fn run(dir: &Path, processor: Option<&str>) -> Vec<Run> {
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("compiled-target");
    let mut cargo = Command::new(env!("CARGO"));
    cargo
        .args(["run", "--quiet", "--manifest-path"])
        .arg(dir.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", &target)
        .env_remove("RUSTFLAGS")
        .env_remove(CACHE_ENV)
        .env_remove("PIPELINE_PROCESSOR");
    if let Some(p) = processor {
        cargo.env("PIPELINE_PROCESSOR", p);
    }
    let out = cargo.output().expect("cargo runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let levels: Vec<_> = stdout
        .lines()
        .map(|line| {
            let mut parts = line.split('\t');
            let mut next = || parts.next().unwrap_or_default();
            let level = next().to_string();
            let schedule = next().replace("\\n", "\n");
            let values = next().split(' ').map(String::from).collect();
            (level, schedule, values, next().to_string())
        })
        .collect();
    assert!(!levels.is_empty(), "{stdout}");
    levels
}

#[test]
fn a_crate_uses_its_cache_and_rebuilds_when_the_file_changes() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("schedule_cache_crate");
    let _ = std::fs::remove_dir_all(&dir);
    write_crate(&dir);
    let cache = dir.join(FILE_NAME);
    let hash = hash_of(BLUR, "blur3x3");
    // Entries (level, processor, schedule); off x86_64 the level is
    // scalar.
    let x86 = std::env::consts::ARCH == "x86_64";
    let write = |entries: &[(&str, &str, &str)]| {
        let entries = entries
            .iter()
            .filter(|(level, ..)| (*level == "scalar") != x86)
            .map(|&(level, processor, schedule)| {
                let mut e = entry("blur3x3", hash, std::env::consts::ARCH, schedule);
                e.key.isa = level.into();
                e.key.processor = processor.into();
                e
            })
            .collect();
        std::fs::write(&cache, CacheFile { entries }.to_text()).unwrap();
    };
    // Runs the crate (as `processor`, if given): each level ran the
    // schedule `expected` says (a piece of its text) and computed `want`.
    // Returns the processor's name.
    let check =
        |processor: Option<&str>, expected: &dyn Fn(&str) -> &'static str, want: &[String]| {
            let runs = run(&dir, processor);
            for (level, schedule, got, _) in &runs {
                let piece = expected(level);
                assert!(
                    schedule.contains(piece),
                    "at {level}: `{piece}` expected in\n{schedule}"
                );
                assert_eq!(got, want, "at {level}");
            }
            runs[0].3.clone()
        };
    // What the interpreter computes on the same input.
    let p = pipeline_core::pipeline_from_source(BLUR, "blur3x3").unwrap();
    let input = Image {
        ty: Type::U16,
        min: vec![0, 0],
        shape: vec![W, H],
        data: (0..W * H)
            .map(|i| Value::Int((i * 7919 % 1000) as i128))
            .collect(),
    };
    let mut want = vec![Image::new(Type::U16, vec![0, 0], vec![W, H])];
    interp::run(&p, &[input], &[], &mut want).unwrap();
    let want: Vec<String> = want[0]
        .data
        .iter()
        .map(|v| match v {
            Value::Int(i) => i.to_string(),
            v => panic!("{v:?}"),
        })
        .collect();

    // Two levels with entries of their own (scalar's for a processor
    // other than x86_64), the others the auto-scheduler's.
    let tiled =
        "blur_x.compute_root().parallel(y);\nout.tile(x, y, xo, yo, xi, yi, 8, 4).parallel(yo);\n";
    write(&[
        ("avx2", "", TUNED),
        ("sse4.1", "", tiled),
        ("scalar", "", TUNED),
    ]);
    let tuned = "out.parallel(y).vectorize(x, 16);";
    let tiles = "out.tile(x, y, xo, yo, xi, yi, 8, 4)";
    let auto = "chosen by the auto-scheduler";
    let this = check(
        None,
        &|level| match level {
            "avx2" => tuned,
            "sse4.1" => tiles,
            "scalar" if !x86 => tuned,
            _ => auto,
        },
        &want,
    );

    // An edit rebuilds.
    write(&[("avx2", "", tiled), ("scalar", "", tiled)]);
    check(
        None,
        &|level| match level {
            "avx2" => tiles,
            "scalar" if !x86 => tiles,
            _ => auto,
        },
        &want,
    );

    // This processor's entry wins over its level's; another processor's
    // serves that one only (`PIPELINE_PROCESSOR` plays it).
    if x86 {
        let other = if this.starts_with("Other ") {
            "Another family 1 model 1"
        } else {
            "Other family 1 model 1"
        };
        write(&[
            ("avx2", &this, tiled),
            ("avx2", "", TUNED),
            ("sse4.1", other, TUNED),
        ]);
        check(
            None,
            &|level| match level {
                "avx2" => tiles,
                _ => auto,
            },
            &want,
        );
        let ran_as = check(
            Some(other),
            &|level| match level {
                "avx2" | "sse4.1" => tuned,
                _ => auto,
            },
            &want,
        );
        assert_eq!(ran_as, other);
    }

    // So does its removal: the auto-scheduler again, with no cache to name.
    std::fs::remove_file(&cache).unwrap();
    for (level, schedule, got, _) in run(&dir, None) {
        assert!(
            schedule.contains(auto) && !schedule.contains("pipeline-schedules.toml"),
            "at {level}: {schedule}"
        );
        assert_eq!(got, want, "at {level}");
    }
}
