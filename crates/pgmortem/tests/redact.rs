//! A redacted bundle keeps its diagnosis and keeps nothing it replaced, on every real incident
//! under fixtures/incidents/, as recorded and renamed.
//!
//! For each bundle: the analysis of its redacted copy gives the same incidents (kind, cause,
//! pids, signal, outage, redo) and the same findings (ids, severities, figures) as the
//! original's, and none of the recording host's, OS users' or roles' names is left. Then the
//! bundle is renamed as if its host and its OS user had been called one of the common words
//! a name may be (`vm`, `db`, `data`, `log`, `main`, `host`, `test`, `postgres`): each name
//! is rewritten where the host or the `ps` listing printed it, the way the recorders' scrub
//! (`fixtures/record/bundle-lib.sh`) put the recording names there, and the copy written as
//! an archive the way `pgmortem redact` writes one. Its redacted copy must again be analysed
//! the same, hold neither word in any field that names a host or a user, and hold no literal
//! of query text. Each bundle gets one pair of words, chosen by its place in the sorted list,
//! so that every word is a host's and a user's name for several bundles.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use pgmortem::{DiagnoseOptions, Report, check};
use regex::Regex;

/// The words a host or an OS user may be called that the text of a bundle also uses.
const COMMON_WORDS: [&str; 8] = [
    "vm", "db", "data", "log", "main", "host", "test", "postgres",
];

fn incidents_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/incidents")
}

/// What must survive redaction: the incidents and the findings with their figures.
fn diagnosis(report: &Report) -> (Vec<String>, Vec<String>) {
    let incidents = report
        .incidents
        .iter()
        .map(|i| {
            format!(
                "{} {} {:?} {:?} {:?} {:?} {:?} {:?} {}",
                i.kind,
                i.cause,
                i.postgres_crash.as_ref().map(|c| (c.pid, c.signal)),
                i.kernel_kill.as_ref().map(|k| k.pid),
                i.outage_seconds,
                i.redo_seconds,
                i.wal_replayed_bytes,
                i.sessions_lost,
                i.connections_refused,
            )
        })
        .collect();
    let mut findings: Vec<String> = report
        .findings
        .iter()
        .map(|f| format!("{} {:?} {:?}", f.id, f.severity, f.figures))
        .collect();
    findings.sort_unstable();
    (incidents, findings)
}

/// Every entry of the `.tar.gz` at `path`: (path, text).
fn archive_entries(path: &Path) -> Vec<(String, String)> {
    let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(
        std::fs::File::open(path).unwrap(),
    ));
    let mut out = Vec::new();
    for entry in tar.entries().unwrap() {
        let mut entry = entry.unwrap();
        let name = entry.path().unwrap().to_string_lossy().into_owned();
        let mut bytes = Vec::new();
        entry.read_to_end(&mut bytes).unwrap();
        out.push((name, String::from_utf8_lossy(&bytes).into_owned()));
    }
    out
}

/// The names a bundle was recorded with: the host's (`uname -a`'s node name), and the OS
/// user its PostgreSQL ran as (the user of the `postgres` processes of its `ps` listings).
#[derive(Debug, Default)]
struct Recorded {
    host: Option<String>,
    os_user: Option<String>,
}

fn recorded_names(bundle: &pgmortem::bundle::Bundle) -> Recorded {
    use pgmortem::bundle::SourceKind;
    let mut names = Recorded::default();
    for source in &bundle.sources {
        let text = String::from_utf8_lossy(&source.bytes);
        match source.kind {
            SourceKind::Uname if names.host.is_none() => {
                names.host = text.split_whitespace().nth(1).map(str::to_owned);
            }
            SourceKind::ProcessList if names.os_user.is_none() => {
                let listing = pgmortem::parse::system::parse_ps(&source.bytes);
                names.os_user = listing
                    .processes()
                    .filter(|p| {
                        p.comm.as_deref() == Some("postgres")
                            || p.command
                                .as_deref()
                                .is_some_and(|c| c.starts_with("postgres"))
                    })
                    .find_map(|p| p.user.clone())
                    .filter(|u| {
                        u != "postgres" && u != "root" && !u.bytes().all(|b| b.is_ascii_digit())
                    });
            }
            _ => {}
        }
    }
    names
}

