//! ## What it finds
//! The postmaster's `oom_score_adj` is not -1000, so the kernel's OOM killer may pick it; or
//! the postmaster is protected and its children keep the value they inherited (the server was
//! started without `PG_OOM_ADJUST_FILE`), so the backends are protected too. It says whether
//! the children reset themselves (the postmaster's `PG_OOM_ADJUST_FILE` and
//! `PG_OOM_ADJUST_VALUE`) and where the postmaster's value comes from (its systemd unit's
//! `OOMScoreAdjust`, or what started the server).
//!
//! ## Why it matters
//! A killed backend costs a crash-restart of a few seconds; a killed postmaster leaves the
//! server down until something starts it again. The postmaster holds little memory of its
//! own, so -1000 costs nothing; -900 (what Debian's `pg_ctlcluster` sets) is much better than
//! 0, since it takes 90 % of memory off the process's score, but only -1000 takes a process
//! out of the OOM killer's choice. The other way round, children at -1000 cannot be killed at
//! all: a runaway backend then makes the kernel kill other programs, and where nothing else is
//! left (a memory cgroup holding only PostgreSQL) the OOM killer finds no victim and the
//! allocations stall or the kernel panics (`vm.panic_on_oom`). A child resets itself only when
//! the postmaster's environment has `PG_OOM_ADJUST_FILE`: after each fork it writes
//! `PG_OOM_ADJUST_VALUE` (0 when unset) to that file.
//!
//! ## What to do
//! Start the postmaster at -1000 and have every child reset itself to 0. With systemd, a
//! drop-in for the server's unit (`systemctl edit postgresql@15-main`, the unit the bundle
//! names when it has it): `OOMScoreAdjust=-1000`,
//! `Environment=PG_OOM_ADJUST_FILE=/proc/self/oom_score_adj` and
//! `Environment=PG_OOM_ADJUST_VALUE=0`, then restart. Without systemd, the script that starts
//! the server writes -1000 to `/proc/self/oom_score_adj` (as root) and exports the two
//! variables before `pg_ctl start`. A container runtime's `--oom-score-adj` applies to every
//! process of the container: the two variables are needed there as well.
//!
//! ## Thresholds
//! The postmaster's `oom_score_adj` not -1000: a warning when it is above 0 (the OOM killer
//! prefers it) or when the bundle shows the OOM killer at work where it can reach the
//! postmaster (a kernel OOM kill, other than a stranger's at a memory cgroup limit that does not
//! bound the postmaster's cgroup; or the memory cgroup's `oom_kill` counter above 0); otherwise (0, Debian's -900) info, as a
//! postmaster holding little memory is rarely the one picked. Children that kept the
//! postmaster's negative value (not reset): a warning. Without any child's `oom_score_adj` in
//! the bundle, a postmaster below 0 whose environment leaves `PG_OOM_ADJUST_FILE` unset (or has
//! `PG_OOM_ADJUST_VALUE` write the postmaster's own value back) is the same warning: every
//! backend it forks keeps the protection. A child's observed value wins over what the
//! environment implies. Silent at -1000 with children at any other value. Kernel OOM reports
//! of `postgres` processes are cited with the victim's `oom_score_adj` (a postmaster killed,
//! or a backend that kept a negative value); the finding is tied to the incident of a killed
//! postmaster.
//!
//! ## Evidence it needs
//! The postmaster's `oom_score_adj` (processes/PID/oom_score_adj) and the process titles (or
//! parent pids) that tell the postmaster apart. Read when present: the children's
//! `oom_score_adj` files; the postmaster's `PG_OOM_ADJUST_FILE` and `PG_OOM_ADJUST_VALUE`
//! (processes/PID/pg-oom-adjust.txt); its systemd unit's `Id` and `OOMScoreAdjust`
//! (processes/PID/systemd-unit.txt); the kernel log and the memory cgroup's `oom_kill` counter.
//!
//! ## Knowledge
//! [pg-kernel-resources] ("Linux Memory Overcommit": `OOMScoreAdjust`, `PG_OOM_ADJUST_FILE`,
//! `PG_OOM_ADJUST_VALUE`); [fr-memoire]'s task table: the postmaster at -900 is spared, its
//! child at 0 holding 4.3 GB is killed; [kernel-oom] (-1000 disables OOM killing of a task,
//! other values shift its score by that many thousandths of memory).

