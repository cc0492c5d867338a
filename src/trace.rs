//! Allocation tracing: what a pipeline allocated for its intermediate funcs,
//! so that tests can check what a schedule does (a sliding window computes
//! less, storage folding allocates less) and not only what it computes.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// One buffer a pipeline allocated for an intermediate func.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Allocation {
    /// The pipeline's name.
    pub pipeline: &'static str,
    /// The func stored.
    pub func: &'static str,
    /// The number of elements.
    pub elements: usize,
}

/// How many `record_allocations` calls are running.
static TRACING: AtomicUsize = AtomicUsize::new(0);
static RECORDED: Mutex<Vec<Allocation>> = Mutex::new(Vec::new());

/// Runs `f` and returns its result with the allocations that pipelines made
/// meanwhile, in order.
///
/// Allocations are recorded process-wide, so pipelines running on other
/// threads at the same time are recorded too: filter by
/// [`Allocation::pipeline`].
pub fn record_allocations<R>(f: impl FnOnce() -> R) -> (R, Vec<Allocation>) {
    let start = {
        let recorded = RECORDED.lock().unwrap_or_else(|e| e.into_inner());
        TRACING.fetch_add(1, Ordering::SeqCst);
        recorded.len()
    };
    let result = f();
    let mut recorded = RECORDED.lock().unwrap_or_else(|e| e.into_inner());
    let mine = recorded[start.min(recorded.len())..].to_vec();
    if TRACING.fetch_sub(1, Ordering::SeqCst) == 1 {
        recorded.clear();
    }
    (result, mine)
}

/// Records one allocation if anyone is tracing (one atomic load otherwise).
pub(crate) fn record(pipeline: &'static str, func: &'static str, elements: usize) {
    if TRACING.load(Ordering::Relaxed) > 0 {
        let mut recorded = RECORDED.lock().unwrap_or_else(|e| e.into_inner());
        recorded.push(Allocation {
            pipeline,
            func,
            elements,
        });
    }
}
