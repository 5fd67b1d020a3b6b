//! The names a bundle is known to hold (its host's, the OS user PostgreSQL runs as) and where
//! each may be replaced: in the fields that print a name always, elsewhere only as a whole
//! token, and only when the name is not also a common word of the bundle's text.
//!
//! A host called `vm`, `data` or `main` is a host name in `uname -a`'s node name and in a
//! syslog line's host field, but the same word is a kernel setting's namespace
//! (`vm.swappiness`, `/proc/sys/vm/`), a part of kernel words (`total-vm:`), a directory
//! (`/var/lib/postgresql/15/main`, `data/`) or a word of messages: such a name is replaced in
//! the name fields only ([`Scope::FieldsOnly`]), and `redaction.json` says so.

/// Words a host or user may be called that the text of a bundle also uses as something else
/// (lower case, sorted: kept so by a test). Kernel and `/proc` namespaces and words, the
/// directories of a Linux system and of PostgreSQL, PostgreSQL's own words (program, process,
/// cluster and role names), distributions, and the generic names hosts get.
pub(crate) const COMMON_WORDS: &[&str] = &[
    "abi",
    "acpi",
    "active",
    "adm",
    "admin",
    "alma",
    "alpine",
    "amazon",
    "analytics",
    "anon",
    "any",
    "api",
    "app",
    "apps",
    "arch",
    "archive",
    "audit",
    "autovacuum",
    "available",
    "aws",
    "azure",
    "backend",
    "backup",
    "backups",
    "base",
    "bin",
    "block",
    "boot",
    "box",
    "buff",
    "bus",
    "cache",
    "centos",
    "cgroup",
    "checkpointer",
    "class",
    "client",
    "cloud",
    "cluster",
    "compute",
    "conf",
    "config",
    "console",
    "container",
    "context",
    "core",
    "cpu",
    "cron",
    "crypto",
    "daemon",
    "data",
    "database",
    "date",
    "db",
    "debian",
    "debug",
    "default",
    "demo",
    "detail",
    "dev",
    "devel",
    "devices",
    "disk",
    "docker",
    "error",
    "etc",
    "fatal",
    "fedora",
    "file",
    "firmware",
    "follower",
    "free",
    "fs",
    "gcp",
    "global",
    "google",
    "group",
    "home",
    "host",
    "hostname",
    "hugepages",
    "idle",
    "inactive",
    "index",
    "info",
    "init",
    "instance",
    "io",
    "irq",
    "journal",
    "kernel",
    "kube",
    "kvm",
    "leader",
    "lib",
    "linux",
    "local",
    "localhost",
    "log",
    "logger",
    "logs",
    "loop",
    "main",
    "master",
    "media",
    "mem",
    "memory",
    "mm",
    "mnt",
    "module",
    "mount",
    "net",
    "network",
    "node",
    "none",
    "notice",
    "numa",
    "oom",
    "opt",
    "oracle",
    "other",
    "owner",
    "page",
    "pages",
    "panic",
    "perf",
    "pg",
    "pgsql",
    "pod",
    "postgres",
    "postgresql",
    "postmaster",
    "power",
    "primary",
    "proc",
    "prod",
    "production",
    "proxy",
    "psql",
    "public",
    "qa",
    "query",
    "ready",
    "redhat",
    "replica",
    "replication",
    "rhel",
    "rocky",
    "role",
    "root",
    "rss",
    "run",
    "sbin",
    "schema",
    "server",
    "service",
    "share",
    "shared",
    "size",
    "slab",
    "slave",
    "sql",
    "srv",
    "staff",
    "stage",
    "staging",
    "standby",
    "start",
    "state",
    "statement",
    "status",
    "stop",
    "storage",
    "suse",
    "swap",
    "sync",
    "sys",
    "system",
    "systemd",
    "table",
    "test",
    "testing",
    "tests",
    "time",
    "tmp",
    "total",
    "trace",
    "tty",
    "ubuntu",
    "uptime",
    "user",
    "users",
    "usr",
    "var",
    "version",
    "virtio",
    "vm",
    "walwriter",
    "warning",
    "web",
    "wheel",
    "worker",
    "www",
    "zone",
];