/// Where a host prints its name, for one name: `uname -a`'s node name, `hostname`'s output and
/// `/proc/sys/kernel/hostname`, sysctl's `kernel.hostname`, ld.so's `uname.nodename`, a syslog
/// or journal line's host, the journal export's `_HOSTNAME`, the perf header, the collectors'
/// archive names.
struct HostSites {
    name: String,
    /// Each site: a pattern whose groups 1 and 2 are what stands before and after the name.
    sites: Vec<Regex>,
}

impl HostSites {
    fn new(name: &str) -> Self {
        let n = regex::escape(name);
        let sites = [
            format!(r"(?m)^(Linux ){n}( \d)"),
            format!(r"(?m)^(kernel\.hostname = ){n}()$"),
            format!(r#"(?m)^(uname\.nodename="){n}(")"#),
            format!(r"(?m)^(# hostname : ){n}()$"),
            format!(r#"("_HOSTNAME":"){n}(")"#),
            format!(r"(pgmortem-){n}(-\d{{8}}T\d{{6}}Z)"),
            format!(r"(sosreport-){n}(-\d{{4}}-\d\d-\d\d|-\d{{14}})"),
            format!(
                r"(?m)^((?:[A-Z][a-z]{{2}} [ \d]\d \d\d:\d\d:\d\d(?:\.\d+)?|\d{{4}}-\d\d-\d\dT[\d:.]+(?:Z|[+-]\d\d:?\d\d)?) ){n}( \S+?(?:\[\d+\])?:)"
            ),
        ]
        .iter()
        .map(|p| Regex::new(p).unwrap())
        .collect();
        HostSites {
            name: name.to_owned(),
            sites,
        }
    }

    /// `text` (of the file at `path`) with the name rewritten to `to` at each site.
    fn rename(&self, text: &str, path: &str, to: &str) -> String {
        if !text.contains(&self.name) {
            return text.to_owned();
        }
        let hostname_file = ["hostname", "hostname_-f", "proc/sys/kernel/hostname"]
            .iter()
            .any(|end| path.ends_with(end));
        if hostname_file && text.trim() == self.name {
            return text.replacen(&self.name, to, 1);
        }
        let mut out = text.to_owned();
        for site in &self.sites {
            out = site
                .replace_all(&out, |c: &regex::Captures<'_>| {
                    format!("{}{to}{}", &c[1], &c[2])
                })
                .into_owned();
        }
        out
    }
}

/// `text` with the OS user `from` rewritten to `to` where a user prints: the user and group
/// columns of `ps` listings, the owner and group of `ls -l`, `id`'s output, the collector's
/// `(as USER)`.
fn rename_user_fields(text: &str, from: &str, to: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut user_columns: Vec<usize> = Vec::new();
    for (n, line) in text.split_inclusive('\n').enumerate() {
        let words: Vec<&str> = line.split_whitespace().collect();
        if n == 0 && words.iter().any(|w| matches!(*w, "USER" | "UID" | "GROUP")) {
            user_columns = words
                .iter()
                .enumerate()
                .filter(|(_, w)| matches!(**w, "USER" | "UID" | "GROUP" | "RUSER" | "EUSER"))
                .map(|(i, _)| i)
                .collect();
        }
        let ls = line.len() > 10
            && line.as_bytes()[1..10]
                .iter()
                .all(|b| b"rwxsStT-".contains(b));
        let columns: Vec<usize> = if ls { vec![2, 3] } else { user_columns.clone() };
        let mut l = line.to_owned();
        if columns.iter().any(|&c| words.get(c) == Some(&from)) {
            // Rebuild the line field by field, the spacing kept.
            let mut rebuilt = String::new();
            let mut field = 0;
            let mut rest = line;
            while let Some(start) = rest.find(|c: char| !c.is_whitespace()) {
                rebuilt.push_str(&rest[..start]);
                let end = rest[start..]
                    .find(char::is_whitespace)
                    .map_or(rest.len(), |e| start + e);
                let word = &rest[start..end];
                rebuilt.push_str(if columns.contains(&field) && word == from {
                    to
                } else {
                    word
                });
                field += 1;
                rest = &rest[end..];
            }
            rebuilt.push_str(rest);
            l = rebuilt;
        }
        l = l
            .replace(&format!("(as {from})"), &format!("(as {to})"))
            .replace(&format!("({from}) gid="), &format!("({to}) gid="));
        out.push_str(&l);
    }
    out
}

/// A distinctive recording name, replaced wherever it stands as a word: the recorders' scrub
/// put it there the same way (`sed "s#\b$host\b#dbhost#g"`).
struct Word(Regex);

impl Word {
    fn new(name: &str) -> Self {
        Word(Regex::new(&format!(r"\b{}\b", regex::escape(name))).unwrap())
    }

