//! How the postmaster was started: `postmaster.opts` (the command line PostgreSQL writes into
//! its data directory at each start) and a postmaster's command line as `ps` prints it. Takes
//! the text, yields the program, its arguments and what they set: the data directory, the
//! configuration file, the port.

use serde::Serialize;

use super::clock::SnapshotError;

/// A postmaster's command line, read.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PostmasterCommand {
    /// The program (`/usr/lib/postgresql/15/bin/postgres`).
    pub program: String,
    /// Its arguments, in order, unquoted.
    pub args: Vec<String>,
    /// `-D DIR` (or `-c data_directory=DIR`, `--data-directory=DIR`), when given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data_directory: Option<String>,
    /// `-c config_file=FILE` (or `--config-file=FILE`), when given (Debian's pg_ctlcluster
    /// gives it: the configuration lives in /etc/postgresql).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub config_file: Option<String>,
    /// `-p PORT` (or `-c port=PORT`, `--port=PORT`), when given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
}

impl PostmasterCommand {
    /// Reads the arguments a postmaster was given (`argv[1..]`).
    pub fn from_args(program: &str, args: Vec<String>) -> PostmasterCommand {
        let mut cmd = PostmasterCommand {
            program: program.to_owned(),
            ..PostmasterCommand::default()
        };
        let mut i = 0;
        while i < args.len() {
            let arg = args[i].as_str();
            i += 1;
            // `--NAME=VALUE` sets a setting, its name's dashes read as underscores.
            let setting = if let Some(long) = arg.strip_prefix("--") {
                long.split_once('=')
                    .map(|(name, value)| (name.replace('-', "_"), value.to_owned()))
            } else if let Some(short) = arg.strip_prefix('-') {
                let mut chars = short.chars();
                let Some(flag) = chars.next() else { continue };
                let attached = chars.as_str();
                if !takes_value(flag) {
                    continue;
                }
                // `-D DIR` or `-DDIR`.
                let value = if attached.is_empty() {
                    let Some(next) = args.get(i) else { continue };
                    i += 1;
                    next.clone()
                } else {
                    attached.to_owned()
                };
                match flag {
                    'D' => Some(("data_directory".to_owned(), value)),
                    'p' => Some(("port".to_owned(), value)),
                    'c' => value
                        .split_once('=')
                        .map(|(name, v)| (name.replace('-', "_"), v.to_owned())),
                    _ => None,
                }
            } else {
                None
            };
            match setting {
                Some((name, value)) if name == "data_directory" => {
                    cmd.data_directory = Some(value);
                }
                Some((name, value)) if name == "config_file" => cmd.config_file = Some(value),
                Some((name, value)) if name == "port" => {
                    cmd.port = value.parse().ok().or(cmd.port);
                }
                _ => {}
            }
        }
        cmd.args = args;
        cmd
    }
}

/// Whether the postgres flag takes a value (`-D DIR`); the others (`-F`, `-i`, `-l`, `-n`, …)
/// do not, so the word after them is not theirs.
fn takes_value(flag: char) -> bool {
    matches!(
        flag,
        'B' | 'c' | 'C' | 'd' | 'D' | 'h' | 'k' | 'N' | 'o' | 'p' | 'r' | 'S' | 't'
    )
}

// /usr/lib/postgresql/15/bin/postgres "-D" "/var/lib/postgresql/15/main" "-c" "config_file=/etc/postgresql/15/main/postgresql.conf"
/// Parses `postmaster.opts`: the program, then each argument in double quotes, as PostgreSQL
/// writes it (without escaping: a quote inside an argument is kept).
pub fn parse_postmaster_opts(input: &[u8]) -> Result<PostmasterCommand, SnapshotError> {
    let err = || SnapshotError::Shape {
        expected: "postmaster.opts",
        found: String::from_utf8_lossy(&input[..input.len().min(80)]).into_owned(),
    };
    let text = std::str::from_utf8(input).map_err(|_| err())?;
    let line = text
        .lines()
        .find(|l| !l.trim().is_empty())
        .ok_or_else(err)?;
    let line = line.trim();
    let (program, rest) = match line.find(" \"") {
        Some(i) => (&line[..i], &line[i + 1..]),
        None => (line, ""),
    };
    if program.is_empty() || !looks_like_postgres(program) {
        return Err(err());
    }
    let mut args = Vec::new();
    // Each argument is ` "…"`: split at `" "` boundaries.
    let mut rest = rest.trim();
    while let Some(after) = rest.strip_prefix('"') {
        let end = after
            .match_indices("\" \"")
            .next()
            .map(|(i, _)| i)
            .or_else(|| after.strip_suffix('"').map(str::len))
            .ok_or_else(err)?;
        args.push(after[..end].to_owned());
        rest = after[end + 1..].trim_start();
    }
    if !rest.is_empty() {
        return Err(err());
    }
    Ok(PostmasterCommand::from_args(program, args))
}

