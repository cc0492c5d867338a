//! Work split over threads inside the macro. rustc runs a proc macro on
//! one thread and leaves the other cores idle meanwhile, and the macro runs
//! unoptimized in most builds: the parts of an expansion that are
//! independent (each top-level stage's passes and code) run side by side.
//! Whatever the number of threads, the results are the same, in the same
//! order.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// The stack of a helper thread: room for the deep expressions of an
/// unoptimized macro before [`crate::deep`] continues on segments of its
/// own (address space only, until touched).
const STACK: usize = 64 << 20;

/// `f` of each item, in order, computed on up to `threads` threads (this
/// one among them), each of which makes its state with `init` first.
/// A thread that the system refuses leaves its share to the others; a
/// panic on any thread is this thread's.
pub(crate) fn map<T: Send, R: Send, S>(
    items: Vec<T>,
    threads: usize,
    init: impl Fn() -> S + Sync,
    f: impl Fn(&mut S, T) -> R + Sync,
) -> Vec<R> {
    let n = items.len();
    if threads <= 1 || n <= 1 {
        let mut state = init();
        return items.into_iter().map(|t| f(&mut state, t)).collect();
    }
    let slots: Vec<Mutex<Option<T>>> = items.into_iter().map(|t| Mutex::new(Some(t))).collect();
    let next = AtomicUsize::new(0);
    let (slots, next, init, f) = (&slots, &next, &init, &f);
    // Each thread takes the next item left until none is.
    let work = move || {
        let mut state = init();
        let mut done = Vec::new();
        loop {
            let k = next.fetch_add(1, Ordering::Relaxed);
            let Some(slot) = slots.get(k) else {
                return done;
            };
            let item = slot
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take()
                .expect("each item is taken once");
            done.push((k, f(&mut state, item)));
        }
    };
    let mut out: Vec<Option<R>> = Vec::new();
    out.resize_with(n, || None);
    std::thread::scope(|scope| {
        let helpers: Vec<_> = (1..threads.min(n))
            .filter_map(|_| {
                std::thread::Builder::new()
                    .name("pipeline-expand".into())
                    .stack_size(STACK)
                    .spawn_scoped(scope, work)
                    .ok()
            })
            .collect();
        let mut place = |done: Vec<(usize, R)>| {
            for (k, r) in done {
                out[k] = Some(r);
            }
        };
        place(work());
        for h in helpers {
            place(h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)));
        }
    });
    out.into_iter()
        .map(|r| r.expect("every item is done"))
        .collect()
}

/// `a()` and `b()`, `a` on a helper thread where `threads` allows one
/// (and the system gives it), `b` on this one.
pub(crate) fn both<A: Send, B>(
    threads: usize,
    a: impl FnOnce() -> A + Send,
    b: impl FnOnce() -> B,
) -> (A, B) {
    if threads <= 1 {
        return (a(), b());
    }
    let a = Mutex::new(Some(a));
    let run = || {
        a.lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            .map(|a| a())
    };
    let (a, b) = std::thread::scope(|scope| {
        let helper = std::thread::Builder::new()
            .name("pipeline-expand".into())
            .stack_size(STACK)
            .spawn_scoped(scope, run);
        let b = b();
        let a = match helper {
            Ok(h) => h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)),
            Err(_) => None,
        };
        (a, b)
    });
    // Without a helper, `a` runs here.
    (a.or_else(run).expect("`a` runs once"), b)
}

#[cfg(test)]
mod tests {
    /// Every item once, results in order, each thread with its own state,
    /// for any number of threads.
    #[test]
    fn maps_in_order_on_any_number_of_threads() {
        let items: Vec<u64> = (0..1000).collect();
        let want: Vec<u64> = items.iter().map(|x| x * x).collect();
        for threads in [0, 1, 2, 3, 8, 2000] {
            let inits = std::sync::atomic::AtomicUsize::new(0);
            let got = super::map(
                items.clone(),
                threads,
                || inits.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
                |_, x| x * x,
            );
            assert_eq!(got, want, "{threads} threads");
            let made = inits.into_inner();
            assert!(
                made >= 1 && made <= threads.clamp(1, 1000),
                "{made} states, {threads} threads"
            );
        }
        assert!(super::map(Vec::<u8>::new(), 4, || (), |_, x| x).is_empty());
    }

    /// A panic on any thread reaches the caller.
    #[test]
    fn a_panic_on_any_thread_is_the_callers() {
        let caught = std::panic::catch_unwind(|| {
            super::map(
                (0..64).collect(),
                4,
                || (),
                |_, x: u32| {
                    assert!(x != 40, "item 40");
                    x
                },
            )
        });
        assert!(caught.is_err());
    }

    /// Both run, whatever the threads, and a panic of either is the
    /// caller's.
    #[test]
    fn both_run_and_panics_reach_the_caller() {
        for threads in [0, 1, 2, 8] {
            let here = std::thread::current().id();
            let (a, b) = super::both(threads, || (1, std::thread::current().id()), || 2);
            assert_eq!((a.0, b), (1, 2));
            assert_eq!(a.1 == here, threads <= 1, "{threads} threads");
            let caught = std::panic::catch_unwind(|| super::both(threads, || panic!("a"), || 2));
            assert!(caught.is_err());
            let caught = std::panic::catch_unwind(|| super::both(threads, || 1, || panic!("b")));
            assert!(caught.is_err());
        }
    }
}