    fn rename(&self, text: &str, to: &str) -> String {
        self.0.replace_all(text, to).into_owned()
    }
}

/// The bundle at `input` written as `dir/NAME.tar.gz` (every file under one top directory,
/// as `pgmortem redact` writes), its host and OS user renamed, the manifest's byte counts
/// those of the renamed files. Returns the archive's path.
fn renamed_copy(
    input: &Path,
    fixture: &str,
    recorded: &Recorded,
    host: &str,
    user: &str,
    dir: &Path,
) -> PathBuf {
    let bundle = pgmortem::bundle::open(input, &pgmortem::bundle::OpenOptions::default()).unwrap();
    let name = input.file_name().unwrap().to_string_lossy().into_owned();
    let mut top = [".tar.gz", ".tar.xz", ".tar.zst", ".zip", ".tgz"]
        .iter()
        .find_map(|e| name.strip_suffix(e))
        .unwrap_or(fixture)
        .to_owned();
    let host_word = recorded.host.as_deref().map(Word::new);
    let host_sites = recorded.host.as_deref().map(HostSites::new);
    let user_word = recorded.os_user.as_deref().map(Word::new);
    let rename = |text: &str, path: &str| -> String {
        let mut text = text.to_owned();
        if let Some(from) = &recorded.host {
            text = match (&host_word, &host_sites) {
                (Some(word), _) if from.len() >= 6 => word.rename(&text, host),
                (_, Some(sites)) => sites.rename(&text, path, host),
                _ => text,
            };
        }
        if let (Some(from), Some(word)) = (&recorded.os_user, &user_word)
            && text.contains(from.as_str())
        {
            text = word.rename(&text, user);
        }
        text
    };
    top = rename(&top, "");
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    for source in &bundle.sources {
        let mut bytes = Vec::new();
        source.reader().unwrap().read_to_end(&mut bytes).unwrap();
        let renamed = match std::str::from_utf8(&bytes) {
            Ok(text) => rename(text, &source.path).into_bytes(),
            Err(_) => bytes,
        };
        files.push((source.path.clone(), renamed));
    }
    let sizes: BTreeMap<String, usize> = files.iter().map(|(p, b)| (p.clone(), b.len())).collect();
    for (path, bytes) in &mut files {
        if path == "manifest.json"
            && let Ok(text) = std::str::from_utf8(bytes)
        {
            let mut paths = BTreeMap::new();
            pgmortem::redact::json::rewrite(text, |steps, scalar| {
                use pgmortem::redact::json::{Scalar, Step};
                if let ([Step::Key(_), Step::Index(i), Step::Key(k)], Scalar::String(s)) =
                    (steps, scalar)
                    && k == "path"
                {
                    paths.insert(*i, s.to_owned());
                }
                None
            })
            .unwrap();
            let fixed = pgmortem::redact::json::rewrite(text, |steps, scalar| {
                use pgmortem::redact::json::{Scalar, Step};
                match (steps, scalar) {
                    ([Step::Key(_), Step::Index(i), Step::Key(k)], Scalar::Number(_))
                        if k == "bytes" =>
                    {
                        sizes.get(paths.get(i)?).map(|n| n.to_string())
                    }
                    _ => None,
                }
            })
            .unwrap();
            *bytes = fixed.into_bytes();
        }
    }
    let out = dir.join(format!("{top}.tar.gz"));
    let mut tar = tar::Builder::new(flate2::write::GzEncoder::new(
        std::fs::File::create(&out).unwrap(),
        flate2::Compression::fast(),
    ));
    for (path, bytes) in &files {
        let mut header = tar::Header::new_gnu();
        header.set_size(bytes.len() as u64);
        header.set_mode(0o644);
        header.set_mtime(0);
        header.set_entry_type(tar::EntryType::Regular);
        tar.append_data(
            &mut header,
            format!("{top}/{}", rename(path, "")),
            &bytes[..],
        )
        .unwrap();
    }
    tar.into_inner().unwrap().finish().unwrap();
    out
}

/// The query text after the markers a log prints it behind.
static QUERY_TEXT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?:Failed process was running: |STATEMENT:  |QUERY:  | statement: |parameters: |Query Text: )(.*)",
    )
    .unwrap()
});

