//! The generated code compiles for a processor other than x86-64, where
//! every kernel is the scalar level: `cargo check` of a crate of vectorized
//! pipelines (`tests/portability/fixture.rs`) for `aarch64-unknown-linux-gnu`.
//!
//! Skips, and says so, where that target's standard library is not
//! installed (`rustup target add aarch64-unknown-linux-gnu`; `.ci/run`
//! installs it).

use std::path::Path;
use std::process::Command;

const TARGET: &str = "aarch64-unknown-linux-gnu";

#[test]
fn generated_code_compiles_for_aarch64() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let sysroot = Command::new(rustc)
        .args(["--print", "sysroot"])
        .output()
        .expect("rustc runs");
    let sysroot = String::from_utf8_lossy(&sysroot.stdout).trim().to_string();
    if !Path::new(&sysroot)
        .join("lib/rustlib")
        .join(TARGET)
        .exists()
    {
        eprintln!("skipped: no standard library for {TARGET} (rustup target add {TARGET})");
        return;
    }
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("portability");
    std::fs::create_dir_all(dir.join("src")).unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = format!(
        "[package]\nname = \"portability\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n[dependencies]\npipeline = {{ path = {:?} }}\n\n[profile.dev.build-override]\nopt-level = 2\n\n[workspace]\n",
        root.canonicalize().unwrap()
    );
    std::fs::write(dir.join("Cargo.toml"), manifest).unwrap();
    std::fs::copy(
        root.join("tests/portability/fixture.rs"),
        dir.join("src/main.rs"),
    )
    .unwrap();
    let out = Command::new(env!("CARGO"))
        .args(["check", "--quiet", "--target", TARGET, "--manifest-path"])
        .arg(dir.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", dir.join("target"))
        .env_remove("RUSTFLAGS")
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "the pipelines in {} do not compile for {TARGET}:\n{}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}
