//! The tuner end to end, on a small pipeline in a crate of its own (in the
//! test's temporary directory), with a budget of seconds: the cache is
//! written, the crate's next build uses it, its outputs equal the
//! interpreter's, and a second run resumes from the entry.

use pipeline_build::tune::{tune, Options};
use pipeline_core::interp::{self, Image, Value};
use pipeline_core::ir::Type;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

const PIPELINE: &str = "
    /// A 3x3 blur of a u8 image.
    pub fn blur3(input: Image<u8, 2>) -> Image<u8, 2> {
        let c = input.clamp_edge();
        bx(x, y) = c(x - 1, y) as u16 + c(x, y) as u16 * 2 + c(x + 1, y) as u16;
        by(x, y) = ((bx(x, y - 1) + bx(x, y) * 2 + bx(x, y + 1) + 8) / 16) as u8;
        by
    }
";

/// The input the crate's main blurs.
fn value(x: usize, y: usize) -> u8 {
    ((x * 37 + y * 11) % 251) as u8
}

const W: usize = 23;
const H: usize = 17;

fn write_crate(dir: &Path) {
    std::fs::create_dir_all(dir.join("src")).unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .unwrap();
    std::fs::write(
        dir.join("Cargo.toml"),
        format!(
            "[package]\nname = \"tuned\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n[dependencies]\npipeline = {{ path = {root:?} }}\n\n[profile.dev]\ndebug = 0\nincremental = false\n\n[workspace]\n"
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("src/main.rs"),
        format!(
            "use pipeline::{{pipeline, Buffer}};\npipeline! {{{PIPELINE}}}\nfn main() {{\n    let input = Buffer::<u8, 2>::from_fn([{W}, {H}], |[x, y]| ((x * 37 + y * 11) % 251) as u8);\n    let mut out = Buffer::<u8, 2>::new([{W}, {H}]);\n    blur3(&input, &mut out).unwrap();\n    let values: Vec<String> = out.as_slice().iter().map(|v| v.to_string()).collect();\n    println!(\"out {{}}\", values.join(\" \"));\n    println!(\"{{}}\", blur3::schedule());\n}}\n"
        ),
    )
    .unwrap();
    let _ = std::fs::remove_file(dir.join("pipeline-schedules.toml"));
}

/// `cargo COMMAND` on the crate in `dir`.
fn cargo(dir: &Path, command: &str) -> std::process::Output {
    Command::new(env!("CARGO"))
        .args([command, "--quiet", "--manifest-path"])
        .arg(dir.join("Cargo.toml"))
        .env_remove("RUSTFLAGS")
        .env_remove("PIPELINE_SCHEDULE_CACHE")
        .output()
        .unwrap()
}

#[test]
fn tunes_writes_the_cache_and_the_next_build_uses_it() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("tune-end-to-end");
    write_crate(&dir);
    // Built before there is a cache: the file the tuner creates is not yet
    // an input of the crate, and the tuner must make the next build see it.
    let built = cargo(&dir, "build");
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let mut opts = Options::new(dir.clone());
    // One round of the auto-scheduler's choices, then the final run.
    opts.budget = Duration::from_secs(1);
    opts.size = Some((256, 128));
    opts.timing = (1, 10);
    let mut log = Vec::new();
    let outcomes = tune(&opts, &mut |l: &str| log.push(l.to_string()))
        .unwrap_or_else(|e| panic!("the tuner failed: {e}\n{}", log.join("\n")));
    let log = log.join("\n");
    assert_eq!(outcomes.len(), 1, "{log}");
    let o = &outcomes[0];
    assert_eq!(o.name, "blur3");
    assert!(o.auto_ns > 0 && o.tuned_ns > 0, "{log}");
    // A winner other than the auto-scheduler's choice beat it in the final
    // run, and both figures are of the run it won.
    assert!(o.tuned_ns <= o.auto_ns, "{log}");
    assert!(!log.contains("disagrees with the interpreter"), "{log}");
    // The cache holds the winner, keyed for this architecture, level and
    // processor.
    let text = std::fs::read_to_string(dir.join("pipeline-schedules.toml")).unwrap();
    let file = pipeline_core::schedule::cache::CacheFile::parse(&text).unwrap();
    assert_eq!(file.entries.len(), 1, "{text}");
    let e = &file.entries[0];
    assert_eq!(
        (e.key.name.as_str(), e.key.arch.as_str(), e.key.isa.as_str()),
        ("blur3", std::env::consts::ARCH, pipeline::rt::isa().name())
    );
    assert_eq!(e.key.processor, pipeline::rt::processor());
    assert_eq!(e.schedule, o.schedule);
    assert!(e.time_ns.is_some() && e.date.is_some(), "{text}");

    // The crate's next build compiles the cached schedule, which this
    // processor runs.
    let run = cargo(&dir, "run");
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(
        stdout.contains("from pipeline-schedules.toml line"),
        "{stdout}"
    );
    // And its outputs equal the interpreter's.
    let p = pipeline_core::pipeline_from_source(PIPELINE, "blur3").unwrap();
    let mut input = Image::new(Type::U8, vec![0, 0], vec![W, H]);
    input.data = (0..W * H)
        .map(|i| Value::Int(value(i % W, i / W) as i128))
        .collect();
    let mut want = vec![Image::new(Type::U8, vec![0, 0], vec![W, H])];
    interp::run(&p, &[input], &[], &mut want).unwrap();
    let got: Vec<Value> = stdout
        .lines()
        .find_map(|l| l.strip_prefix("out "))
        .unwrap()
        .split(' ')
        .map(|v| Value::Int(v.parse().unwrap()))
        .collect();
    assert_eq!(got, want[0].data);

    // A second run resumes: the entry is a candidate, timed beside auto.
    opts.report = true;
    let again = tune(&opts, &mut |_: &str| {}).unwrap();
    assert_eq!(again[0].origin, "the cache's entry");
    assert_eq!(again[0].schedule, e.schedule);
}