use crate::facts::{Facts, Known, OomAdjustFacts, PgProcess, UnitFacts};
use crate::human::human_kb;
use crate::report::{Evidence, Finding, Severity};
use crate::rules::support::{kill_evidence, kill_reaches_instance, oom_kills, postgres_oom_kills};
use crate::rules::{Input, RuleMeta, finding, info, warning};

pub(crate) const META: RuleMeta = RuleMeta {
    id: "postmaster-oom-unprotected",
    title: "The postmaster is within the OOM killer's reach, or its children are out of it",
    severities: &[
        warning(
            "for an oom_score_adj above 0, children that kept its negative value, or the OOM \
             killer at work in the bundle",
        ),
        info("at 0 or another value below it but -1000, its children reset and no OOM kill seen"),
    ],
    needs: &[Input::Processes],
    uses: &[Input::KernelLog, Input::Cgroup],
};

/// The `oom_score_adj` that takes a process out of the OOM killer's choice.
pub(crate) const PROTECTED: i32 = -1000;
/// What Debian's `pg_ctlcluster` gives the postmaster.
pub(crate) const DEBIAN: i32 = -900;
/// Children cited one by one in the evidence, at most.
const CHILDREN_CITED: usize = 5;

/// What the postmaster's environment makes of its children's `oom_score_adj`.
enum ChildReset {
    /// The bundle does not have the environment.
    Unknown,
    /// `PG_OOM_ADJUST_FILE` unset (or empty): every child keeps the postmaster's value.
    Kept,
    /// Each child writes this (`PG_OOM_ADJUST_VALUE`, `0` when unset) to `PG_OOM_ADJUST_FILE`.
    WritesValue(String),
}

impl ChildReset {
    fn of(env: Option<&OomAdjustFacts>) -> Self {
        match env.map(|e| (e.children_reset(), e)) {
            Some((Some(false), _)) => ChildReset::Kept,
            Some((Some(true), e)) => ChildReset::WritesValue(e.reset_to().trim().to_owned()),
            _ => ChildReset::Unknown,
        }
    }

    /// The `oom_score_adj` the children end up at, when the environment says.
    fn children_value(&self, postmaster: i32) -> Option<i32> {
        match self {
            ChildReset::Unknown => None,
            ChildReset::Kept => Some(postmaster),
            ChildReset::WritesValue(v) => v.parse().ok(),
        }
    }

    /// Why the children kept the postmaster's value, as the environment (or its absence) says.
    fn why_kept(&self) -> String {
        match self {
            ChildReset::Unknown => {
                "PG_OOM_ADJUST_FILE was not set when the server started".to_owned()
            }
            ChildReset::Kept => {
                "PG_OOM_ADJUST_FILE is not set in the postmaster's environment".to_owned()
            }
            ChildReset::WritesValue(v) => {
                format!("PG_OOM_ADJUST_VALUE={v} writes the postmaster's own value back")
            }
        }
    }
}

