//! The `pgmortem` binary: a thin shell over [`pgmortem_cli::run`].

fn main() -> std::process::ExitCode {
    let code = pgmortem_cli::run(
        std::env::args_os(),
        &mut std::io::stdout().lock(),
        &mut std::io::stderr().lock(),
    );
    std::process::ExitCode::from(code)
}

/// mimalloc instead of the system allocator: a parsed log is millions of small strings made and
/// dropped, and glibc's malloc was a sixth of the CPU time of `parse pglog`.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
