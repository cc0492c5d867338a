//! The timing loop the comparison benches share.

use std::time::{Duration, Instant};

/// How long each side warms up before it is timed (at least two calls).
///
/// These benches run in a fresh process (the Halide comparison starts one
/// for every round, while Halide's side runs in the long-lived Python
/// process), and there the first 20 to 40 calls of a 2-thread pipeline ran
/// at one thread's speed on the Xeon of 2026-11-28: the 5x5 Gaussian of a
/// 3840x2160 u8 image took 1.5-1.6 ms a call (its time on one thread),
/// then 0.75-0.85 ms. Two warm-up calls timed that phase. Its cause was
/// not found: not page faults, not the kernel's memory daemons, and not a
/// matter of time (a 3 s sleep before the first call left it as long).
/// `compare.py` warms Halide's side up the same way.
const WARM_UP: Duration = Duration::from_millis(200);

/// Runs `f` for [`WARM_UP`] (at least twice), then `runs` times; returns the
/// median and the minimum in milliseconds.
pub fn time(runs: usize, mut f: impl FnMut()) -> (f64, f64) {
    let start = Instant::now();
    let mut calls = 0;
    while calls < 2 || start.elapsed() < WARM_UP {
        f();
        calls += 1;
    }
    let mut ms: Vec<f64> = (0..runs.max(1))
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    ms.sort_by(|a, b| a.total_cmp(b));
    let median = if ms.len() % 2 == 1 {
        ms[ms.len() / 2]
    } else {
        (ms[ms.len() / 2 - 1] + ms[ms.len() / 2]) / 2.0
    };
    (median, ms[0])
}
