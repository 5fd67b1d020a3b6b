//! User-space OOM killers' lines in a syslog or journal: systemd-oomd (src/oom/oomd-manager.c)
//! and earlyoom (kill.c). Takes each line of those programs (their tag's program name and the
//! message) in order and yields a [`UserspaceOomKill`] per kill, with what the lines before it
//! said (systemd-oomd's candidates and the pids it signalled, earlyoom's limits line) folded in.

use super::events::cut;
use super::{MAX_KILL_DETAILS, UserspaceKiller, UserspaceOomKill};

/// What the lines before a kill said, held until the kill line.
#[derive(Debug, Default, Clone)]
pub(crate) struct KillerLines {
    /// systemd-oomd: `Path:` lines after `Considered N cgroups for killing, top candidates
    /// were:`.
    candidates: Vec<String>,
    /// Whether the lines being read are systemd-oomd's candidate list.
    listing: bool,
    /// systemd-oomd: `oomd attempting to kill N with KILL`.
    pids: Vec<u32>,
    signal: Option<String>,
    /// earlyoom: `low memory! at or below SIGTERM limits: mem 10.00%, swap 10.00%`.
    limits: Option<String>,
}

/// The result of one line.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum KillerLine {
    /// A kill.
    Kill(Box<UserspaceOomKill>),
    /// A line read into what a later kill line will say.
    Held,
}

/// Whether `program` is a user-space OOM killer read here.
pub(crate) fn reads(program: &str) -> bool {
    matches!(program, "systemd-oomd" | "earlyoom")
}

impl KillerLines {
    /// Reads one line of `program` (`systemd-oomd`, `earlyoom`); `None` for the lines that say
    /// nothing about a kill (earlyoom's `mem avail: …`, start-up lines).
    pub(crate) fn feed(&mut self, program: &str, message: &str) -> Option<KillerLine> {
        match program {
            "systemd-oomd" => self.oomd(message),
            "earlyoom" => self.earlyoom(message),
            _ => None,
        }
    }

    fn oomd(&mut self, message: &str) -> Option<KillerLine> {
        let text = message.trim_end();
        if text.starts_with([' ', '\t']) {
            if !self.listing {
                return None;
            }
            if let Some(path) = text.trim_start().strip_prefix("Path: ")
                && self.candidates.len() < MAX_KILL_DETAILS
            {
                self.candidates.push(cut(path, 300).to_owned());
            }
            return Some(KillerLine::Held);
        }
        self.listing = false;
        if text.starts_with("Considered ") && text.ends_with("top candidates were:") {
            self.candidates.clear();
            self.listing = true;
            return Some(KillerLine::Held);
        }
        if let Some(rest) = text.strip_prefix("oomd attempting to kill ") {
            let (pid, signal) = rest.split_once(" with ")?;
            let pid = pid.parse().ok()?;
            if self.pids.len() < MAX_KILL_DETAILS {
                self.pids.push(pid);
            }
            self.signal = Some(cut(signal, 16).to_owned());
            return Some(KillerLine::Held);
        }
        let kill = oomd_kill(text)?;
        Some(KillerLine::Kill(Box::new(UserspaceOomKill {
            pids: std::mem::take(&mut self.pids),
            candidates: std::mem::take(&mut self.candidates),
            signal: self.signal.take(),
            ..kill
        })))
    }

    fn earlyoom(&mut self, message: &str) -> Option<KillerLine> {
        let text = message.trim();
        let lower = text.get(..12).map(str::to_ascii_lowercase);
        if lower.as_deref() == Some("low memory! ") {
            // `low memory! at or below SIGTERM limits: mem 10.00%, swap 10.00%`; earlyoom 1.1's
            // `Low Memory! At or below sigterm limits (mem: 10 %, swap: 10 %)`.
            let limits = text
                .split_once("limits: ")
                .or_else(|| text.split_once("limits ("))
                .map_or(text, |(_, l)| l.trim_end_matches(')'));
            self.limits = Some(cut(limits, 100).to_owned());
            return Some(KillerLine::Held);
        }
        let mut kill = earlyoom_kill(text)?;
        kill.measured = self.limits.take();
        Some(KillerLine::Kill(Box::new(kill)))
    }
}

fn kill(killer: UserspaceKiller, reason: &str, text: &str) -> UserspaceOomKill {
    UserspaceOomKill {
        killer,
        cgroup: None,
        pid: None,
        comm: None,
        uid: None,
        signal: None,
        reason: reason.to_owned(),
        monitored: None,
        measured: None,
        limit: None,
        duration: None,
        rss_mib: None,
        oom_score: None,
        pids: Vec::new(),
        candidates: Vec::new(),
        message: cut(text, 300).to_owned(),
    }
}

