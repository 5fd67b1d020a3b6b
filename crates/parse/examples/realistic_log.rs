//! Writes a realistic PostgreSQL log made from the real logs in fixtures/ (the generator of
//! crates/parse/benches/realistic/mod.rs, which the benches use too), to measure `pgmortem parse
//! pglog` and other tools on:
//!
//! ```sh
//! cargo run --release -p pgmortem-parse --example realistic_log -- /tmp/debian.log --prefix debian --size 268435456
//! cargo run --release -p pgmortem-parse --example realistic_log -- /tmp/big.csv --format csvlog
//! cargo run --release -p pgmortem-parse --example realistic_log -- /tmp/rds-real.log --captures rds
//! ```
//!
//! Options: `--prefix` a name (`debian`, `rhel`, `pgbadger`, `rds`, `sqlstate-session-line`,
//! `xid-vxid`) or a `log_line_prefix` of your own (default `debian`); `--format` `stderr`
//! (default), `csvlog`, `jsonlog`, `docker-json`, `cri`, `journal-export`,
//! `journal-short-iso`, `syslog-3164`, `syslog-5424`; `--size` bytes (default 256 MiB; the
//! last record is written whole); `--seed` (default 27); `--captures CLASS` writes the real
//! captures of that prefix class end to end instead (`rhel`, `debian`, `pgbadger`, `rds`).
//! Prints the prefix the log was written with.

#![allow(clippy::print_stdout, clippy::print_stderr, clippy::exit, missing_docs)]

#[path = "../benches/realistic/mod.rs"]
mod realistic;

fn fail(message: &str) -> ! {
    eprintln!("realistic_log: {message}");
    std::process::exit(2);
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mut out = None;
    let mut options = realistic::Options {
        size: 256 << 20,
        ..realistic::Options::default()
    };
    let mut captures = None;
    while let Some(arg) = args.next() {
        let mut value = || {
            args.next()
                .unwrap_or_else(|| fail(&format!("{arg} needs a value")))
        };
        match arg.as_str() {
            "--prefix" => options.prefix = realistic::prefix_named(&value()).to_string(),
            "--format" => {
                let name = value();
                options.format = realistic::FORMATS
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, f)| *f)
                    .unwrap_or_else(|| fail(&format!("unknown format {name}")));
            }
            "--size" => {
                options.size = value()
                    .parse()
                    .unwrap_or_else(|e| fail(&format!("--size: {e}")))
            }
            "--seed" => {
                options.seed = value()
                    .parse()
                    .unwrap_or_else(|e| fail(&format!("--seed: {e}")))
            }
            "--captures" => captures = Some(value()),
            _ if out.is_none() && !arg.starts_with("--") => out = Some(arg),
            _ => fail(&format!("unexpected {arg}")),
        }
    }
    let Some(out) = out else {
        fail(
            "usage: realistic_log OUT [--prefix P] [--format F] [--size N] [--seed N] [--captures CLASS]",
        )
    };
    let bytes = match captures {
        Some(class) => {
            let (_, files) = realistic::CAPTURES
                .iter()
                .find(|(c, _)| *c == class)
                .unwrap_or_else(|| fail(&format!("unknown captures {class}")));
            options.prefix = realistic::prefix_named(&class).to_string();
            realistic::concatenated(files, options.size)
        }
        None => realistic::generate(&realistic::Corpus::load(), &options),
    };
    if let Err(e) = std::fs::write(&out, &bytes) {
        fail(&format!("{out}: {e}"));
    }
    println!("{}", options.prefix);
}
