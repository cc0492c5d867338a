//! Sets `cfg(pipeline_optimized)` where this crate is compiled with
//! optimization (`OPT_LEVEL` other than 0): the macro then hands its
//! generated code to the compiler as text (`codegen::rust::text`), which
//! is cheaper with optimized code and dearer without.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(pipeline_optimized)");
    println!("cargo::rerun-if-changed=build.rs");
    if std::env::var("OPT_LEVEL").is_ok_and(|level| level != "0") {
        println!("cargo::rustc-cfg=pipeline_optimized");
    }
}
