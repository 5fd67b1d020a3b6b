//! `pgmortem completions SHELL` and `pgmortem manpage [COMMAND]`: a shell's completion script
//! and the man page, written from the command line's own definition (clap_complete,
//! clap_mangen), as ripgrep's `rg --generate` does, so they never drift from it.

use std::io::Write;

use anyhow::{Context, Result, bail};
use clap::Args;
use clap_complete::Shell;

#[derive(Debug, Args)]
pub(crate) struct CompletionsArgs {
    /// The shell: bash, zsh, fish (also elvish, powershell).
    #[arg(value_enum, value_name = "SHELL")]
    shell: Shell,
}

#[derive(Debug, Args)]
pub(crate) struct ManpageArgs {
    /// A command (`analyze`, `timeline`, …): its own page, pgmortem-COMMAND(1). Without it,
    /// pgmortem(1), which lists the commands.
    #[arg(value_name = "COMMAND")]
    command: Option<String>,
}

/// Writes `args.shell`'s completion script for `definition` to `out`.
pub(crate) fn completions(
    args: &CompletionsArgs,
    mut definition: clap::Command,
    out: &mut dyn Write,
) -> Result<()> {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut definition, "pgmortem", &mut script);
    out.write_all(&script)
        .context("cannot write the completion script")
}

/// Writes the man page of `definition` (or of its command `args.command`) to `out`.
pub(crate) fn manpage(
    args: &ManpageArgs,
    definition: clap::Command,
    out: &mut dyn Write,
) -> Result<()> {
    let mut definition = definition;
    // Help and usage of every command filled in, as `--help` prints them.
    definition.build();
    let page = match &args.command {
        None => definition,
        Some(name) => {
            let Some(command) = definition
                .get_subcommands()
                .find(|c| c.get_name() == name && !c.is_hide_set())
            else {
                let names: Vec<&str> = definition
                    .get_subcommands()
                    .filter(|c| !c.is_hide_set() && c.get_name() != "help")
                    .map(clap::Command::get_name)
                    .collect();
                bail!("no command {name:?}: its commands are {}", names.join(", "));
            };
            let full = format!("pgmortem-{}", command.get_name());
            command
                .clone()
                .version(env!("CARGO_PKG_VERSION"))
                .bin_name(format!("pgmortem {}", command.get_name()))
                .display_name(full)
        }
    };
    let mut roff = Vec::new();
    clap_mangen::Man::new(page)
        .render(&mut roff)
        .context("cannot render the man page")?;
    out.write_all(&roff).context("cannot write the man page")
}
