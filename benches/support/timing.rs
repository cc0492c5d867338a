//! The timing loop the comparison benches share.

use std::time::Instant;

/// Runs `f` twice to warm up, then `runs` times; returns the median and the
/// minimum in milliseconds.
pub fn time(runs: usize, mut f: impl FnMut()) -> (f64, f64) {
    f();
    f();
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
