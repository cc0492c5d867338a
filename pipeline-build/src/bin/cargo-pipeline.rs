//! `cargo pipeline tune [NAME...] [--budget 10m] [--size WxH] [--per-round N]
//! [--param NAME=VALUE] [--any-processor] [--report] [--manifest-path PATH]`

use pipeline_build::progress::Terminal;
use pipeline_build::tune::{tune, Options};
use std::path::PathBuf;
use std::time::Duration;

const USAGE: &str = "usage: cargo pipeline tune [NAME...] [--budget 10m] [--size WxH] [--per-round N] [--param NAME=VALUE] [--any-processor] [--report] [--manifest-path PATH]

Tunes the schedules of the crate's pipelines (those without a schedule
block, or whose block only states facts with `auto;`) and writes the
winners to pipeline-schedules.toml beside Cargo.toml, which the
`pipeline!` macro reads at every build.

  NAME...               only these pipelines (default: all); FILE:NAME
                        picks the one in a file whose path ends in FILE
  --budget 10m          tuning time per pipeline (s, m or h; default 10m)
  --size WxH            the inputs' width and height to time at (default:
                        the block's estimate, else 1920x1080); tune at or
                        below the size you deploy
  --per-round N         candidates per benchmark build (default 8)
  --param NAME=VALUE    a scalar parameter's value (default 1, 1.0, true)
  --any-processor       write entries for every processor at this one's
                        instruction-set level (default: for this
                        processor only; others run the auto-scheduler's)
  --report              no tuning: time each cache entry beside the
                        auto-scheduler's choice and print both
  --manifest-path PATH  the crate's Cargo.toml (default: ./Cargo.toml)";

fn duration(text: &str) -> Option<Duration> {
    let (digits, unit) = text.split_at(text.find(|c: char| !c.is_ascii_digit() && c != '.')?);
    let n: f64 = digits.parse().ok()?;
    let secs = match unit {
        "s" => n,
        "m" => n * 60.0,
        "h" => n * 3600.0,
        _ => return None,
    };
    Some(Duration::from_secs_f64(secs))
}

fn parse(args: &[String]) -> Result<Options, String> {
    let mut opts = Options::new(PathBuf::from("."));
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = |flag: &str| {
            it.next()
                .cloned()
                .ok_or_else(|| format!("`{flag}` needs a value"))
        };
        match a.as_str() {
            "--budget" => {
                let v = value(a)?;
                opts.budget = duration(&v)
                    .ok_or_else(|| format!("`{v}` is not a duration like 90s, 10m or 1h"))?;
            }
            "--size" => {
                let v = value(a)?;
                let size = v
                    .split_once('x')
                    .and_then(|(w, h)| Some((w.parse().ok()?, h.parse().ok()?)))
                    .filter(|&(w, h): &(usize, usize)| w > 0 && h > 0);
                opts.size =
                    Some(size.ok_or_else(|| format!("`{v}` is not a size like 1920x1080"))?);
            }
            "--per-round" => {
                let v = value(a)?;
                opts.per_round = v
                    .parse()
                    .ok()
                    .filter(|&n| n > 0)
                    .ok_or_else(|| format!("`{v}` is not a count"))?;
            }
            "--param" => {
                let v = value(a)?;
                let (n, x) = v
                    .split_once('=')
                    .ok_or_else(|| format!("`{v}` is not NAME=VALUE"))?;
                opts.params.push((n.to_string(), x.to_string()));
            }
            "--report" => opts.report = true,
            "--any-processor" => opts.any_processor = true,
            "--manifest-path" => {
                let v = PathBuf::from(value(a)?);
                opts.root = v.parent().map(|p| p.to_path_buf()).unwrap_or_default();
                if opts.root.as_os_str().is_empty() {
                    opts.root = PathBuf::from(".");
                }
            }
            s if s.starts_with('-') => return Err(format!("unknown option `{s}`")),
            name => opts.names.push(name.to_string()),
        }
    }
    Ok(opts)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // `cargo pipeline tune ..` runs `cargo-pipeline pipeline tune ..`.
    let args: &[String] = match args.first().map(String::as_str) {
        Some("pipeline") => &args[1..],
        _ => &args,
    };
    match args.first().map(String::as_str) {
        Some("tune") => {}
        Some("--help" | "-h" | "help") => {
            println!("{USAGE}");
            return;
        }
        _ => {
            eprintln!("{USAGE}");
            std::process::exit(2);
        }
    }
    let opts = match parse(&args[1..]) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("error: {e}\n\n{USAGE}");
            std::process::exit(2);
        }
    };
    let report = opts.report;
    let mut terminal = Terminal::new();
    let result = tune(&opts, &mut terminal);
    drop(terminal);
    match result {
        Ok(outcomes) => {
            let other = if report { "cached" } else { "tuned" };
            println!("medians in ms (fastest runs), side by side in one run:");
            println!(
                "{:<20} {:>20} {:>20} {:>13}",
                "pipeline", "auto", other, "ratio"
            );
            for o in &outcomes {
                let cell = |median: u128, min: u128| {
                    format!("{:.3} ({:.3})", median as f64 / 1e6, min as f64 / 1e6)
                };
                println!(
                    "{:<20} {:>20} {:>20} {:>13}",
                    o.name,
                    cell(o.auto_ns, o.auto_min),
                    cell(o.tuned_ns, o.tuned_min),
                    format!(
                        "{:.2} ({:.2})",
                        o.tuned_ns as f64 / o.auto_ns as f64,
                        o.tuned_min as f64 / o.auto_min as f64
                    )
                );
            }
            for o in &outcomes {
                println!("\n{} ({}):\n{}", o.name, o.origin, o.schedule);
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