/// systemd-oomd's kill lines:
/// * `Killed /system.slice/postgresql.service due to memory pressure for /system.slice being
///   85.03% > 80.00% for > 20s with reclaim activity` (systemd 248–252);
/// * `Marked /system.slice/x.service for killing due to memory pressure for /system.slice being
///   85.03% > 80.00% for > 2s with reclaim activity` (253+);
/// * `Killed /user.slice/… due to swap used (4069851136) / total (4294963200) being more than
///   90.00%` and `Marked … for killing due to swap used (…) / total (…) being more than …%`.
fn oomd_kill(text: &str) -> Option<UserspaceOomKill> {
    let (cgroup, why) = if let Some(rest) = text.strip_prefix("Killed ") {
        rest.split_once(" due to ")?
    } else {
        let rest = text.strip_prefix("Marked ")?;
        rest.split_once(" for killing due to ")?
    };
    if !cgroup.starts_with('/') {
        return None;
    }
    if let Some(rest) = why.strip_prefix("memory pressure for ") {
        let mut k = kill(UserspaceKiller::SystemdOomd, "memory pressure", text);
        k.cgroup = Some(cut(cgroup, 300).to_owned());
        let (monitored, rest) = rest.split_once(" being ").unwrap_or((rest, ""));
        k.monitored = Some(cut(monitored, 300).to_owned());
        if let Some((measured, rest)) = rest.split_once(" > ") {
            k.measured = Some(cut(measured, 32).to_owned());
            let (limit, rest) = rest.split_once(" for > ").unwrap_or((rest, ""));
            k.limit = Some(cut(limit, 32).to_owned());
            let duration = rest.split(' ').next().filter(|d| !d.is_empty());
            k.duration = duration.map(|d| cut(d, 32).to_owned());
        }
        return Some(k);
    }
    if let Some(rest) = why.strip_prefix("swap used ") {
        let mut k = kill(UserspaceKiller::SystemdOomd, "swap used", text);
        k.cgroup = Some(cut(cgroup, 300).to_owned());
        let (measured, limit) = rest.split_once(" being more than ").unwrap_or((rest, ""));
        k.measured = Some(cut(measured, 100).to_owned());
        k.limit = (!limit.is_empty()).then(|| cut(limit.trim(), 32).to_owned());
        return Some(k);
    }
    None
}

/// earlyoom's kill lines, by version:
/// * `sending SIGTERM to process 1024668 uid 1000 "Web Content": oom_score 823, VmRSS 79 MiB,
///   cmdline "…"` (1.7+; 1.8 adds `oom_score_adj N, `);
/// * `sending SIGTERM to process 696 uid 1001 "ipfs": badness 757, VmRSS 637 MiB` (1.4–1.6);
/// * `sending SIGTERM to process 12006 "python3": badness 209, VmRSS 2891 MiB` (1.3);
/// * `killing process 27541 "bash" with signal 15: badness 550, VmRSS 7609 MiB` (1.2);
/// * `Killing process 'bash' with signal 15, pid: 5874, badness: 538, VmRSS: 3160 MiB` (1.1).
fn earlyoom_kill(text: &str) -> Option<UserspaceOomKill> {
    let mut k = kill(UserspaceKiller::Earlyoom, "low memory", text);
    let fields = if let Some(rest) = text.strip_prefix("sending ") {
        let (signal, rest) = rest.split_once(" to process ")?;
        let (pid, rest) = rest.split_once(' ')?;
        k.pid = Some(pid.parse().ok()?);
        k.signal = Some(cut(signal, 32).to_owned());
        let rest = match rest.strip_prefix("uid ") {
            Some(rest) => {
                let (uid, rest) = rest.split_once(' ')?;
                k.uid = uid.parse().ok();
                rest
            }
            None => rest,
        };
        let name = rest.strip_prefix('"')?;
        let (name, fields) = name.rsplit_once("\": ")?;
        k.comm = Some(cut(name, 64).to_owned());
        fields
    } else if let Some(rest) = text.strip_prefix("killing process ") {
        let (pid, rest) = rest.split_once(" \"")?;
        k.pid = Some(pid.parse().ok()?);
        let (name, rest) = rest.rsplit_once("\" with signal ")?;
        k.comm = Some(cut(name, 64).to_owned());
        let (signal, fields) = rest.split_once(": ")?;
        k.signal = signal_name(signal);
        fields
    } else if let Some(rest) = text.strip_prefix("Killing process '") {
        let (name, rest) = rest.rsplit_once("' with signal ")?;
        k.comm = Some(cut(name, 64).to_owned());
        let (signal, fields) = rest.split_once(", ")?;
        k.signal = signal_name(signal);
        fields
    } else {
        return None;
    };
    for field in fields.split(", ") {
        let (key, value) = field
            .split_once(": ")
            .or_else(|| field.split_once(' '))
            .unwrap_or((field, ""));
        match key {
            "cmdline" => break,
            "oom_score" | "badness" => k.oom_score = value.trim().parse().ok(),
            "VmRSS" => k.rss_mib = value.trim().trim_end_matches(" MiB").parse().ok(),
            "pid" if k.pid.is_none() => k.pid = value.trim().parse().ok(),
            _ => {}
        }
    }
    k.pid?;
    Some(k)
}