/// The literals of `sql` that are not tokens: quoted strings other than `'lit_N'` and the
/// collector's `'<redacted>'`, and numbers standing alone.
fn literals_left(sql: &str) -> Vec<String> {
    let mut out = Vec::new();
    let b = sql.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\'' => {
                let mut j = i + 1;
                while j < b.len() && !(b[j] == b'\'' && b.get(j + 1) != Some(&b'\'')) {
                    j += if b[j] == b'\'' { 2 } else { 1 };
                }
                let lit = &sql[i..(j + 1).min(sql.len())];
                let token = lit
                    .strip_prefix("'lit_")
                    .and_then(|r| r.strip_suffix('\''))
                    .is_some_and(|n| n.bytes().all(|c| c.is_ascii_digit()));
                if !token && lit != "'<redacted>'" {
                    out.push(lit.to_owned());
                }
                i = j + 1;
            }
            c if c.is_ascii_digit() => {
                let word_before =
                    i > 0 && (b[i - 1].is_ascii_alphanumeric() || matches!(b[i - 1], b'_' | b'$'));
                let mut j = i;
                while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'.') {
                    j += 1;
                }
                if !word_before {
                    out.push(sql[i..j].to_owned());
                }
                i = j;
            }
            c if c.is_ascii_alphabetic() || c == b'_' => {
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                    i += 1;
                }
            }
            _ => i += 1,
        }
    }
    out
}

/// The role, database and application names of the records of the bundle's PostgreSQL logs
/// (stderr, csvlog and jsonlog, as the log parser reads them).
fn log_names(path: &Path) -> std::collections::BTreeSet<String> {
    use pgmortem::parse::pglog::{PgLogOptions, parse};
    let bundle = pgmortem::bundle::open(path, &pgmortem::bundle::OpenOptions::default()).unwrap();
    let mut names = std::collections::BTreeSet::new();
    for source in &bundle.sources {
        if source.kind != pgmortem::bundle::SourceKind::PostgresLog {
            continue;
        }
        let mut bytes = Vec::new();
        source.reader().unwrap().read_to_end(&mut bytes).unwrap();
        let Ok(log) = parse(&bytes, &PgLogOptions::default()) else {
            continue;
        };
        for r in &log.records {
            names.extend(
                [&r.user, &r.database, &r.application]
                    .into_iter()
                    .flatten()
                    .cloned(),
            );
        }
    }
    names
}

/// What is left in the redacted archive at `path` that it should not hold: the `names` in any
/// field that names a host or a user, a distinctive name anywhere, a literal of query text.
fn leftovers(path: &Path, names: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    let checks: Vec<(&str, Word, HostSites)> = names
        .iter()
        .filter(|n| !n.bytes().all(|b| b.is_ascii_digit()))
        .map(|n| (*n, Word::new(n), HostSites::new(n)))
        .collect();
    for (file, text) in archive_entries(path) {
        for (name, word, sites) in &checks {
            if !text.contains(name) {
                continue;
            }
            let distinctive = name.len() >= 6 && !COMMON_WORDS.contains(name);
            if distinctive && word.rename(&text, "\u{1}") != text {
                out.push(format!("{file}: {name:?} is still in it"));
            }
            if sites.rename(&text, &file, "\u{1}") != text
                || rename_user_fields(&text, name, "\u{1}") != text
                    && !matches!(*name, "postgres" | "root")
            {
                out.push(format!("{file}: {name:?} is still in a name field"));
            }
        }
        for c in QUERY_TEXT.captures_iter(&text) {
            let left = literals_left(&c[1]);
            if !left.is_empty() {
                out.push(format!("{file}: literals {left:?} left in {:?}", &c[0]));
            }
        }
    }
    out
}

