//! Random schedules, and every pipeline's automatic schedule, through the
//! whole compiler: each is expanded by the
//! macro into a crate of its own (built with cargo in the test's temporary
//! directory), run on the same inputs as the interpreter, and its outputs
//! compared bit for bit. The lowered-statement executor of the other test
//! covers many more schedules; this one covers code generation.
//!
//! `PIPELINE_COMPILED_SCHEDULES=N` sets the schedules per pipeline (default 2).

use super::*;
use corpus::compiled::{run_compiled, Case};
use std::path::Path;

#[test]
fn random_schedules_compiled_agree_with_the_interpreter() {
    let per: usize = std::env::var("PIPELINE_COMPILED_SCHEDULES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2);
    if per == 0 {
        return;
    }
    let mut cases = Vec::new();
    for (k, (source, name)) in sources().iter().enumerate() {
        let bare = without_schedules(source);
        let (p, _) = pipeline_core::scheduled_from_source(&bare, name).unwrap();
        let mut rng = Rng(0xC0DE_0000 + k as u64 * 7919);
        // The automatic schedule (no block), at 1x1 and at odd sizes.
        for (w, h) in [(2usize, 2usize), (18, 11)] {
            let (inputs, outputs) = images(&p, w, h, &mut rng);
            cases.push(Case {
                name: name.clone(),
                source: bare.clone(),
                schedule: String::new(),
                pipeline: p.clone(),
                inputs,
                params: params_of(&p),
                outputs,
            });
        }
        for _ in 0..per {
            let schedule = random_schedule(&bare, name, &p, &mut rng);
            let full = format!("{bare}\n{schedule}");
            let (checked, sched) = pipeline_core::scheduled_from_source(&full, name).unwrap();
            if pipeline_core::lower_pipeline(&checked, &sched).is_err() {
                continue; // refused as inlining too much (see the other test)
            }
            let (w, h) = (18usize, 11usize);
            let (inputs, outputs) = images(&p, w, h, &mut rng);
            let params = params_of(&p);
            cases.push(Case {
                name: name.clone(),
                source: bare.clone(),
                schedule,
                pipeline: p.clone(),
                inputs,
                params,
                outputs,
            });
        }
    }

    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("random-compiled");
    let compared = run_compiled(&dir, &cases).unwrap_or_else(|(_, e)| panic!("{e}"));
    println!("{compared} compiled schedules agree with the interpreter");
    assert!(
        compared * 2 > cases.len(),
        "{compared} of {} compared",
        cases.len()
    );
}