/// Why a known name is replaced only in the name fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FieldsOnlyReason {
    /// It is one of the words a bundle's text also uses for something else (kernel and
    /// `/proc` namespaces, Linux's and PostgreSQL's directories and programs, distributions,
    /// the generic names hosts get: `vm`, `data`, `main`, `postgres`, …).
    CommonWord,
    /// It is shorter than three characters, or only digits.
    TooShort,
    /// The bundle uses it as a path component or a setting's name.
    UsedInTheBundle,
}

/// Where a known name is replaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scope {
    /// In name fields and wherever it stands as a whole token.
    Everywhere,
    /// In name fields only, for this reason.
    FieldsOnly(FieldsOnlyReason),
}

/// A name the bundle is known to hold.
#[derive(Debug, Clone)]
pub(crate) struct Known {
    pub(crate) name: String,
    pub(crate) scope: Scope,
}

/// The scope a name gets from its own shape.
/// A common word (`vm`, `db`) is said to be one before it is said to be short.
pub(crate) fn scope_of(name: &str) -> Scope {
    let lower = name.to_ascii_lowercase();
    if COMMON_WORDS.binary_search(&lower.as_str()).is_ok() {
        return Scope::FieldsOnly(FieldsOnlyReason::CommonWord);
    }
    if name.chars().count() < 3 || name.bytes().all(|b| b.is_ascii_digit()) {
        return Scope::FieldsOnly(FieldsOnlyReason::TooShort);
    }
    Scope::Everywhere
}

/// Adds `name` to `list` (longest first, so that a short name inside a longer one is replaced
/// after it), or narrows its scope when it is there.
pub(crate) fn add(list: &mut Vec<Known>, name: &str, scope: Scope) {
    if let Some(k) = list.iter_mut().find(|k| k.name == name) {
        if k.scope == Scope::Everywhere {
            k.scope = scope;
        }
        return;
    }
    list.push(Known {
        name: name.to_owned(),
        scope,
    });
    list.sort_by_key(|k| std::cmp::Reverse(k.name.len()));
}

/// A character that continues a word, a name or a path around a token.
fn continues(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-' | '/' | '\\' | '$' | '%')
}

/// Whether `text[start..end]` stands as a whole token: not inside a word or a path, not a
/// part of a dotted name (`a.vm`, `vm.swappiness`) but for a domain after it
/// (`dbhost.example.com`), not the key of a `key=value`.
pub(crate) fn is_whole_token(text: &str, start: usize, end: usize) -> bool {
    let before = text[..start].chars().next_back();
    let mut after = text[end..].chars();
    let next = after.next();
    if before.is_some_and(|c| continues(c) || c == '.') {
        return false;
    }
    match next {
        Some(c) if continues(c) || c == '=' => false,
        // A dotted name after it: a domain (`dbhost.example.com`, `dbhost.`) is the host's,
        // a lower-case key (`dbhost.conf`, `dbhost.pid`) a file's or a setting's.
        Some('.') => match after.next() {
            Some(c) if c.is_alphanumeric() => {
                let word: String = text[end + 1..]
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '-')
                    .collect();
                let rest = &text[end + 1 + word.len()..];
                // A domain has another label or ends the host name (`host.example.com`,
                // `dbhost.lan:5432`); a file name ends at its extension (`x.pid`, `x.conf`).
                rest.starts_with('.') && rest[1..].starts_with(char::is_alphanumeric)
            }
            _ => true,
        },
        _ => true,
    }
}

