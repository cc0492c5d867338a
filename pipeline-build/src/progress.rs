//! What the tuner tells its user while it runs: lines of log, and a
//! progress bar with the best time so far, redrawn in place on a terminal.

use std::io::{IsTerminal, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Where one pipeline's tuning stands.
#[derive(Clone, Debug, PartialEq)]
pub struct Progress {
    /// The pipeline being tuned.
    pub pipeline: String,
    /// What runs now: `round 3: building 9 candidates`.
    pub step: String,
    /// Time spent on this pipeline so far.
    pub elapsed: Duration,
    /// Its budget.
    pub budget: Duration,
    /// The fastest run of the best candidate so far, and of the
    /// auto-scheduler's choice in the same round, in nanoseconds.
    pub best_ns: Option<u128>,
    pub auto_ns: Option<u128>,
}

impl Progress {
    /// One line of at most `width` characters:
    /// `harris [=====>     ] 2:10/10:00 best 1.734 ms (0.91x auto) | round 3: timing 9`.
    pub fn bar(&self, width: usize) -> String {
        let cells = 20;
        let done = if self.budget.is_zero() {
            cells
        } else {
            let f = self.elapsed.as_secs_f64() / self.budget.as_secs_f64();
            ((f * cells as f64) as usize).min(cells)
        };
        let mut bar = "=".repeat(done);
        if done < cells {
            bar.push('>');
            bar += &" ".repeat(cells - done - 1);
        }
        let best = match (self.best_ns, self.auto_ns) {
            (Some(b), Some(a)) if a > 0 => format!(
                " best {:.3} ms ({:.2}x auto)",
                b as f64 / 1e6,
                b as f64 / a as f64
            ),
            (Some(b), _) => format!(" best {:.3} ms", b as f64 / 1e6),
            _ => String::new(),
        };
        let line = format!(
            "{} [{bar}] {}/{}{best} | {}",
            self.pipeline,
            clock(self.elapsed),
            clock(self.budget),
            self.step
        );
        line.chars().take(width).collect()
    }
}

/// `m:ss`, or `h:mm:ss` from an hour.
fn clock(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    } else {
        format!("{}:{:02}", s / 60, s % 60)
    }
}

/// Receives the tuner's log and progress.
pub trait Report {
    /// A line of log, kept.
    fn line(&mut self, text: &str);
    /// Where tuning stands (`None`: a pipeline is done, clear the bar).
    fn progress(&mut self, _now: Option<&Progress>) {}
}

/// Lines to a closure, progress dropped (tests, logs to a file).
impl<F: FnMut(&str)> Report for F {
    fn line(&mut self, text: &str) {
        self(text)
    }
}

/// Standard error: lines as they come and, where it is a terminal, the
/// progress bar on its last line, redrawn every second (so a long build
/// of a round still shows the clock moving).
pub struct Terminal {
    shared: Arc<Mutex<Shown>>,
    tty: bool,
}

#[derive(Default)]
struct Shown {
    now: Option<(Progress, Instant)>,
    stop: bool,
}

const WIDTH: usize = 120;

impl Terminal {
    pub fn new() -> Terminal {
        let tty = std::io::stderr().is_terminal();
        let shared = Arc::new(Mutex::new(Shown::default()));
        if tty {
            let shared = Arc::clone(&shared);
            std::thread::spawn(move || loop {
                std::thread::sleep(Duration::from_secs(1));
                let shown = shared.lock().unwrap();
                if shown.stop {
                    return;
                }
                draw(&shown);
            });
        }
        Terminal { shared, tty }
    }
}

impl Default for Terminal {
    fn default() -> Self {
        Terminal::new()
    }
}

/// Redraws the bar in place (with the time since it was set added).
fn draw(shown: &Shown) {
    if let Some((p, at)) = &shown.now {
        let mut p = p.clone();
        p.elapsed += at.elapsed();
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r\x1b[2K{}", p.bar(WIDTH));
        let _ = err.flush();
    }
}

impl Report for Terminal {
    fn line(&mut self, text: &str) {
        let shown = self.shared.lock().unwrap();
        let mut err = std::io::stderr().lock();
        if self.tty && shown.now.is_some() {
            let _ = write!(err, "\r\x1b[2K");
        }
        let _ = writeln!(err, "{text}");
        drop(err);
        if self.tty {
            draw(&shown);
        }
    }

    fn progress(&mut self, now: Option<&Progress>) {
        if !self.tty {
            return;
        }
        let mut shown = self.shared.lock().unwrap();
        if now.is_none() && shown.now.is_some() {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[2K");
            let _ = err.flush();
        }
        shown.now = now.map(|p| (p.clone(), Instant::now()));
        draw(&shown);
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        self.progress(None);
        self.shared.lock().unwrap().stop = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(elapsed: u64) -> Progress {
        Progress {
            pipeline: "harris".into(),
            step: "round 3: timing 9 candidates".into(),
            elapsed: Duration::from_secs(elapsed),
            budget: Duration::from_secs(600),
            best_ns: Some(1_734_302),
            auto_ns: Some(1_900_000),
        }
    }

    #[test]
    fn the_bar_fills_with_the_budget_and_shows_the_best_against_auto() {
        assert_eq!(
            at(130).bar(200),
            "harris [====>               ] 2:10/10:00 best 1.734 ms (0.91x auto) | round 3: timing 9 candidates"
        );
        assert!(at(0).bar(200).contains("[>                   ]"));
        // Past the budget (the final run), full and no arrow.
        assert!(at(700).bar(200).contains(&format!("[{}]", "=".repeat(20))));
        assert!(at(4000).bar(200).contains("1:06:40/10:00"));
        assert_eq!(at(130).bar(30).chars().count(), 30);
    }

    #[test]
    fn before_the_first_round_there_is_no_best() {
        let mut p = at(5);
        p.best_ns = None;
        p.auto_ns = None;
        assert!(p
            .bar(200)
            .ends_with("0:05/10:00 | round 3: timing 9 candidates"));
    }
}