/// The files of the redacted archives `a` and `b` that differ (their top directories and
/// redaction.json aside, runs of spaces taken as one), with their first differing line.
fn differences(a: &Path, b: &Path) -> Vec<String> {
    let files = |p: &Path| -> BTreeMap<String, String> {
        archive_entries(p)
            .into_iter()
            .map(|(path, text)| {
                let path = path
                    .split_once('/')
                    .map_or(path.as_str(), |(_, p)| p)
                    .to_owned();
                let squeezed: String = text
                    .split(' ')
                    .filter(|w| !w.is_empty())
                    .collect::<Vec<_>>()
                    .join(" ");
                (path, squeezed)
            })
            .filter(|(path, _)| path != "redaction.json")
            .collect()
    };
    let (a, b) = (files(a), files(b));
    let mut out = Vec::new();
    for (path, text) in &a {
        match b.get(path) {
            None => out.push(format!("{path} is only in the copy as recorded")),
            Some(other) if other != text => {
                let line = text
                    .lines()
                    .zip(other.lines())
                    .find(|(x, y)| x != y)
                    .map(|(x, y)| format!("{x:?} / {y:?}"))
                    .unwrap_or_default();
                out.push(format!("{path} differs: {line}"));
            }
            Some(_) => {}
        }
    }
    out.extend(
        b.keys()
            .filter(|p| !a.contains_key(*p))
            .map(|p| format!("{p} is only in the renamed copy")),
    );
    out
}