pub(crate) fn check(facts: &Facts<'_>) -> Vec<Finding> {
    let processes = &facts.host.processes;
    let Some(postmaster) = processes.postmaster() else {
        return Vec::new();
    };
    let Some(adj) = &postmaster.oom_score_adj else {
        return Vec::new();
    };
    let env = processes.oom_adjust.as_ref();
    let reset = ChildReset::of(env);
    let children: Vec<&PgProcess> = processes
        .children()
        .filter(|c| c.oom_score_adj.is_some())
        .collect();
    let inherited: Vec<&PgProcess> = children
        .iter()
        .copied()
        .filter(|c| adj.value < 0 && c.oom_score_adj.as_ref().map(|a| a.value) == Some(adj.value))
        .collect();
    // No child's file to look at: what the environment makes of them.
    let kept_by_environment =
        children.is_empty() && adj.value < 0 && reset.children_value(adj.value) == Some(adj.value);
    let not_reset = !inherited.is_empty() || kept_by_environment;
    let exposed = adj.value != PROTECTED;
    if !exposed && !not_reset {
        return Vec::new();
    }

    let mut problems = Vec::new();
    if exposed {
        problems.push(exposure(postmaster.pid, adj.value));
    }
    let consequence = if adj.value == PROTECTED {
        "the OOM killer cannot kill them: a backend that grows makes the kernel kill other \
         programs, or find no victim at all where PostgreSQL is alone in its memory cgroup"
    } else {
        "a backend that grows is as protected as the postmaster, so the kernel prefers to \
         kill other programs"
    };
    if !inherited.is_empty() {
        problems.push(format!(
            "{} of its {} children run at the same oom_score_adj {}: they were not reset \
             ({}), and {consequence}.",
            inherited.len(),
            children.len(),
            adj.value,
            reset.why_kept()
        ));
    } else if kept_by_environment {
        problems.push(format!(
            "Every child it forks keeps oom_score_adj {}: {}, so no child resets itself \
             after the fork (the bundle has no child's oom_score_adj to show it), and \
             {consequence}.",
            adj.value,
            reset.why_kept()
        ));
    } else if exposed && let ChildReset::WritesValue(v) = &reset {
        problems.push(format!(
            "Its children reset themselves to {v} after the fork (PG_OOM_ADJUST_FILE is \
             set): only the postmaster's own value is missing."
        ));
    }
    if let Some(origin) = value_origin(processes.unit.as_ref(), adj.value) {
        problems.push(origin);
    }

    let mut evidence = vec![adj.evidence(format!(
        "postmaster (pid {}) oom_score_adj = {}",
        postmaster.pid, adj.value
    ))];
    evidence.extend(inherited.iter().take(CHILDREN_CITED).filter_map(|c| {
        let a = c.oom_score_adj.as_ref()?;
        Some(a.evidence(format!(
            "{} (pid {}) oom_score_adj = {}",
            c.role, c.pid, a.value
        )))
    }));
    evidence.extend(environment_evidence(env));
    if let Some(unit) = &processes.unit {
        evidence.extend(unit_evidence(unit));
    }
    let mut kills = String::new();
    let mut postmaster_incident = None;
    for (index, incident, k) in postgres_oom_kills(facts) {
        let Some(victim_adj) = k.oom_score_adj else {
            continue;
        };
        let postmaster_killed = incident.kind == "postmaster_killed";
        if !postmaster_killed && victim_adj >= 0 {
            continue;
        }
        if postmaster_killed {
            postmaster_incident.get_or_insert(index);
        }
        let who = if postmaster_killed {
            "the postmaster"
        } else {
            "a backend that kept a negative value"
        };
        kills.push_str(&format!(
            " The kernel's OOM report shows it killed {} {} ({who}) at oom_score_adj \
             {victim_adj}{}.",
            crate::human::quote(&k.comm),
            k.pid,
            k.anon_rss_kb
                .map(|kb| format!(", holding {} anonymous memory", human_kb(kb)))
                .unwrap_or_default()
        ));
        evidence.push(kill_evidence(
            k,
            format!(
                "OOM kill of {} {} at oom_score_adj {victim_adj}",
                crate::human::quote(&k.comm),
                k.pid
            ),
        ));
    }

    // A stranger's kill at a limit that does not bound this instance is no OOM killer at work
    // on it.
    let oom_seen = oom_kills(facts).any(|(_, _, k)| kill_reaches_instance(facts, k))
        || facts
            .host
            .cgroup
            .as_ref()
            .and_then(|c| c.oom_kills.as_ref())
            .is_some_and(|k| k.value > 0);
    let severity = if adj.value > 0 || not_reset || oom_seen {
        Severity::Warning
    } else {
        Severity::Info
    };
    if exposed && !not_reset {
        problems.push(if oom_seen {
            format!(
                "The bundle shows the OOM killer at work on this host or cgroup, and the \
                 postmaster at {} is among its candidates.",
                adj.value
            )
        } else {
            "It holds little memory of its own, so the OOM killer rarely picks it while a \
             larger process is there; it still can."
                .to_owned()
        });
    }
    let title = match (exposed, inherited.len()) {
        (true, _) if !not_reset => format!(
            "The postmaster runs at oom_score_adj {}: the OOM killer can kill it",
            adj.value
        ),
        (false, 0) => format!(
            "PostgreSQL's children keep the postmaster's oom_score_adj {PROTECTED}: the OOM \
             killer cannot kill a runaway backend"
        ),
        (false, n) => format!(
            "{n} PostgreSQL children inherited the postmaster's oom_score_adj {PROTECTED}: the \
             OOM killer cannot kill a runaway backend"
        ),
        (true, 0) => format!(
            "The postmaster runs at oom_score_adj {} and its children keep that value",
            adj.value
        ),
        (true, n) => format!(
            "The postmaster runs at oom_score_adj {} and {n} children kept that value",
            adj.value
        ),
    };
    let unit = processes
        .unit
        .as_ref()
        .and_then(|u| u.id.as_ref())
        .map_or("postgresql@VERSION-CLUSTER", |id| id.value.as_str());
    let mut f = finding(&META, severity, title)
        .summary(format!("{}{kills}", problems.join(" ")))
        .recommend(format!(
            "Start the postmaster at oom_score_adj {PROTECTED} and reset every child to 0: \
                 with systemd, a drop-in for the server's unit (systemctl edit {unit}) with \
                 OOMScoreAdjust={PROTECTED}, \
                 Environment=PG_OOM_ADJUST_FILE=/proc/self/oom_score_adj and \
                 Environment=PG_OOM_ADJUST_VALUE=0, then restart the server; without systemd, \
                 write {PROTECTED} to /proc/self/oom_score_adj and export the two variables in \
                 the script that runs pg_ctl start. Afterwards {} should read {PROTECTED} and \
                 the children's files 0.",
            adj.path
        ))
        .evidence(evidence)
        .figure("postmaster_oom_score_adj", f64::from(adj.value))
        .figure("children", children.len() as f64)
        .figure("children_not_reset", inherited.len() as f64);
    if let Some(resets) = env.and_then(OomAdjustFacts::children_reset) {
        f = f.figure("children_reset_by_environment", f64::from(u8::from(resets)));
    }
    if let Some(u) = processes
        .unit
        .as_ref()
        .and_then(|u| u.oom_score_adjust.as_ref())
    {
        f = f.figure("unit_oom_score_adjust", f64::from(u.value));
    }
    if let Some(index) = postmaster_incident {
        f = f.incident(index);
    }
    vec![f]
}

