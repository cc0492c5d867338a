//! Stack for deep recursion. The macro runs on rustc's thread, whose
//! stack a proc macro built without optimization (large frames) can
//! exhaust on deeply nested expressions: every recursion over expressions
//! goes through [`deep`], which continues on a new segment of stack when
//! little is left, and an expansion starts on a reserved segment
//! ([`on_big_stack`]).

use std::cell::Cell;

/// Runs `f` with at least 256 KiB of stack left, continuing on a new
/// segment when deeply nested expressions need it.
///
/// The common case is one comparison: the stack pointer against
/// [`STACK_FLOOR`], the address below which the current segment has less
/// than the red zone left, found once per segment. Stacker's own check, on
/// every call, reads a lazily initialized thread-local: replacing it cut
/// the 100-func chain's expansion by 1.3% of its instructions with the
/// macro optimized and 4.4% without.
pub(crate) fn deep<R>(f: impl FnOnce() -> R) -> R {
    const RED_ZONE: usize = 256 * 1024;
    let here = 0u8;
    let sp = std::ptr::addr_of!(here) as usize;
    if sp > STACK_FLOOR.with(Cell::get) {
        return f();
    }
    match stacker::remaining_stack() {
        Some(left) if left >= RED_ZONE => {
            STACK_FLOOR.with(|floor| floor.set(sp - (left - RED_ZONE)));
            f()
        }
        _ => stacker::grow(4 * 1024 * 1024, || new_segment(f)),
    }
}

thread_local! {
    /// The lowest stack address at which [`deep`] may run its closure
    /// without checking: the current segment's limit plus the red zone, or
    /// `usize::MAX` until [`deep`] finds it (on a segment of stack that
    /// [`deep`] or [`on_big_stack`] did not start, the floor is found
    /// again, as their callers' is restored when they return).
    static STACK_FLOOR: Cell<usize> = const { Cell::new(usize::MAX) };
}

/// Runs `f` at the start of a new stack segment: [`deep`] finds the
/// segment's floor on its first call, and the caller's floor is back when
/// `f` returns (or unwinds).
fn new_segment<R>(f: impl FnOnce() -> R) -> R {
    struct Restore(usize);
    impl Drop for Restore {
        fn drop(&mut self) {
            STACK_FLOOR.with(|floor| floor.set(self.0));
        }
    }
    let _restore = Restore(STACK_FLOOR.with(|floor| floor.replace(usize::MAX)));
    f()
}

/// Runs `f` on a reserved stack segment of 1 GiB (see [`crate::expand`]).
pub(crate) fn on_big_stack<R>(f: impl FnOnce() -> R) -> R {
    // Here or on a new segment, `deep` finds the floor afresh: the one it
    // found in an earlier expansion was of whatever stack that ran on.
    stacker::maybe_grow(64 << 20, 1 << 30, || new_segment(f))
}

#[cfg(test)]
mod tests {
    /// Recursion through `deep` far beyond the thread's stack continues on
    /// new segments, each finding its own floor, and returns through them.
    #[test]
    fn deep_recursion_continues_on_new_segments() {
        fn depth(n: u32) -> u32 {
            let pad = std::hint::black_box([n as u8; 1024]);
            if n == 0 {
                return 0;
            }
            let below = super::deep(|| depth(n - 1));
            below + u32::from(pad[1023] == n as u8)
        }
        // Over 50 MB of frames on a thread of 1 MiB.
        let thread = std::thread::Builder::new().stack_size(1 << 20);
        let total = thread.spawn(|| depth(50_000)).unwrap().join().unwrap();
        assert_eq!(total, 50_000);
        // Again on the same thread after the segments are gone, and from
        // inside `on_big_stack`.
        let thread = std::thread::Builder::new().stack_size(1 << 20);
        let totals = thread
            .spawn(|| {
                (
                    depth(20_000),
                    super::on_big_stack(|| depth(20_000)),
                    depth(20_000),
                )
            })
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(totals, (20_000, 20_000, 20_000));
    }
}
