//! ## What it finds
//! The kernel sizes dirty page cache by ratio (`vm.dirty_ratio`, `vm.dirty_background_ratio`,
//! percent of the memory it can use for cache; `vm.dirty_bytes` and `vm.dirty_background_bytes`
//! at 0), and on this host the ratio makes the dirty limit large: `dirty_ratio` × available
//! memory (MemAvailable of /proc/meminfo, close to the free and file-cache pages the kernel
//! counts).
//!
//! ## Why it matters
//! Below the background limit the kernel writes dirty pages only when they age (30 s by
//! default); past it the flusher threads start; at the dirty limit every process that writes is
//! made to wait. A limit of gigabytes lets a checkpoint, a COPY or a large sort pile up that
//! much before it reaches the disk, then the flush saturates the device for seconds: fsync at
//! checkpoint end stalls, and every backend's reads queue behind it. Byte limits keep the
//! amount small and constant whatever the RAM.
//!
//! ## What to do
//! Set byte values in /etc/sysctl.d (they replace the ratios): `vm.dirty_background_bytes` a
//! few hundred MB (the finding computes available ÷ 64, rounded down to 64 MiB, between 64 and
//! 512 MiB) and `vm.dirty_bytes` four times that; faster storage tolerates more. PostgreSQL
//! itself asks the kernel to write its background writer's and checkpointer's pages early
//! (`bgwriter_flush_after`, 512 kB, and `checkpoint_flush_after`, 256 kB, by default on Linux):
//! keep them on; the kernel limits govern the rest (backends' writes with
//! `backend_flush_after = 0`, temporary files, other programs).
//!
//! ## Thresholds
//! With `vm.dirty_bytes = 0`: a dirty limit of 2 GiB or more is info
//! ([`INFO_DIRTY_LIMIT_BYTES`]), 8 GiB or more a warning ([`WARN_DIRTY_LIMIT_BYTES`]). A host
//! with `vm.dirty_bytes` set is silent.
//!
//! ## Evidence it needs
//! The vm sysctls and /proc/meminfo. Reads when present: `bgwriter_flush_after`,
//! `checkpoint_flush_after`, `backend_flush_after`.
//!
//! ## Knowledge
//! [zh-low-level]: PostgreSQL writes through the page cache; the kernel's background writeback
//! (`reason=background`) flushes as much as it can and backends end up waiting on it; control it
//! with `dirty_background_bytes`, and PostgreSQL's side with `bgwriter_flush_after` /
//! `checkpoint_flush_after`. [kernel-vm-sysctl] (dirty_ratio, dirty_bytes,
//! dirty_background_*, dirty_expire_centisecs); [pg-config] (the `*_flush_after` settings).

use crate::facts::Facts;
use crate::human::human_bytes;
use crate::report::{Finding, Severity};
use crate::rules::support::settings_evidence;
use crate::rules::{Input, RuleMeta, finding, info, warning};

pub(crate) const META: RuleMeta = RuleMeta {
    id: "dirty-writeback-bytes",
    title: "Dirty page cache is sized by ratio: gigabytes pile up before writeback",
    severities: &[
        warning("for a dirty limit of 8 GiB or more"),
        info("for a dirty limit from 2 GiB to 8 GiB"),
    ],
    needs: &[Input::VmSysctls, Input::Meminfo],
    uses: &[Input::PgSettings],
};

/// A ratio-sized dirty limit from which the rule reports.
pub(crate) const INFO_DIRTY_LIMIT_BYTES: u64 = 2 << 30;
/// A ratio-sized dirty limit from which it is a warning.
pub(crate) const WARN_DIRTY_LIMIT_BYTES: u64 = 8 << 30;
/// The recommended background limit: available memory divided by this…
const BACKGROUND_DIVISOR: u64 = 64;
/// …rounded down to this step, between the floor and the ceiling.
const STEP: u64 = 64 << 20;
const BACKGROUND_FLOOR: u64 = 64 << 20;
const BACKGROUND_CEILING: u64 = 512 << 20;
/// `vm.dirty_bytes` as a multiple of the background limit.
const DIRTY_MULTIPLE: u64 = 4;

/// The byte limits recommended for `available` bytes: (background, dirty).
pub(crate) fn recommended(available: u64) -> (u64, u64) {
    let background =
        (available / BACKGROUND_DIVISOR / STEP * STEP).clamp(BACKGROUND_FLOOR, BACKGROUND_CEILING);
    (background, background * DIRTY_MULTIPLE)
}