/// What the postmaster's value exposes it to.
fn exposure(pid: u32, value: i32) -> String {
    match value {
        DEBIAN => format!(
            "The postmaster (pid {pid}) runs at oom_score_adj {DEBIAN}, Debian's pg_ctlcluster \
             value: better than 0 (90 % of memory comes off its score) but still killable; \
             only {PROTECTED} takes it out of the OOM killer's choice."
        ),
        v if v < 0 => format!(
            "The postmaster (pid {pid}) runs at oom_score_adj {v}: lowered, but still \
             killable; only {PROTECTED} takes it out of the OOM killer's choice."
        ),
        0 => format!(
            "The postmaster (pid {pid}) runs at oom_score_adj 0: the OOM killer may pick it \
             like any other process, and a killed postmaster leaves the server down until \
             something starts it again."
        ),
        v => format!(
            "The postmaster (pid {pid}) runs at oom_score_adj {v}: raised, so the OOM killer \
             prefers it to other processes of its size ({v} thousandths of memory are added \
             to its score), and a killed postmaster leaves the server down until something \
             starts it again."
        ),
    }
}

/// Where the postmaster's value comes from, when its systemd unit is known.
fn value_origin(unit: Option<&UnitFacts>, value: i32) -> Option<String> {
    let unit = unit?;
    let name = unit
        .id
        .as_ref()
        .map_or("its systemd unit".to_owned(), |id| {
            format!("its systemd unit {}", crate::human::quote(&id.value))
        });
    let set = unit.oom_score_adjust.as_ref()?.value;
    Some(if set == value {
        format!("The value comes from {name} (OOMScoreAdjust={set}).")
    } else {
        format!(
            "{} has OOMScoreAdjust={set}: the postmaster's {value} was set by what started the \
             server under it (a start script such as Debian's pg_ctlcluster, or by hand), not by \
             the unit.",
            crate::human::capitalised(&name)
        )
    })
}

/// The lines of the postmaster's environment that say what its children do.
fn environment_evidence(env: Option<&OomAdjustFacts>) -> Vec<Evidence> {
    let Some(env) = env else {
        return Vec::new();
    };
    let say = |v: &Known<Option<String>>| match &v.value {
        Some(value) => v.evidence(format!("postmaster's environment: {}={value}", v.key)),
        None => v.evidence(format!("postmaster's environment: {} unset", v.key)),
    };
    env.file.iter().chain(&env.value).map(say).collect()
}

