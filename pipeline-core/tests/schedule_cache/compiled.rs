//! The cache through cargo: a generated crate with a `pipeline-schedules.toml`
//! beside its `Cargo.toml` is built and run at every level the processor
//! has; each level runs its own entry, or the auto-scheduler's schedule
//! where it has none (`schedule()` says which), and computes what the
//! interpreter computes; an edit of the file, and its removal, rebuild the
//! crate.

use super::*;
use pipeline_core::interp::{Image, Value};
use pipeline_core::ir::Type;
use std::path::Path;
use std::process::Command;

const W: usize = 37;
const H: usize = 23;

/// The crate: the blur on a W x H input of a fixed pattern, printing at
/// each level the processor has the level, the schedule it runs, and its
/// output.
fn write_crate(dir: &Path) {
    std::fs::create_dir_all(dir.join("src")).unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let manifest = format!(
        "[package]\nname = \"schedule_cache_crate\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n[dependencies]\npipeline = {{ path = {:?} }}\n\n[profile.dev]\ndebug = 0\nincremental = false\n\n[profile.dev.build-override]\nopt-level = 2\n\n[workspace]\n",
        root.canonicalize().unwrap()
    );
    std::fs::write(dir.join("Cargo.toml"), manifest).unwrap();
    let main = format!(
        "use pipeline::{{pipeline, Buffer}};\npipeline! {{\n{BLUR}\n}}\nfn main() {{\n    let data: Vec<u16> = (0..{W} * {H}).map(|i| (i * 7919 % 1000) as u16).collect();\n    let input = Buffer::<u16, 2>::from_vec(data, [{W}, {H}]).unwrap();\n    for level in pipeline::rt::Isa::available() {{\n        let mut out = Buffer::<u16, 2>::new([{W}, {H}]);\n        let schedule = pipeline::rt::with_isa(level, || {{\n            blur3x3(&input.view(), &mut out.view_mut()).unwrap();\n            blur3x3::schedule()\n        }});\n        let values: Vec<String> = out.as_slice().iter().map(|v| v.to_string()).collect();\n        println!(\"{{}}\t{{:?}}\t{{}}\", level.name(), schedule, values.join(\" \"));\n    }}\n}}\n"
    );
    std::fs::write(dir.join("src/main.rs"), main).unwrap();
}

/// Builds and runs the crate: per level, its name, the schedule it ran and
/// its output.
fn run(dir: &Path) -> Vec<(String, String, Vec<String>)> {
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("compiled-target");
    let out = Command::new(env!("CARGO"))
        .args(["run", "--quiet", "--manifest-path"])
        .arg(dir.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", &target)
        .env_remove("RUSTFLAGS")
        .env_remove(CACHE_ENV)
        .output()
        .expect("cargo runs");
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
            (level, schedule, values)
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
    // Entries (level, schedule); off x86_64 the level is scalar.
    let x86 = std::env::consts::ARCH == "x86_64";
    let write = |entries: &[(&str, &str)]| {
        let entries = entries
            .iter()
            .filter(|(level, _)| (*level == "scalar") != x86)
            .map(|&(level, schedule)| {
                let mut e = entry("blur3x3", hash, std::env::consts::ARCH, schedule);
                e.key.isa = level.into();
                e
            })
            .collect();
        std::fs::write(&cache, CacheFile { entries }.to_text()).unwrap();
    };
    // Runs the crate: each level ran the schedule `expected` says (a piece
    // of its text) and computed `want`.
    let check = |expected: &dyn Fn(&str) -> &'static str, want: &[String]| {
        for (level, schedule, got) in run(&dir) {
            let piece = expected(&level);
            assert!(
                schedule.contains(piece),
                "at {level}: `{piece}` expected in\n{schedule}"
            );
            assert_eq!(got, want, "at {level}");
        }
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
    write(&[("avx2", TUNED), ("sse4.1", tiled), ("scalar", TUNED)]);
    let tuned = "out.parallel(y).vectorize(x, 16);";
    let tiles = "out.tile(x, y, xo, yo, xi, yi, 8, 4)";
    let auto = "chosen by the auto-scheduler";
    check(
        &|level| match level {
            "avx2" => tuned,
            "sse4.1" => tiles,
            "scalar" if !x86 => tuned,
            _ => auto,
        },
        &want,
    );

    // An edit rebuilds.
    write(&[("avx2", tiled), ("scalar", tiled)]);
    check(
        &|level| match level {
            "avx2" => tiles,
            "scalar" if !x86 => tiles,
            _ => auto,
        },
        &want,
    );

    // So does its removal: the auto-scheduler again, with no cache to name.
    std::fs::remove_file(&cache).unwrap();
    for (level, schedule, got) in run(&dir) {
        assert!(
            schedule.contains(auto) && !schedule.contains("pipeline-schedules.toml"),
            "at {level}: {schedule}"
        );
        assert_eq!(got, want, "at {level}");
    }
}