pub(crate) fn check(facts: &Facts<'_>) -> Vec<Finding> {
    let vm = &facts.host.vm;
    let (Some(mem), Some(ratio)) = (&facts.host.memory, &vm.dirty_ratio) else {
        return Vec::new();
    };
    let bytes_set = |k: &Option<crate::facts::Known<i64>>| k.as_ref().is_some_and(|k| k.value > 0);
    if bytes_set(&vm.dirty_bytes) {
        return Vec::new();
    }
    let available = mem.available.as_ref().unwrap_or(&mem.ram);
    let of = |percent: i64| available.value.saturating_mul(percent.max(0) as u64) / 100;
    let limit = of(ratio.value);
    if limit < INFO_DIRTY_LIMIT_BYTES {
        return Vec::new();
    }
    let severity = if limit >= WARN_DIRTY_LIMIT_BYTES {
        Severity::Warning
    } else {
        Severity::Info
    };
    let background = match (&vm.dirty_background_bytes, &vm.dirty_background_ratio) {
        (Some(b), _) if b.value > 0 => Some((
            b.value as u64,
            format!("vm.dirty_background_bytes = {}", b.value),
        )),
        (_, Some(r)) => Some((
            of(r.value),
            format!("vm.dirty_background_ratio = {} %", r.value),
        )),
        _ => None,
    };
    let (rec_background, rec_dirty) = recommended(available.value);

    let pg = &facts.host.postgres;
    let flushes: Vec<(&str, u64)> = ["bgwriter_flush_after", "checkpoint_flush_after"]
        .into_iter()
        .filter_map(|n| pg.setting(n).map(|s| (n, s.bytes.unwrap_or(0))))
        .collect();
    let pg_text = if flushes.is_empty() {
        " PostgreSQL's bgwriter_flush_after and checkpoint_flush_after (512 kB and 256 kB by \
         default on Linux) make it ask the kernel to write its own pages early: keep them on."
            .to_owned()
    } else if flushes.iter().any(|(_, b)| *b == 0) {
        format!(
            " {} at 0: PostgreSQL's own writes also wait for the kernel's limits; set them back \
             to their defaults (512kB and 256kB).",
            flushes
                .iter()
                .filter(|(_, b)| *b == 0)
                .map(|(n, _)| *n)
                .collect::<Vec<_>>()
                .join(" and ")
        )
    } else {
        format!(
            " PostgreSQL already asks the kernel to write its background writer's and \
             checkpointer's pages early ({}); the kernel's limits govern the rest: backends' \
             writes, temporary files, other programs.",
            flushes
                .iter()
                .map(|(n, b)| format!("{n} = {}", human_bytes(*b)))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };

    let mut evidence = vec![ratio.evidence(format!("vm.dirty_ratio = {} %", ratio.value))];
    for k in [
        &vm.dirty_background_ratio,
        &vm.dirty_bytes,
        &vm.dirty_background_bytes,
    ]
    .into_iter()
    .flatten()
    {
        evidence.push(k.evidence(format!(
            "{} = {}{}",
            k.key,
            k.value,
            if k.key.contains("ratio") { " %" } else { "" }
        )));
    }
    evidence.push(available.evidence(format!(
        "{} {}",
        available.key,
        human_bytes(available.value)
    )));
    evidence.extend(settings_evidence(
        facts,
        &["bgwriter_flush_after", "checkpoint_flush_after"],
    ));

    let mut f = finding(
        &META,
        severity,
        format!(
            "Up to {} of dirty page cache before writers are throttled (vm.dirty_ratio = {} %)",
            human_bytes(limit),
            ratio.value
        ),
    )
    .summary(format!(
        "vm.dirty_bytes is 0, so the dirty limit is vm.dirty_ratio = {} % of the {} the kernel \
         can use for cache ({} here): {}.{} A checkpoint or a bulk write can pile that much up, \
         then the flush saturates the disk and fsync and reads wait behind it.",
        ratio.value,
        human_bytes(available.value),
        available.key,
        human_bytes(limit),
        background
            .as_ref()
            .map(|(b, how)| format!(
                " Background writeback starts at {} ({how}).",
                human_bytes(*b)
            ))
            .unwrap_or_default()
    ))
    .recommend(format!(
        "Size dirty memory in bytes for this host, in /etc/sysctl.d/99-postgresql.conf: \
         vm.dirty_background_bytes = {rec_background} ({}) and vm.dirty_bytes = {rec_dirty} \
         ({}), then sysctl --system; faster storage can take more.{pg_text}",
        human_bytes(rec_background),
        human_bytes(rec_dirty)
    ))
    .evidence(evidence)
    .figure("dirty_limit_bytes", limit as f64)
    .figure("available_bytes", available.value as f64)
    .figure("recommended_dirty_background_bytes", rec_background as f64)
    .figure("recommended_dirty_bytes", rec_dirty as f64);
    if let Some((b, _)) = background {
        f = f.figure("dirty_background_limit_bytes", b as f64);
    }
    vec![f]
}

#[cfg(test)]
mod tests {
    use super::recommended;
    use crate::Severity;
    use crate::rules::testing::{Outcome, Scratch};

    const MEMINFO: &str = "memory/meminfo.txt";
    const SYSCTL: &str = "memory/sysctl-vm.txt";

    /// The collected bundle (dirty_ratio 20, dirty_background_ratio 10, no byte limits) with
    /// MemAvailable edited to `kb`.
    fn available(kb: u64) -> Scratch {
        Scratch::bundle("formats/bundle/pg15-collected.tar.gz").set_line(
            MEMINFO,
            "MemAvailable:",
            &format!("MemAvailable:   {kb} kB"),
        )
    }

    #[test]
    fn the_collected_host_is_info_with_byte_values_for_it() {
        // 23,599,076 kB available × 20 % = 4.5 GiB.
        let f = Scratch::bundle("formats/bundle/pg15-collected.tar.gz")
            .run("dirty-writeback-bytes")
            .one();
        assert_eq!(f.severity, Severity::Info);
        assert_eq!(
            f.figures["dirty_limit_bytes"],
            (23_599_076u64 * 1024 / 5) as f64
        );
        // 22.5 GiB ÷ 64 = 360 MiB, down to 320 MiB; four times that.
        assert_eq!(
            f.figures["recommended_dirty_background_bytes"],
            (320u64 << 20) as f64
        );
        let advice = f.recommendation.unwrap();
        assert!(
            advice.contains("vm.dirty_background_bytes = 335544320 (320 MiB)"),
            "{advice}"
        );
        assert!(
            advice.contains("vm.dirty_bytes = 1342177280 (1.2 GiB)"),
            "{advice}"
        );
        assert!(advice.contains("bgwriter_flush_after = 512 kB"), "{advice}");
        assert!(
            f.summary.contains("Background writeback starts at 2.3 GiB"),
            "{}",
            f.summary
        );
        assert!(
            f.evidence
                .iter()
                .any(|e| e.key.as_deref() == Some("vm.dirty_ratio"))
        );
    }

    #[test]
    fn the_recorded_captures_are_info() {
        // The recording VM: ratios 20 / 10, no byte limits, about 22 GiB available.
        for name in ["pg15-fork-failure", "pg15-too-many-clients"] {
            let f = Scratch::incident(name).run("dirty-writeback-bytes").one();
            assert_eq!(f.severity, Severity::Info, "{name}");
            let limit = f.figures["dirty_limit_bytes"];
            assert!(
                (4.0..5.0).contains(&(limit / (1u64 << 30) as f64)),
                "{name}: {limit}"
            );
            assert_eq!(
                f.figures["recommended_dirty_background_bytes"],
                (320u64 << 20) as f64,
                "{name}"
            );
        }
    }

    #[test]
    fn info_from_2_gib_and_silent_below() {
        // 10 GiB available × 20 % = 2 GiB exactly, then one kB less.
        let f = available(10_485_760).run("dirty-writeback-bytes").one();
        assert_eq!(f.figures["dirty_limit_bytes"], (2u64 << 30) as f64);
        assert_eq!(f.severity, Severity::Info);
        assert!(available(10_485_759).run("dirty-writeback-bytes").silent());
    }

    #[test]
    fn a_warning_from_8_gib_and_info_below() {
        let f = available(41_943_040).run("dirty-writeback-bytes").one();
        assert_eq!(f.severity, Severity::Warning);
        assert_eq!(
            f.figures["recommended_dirty_background_bytes"],
            (512u64 << 20) as f64
        );
        assert_eq!(
            available(41_943_039)
                .run("dirty-writeback-bytes")
                .one()
                .severity,
            Severity::Info
        );
    }

    #[test]
    fn byte_limits_are_silent() {
        // The sysctl's dirty_bytes line edited to 1 GiB.
        assert!(
            Scratch::bundle("formats/bundle/pg15-collected.tar.gz")
                .set_line(
                    SYSCTL,
                    "/proc/sys/vm/dirty_bytes:",
                    "/proc/sys/vm/dirty_bytes:1073741824"
                )
                .run("dirty-writeback-bytes")
                .silent()
        );
    }

    #[test]
    fn disabled_flushes_are_named() {
        let f = Scratch::bundle("formats/bundle/pg15-collected.tar.gz")
            .set_line(
                "postgres/pg_settings.txt",
                "checkpoint_flush_after|",
                "checkpoint_flush_after|0|8kB|configuration file|/var/lib/postgresql/15/main/postgresql.conf|f",
            )
            .run("dirty-writeback-bytes")
            .one();
        assert!(
            f.recommendation
                .unwrap()
                .contains("checkpoint_flush_after at 0"),
        );
    }

    #[test]
    fn recommended_values_scale_with_memory_within_bounds() {
        assert_eq!(recommended(2 << 30), (64 << 20, 256 << 20));
        assert_eq!(recommended(16 << 30), (256 << 20, 1 << 30));
        assert_eq!(recommended(512 << 30), (512 << 20, 2 << 30));
    }

    #[test]
    fn without_sysctls_it_is_not_evaluated() {
        assert!(matches!(
            Scratch::bundle("formats/bundle/pg15-collected.tar.gz")
                .remove(SYSCTL)
                .run("dirty-writeback-bytes"),
            Outcome::NotEvaluated(_)
        ));
    }
}