/// The unit's name and `OOMScoreAdjust` lines.
fn unit_evidence(unit: &UnitFacts) -> Vec<Evidence> {
    let mut out = Vec::new();
    if let Some(id) = &unit.id {
        out.push(id.evidence(format!(
            "the postmaster's systemd unit {}",
            crate::human::quote(&id.value)
        )));
    }
    if let Some(adj) = &unit.oom_score_adjust {
        out.push(adj.evidence(format!("unit OOMScoreAdjust={}", adj.value)));
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::Severity;
    use crate::rules::testing::{Outcome, Scratch};

    /// The collected bundle's postmaster is pid 16859; its seven children are 16862–16893.
    /// Every process ran at oom_score_adj 0.
    const POSTMASTER: &str = "processes/16859/oom_score_adj";
    const CHILDREN: &[&str] = &[
        "16862", "16863", "16865", "16866", "16867", "16892", "16893",
    ];

    fn collected() -> Scratch {
        Scratch::bundle("formats/bundle/pg15-collected.tar.gz")
    }

    fn with_children_at(mut scratch: Scratch, value: &str) -> Scratch {
        for pid in CHILDREN {
            scratch = scratch.write(&format!("processes/{pid}/oom_score_adj"), value);
        }
        scratch
    }

    #[test]
    fn a_postmaster_at_zero_is_info_citing_its_file() {
        // No OOM kill anywhere in the collected bundle.
        let f = collected().run("postmaster-oom-unprotected").one();
        assert_eq!(f.severity, Severity::Info);
        assert_eq!(f.figures["postmaster_oom_score_adj"], 0.0);
        assert_eq!(f.figures["children"], 7.0);
        assert_eq!(f.figures["children_not_reset"], 0.0);
        assert_eq!(f.evidence[0].path, POSTMASTER);
        assert_eq!(f.evidence[0].key.as_deref(), Some("oom_score_adj"));
        let text = f.recommendation.unwrap();
        assert!(text.contains("OOMScoreAdjust=-1000"), "{text}");
        assert!(
            text.contains("PG_OOM_ADJUST_FILE=/proc/self/oom_score_adj"),
            "{text}"
        );
        assert!(text.contains("PG_OOM_ADJUST_VALUE=0"), "{text}");
    }

    #[test]
    fn minus_1000_with_children_reset_is_silent_and_minus_999_is_not() {
        // The postmaster's file edited to -1000 (its children stay at 0): protected, reset.
        assert!(
            collected()
                .write(POSTMASTER, "-1000\n")
                .run("postmaster-oom-unprotected")
                .silent()
        );
        let f = collected()
            .write(POSTMASTER, "-999\n")
            .run("postmaster-oom-unprotected")
            .one();
        assert_eq!(f.figures["postmaster_oom_score_adj"], -999.0);
        assert!(f.summary.contains("still killable"), "{}", f.summary);
    }

    #[test]
    fn an_oom_kill_counted_by_the_cgroup_makes_zero_a_warning() {
        let f = collected()
            .set_line("cgroup/16859/memory.oom_control", "oom_kill ", "oom_kill 1")
            .run("postmaster-oom-unprotected")
            .one();
        assert_eq!(f.severity, Severity::Warning);
    }

    #[test]
    fn debians_minus_900_is_better_than_zero_but_still_killable() {
        let f = collected()
            .write(POSTMASTER, "-900\n")
            .run("postmaster-oom-unprotected")
            .one();
        assert_eq!(f.severity, Severity::Info);
        assert!(f.summary.contains("Debian"), "{}", f.summary);
        assert!(f.summary.contains("still killable"), "{}", f.summary);
    }

    #[test]
    fn a_raised_value_says_the_killer_prefers_it() {
        let f = collected()
            .write(POSTMASTER, "1000\n")
            .run("postmaster-oom-unprotected")
            .one();
        assert_eq!(f.figures["postmaster_oom_score_adj"], 1000.0);
        assert_eq!(f.severity, Severity::Warning);
        assert!(f.summary.contains("prefers it"), "{}", f.summary);
        assert_eq!(f.incident, None);
    }

    #[test]
    fn children_that_kept_minus_1000_are_a_warning() {
        // The postmaster and every child edited to -1000: started without PG_OOM_ADJUST_FILE.
        let f = with_children_at(collected().write(POSTMASTER, "-1000\n"), "-1000\n")
            .run("postmaster-oom-unprotected")
            .one();
        assert_eq!(f.severity, Severity::Warning);
        assert_eq!(f.figures["children_not_reset"], 7.0);
        assert!(f.title.contains("cannot kill"), "{}", f.title);
        // The postmaster's file and five children's.
        assert_eq!(f.evidence.len(), 6);
        // One child left at -1000, the others reset to 0 (the edge: a single one counts).
        let one = collected()
            .write(POSTMASTER, "-1000\n")
            .write("processes/16893/oom_score_adj", "-1000\n")
            .run("postmaster-oom-unprotected")
            .one();
        assert_eq!(one.figures["children_not_reset"], 1.0);
        // Children at a value other than the postmaster's were reset: -999 is not -1000.
        assert!(
            with_children_at(collected().write(POSTMASTER, "-1000\n"), "-999\n")
                .run("postmaster-oom-unprotected")
                .silent()
        );
    }

    #[test]
    fn minus_900_inherited_is_both_problems() {
        let f = with_children_at(collected().write(POSTMASTER, "-900\n"), "-900\n")
            .run("postmaster-oom-unprotected")
            .one();
        assert_eq!(f.figures["children_not_reset"], 7.0);
        assert!(f.title.contains("kept that value"), "{}", f.title);
    }

    #[test]
    fn the_recorded_memcg_kill_fires_on_the_postmaster_at_zero() {
        // The postmaster 32422 ran at 0 (the recording VM cannot lower it), its children were
        // reset to 0, and the kernel killed backend 32691 at 0: nothing to say about the kill.
        let f = Scratch::incident("pg15-memcg-oom-work-mem")
            .run("postmaster-oom-unprotected")
            .one();
        assert_eq!(f.severity, Severity::Warning);
        assert!(f.summary.contains("OOM killer at work"), "{}", f.summary);
        assert_eq!(f.figures["postmaster_oom_score_adj"], 0.0);
        assert_eq!(f.evidence[0].path, "processes/32422/oom_score_adj");
        assert!(!f.summary.contains("OOM report"), "{}", f.summary);
    }

    #[test]
    fn a_killed_backend_that_kept_a_negative_value_is_cited() {
        // The same capture as if started by pg_ctlcluster without PG_OOM_ADJUST_FILE: every
        // oom_score_adj file and the kill line's `oom_score_adj:0` edited to -900.
        let kill = "Memory cgroup out of memory: Killed process 32691 (postgres) \
                    total-vm:768564kB, anon-rss:418972kB, file-rss:45824kB, shmem-rss:4136kB, \
                    UID:1003 pgtables:1204kB oom_score_adj:-900";
        let mut scratch = Scratch::incident("pg15-memcg-oom-work-mem")
            .set_line(
                "kernel/dmesg.txt",
                "[ 4169.534245] Memory cgroup",
                &format!("[ 4169.534245] {kill}"),
            )
            .set_line(
                "kernel/dmesg-T.txt",
                "[Tue Nov 24 05:29:29 2026] Memory cgroup",
                &format!("[Tue Nov 24 05:29:29 2026] {kill}"),
            );
        for path in scratch.paths("/oom_score_adj") {
            scratch = scratch.write(&path, "-900\n");
        }
        let f = scratch.run("postmaster-oom-unprotected").one();
        assert_eq!(f.figures["children_not_reset"], 5.0);
        assert!(
            f.summary
                .contains("killed `postgres` 32691 (a backend that kept a negative value)"),
            "{}",
            f.summary
        );
        assert!(f.evidence.iter().any(|e| e.path == "kernel/dmesg.txt"));
    }

    #[test]
    fn the_recorded_postmaster_kill_at_plus_1000_is_tied_to_its_incident() {
        // The postmaster ran at 1000 (children reset to 0); the kernel killed it (pid 23749),
        // and the restarted postmaster 24812 runs at 1000 again.
        let f = Scratch::incident("pg15-oom-kill-postmaster")
            .run("postmaster-oom-unprotected")
            .one();
        assert_eq!(f.severity, Severity::Warning);
        assert_eq!(f.incident, Some(0));
        assert_eq!(f.figures["postmaster_oom_score_adj"], 1000.0);
        assert_eq!(f.figures["children_not_reset"], 0.0);
        assert!(
            f.summary
                .contains("killed `postgres` 23749 (the postmaster) at oom_score_adj 1000"),
            "{}",
            f.summary
        );
        assert_eq!(f.evidence[0].path, "processes/24812/oom_score_adj");
    }

    const ENVIRONMENT: &str = "processes/16859/pg-oom-adjust.txt";
    const UNIT: &str = "processes/16859/systemd-unit.txt";
    const FILE_SET: &str =
        "PG_OOM_ADJUST_FILE=/proc/self/oom_score_adj\nunset PG_OOM_ADJUST_VALUE\n";
    const FILE_UNSET: &str = "unset PG_OOM_ADJUST_FILE\nunset PG_OOM_ADJUST_VALUE\n";

    /// The collected bundle without its children's oom_score_adj files, the postmaster at
    /// `value`, its environment `env`.
    fn postmaster_alone(value: &str, env: &str) -> Scratch {
        let mut scratch = collected().write(POSTMASTER, value).write(ENVIRONMENT, env);
        for pid in CHILDREN {
            scratch = scratch.remove(&format!("processes/{pid}/oom_score_adj"));
        }
        scratch
    }

    #[test]
    fn a_protected_postmaster_without_pg_oom_adjust_file_protects_every_child() {
        // No child's file in the bundle: the environment alone says they keep -1000.
        let f = postmaster_alone("-1000\n", FILE_UNSET)
            .run("postmaster-oom-unprotected")
            .one();
        assert_eq!(f.severity, Severity::Warning);
        assert!(
            f.title.contains("cannot kill a runaway backend"),
            "{}",
            f.title
        );
        assert!(
            f.summary
                .contains("PG_OOM_ADJUST_FILE is not set in the postmaster's environment"),
            "{}",
            f.summary
        );
        assert_eq!(f.figures["children"], 0.0);
        assert_eq!(f.figures["children_reset_by_environment"], 0.0);
        assert!(
            f.evidence
                .iter()
                .any(|e| e.path == ENVIRONMENT && e.line == 1 && e.what.contains("unset"))
        );
        // With the file set, the children reset themselves: nothing to say.
        assert!(
            postmaster_alone("-1000\n", FILE_SET)
                .run("postmaster-oom-unprotected")
                .silent()
        );
        // Set but empty names no file: no child resets itself.
        let empty = postmaster_alone(
            "-1000\n",
            "PG_OOM_ADJUST_FILE=\nunset PG_OOM_ADJUST_VALUE\n",
        )
        .run("postmaster-oom-unprotected")
        .one();
        assert_eq!(empty.figures["children_reset_by_environment"], 0.0);
    }

    #[test]
    fn a_value_written_back_keeps_the_protection_and_a_postmaster_at_zero_passes_nothing_on() {
        let f = postmaster_alone(
            "-1000\n",
            "PG_OOM_ADJUST_FILE=/proc/self/oom_score_adj\nPG_OOM_ADJUST_VALUE=-1000\n",
        )
        .run("postmaster-oom-unprotected")
        .one();
        assert_eq!(f.severity, Severity::Warning);
        assert!(
            f.summary
                .contains("PG_OOM_ADJUST_VALUE=-1000 writes the postmaster's own value back"),
            "{}",
            f.summary
        );
        // A postmaster at 0 passes 0 on: only its own exposure is said, at info.
        let f = postmaster_alone("0\n", FILE_UNSET)
            .run("postmaster-oom-unprotected")
            .one();
        assert_eq!(f.severity, Severity::Info);
        assert!(!f.summary.contains("keeps"), "{}", f.summary);
    }

    #[test]
    fn the_childrens_own_files_win_over_the_environment() {
        // The environment says unset, yet the children's files read 0: they were reset.
        assert!(
            collected()
                .write(POSTMASTER, "-1000\n")
                .write(ENVIRONMENT, FILE_UNSET)
                .run("postmaster-oom-unprotected")
                .silent()
        );
        // Children that kept -1000, and the environment saying why.
        let f = with_children_at(collected().write(POSTMASTER, "-1000\n"), "-1000\n")
            .write(ENVIRONMENT, FILE_UNSET)
            .run("postmaster-oom-unprotected")
            .one();
        assert_eq!(f.figures["children_not_reset"], 7.0);
        assert!(
            f.summary.contains(
                "they were not reset (PG_OOM_ADJUST_FILE is not set in the postmaster's \
                 environment)"
            ),
            "{}",
            f.summary
        );
    }

    #[test]
    fn children_reset_by_the_environment_leave_only_the_postmasters_value() {
        let f = collected()
            .write(POSTMASTER, "-900\n")
            .write(ENVIRONMENT, FILE_SET)
            .run("postmaster-oom-unprotected")
            .one();
        assert_eq!(f.figures["children_reset_by_environment"], 1.0);
        assert!(
            f.summary
                .contains("Its children reset themselves to 0 after the fork"),
            "{}",
            f.summary
        );
    }

    #[test]
    fn the_systemd_unit_says_where_the_value_comes_from_and_is_named_in_the_fix() {
        // The unit set -900 itself.
        let f = collected()
            .write(POSTMASTER, "-900\n")
            .write(UNIT, "OOMScoreAdjust=-900\nId=postgresql@15-main.service\n")
            .run("postmaster-oom-unprotected")
            .one();
        assert!(
            f.summary.contains(
                "The value comes from its systemd unit `postgresql@15-main.service` \
                 (OOMScoreAdjust=-900)."
            ),
            "{}",
            f.summary
        );
        assert_eq!(f.figures["unit_oom_score_adjust"], -900.0);
        let text = f.recommendation.unwrap();
        assert!(
            text.contains("systemctl edit postgresql@15-main.service"),
            "{text}"
        );
        assert!(f.evidence.iter().any(|e| e.path == UNIT && e.line == 2));
        // The unit sets nothing: the -900 came from what started the server.
        let f = collected()
            .write(POSTMASTER, "-900\n")
            .write(UNIT, "OOMScoreAdjust=0\nId=postgresql@15-main.service\n")
            .run("postmaster-oom-unprotected")
            .one();
        assert!(
            f.summary.contains(
                "Its systemd unit `postgresql@15-main.service` has OOMScoreAdjust=0: the \
                 postmaster's -900 was set by what started the server"
            ),
            "{}",
            f.summary
        );
        // Without the unit, the fix names the usual one.
        let text = collected()
            .run("postmaster-oom-unprotected")
            .one()
            .recommendation
            .unwrap();
        assert!(
            text.contains("systemctl edit postgresql@VERSION-CLUSTER"),
            "{text}"
        );
    }

    #[test]
    fn only_the_instances_postmaster_is_judged_and_a_strangers_kill_is_no_oom_at_work_on_it() {
        // Two clusters, collected for main (postmaster 24801); the other cluster's backend was
        // killed at its own cgroup's limit, which does not bound main's.
        let other = "/pgmortem-record/pgmortem-rec-pg15-two-clusters-other";
        let f = Scratch::incident("pg15-two-clusters-other-oom")
            .run("postmaster-oom-unprotected")
            .one();
        assert_eq!(f.severity, Severity::Info);
        assert!(
            f.summary.contains("The postmaster (pid 24801)"),
            "{}",
            f.summary
        );
        assert!(!f.summary.contains("24868"), "{}", f.summary);
        assert!(
            f.evidence.iter().all(|e| !e.path.contains("/24868/")),
            "{:?}",
            f.evidence
        );
        // The same kill at a limit above main's cgroup: the OOM killer at work on it.
        let f = Scratch::incident("pg15-two-clusters-other-oom")
            .edit_all("kernel/dmesg", |t| {
                t.replace(
                    &format!("oom_memcg={other},"),
                    "oom_memcg=/pgmortem-record,",
                )
            })
            .run("postmaster-oom-unprotected")
            .one();
        assert_eq!(f.severity, Severity::Warning);
        assert!(f.summary.contains("OOM killer at work"), "{}", f.summary);
    }

    #[test]
    fn a_bundle_without_processes_is_not_evaluated() {
        let mut scratch = collected();
        for path in scratch.paths("processes/") {
            scratch = scratch.remove(&path);
        }
        assert!(matches!(
            scratch.run("postmaster-oom-unprotected"),
            Outcome::NotEvaluated(_)
        ));
    }
}
