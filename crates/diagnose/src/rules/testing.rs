//! Rule tests on real files: a scratch bundle directory made of real captures from fixtures/
//! (a whole collected bundle, or single snapshot files), with values edited at the edges of a
//! rule's thresholds, then read and diagnosed as `pgmortem analyze` would.

use std::path::{Path, PathBuf};

use crate::report::Finding;
use crate::rules::{NotEvaluated, rule};
use crate::{Analysis, DiagnoseOptions};

/// The repository's fixtures directory.
pub(crate) fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures")
}

/// The bundle archive of incident `name` (`incidents/NAME/*.tar.gz`), relative to fixtures/.
pub(crate) fn incident_archive(name: &str) -> String {
    let dir = fixtures().join("incidents").join(name);
    let archive = std::fs::read_dir(&dir)
        .expect("the incident's directory")
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .find(|n| n.ends_with(".tar.gz"))
        .expect("a bundle archive");
    format!("incidents/{name}/{archive}")
}

/// A bundle directory built for one test.
pub(crate) struct Scratch {
    dir: tempfile::TempDir,
}

/// What one rule made of a scratch bundle.
#[derive(Debug)]
pub(crate) enum Outcome {
    /// It could not run: these inputs were missing.
    NotEvaluated(NotEvaluated),
    /// Its findings (none: silent).
    Findings(Vec<Finding>),
}

impl Outcome {
    /// The findings; panics when the rule was not evaluated.
    #[track_caller]
    pub fn findings(self) -> Vec<Finding> {
        match self {
            Outcome::Findings(f) => f,
            Outcome::NotEvaluated(n) => panic!("not evaluated: {n:?}"),
        }
    }

    /// The only finding; panics when there is not exactly one.
    #[track_caller]
    pub fn one(self) -> Finding {
        let mut f = self.findings();
        assert_eq!(f.len(), 1, "{f:#?}");
        f.remove(0)
    }

    /// True when the rule ran and found nothing.
    pub fn silent(&self) -> bool {
        matches!(self, Outcome::Findings(f) if f.is_empty())
    }
}

impl Scratch {
    /// An empty bundle directory.
    pub fn new() -> Self {
        Self {
            dir: tempfile::tempdir().expect("a temporary directory"),
        }
    }

    /// Every readable file of a bundle under fixtures/ (a collected .tar.gz, a directory),
    /// written out under its bundle path.
    pub fn bundle(fixture: &str) -> Self {
        let scratch = Self::new();
        let bundle = pgmortem_bundle::open(
            &fixtures().join(fixture),
            &pgmortem_bundle::OpenOptions::default(),
        )
        .expect("a readable fixture bundle");
        for source in &bundle.sources {
            let to = scratch.dir.path().join(&source.path);
            std::fs::create_dir_all(to.parent().expect("a parent")).expect("mkdir");
            // Logs over the in-memory size are streams, not bytes.
            let mut reader = source.reader().expect("a readable source");
            let mut file = std::fs::File::create(to).expect("create");
            std::io::copy(&mut reader, &mut file).expect("copy");
        }
        scratch
    }

    /// The first bundle of incident `name` (its .tar.gz or a sosreport's .tar.xz, else its
    /// directory).
    pub fn incident(name: &str) -> Self {
        let dir = fixtures().join("incidents").join(name);
        let archive = std::fs::read_dir(&dir)
            .expect("an incident directory")
            .map(|e| e.expect("entry").path())
            .find(|p| {
                let name = p.to_string_lossy();
                name.ends_with(".tar.gz") || name.ends_with(".tar.xz")
            });
        match archive {
            Some(a) => Self::bundle(
                &a.strip_prefix(fixtures())
                    .expect("below fixtures")
                    .to_string_lossy(),
            ),
            None => Self::bundle(&format!("incidents/{name}")),
        }
    }

    /// Copies `fixture` (relative to fixtures/) to `to` in the bundle.
    pub fn copy(self, to: &str, fixture: &str) -> Self {
        let bytes = std::fs::read(fixtures().join(fixture)).expect("a fixture file");
        self.write(to, bytes)
    }

    /// Writes `bytes` to `to`.
    pub fn write(self, to: &str, bytes: impl AsRef<[u8]>) -> Self {
        let path = self.dir.path().join(to);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        std::fs::write(path, bytes).expect("write");
        self
    }

    /// Adds `text` at the end of `path` (a file of the bundle).
    pub fn append(self, path: &str, text: &str) -> Self {
        let full = self.dir.path().join(path);
        let mut bytes = std::fs::read(&full).expect("a file to append to");
        bytes.extend_from_slice(text.as_bytes());
        std::fs::write(full, bytes).expect("write");
        self
    }

    /// Copies `from`, a file of the bundle, to `to` in the bundle.
    pub fn duplicate(self, from: &str, to: &str) -> Self {
        let bytes = std::fs::read(self.dir.path().join(from)).expect("a file to copy");
        self.write(to, bytes)
    }

    /// Removes `path` from the bundle.
    pub fn remove(self, path: &str) -> Self {
        std::fs::remove_file(self.dir.path().join(path)).expect("a file to remove");
        self
    }