// It prints its time: what it costs in CI.
#[allow(clippy::print_stderr)]
#[test]
fn every_incident_keeps_its_diagnosis_once_redacted_as_recorded_and_renamed() {
    let started = std::time::Instant::now();
    let scratch = tempfile::tempdir().unwrap();
    let options = DiagnoseOptions::default();
    let mut failures = Vec::new();
    let fixtures = check::fixtures_in(&incidents_dir()).unwrap();
    assert!(fixtures.len() >= 12);
    let mut pairs = BTreeMap::<(&str, &str), usize>::new();
    let mut log_names_replaced = 0;
    for (i, fixture) in fixtures.iter().enumerate() {
        let original = pgmortem::analyze(&fixture.bundle, &options).unwrap();
        let expected = diagnosis(&original);
        // As recorded.
        let out = scratch
            .path()
            .join(format!("{}-redacted.tar.gz", fixture.name));
        let redacted = pgmortem::redact::redact_bundle(&fixture.bundle, &out).unwrap();
        let after = pgmortem::analyze(&out, &options).unwrap();
        if diagnosis(&after) != expected {
            failures.push(format!(
                "{}: {expected:?}\n  became {:?}",
                fixture.name,
                diagnosis(&after)
            ));
        }
        let bundle =
            pgmortem::bundle::open(&fixture.bundle, &pgmortem::bundle::OpenOptions::default())
                .unwrap();
        let recorded = recorded_names(&bundle);
        let mut names = vec!["dbhost", "pgmrec", "pgmperf"];
        names.extend(recorded.host.as_deref());
        names.extend(recorded.os_user.as_deref());
        failures.extend(
            leftovers(&out, &names)
                .into_iter()
                .map(|l| format!("{}: {l}", fixture.name)),
        );
        // The logs' roles, databases and applications are built-in names or tokens.
        let kept = pgmortem::redact::is_kept_or_token;
        log_names_replaced += log_names(&fixture.bundle)
            .iter()
            .filter(|n| !kept(n))
            .count();
        failures.extend(
            log_names(&out)
                .into_iter()
                .filter(|n| !kept(n))
                .map(|n| format!("{}: the log still names {n:?}", fixture.name)),
        );
        // A collector's bundle names its host (uname -a, the archive's name); an operator's
        // report names pods, not hosts.
        if fixture.bundle.is_file() && original.collection.hostname.is_some() {
            assert!(
                redacted.replaced[&pgmortem::redact::Kind::Hostname].occurrences > 0,
                "{}: {redacted:?}",
                fixture.name
            );
        }
        // Renamed: the host and the OS user called common words.
        let host = COMMON_WORDS[i % COMMON_WORDS.len()];
        let user = COMMON_WORDS[(3 * i + 1) % COMMON_WORDS.len()];
        *pairs.entry((host, user)).or_default() += 1;
        let dir = scratch.path().join(&fixture.name);
        std::fs::create_dir_all(&dir).unwrap();
        let renamed = renamed_copy(&fixture.bundle, &fixture.name, &recorded, host, user, &dir);
        let out = dir.join("redacted.tar.gz");
        pgmortem::redact::redact_bundle(&renamed, &out).unwrap();
        let after = pgmortem::analyze(&out, &options).unwrap();
        if diagnosis(&after) != expected {
            failures.push(format!(
                "{} (host {host}, user {user}): {expected:?}\n  became {:?}",
                fixture.name,
                diagnosis(&after)
            ));
        }
        // Renaming changed nothing the redaction keeps: the copies agree but for the
        // spacing of columns the renamed names shifted, and redaction.json. (A user called
        // `postgres` is kept, as the built-in one is, where the recorded user became a token.)
        if user != "postgres" {
            let as_recorded = scratch
                .path()
                .join(format!("{}-redacted.tar.gz", fixture.name));
            failures.extend(
                differences(&as_recorded, &out)
                    .into_iter()
                    .map(|d| format!("{} (host {host}, user {user}): {d}", fixture.name)),
            );
        }
        failures.extend(
            leftovers(&out, &[host, user, "dbhost", "pgmrec", "pgmperf"])
                .into_iter()
                .map(|l| format!("{} (host {host}, user {user}): {l}", fixture.name)),
        );
    }
    // Every word was a host's name and a user's name.
    for word in COMMON_WORDS {
        assert!(pairs.keys().any(|(h, _)| *h == word), "{word} as a host");
        assert!(pairs.keys().any(|(_, u)| *u == word), "{word} as a user");
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The corpus's logs name roles, databases and applications of their own (most run as
    // postgres with psql or pgbench; pg15-sigkill-common-names as test, in data and log, from
    // main).
    assert!(log_names_replaced >= 4, "{log_names_replaced}");
    eprintln!(
        "{} bundles redacted as recorded and renamed in {:.1} s",
        fixtures.len(),
        started.elapsed().as_secs_f64()
    );
}

#[test]
fn the_renaming_rewrites_a_short_host_name_only_where_a_host_prints_it() {
    let text = "Linux vm 6.18.44-fc-v782 #1 SMP x86_64 GNU/Linux\n\
                vm.swappiness = 60\n\
                kernel.hostname = vm\n\
                Nov 28 05:29:10 vm kernel: Killed process 5115 (postgres) total-vm:678408kB\n";
    assert_eq!(
        HostSites::new("vm").rename(text, "sos_commands/kernel/sysctl_-a", "data"),
        "Linux data 6.18.44-fc-v782 #1 SMP x86_64 GNU/Linux\n\
         vm.swappiness = 60\n\
         kernel.hostname = data\n\
         Nov 28 05:29:10 data kernel: Killed process 5115 (postgres) total-vm:678408kB\n"
    );
    assert_eq!(
        HostSites::new("vm").rename("vm\n", "sos_commands/host/hostname", "db"),
        "db\n"
    );
    // A token that starts with the name is not the name.
    let redacted =
        "# hostname : host-1\nkernel.hostname = host-1\nsosreport-host-1-2026-11-28-abcdefg\n";
    assert_eq!(HostSites::new("host").rename(redacted, "x", "y"), redacted);
    let ps = "  PID  PPID USER     COMMAND\n 1066   942 pgmrec   postgres\n";
    assert_eq!(
        rename_user_fields(ps, "pgmrec", "main"),
        "  PID  PPID USER     COMMAND\n 1066   942 main   postgres\n"
    );
    assert_eq!(
        literals_left(
            "SELECT g FROM generate_series(lit_1, 100) AS g WHERE a = 'x' AND b = 'lit_2' AND md5(c) = $1"
        ),
        ["100", "'x'"]
    );
}

/// The text of the entry of the redacted archive at `path` whose path ends with `end`.
fn entry(entries: &[(String, String)], end: &str) -> String {
    entries
        .iter()
        .find(|(p, _)| p.ends_with(end))
        .map(|(_, t)| t.clone())
        .unwrap_or_else(|| panic!("no {end} in the redacted copy"))
}

/// The only `.tar.gz` of a fixture's directory.
fn fixture_archive(name: &str) -> PathBuf {
    let dir = incidents_dir().join(name);
    std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".tar.gz"))
        .unwrap()
}

