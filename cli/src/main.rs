//! The `pgmortem` binary: a thin shell over [`pgmortem_cli::run_with`].

use std::io::IsTerminal;

fn main() -> std::process::ExitCode {
    let terminals = pgmortem_cli::Terminals {
        stdout: std::io::stdout().is_terminal(),
        stderr: std::io::stderr().is_terminal(),
    };
    // Standard error is not locked for the whole run: the progress spinner draws on it from
    // its own thread.
    let code = pgmortem_cli::run_with(
        std::env::args_os(),
        &mut std::io::stdout().lock(),
        &mut std::io::stderr(),
        terminals,
    );
    std::process::ExitCode::from(code)
}

/// mimalloc instead of the system allocator: a parsed log is millions of small strings made and
/// dropped, and glibc's malloc was a sixth of the CPU time of `parse pglog`.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
