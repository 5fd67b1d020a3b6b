//! Writes a large bundle made from real captures (see generate.rs), to measure `pgmortem
//! analyze` on:
//!
//! ```sh
//! cargo run --release -p pgmortem --example big_bundle -- /tmp/pgmortem-1g 1073741824
//! /usr/bin/time -v target/release/pgmortem analyze /tmp/pgmortem-1g > /dev/null
//! /usr/bin/time -v target/release/pgmortem analyze /tmp/pgmortem-1g.tar.gz > /dev/null
//! ```
//!
//! Arguments: the directory to create (it must not exist) and the server log's size in bytes
//! (default 1 GiB). The archive is written next to it (`DIR.tar.gz`).

#![allow(clippy::print_stdout, clippy::print_stderr, clippy::exit)]

mod generate;

fn main() {
    let mut args = std::env::args_os().skip(1);
    let Some(dir) = args.next().map(std::path::PathBuf::from) else {
        eprintln!("usage: big_bundle DIR [LOG_BYTES]");
        std::process::exit(2);
    };
    let bytes = match args.next().map(|a| a.to_string_lossy().parse::<u64>()) {
        None => 1 << 30,
        Some(Ok(n)) => n,
        Some(Err(e)) => {
            eprintln!("LOG_BYTES: {e}");
            std::process::exit(2);
        }
    };
    if dir.exists() {
        eprintln!("{} exists: give a path to create", dir.display());
        std::process::exit(2);
    }
    match generate::generate(&dir, bytes) {
        Ok((dir, tgz)) => {
            println!("{}", dir.display());
            println!("{}", tgz.display());
        }
        Err(e) => {
            eprintln!("{}: {e}", dir.display());
            std::process::exit(1);
        }
    }
}