/// The byte ranges of `name` in `text` standing as whole tokens ([`is_whole_token`]).
pub(crate) fn whole_tokens(text: &str, name: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(p) = text[from..].find(name) {
        let start = from + p;
        let end = start + name.len();
        if is_whole_token(text, start, end) {
            out.push((start, end));
        }
        from = end;
    }
    out
}

/// Whether the bundle's `text` uses `name` as a path component (`/proc/sys/vm/`,
/// `/var/lib/postgresql/15/main`) or the namespace of a setting (`vm.swappiness = 60`,
/// `main.conf`): a sign that the word means more than the name in this bundle.
pub(crate) fn used_structurally(text: &str, name: &str) -> bool {
    let mut from = 0;
    while let Some(p) = text[from..].find(name) {
        let start = from + p;
        let end = start + name.len();
        from = end;
        let before = text[..start].chars().next_back();
        let after = text[end..].chars().next();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '-' || c == '.') {
            continue;
        }
        if after.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '-') {
            continue;
        }
        let in_path = before == Some('/') && !matches!(after, Some('.'));
        let dir = after == Some('/') && before.is_none_or(|c| c.is_whitespace() || c == '/');
        // `vm.swappiness = 60`, `vm.dirty_ratio=20`: a lower-case dotted key, then `=`.
        let setting = after == Some('.') && before.is_none_or(char::is_whitespace) && {
            let rest = &text[end + 1..];
            let key_end = rest
                .find(|c: char| {
                    !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '.')
                })
                .unwrap_or(rest.len());
            key_end > 0 && rest[key_end..].trim_start().starts_with('=')
        };
        if in_path || dir || setting {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_common_words_are_sorted_lower_case_and_unique() {
        for pair in COMMON_WORDS.windows(2) {
            assert!(pair[0] < pair[1], "{pair:?}");
        }
        for w in COMMON_WORDS {
            assert_eq!(*w, w.to_ascii_lowercase());
        }
        for w in [
            "vm", "db", "data", "log", "main", "host", "test", "postgres",
        ] {
            assert_eq!(
                scope_of(w),
                Scope::FieldsOnly(FieldsOnlyReason::CommonWord),
                "{w}"
            );
        }
        assert_eq!(scope_of("dbhost"), Scope::Everywhere);
        assert_eq!(scope_of("pgmrec"), Scope::Everywhere);
        assert_eq!(
            scope_of("Data"),
            Scope::FieldsOnly(FieldsOnlyReason::CommonWord)
        );
        assert_eq!(
            scope_of("a1"),
            Scope::FieldsOnly(FieldsOnlyReason::TooShort)
        );
        assert_eq!(
            scope_of("1003"),
            Scope::FieldsOnly(FieldsOnlyReason::TooShort)
        );
    }

    #[test]
    fn whole_tokens_but_not_in_words_paths_keys_or_files() {
        let t = |text: &str| whole_tokens(text, "dbhost").len();
        assert_eq!(t("Nov 24 dbhost kernel: x"), 1);
        assert_eq!(t("ssh postgres@dbhost, dbhost: up; (dbhost)"), 3);
        assert_eq!(t("dbhost.example.com and dbhost."), 2);
        assert_eq!(t("mydbhost dbhost-old dbhost_2 x.dbhost"), 0);
        assert_eq!(
            t("/var/log/dbhost/x /dbhost dbhost/ dbhost.pid dbhost=1"),
            0
        );
    }

    #[test]
    fn structural_uses_of_a_word() {
        assert!(used_structurally("/proc/sys/vm/swappiness:60", "vm"));
        assert!(used_structurally("vm.swappiness = 60", "vm"));
        assert!(used_structurally("-D /var/lib/postgresql/15/main", "main"));
        assert!(used_structurally("du -s data/", "data"));
        assert!(!used_structurally("Linux vm 6.1 #1 SMP", "vm"));
        assert!(!used_structurally("total-vm:678408kB", "vm"));
        assert!(!used_structurally("ssh dbhost.example.com", "dbhost"));
    }
}
