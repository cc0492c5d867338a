//! Schedules never change results: many random valid schedules of every test
//! and example pipeline are lowered and executed (`pipeline_core::exec`) and
//! compared with the reference interpreter at odd sizes. A failure prints the
//! schedule in `schedule` block syntax, ready to paste into a `pipeline!` to
//! replay it with generated code.

use pipeline_core::interp;

mod corpus;
use corpus::schedule::{random_schedule, TOO_LARGE, WITH_UPDATE_DIRECTIVES};
use corpus::*;

#[path = "random_schedules/compiled.rs"]
mod compiled;

fn check_pipeline(source: &str, name: &str, schedules: usize, seed: u64) -> usize {
    let bare = without_schedules(source);
    let (p, _) = pipeline_core::scheduled_from_source(&bare, name).unwrap();
    let mut rng = Rng(seed | 1);
    let mut compared = 0;
    for _ in 0..schedules {
        let schedule = random_schedule(&bare, name, &p, &mut rng);
        let full = format!("{bare}\n{schedule}");
        if std::env::var_os("PIPELINE_RANDOM_VERBOSE").is_some() {
            eprintln!("{schedule}");
        }
        let (checked, sched) = pipeline_core::scheduled_from_source(&full, name)
            .unwrap_or_else(|e| panic!("{e}\n{schedule}"));
        let lowered = match pipeline_core::lower_pipeline(&checked, &sched) {
            Ok(l) => l,
            // Inlining several stencils into each other can exceed the
            // expression size the compiler accepts: a valid refusal.
            Err(e) if e.message.starts_with("inlining") => {
                TOO_LARGE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                continue;
            }
            Err(e) => panic!(
                "the generator made a schedule that cannot be honoured: {}\n{schedule}",
                e.message
            ),
        };
        for &[w, h] in &[[7usize, 5usize], [18, 11]] {
            let (inputs, outputs) = images(&p, w, h, &mut rng);
            let params = params_of(&p);
            let mut want = outputs.clone();
            let mut got = outputs;
            let expected = interp::run(&p, &inputs, &params, &mut want);
            let actual = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                pipeline_core::exec::run_lowered(&lowered, &inputs, &params, &mut got)
            }))
            .unwrap_or_else(|e| {
                let msg = e
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()));
                panic!(
                    "{name} at {w}x{h} panicked: {msg:?}\n{schedule}\n{}",
                    lowered.text()
                )
            });
            match (expected, actual) {
                (Ok(()), Ok(())) => {
                    for (k, (g, e)) in got.iter().zip(&want).enumerate() {
                        let same = same_bits(g, e);
                        assert!(same, "{name} output {k} at {w}x{h} differs from the interpreter under\n{schedule}\n{}", lowered.text());
                    }
                    compared += 1;
                }
                (Err(_), Err(_)) => {}
                (e, a) => panic!("{name} at {w}x{h}: interpreter {e:?}, lowered {a:?}\n{schedule}"),
            }
        }
    }
    compared
}

#[test]
fn random_schedules_never_change_results() {
    let count: usize = std::env::var("PIPELINE_RANDOM_SCHEDULES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(12);
    let mut total = 0;
    let all = sources();
    assert!(all.len() >= 15, "found {} pipelines", all.len());
    for (k, (source, name)) in all.iter().enumerate() {
        total += check_pipeline(source, name, count, 0x9E37_79B9 + k as u64);
    }
    let updates = WITH_UPDATE_DIRECTIVES.load(std::sync::atomic::Ordering::Relaxed);
    println!(
        "{total} comparisons over {} pipelines ({updates} schedules with update-stage directives, {} refused as inlining too much)",
        all.len(),
        TOO_LARGE.load(std::sync::atomic::Ordering::Relaxed)
    );
    assert!(total > 0 && updates > 0);
}