#[test]
fn a_real_bundle_of_a_host_named_vm_keeps_its_settings_manifest_and_findings() {
    let scratch = tempfile::tempdir().unwrap();
    let input = fixture_archive("pg15-memcg-oom-host-vm");
    let out = scratch.path().join("shared.tar.gz");
    let redacted = pgmortem::redact::redact_bundle(&input, &out).unwrap();
    let options = DiagnoseOptions::default();
    let before = pgmortem::analyze(&input, &options).unwrap();
    let after = pgmortem::analyze(&out, &options).unwrap();
    assert_eq!(diagnosis(&after), diagnosis(&before));
    let ids: Vec<&str> = after.findings.iter().map(|f| f.id).collect();
    for id in [
        "overcommit-heuristic",
        "dirty-writeback-bytes",
        "oom-kill-crash-restart",
    ] {
        assert!(ids.contains(&id), "{id} not in {ids:?}");
    }
    assert_eq!(
        serde_json::to_value(&redacted.names_only_in_fields).unwrap(),
        serde_json::json!([{"kind": "hostname", "token": "host-1", "reason": "common_word"}])
    );
    let original = archive_entries(&input);
    let entries = archive_entries(&out);
    // The manifest is JSON, its collector's arguments whole.
    let manifest: serde_json::Value =
        serde_json::from_str(&entry(&entries, "/manifest.json")).unwrap();
    let arguments = manifest["collector"]["arguments"]
        .as_str()
        .or_else(|| manifest["arguments"].as_str())
        .unwrap_or_else(|| panic!("no arguments in {manifest}"));
    assert!(arguments.ends_with("-U postgres"), "{arguments}");
    // The kernel's settings and words named vm are as they were; the host's name is not.
    assert_eq!(
        entry(&entries, "/memory/sysctl-vm.txt"),
        entry(&original, "/memory/sysctl-vm.txt")
    );
    assert!(entry(&entries, "/kernel/dmesg.txt").contains(" total-vm:"));
    let uname = entry(&entries, "/identity/uname.txt");
    assert!(uname.starts_with("Linux host-1 "), "{uname}");
    // The crashed backend's query keeps its shape, not its literals.
    let log = entry(&entries, "/postgres/server.log");
    let failed = log
        .lines()
        .find(|l| l.contains("Failed process was running: "))
        .unwrap();
    assert!(
        failed.ends_with(
            "SELECT g FROM generate_series(lit_5, lit_6) AS g ORDER BY g DESC OFFSET lit_7;"
        ),
        "{failed}"
    );
    assert!(!log.contains("100000000"), "{log}");
}