/// `15` → `SIGTERM`, `9` → `SIGKILL`.
fn signal_name(number: &str) -> Option<String> {
    match number.trim() {
        "15" => Some("SIGTERM".to_owned()),
        "9" => Some("SIGKILL".to_owned()),
        "" => None,
        other => Some(cut(other, 16).to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn killed(lines: &mut KillerLines, program: &str, line: &str) -> UserspaceOomKill {
        match lines.feed(program, line) {
            Some(KillerLine::Kill(k)) => *k,
            other => panic!("{line}: {other:?}"),
        }
    }

    #[test]
    fn systemd_oomd_kills() {
        // systemd/systemd#42321 (TEST-55-OOMD journal, systemd 258).
        let mut lines = KillerLines::default();
        for line in [
            "Considered 19 cgroups for killing, top candidates were:",
            "        Path: /system.slice/systemd-journald.service",
            "                Current Memory Usage: 55.5M",
            "oomd attempting to kill 407 with KILL",
        ] {
            assert_eq!(
                lines.feed("systemd-oomd", line),
                Some(KillerLine::Held),
                "{line}"
            );
        }
        let k = killed(
            &mut lines,
            "systemd-oomd",
            "Marked /system.slice/systemd-journald.service for killing due to memory pressure for /system.slice being 85.03% > 80.00% for > 2s with reclaim activity",
        );
        assert_eq!(
            (
                k.killer,
                k.cgroup.as_deref(),
                k.reason.as_str(),
                k.monitored.as_deref()
            ),
            (
                UserspaceKiller::SystemdOomd,
                Some("/system.slice/systemd-journald.service"),
                "memory pressure",
                Some("/system.slice")
            )
        );
        assert_eq!(
            (
                k.measured.as_deref(),
                k.limit.as_deref(),
                k.duration.as_deref()
            ),
            (Some("85.03%"), Some("80.00%"), Some("2s"))
        );
        assert_eq!(
            (k.pids.as_slice(), k.signal.as_deref()),
            (&[407][..], Some("KILL"))
        );
        assert_eq!(k.candidates, ["/system.slice/systemd-journald.service"]);
        // systemd/systemd#23606 (systemd 249): the older wording; nothing held before it.
        let k = killed(
            &mut lines,
            "systemd-oomd",
            "Killed /user.slice/user-1001.slice/user@1001.service/app.slice/app-org.gnome.Terminal.slice/vte-spawn-dbb4a75e-031f-480d-924b-5de5af7579d2.scope due to memory pressure for /user.slice/user-1001.slice/user@1001.service being 51.07% > 50.00% for > 20s with reclaim activity",
        );
        assert_eq!(
            (k.measured.as_deref(), k.duration.as_deref(), k.pids.len()),
            (Some("51.07%"), Some("20s"), 0)
        );
        let k = killed(
            &mut lines,
            "systemd-oomd",
            "Killed /user.slice/user-1000.slice/user@1000.service/app.slice/x.scope due to swap used (4069851136) / total (4294963200) being more than 90.00%",
        );
        assert_eq!(
            (k.reason.as_str(), k.limit.as_deref()),
            ("swap used", Some("90.00%"))
        );
        // Lines that are no kill.
        for line in [
            "Memory pressure for /system.slice is 85.03% > 80.00% for > 2s with reclaim activity",
            "Failed to kill any cgroup(s) under /x based on pressure: No such device",
            "Killed nothing due to x",
            "        Path: /not/listing",
        ] {
            assert_eq!(lines.feed("systemd-oomd", line), None, "{line}");
        }
    }

    #[test]
    fn earlyoom_kills_of_every_version() {
        let mut lines = KillerLines::default();
        assert_eq!(
            lines.feed(
                "earlyoom",
                "low memory! at or below SIGTERM limits: mem 10.00%, swap 10.00%"
            ),
            Some(KillerLine::Held)
        );
        // rfjakob/earlyoom#344 (1.8).
        let k = killed(
            &mut lines,
            "earlyoom",
            "sending SIGTERM to process 1024668 uid 1000 \"Web Content\": oom_score 823, VmRSS 79 MiB, cmdline \"/usr/lib/firefox/firefox -contentproc -isForBrowser -prefsHandle 0:44331\"",
        );
        assert_eq!(
            (
                k.pid,
                k.uid,
                k.comm.as_deref(),
                k.signal.as_deref(),
                k.oom_score,
                k.rss_mib
            ),
            (
                Some(1024668),
                Some(1000),
                Some("Web Content"),
                Some("SIGTERM"),
                Some(823),
                Some(79)
            )
        );
        assert_eq!(k.measured.as_deref(), Some("mem 10.00%, swap 10.00%"));
        // rfjakob/earlyoom#373 (1.9: oom_score_adj).
        let k = killed(
            &mut lines,
            "earlyoom",
            "sending SIGTERM to process 997 uid 1000 \"my-process-name\": oom_score 1146, oom_score_adj 0, VmRSS 23007 MiB, cmdline \"my-process-name\"",
        );
        assert_eq!(
            (k.oom_score, k.rss_mib, k.measured),
            (Some(1146), Some(23007), None)
        );
        // rfjakob/earlyoom#205 (1.6: badness).
        let k = killed(
            &mut lines,
            "earlyoom",
            "sending SIGTERM to process 696 uid 1001 \"ipfs\": badness 757, VmRSS 637 MiB",
        );
        assert_eq!(
            (k.pid, k.oom_score, k.rss_mib),
            (Some(696), Some(757), Some(637))
        );
        // rfjakob/earlyoom#131 (1.3: no uid).
        let k = killed(
            &mut lines,
            "earlyoom",
            "sending SIGKILL to process 12006 \"python3\": badness 209, VmRSS 2891 MiB",
        );
        assert_eq!((k.uid, k.signal.as_deref()), (None, Some("SIGKILL")));
        // rfjakob/earlyoom#121 (1.2).
        let k = killed(
            &mut lines,
            "earlyoom",
            "killing process 27541 \"bash\" with signal 15: badness 550, VmRSS 7609 MiB",
        );
        assert_eq!(
            (k.pid, k.signal.as_deref(), k.rss_mib),
            (Some(27541), Some("SIGTERM"), Some(7609))
        );
        // rfjakob/earlyoom#88 (1.1).
        let k = killed(
            &mut lines,
            "earlyoom",
            "Killing process 'bash' with signal 15, pid: 5874, badness: 538, VmRSS: 3160 MiB",
        );
        assert_eq!(
            (k.pid, k.comm.as_deref(), k.oom_score),
            (Some(5874), Some("bash"), Some(538))
        );
        // A name holding `": ` is cut at the last one.
        let k = killed(
            &mut lines,
            "earlyoom",
            "sending SIGTERM to process 1 uid 0 \"a\": b\": oom_score 1, VmRSS 2 MiB",
        );
        assert_eq!(k.comm.as_deref(), Some("a\": b"));
        for line in [
            "mem avail:  9700 of 13855 MiB (70 %), swap free:    0 of    0 MiB ( 0 %)",
            "process 27541 exited after 1.9 seconds",
            "sending SIGTERM to process x uid 1 \"a\": badness 1",
            "sending SIGTERM to process 1 uid 1 a: badness 1",
            "killing process",
            "",
        ] {
            assert_eq!(lines.feed("earlyoom", line), None, "{line}");
        }
    }

    #[test]
    fn held_lines_stay_bounded() {
        let mut lines = KillerLines::default();
        lines.feed(
            "systemd-oomd",
            "Considered 9999 cgroups for killing, top candidates were:",
        );
        for i in 0..1000 {
            lines.feed("systemd-oomd", &format!("        Path: /x/{i}"));
        }
        for i in 0..1000 {
            lines.feed(
                "systemd-oomd",
                &format!("oomd attempting to kill {i} with KILL"),
            );
        }
        let giant = format!(
            "Marked /{} for killing due to memory pressure for /s being 1% > 0% for > 1s",
            "é".repeat(5000)
        );
        let k = killed(&mut lines, "systemd-oomd", &giant);
        assert_eq!(
            (k.candidates.len(), k.pids.len()),
            (MAX_KILL_DETAILS, MAX_KILL_DETAILS)
        );
        assert!(k.message.len() <= 300 && k.cgroup.unwrap().len() <= 300);
    }
}