/// A postmaster's command line as `ps` prints it (`/usr/lib/postgresql/15/bin/postgres -D
/// /var/lib/postgresql/15/main -c config_file=…`): words split at spaces (`ps` does not quote).
pub fn parse_postmaster_command(line: &str) -> Option<PostmasterCommand> {
    let mut words = line.split_whitespace();
    let program = words.next()?;
    looks_like_postgres(program)
        .then(|| PostmasterCommand::from_args(program, words.map(str::to_owned).collect()))
}

fn looks_like_postgres(program: &str) -> bool {
    let base = program.rsplit('/').next().unwrap_or(program);
    matches!(base, "postgres" | "postmaster")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debian_postmaster_opts() {
        let cmd = parse_postmaster_opts(
            b"/usr/lib/postgresql/15/bin/postgres \"-D\" \"/var/lib/postgresql/15/main\" \"-c\" \"config_file=/etc/postgresql/15/main/postgresql.conf\"\n",
        )
        .unwrap();
        assert_eq!(cmd.program, "/usr/lib/postgresql/15/bin/postgres");
        assert_eq!(cmd.args.len(), 4);
        assert_eq!(
            cmd.data_directory.as_deref(),
            Some("/var/lib/postgresql/15/main")
        );
        assert_eq!(
            cmd.config_file.as_deref(),
            Some("/etc/postgresql/15/main/postgresql.conf")
        );
        assert_eq!(cmd.port, None);
    }

    #[test]
    fn other_forms_of_the_same_settings() {
        let cmd = parse_postmaster_opts(
            b"/usr/pgsql-16/bin/postgres \"-D/var/lib/pgsql/16/data\" \"-p\" \"5433\" \"--config-file=/etc/pg.conf\"",
        )
        .unwrap();
        assert_eq!(
            cmd.data_directory.as_deref(),
            Some("/var/lib/pgsql/16/data")
        );
        assert_eq!(cmd.port, Some(5433));
        assert_eq!(cmd.config_file.as_deref(), Some("/etc/pg.conf"));
        let ps =
            parse_postmaster_command("/usr/bin/postmaster -c port=5434 -F -D /srv/pg").unwrap();
        assert_eq!(ps.port, Some(5434));
        assert_eq!(ps.data_directory.as_deref(), Some("/srv/pg"));
        // Without arguments (PGDATA from the environment): nothing is guessed.
        let bare = parse_postmaster_opts(b"/usr/lib/postgresql/15/bin/postgres\n").unwrap();
        assert!(bare.args.is_empty() && bare.data_directory.is_none());
    }

    #[test]
    fn a_quote_inside_an_argument_is_kept() {
        let cmd = parse_postmaster_opts(
            b"/opt/pg/bin/postgres \"-c\" \"cluster_name=a\"b\" \"-D\" \"/d\"",
        )
        .unwrap();
        assert_eq!(cmd.args, ["-c", "cluster_name=a\"b", "-D", "/d"]);
        assert_eq!(cmd.data_directory.as_deref(), Some("/d"));
    }

    #[test]
    fn what_is_not_a_postmaster_command() {
        assert!(parse_postmaster_opts(b"hello world").is_err());
        assert!(parse_postmaster_opts(b"").is_err());
        assert!(parse_postmaster_opts(b"/usr/bin/postgres \"-D\" \"/x").is_err());
        assert!(parse_postmaster_command("postgres: 15/main: checkpointer").is_none());
        assert!(parse_postmaster_command("/bin/bash -D x").is_none());
    }
}