    /// Replaces the line of `path` that starts with `start` by `line` (the test's edit at a
    /// threshold); panics when no line starts so.
    #[track_caller]
    pub fn set_line(self, path: &str, start: &str, line: &str) -> Self {
        let full = self.dir.path().join(path);
        let text = std::fs::read_to_string(&full).expect("a text file");
        let mut found = false;
        let edited: Vec<String> = text
            .lines()
            .map(|l| {
                if !found && l.starts_with(start) {
                    found = true;
                    line.to_owned()
                } else {
                    l.to_owned()
                }
            })
            .collect();
        assert!(found, "{path}: no line starts with {start:?}");
        std::fs::write(full, edited.join("\n") + "\n").expect("write");
        self
    }

    /// Rewrites the text of `path` with `change` (edits one line cannot express: timestamps
    /// moved, lines cut).
    pub fn edit(self, path: &str, change: impl FnOnce(&str) -> String) -> Self {
        let full = self.dir.path().join(path);
        let text = std::fs::read_to_string(&full).expect("a text file");
        std::fs::write(full, change(&text)).expect("write");
        self
    }

    /// Rewrites the text of every path that matches `pattern` (a substring) with `change`: the
    /// same edit to each copy of a kernel log.
    #[track_caller]
    pub fn edit_all(self, pattern: &str, change: impl Fn(&str) -> String) -> Self {
        let paths = self.paths(pattern);
        assert!(!paths.is_empty(), "no path matches {pattern:?}");
        paths
            .iter()
            .fold(self, |scratch, path| scratch.edit(path, &change))
    }

    /// The paths in the bundle that match `pattern` (a substring).
    pub fn paths(&self, pattern: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut stack = vec![self.dir.path().to_owned()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(d).expect("a directory") {
                let p = e.expect("entry").path();
                if p.is_dir() {
                    stack.push(p);
                } else {
                    let rel = p
                        .strip_prefix(self.dir.path())
                        .expect("below the bundle")
                        .to_string_lossy()
                        .into_owned();
                    if rel.contains(pattern) {
                        out.push(rel);
                    }
                }
            }
        }
        out.sort();
        out
    }

    /// Runs rule `id` on the bundle.
    #[track_caller]
    pub fn run(&self, id: &str) -> Outcome {
        let rule = rule(id).unwrap_or_else(|| panic!("no rule {id}"));
        let bundle =
            pgmortem_bundle::open(self.dir.path(), &pgmortem_bundle::OpenOptions::default())
                .expect("a readable bundle");
        let analysis = Analysis::new(&bundle, &DiagnoseOptions::default()).expect("diagnosable");
        let facts = analysis.facts();
        let missing: Vec<_> = rule
            .meta
            .needs
            .iter()
            .filter(|i| !i.available(&facts))
            .collect();
        if !missing.is_empty() {
            return Outcome::NotEvaluated(NotEvaluated {
                rule: rule.meta.id,
                missing: missing.iter().map(|i| i.name()).collect(),
                files: missing.iter().map(|i| i.files()).collect(),
            });
        }
        Outcome::Findings((rule.check)(&facts))
    }

    /// The whole report.
    pub fn report(&self) -> crate::Report {
        let bundle =
            pgmortem_bundle::open(self.dir.path(), &pgmortem_bundle::OpenOptions::default())
                .expect("a readable bundle");
        crate::diagnose(&bundle, &DiagnoseOptions::default()).expect("diagnosable")
    }
}

/// Where a frame of a hand-made profile runs.
#[derive(Debug, Clone, Copy)]
pub(crate) enum FrameIn {
    /// The kernel (`[kernel.kallsyms]`).
    Kernel,
    /// The postgres binary.
    Postgres,
}

/// A hand-made `perf script` edge case: `samples` cpu-clock samples of one postgres backend
/// on two CPUs, the first `hits` of them with `frame` on top of a stack that ends in
/// `PostgresMain`, the others in `ExecScan` alone. The share a stack query finds is exactly
/// `hits / samples`.
pub(crate) fn perf_script(samples: usize, hits: usize, frame: &str, runs_in: FrameIn) -> String {
    let mut out = String::from(
        "# ========\n# nrcpus online : 2\n# sample duration :   1000.000 ms\n# ========\n#\n",
    );
    let (address, dso) = match runs_in {
        FrameIn::Kernel => ("ffffffff81400000", "[kernel.kallsyms]"),
        FrameIn::Postgres => ("          400000", "/usr/lib/postgresql/15/bin/postgres"),
    };
    for i in 0..samples {
        out.push_str(&format!(
            "postgres  5100/5100 [{:03}]  5001.{:06}:   10101010              cpu-clock: \n",
            i % 2,
            i * 100
        ));
        if i < hits {
            out.push_str(&format!("\t{address} {frame}+0x10 ({dso})\n"));
        } else {
            out.push_str(
                "\t          500000 ExecScan+0x10 (/usr/lib/postgresql/15/bin/postgres)\n",
            );
        }
        out.push_str(
            "\t          600000 PostgresMain+0x10 (/usr/lib/postgresql/15/bin/postgres)\n\n",
        );
    }
    out
}
