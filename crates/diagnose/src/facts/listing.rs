//! PostgreSQL's processes as the bundle's `ps` listings show them (a sosreport has no
//! `/proc/PID/*` files, only `ps auxwww`, `ps -elfL`, `ps axo …`): each process's parent, RSS,
//! start, title and memory cgroup, merged over every listing (one gives the command line, another
//! the cgroup), and how the postmaster was started (its `-D`, `-p`, `-c config_file=`, from its
//! command line, else `postmaster.opts`). Takes the bundle; yields what `processes.rs` adds to the
//! processes it knows from `/proc` files.

use std::collections::BTreeMap;

use pgmortem_bundle::{Bundle, SourceKind};
use pgmortem_parse::system::{self, PgRole, PgTitle, PostmasterCommand};

use super::{Known, all_of, pid_in_path};

/// One process as the listings show it.
#[derive(Debug, Clone, Default)]
pub(super) struct Listed {
    pub ppid: Option<u32>,
    pub rss_kb: Option<u64>,
    /// The listing and line its RSS was read from.
    pub rss_at: Option<(String, u64)>,
    pub start: Option<String>,
    /// Its title (`postgres: 15/main: checkpointer`, the postmaster's command line).
    pub title: Option<PgTitle>,
    /// The listing and line its command line was read from.
    pub command_at: Option<(String, u64)>,
    pub command: Option<String>,
    /// `comm` alone (the `ps axo …,comm,cgroup` form): `postgres`.
    pub comm: Option<String>,
    /// Its memory cgroup's path, with the listing and line.
    pub memory_cgroup: Option<Known<String>>,
}

impl Listed {
    /// A PostgreSQL process: its title reads as one, or (a listing of names only) it is named
    /// `postgres` or `postmaster`.
    pub fn is_postgres(&self) -> bool {
        self.title.is_some()
            || self
                .comm
                .as_deref()
                .is_some_and(|c| c == "postgres" || c == "postmaster")
    }

    /// Whether its title says it is a postmaster.
    pub fn is_postmaster(&self) -> bool {
        self.title
            .as_ref()
            .is_some_and(|t| t.role == PgRole::Postmaster)
    }
}

/// Every process of every `ps` listing of the bundle, by pid, the first listing (by path) that
/// gives a value winning.
pub(super) fn listed(bundle: &Bundle) -> BTreeMap<u32, Listed> {
    let mut out: BTreeMap<u32, Listed> = BTreeMap::new();
    for source in all_of(bundle, SourceKind::ProcessList) {
        let listing = system::parse_ps(&source.bytes);
        for row in listing.processes() {
            let p = out.entry(row.pid).or_default();
            p.ppid = p.ppid.or(row.ppid);
            if p.rss_kb.is_none() && row.rss_kb.is_some() {
                p.rss_kb = row.rss_kb;
                p.rss_at = Some((source.path.clone(), row.line));
            }
            // `lstart` (to the second, with the date) over `START` (to the minute).
            let long = |s: &str| s.contains(' ');
            if row.start.as_deref().is_some_and(|s| {
                p.start.is_none() || (long(s) && !p.start.as_deref().is_some_and(long))
            }) {
                p.start = row.start.clone();
            }
            if p.command.is_none()
                && let Some(command) = row.command.as_deref().filter(|c| !c.is_empty())
            {
                p.title = system::parse_title(command);
                p.command = Some(command.to_owned());
                p.command_at = Some((source.path.clone(), row.line));
            }
            if p.comm.is_none() {
                p.comm = row.comm.clone();
            }
            if p.memory_cgroup.is_none()
                && let Some(path) = row.cgroup.as_deref().and_then(system::memory_cgroup_path)
            {
                p.memory_cgroup = Some(Known::new(path, &source.path, row.line, "CGROUP"));
            }
        }
    }
    out
}

/// The memory cgroup a process's `/proc/PID/cgroup` file gives (our collector's
/// `processes/PID/cgroup`).
pub(super) fn proc_cgroup(bundle: &Bundle, pid: u32) -> Option<Known<String>> {
    all_of(bundle, SourceKind::ProcCgroup)
        .filter(|s| pid_in_path(&s.path) == Some(pid))
        .find_map(|s| {
            let text = String::from_utf8_lossy(&s.bytes);
            let path = system::memory_cgroup_path(&text)?;
            let line = text
                .lines()
                .position(|l| {
                    let mut parts = l.splitn(3, ':');
                    let (id, ctl) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
                    ctl.split(',').any(|c| c == "memory") || (id == "0" && ctl.is_empty())
                })
                .map_or(1, |i| i as u64 + 1);
            Some(Known::new(path, &s.path, line, "memory"))
        })
}

/// How the postmaster was started: its command line in a listing, else the bundle's
/// `postmaster.opts` (the first that reads).
pub(super) fn postmaster_command(
    bundle: &Bundle,
    postmaster: Option<&Listed>,
) -> Option<Known<PostmasterCommand>> {
    if let Some(p) = postmaster
        && let (Some(command), Some((path, line))) = (&p.command, &p.command_at)
        && let Some(cmd) = system::parse_postmaster_command(command)
    {
        return Some(Known::new(cmd, path, *line, "command line"));
    }
    all_of(bundle, SourceKind::PostmasterOpts).find_map(|s| {
        let cmd = system::parse_postmaster_opts(&s.bytes).ok()?;
        Some(Known::new(cmd, &s.path, 1, "postmaster.opts"))
    })
}