#[test]
fn a_real_bundle_whose_names_are_common_words_keeps_the_words_elsewhere() {
    // Host db, OS user postgres, role test, database data, application main.
    let scratch = tempfile::tempdir().unwrap();
    let input = fixture_archive("pg15-sigkill-common-names");
    let out = scratch.path().join("shared.tar.gz");
    pgmortem::redact::redact_bundle(&input, &out).unwrap();
    let options = DiagnoseOptions::default();
    let before = pgmortem::analyze(&input, &options).unwrap();
    let after = pgmortem::analyze(&out, &options).unwrap();
    assert_eq!(diagnosis(&after), diagnosis(&before));
    let original = archive_entries(&input);
    let entries = archive_entries(&out);
    let log = entry(&entries, "/postgres/server.log");
    for name_field in [
        "test@data",
        "user=test",
        "database=data",
        "application_name=main",
        "CREATE ROLE test",
        "alice@example.com",
    ] {
        assert!(!log.contains(name_field), "{name_field} left in the log");
    }
    assert!(log.contains("user_1@db_1 app_1 LOG:  statement: INSERT INTO people VALUES ("));
    // The words elsewhere: the data directory `main`, the settings, the OS user `postgres`
    // (a built-in name, kept).
    assert_eq!(
        entry(&entries, "/postgres/pg_settings.txt"),
        entry(&original, "/postgres/pg_settings.txt")
    );
    assert!(entry(&entries, "/processes/ps.txt").contains(" postgres "));
    assert!(
        leftovers(&out, &["db", "test"]).is_empty(),
        "{:?}",
        leftovers(&out, &["db", "test"])
    );
}

#[test]
fn real_csvlogs_and_jsonlogs_keep_their_records_fields_and_keys() {
    use pgmortem::parse::pglog::{PgLogOptions, PgRecord, parse};
    let formats = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/formats/pglog");
    let mut samples: Vec<PathBuf> = std::fs::read_dir(&formats)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.starts_with("pg")
                && (name.ends_with("-collector.csv")
                    || name.ends_with("-collector.json")
                    || name.ends_with("-events.csv"))
        })
        .collect();
    samples.sort();
    assert!(samples.len() >= 4, "{samples:?}");
    let scratch = tempfile::tempdir().unwrap();
    // What a record is beside its names and query text.
    let shape = |r: &PgRecord| {
        (
            r.line,
            r.time.clone().map(|t| format!("{t:?}")),
            r.pid,
            r.severity,
            r.sqlstate.clone(),
            r.backend_type.clone(),
            r.event.as_ref().map(std::mem::discriminant),
        )
    };
    let mut queries_seen = 0;
    for sample in &samples {
        let name = sample.file_name().unwrap().to_string_lossy().into_owned();
        let out = scratch.path().join(format!("{name}.tar.gz"));
        let redacted = pgmortem::redact::redact_bundle(sample, &out).unwrap();
        let form = if name.ends_with(".csv") {
            "csvlog"
        } else {
            "json_lines"
        };
        assert_eq!(redacted.formats.get(form), Some(&1), "{name}: {redacted:?}");
        assert_eq!(
            redacted.csv_records_as_text + redacted.json_lines_as_text,
            0,
            "{name}"
        );
        let original = std::fs::read(sample).unwrap();
        let entries = archive_entries(&out);
        let copy = entry(&entries, &format!("/{name}"));
        let options = PgLogOptions::default();
        let before = parse(&original, &options).unwrap();
        let after = parse(copy.as_bytes(), &options).unwrap();
        assert_eq!(after.records.len(), before.records.len(), "{name}");
        for (a, b) in after.records.iter().zip(&before.records) {
            assert_eq!(shape(a), shape(b), "{name}");
            for text in [Some(&a.message), a.detail.as_ref(), a.context.as_ref()]
                .into_iter()
                .flatten()
            {
                for c in QUERY_TEXT.captures_iter(text) {
                    queries_seen += 1;
                    assert!(literals_left(&c[1]).is_empty(), "{name}: {text}");
                }
            }
            if let Some(q) = &a.statement {
                assert!(literals_left(q).is_empty(), "{name}: {q}");
            }
        }
        if form == "json_lines" {
            for (a, b) in copy.lines().zip(String::from_utf8_lossy(&original).lines()) {
                let keys = |l: &str| -> Vec<String> {
                    let v: serde_json::Value = serde_json::from_str(l).unwrap();
                    v.as_object().unwrap().keys().cloned().collect()
                };
                assert_eq!(keys(a), keys(b), "{name}");
            }
        }
    }
    // The samples' crashed backends print their queries (`Failed process was running:`).
    assert!(queries_seen >= 4, "{queries_seen}");
}
