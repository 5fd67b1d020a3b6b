//! The `pgmortem` binary: a thin shell over [`pgmortem_cli::run`].

fn main() -> std::process::ExitCode {
    let code = pgmortem_cli::run(
        std::env::args_os(),
        &mut std::io::stdout().lock(),
        &mut std::io::stderr().lock(),
    );
    std::process::ExitCode::from(code)
}
