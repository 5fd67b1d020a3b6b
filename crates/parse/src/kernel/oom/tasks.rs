//! The OOM report's task table, read by the header the kernel actually printed (vendors
//! backport column changes, so the header decides, not the kernel version).
//!
//! Headers seen (after `[ pid ]`):
//! `uid  tgid total_vm      rss cpu oom_adj oom_score_adj name` (≈2.6.36–3.7)
//! `uid  tgid total_vm      rss nr_ptes swapents oom_score_adj name` (≈3.8–4.0)
//! `uid  tgid total_vm      rss nr_ptes nr_pmds swapents oom_score_adj name` (4.1–4.14)
//! `uid  tgid total_vm      rss pgtables_bytes swapents oom_score_adj name` (4.15+)
//! `uid  tgid total_vm      rss rss_anon rss_file rss_shmem pgtables_bytes swapents oom_score_adj name` (≈6.8+)

use super::elements;
use crate::kernel::OomTask;

/// Page size used to turn `nr_ptes`/`nr_pmds` (page counts) into bytes.
const PAGE_SIZE: u64 = 4096;

/// One column of the printed table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Column {
    Uid,
    Tgid,
    TotalVm,
    Rss,
    RssAnon,
    RssFile,
    RssShmem,
    NrPtes,
    NrPmds,
    PgtablesBytes,
    Swapents,
    OomScoreAdj,
    OomAdj,
    Cpu,
    /// A column this parser does not know: its value is skipped.
    Other,
}

/// The columns of a task table, from its header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TaskTable {
    columns: Vec<Column>,
    /// Column names as printed (after `[ pid ]`, without `name`).
    pub(crate) names: Vec<String>,
}

impl TaskTable {
    /// Reads a header:
    /// `[  pid  ]   uid  tgid total_vm      rss pgtables_bytes swapents oom_score_adj name`
    pub(crate) fn from_header(message: &str) -> Option<TaskTable> {
        let rest = elements::task_header(message)?;
        let mut names: Vec<String> = rest.split_ascii_whitespace().map(str::to_owned).collect();
        if names.last().map(String::as_str) != Some("name") {
            return None;
        }
        let columns = names[..names.len() - 1]
            .iter()
            .map(|n| match n.as_str() {
                "uid" => Column::Uid,
                "tgid" => Column::Tgid,
                "total_vm" => Column::TotalVm,
                "rss" => Column::Rss,
                "rss_anon" => Column::RssAnon,
                "rss_file" => Column::RssFile,
                "rss_shmem" => Column::RssShmem,
                "nr_ptes" => Column::NrPtes,
                "nr_pmds" => Column::NrPmds,
                "pgtables_bytes" => Column::PgtablesBytes,
                "swapents" => Column::Swapents,
                "oom_score_adj" => Column::OomScoreAdj,
                "oom_adj" => Column::OomAdj,
                "cpu" => Column::Cpu,
                _ => Column::Other,
            })
            .collect();
        names.pop();
        Some(TaskTable { columns, names })
    }

    /// Reads a row by this table's columns; the name is the rest of the row (spaces kept).
    ///
    /// `[  14643]    26 14643  1089729    60802   712704        0             0 postgres`
    /// `[ 1203]     0  1203    12345      678      12        0          -1000 systemd-udevd`
    pub(crate) fn row(&self, message: &str) -> Option<OomTask> {
        let (pid, mut rest) = elements::task_row(message)?;
        let mut task = OomTask {
            pid,
            ..OomTask::default()
        };
        let mut ptes: Option<u64> = None;
        for column in &self.columns {
            rest = rest.trim_start_matches(' ');
            let end = rest.find(' ').unwrap_or(rest.len());
            let value = elements::signed(&rest[..end])?;
            rest = &rest[end..];
            let unsigned = u64::try_from(value).ok();
            let as_u32 = u32::try_from(value).ok();
            let as_i32 = i32::try_from(value).ok();
            match column {
                Column::Uid => task.uid = as_u32,
                Column::Tgid => task.tgid = as_u32,
                Column::TotalVm => task.total_vm_pages = unsigned,
                Column::Rss => task.rss_pages = unsigned,
                Column::RssAnon => task.rss_anon_pages = unsigned,
                Column::RssFile => task.rss_file_pages = unsigned,
                Column::RssShmem => task.rss_shmem_pages = unsigned,
                Column::NrPtes | Column::NrPmds => {
                    let bytes = unsigned.map(|p| p.saturating_mul(PAGE_SIZE));
                    ptes = Some(ptes.unwrap_or(0).saturating_add(bytes.unwrap_or(0)));
                }
                Column::PgtablesBytes => task.pgtables_bytes = unsigned,
                Column::Swapents => task.swapents = unsigned,
                Column::OomScoreAdj => task.oom_score_adj = as_i32,
                Column::OomAdj => task.oom_adj = as_i32,
                Column::Cpu => task.cpu = as_u32,
                Column::Other => {}
            }
        }
        if task.pgtables_bytes.is_none() {
            task.pgtables_bytes = ptes;
        }
        task.name = rest.strip_prefix(' ')?.trim_start_matches(' ').to_owned();
        Some(task)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(header: &str) -> TaskTable {
        TaskTable::from_header(header).expect(header)
    }

    #[test]
    fn old_table_with_cpu_and_oom_adj() {
        let t = table("[ pid ]   uid  tgid total_vm      rss cpu oom_adj oom_score_adj name");
        let row = t
            .row("[23235]   107 23235   275614   220370   1     -17         -1000 postgres")
            .unwrap();
        assert_eq!(
            (row.pid, row.uid, row.cpu, row.oom_adj, row.oom_score_adj),
            (23235, Some(107), Some(1), Some(-17), Some(-1000))
        );
        assert_eq!(
            (row.rss_pages, row.pgtables_bytes, row.name.as_str()),
            (Some(220370), None, "postgres")
        );
    }

    #[test]
    fn nr_ptes_and_nr_pmds_become_bytes() {
        let t = table("[ pid ]   uid  tgid total_vm      rss nr_ptes swapents oom_score_adj name");
        let row = t
            .row("[  456]    26   456   100000    5000      50        3             0 postgres")
            .unwrap();
        assert_eq!(
            (row.pgtables_bytes, row.swapents),
            (Some(50 * 4096), Some(3))
        );
        let t = table(
            "[ pid ]   uid  tgid total_vm      rss nr_ptes nr_pmds swapents oom_score_adj name",
        );
        let row = t.row("[  456]    26   456   100000    5000      50       4        3          -998 postgres: checkpointer").unwrap();
        assert_eq!(
            (row.pgtables_bytes, row.oom_score_adj),
            (Some(54 * 4096), Some(-998))
        );
        assert_eq!(row.name, "postgres: checkpointer");
        assert_eq!(
            t.names,
            [
                "uid",
                "tgid",
                "total_vm",
                "rss",
                "nr_ptes",
                "nr_pmds",
                "swapents",
                "oom_score_adj"
            ]
        );
    }

    #[test]
    fn pgtables_bytes_and_split_rss() {
        let t = table(
            "[  pid  ]   uid  tgid total_vm      rss pgtables_bytes swapents oom_score_adj name",
        );
        let row = t.row("[2276312]    26 2276312  1089729    60802   712704        0             0 postgres").unwrap();
        assert_eq!(
            (row.pid, row.pgtables_bytes, row.tgid),
            (2276312, Some(712704), Some(2276312))
        );
        let t = table(
            "[  pid  ]   uid  tgid total_vm      rss rss_anon rss_file rss_shmem pgtables_bytes swapents oom_score_adj name",
        );
        let row = t.row("[   9141]    26  9141   270001    63050    62521      529        0   610304        0             0 postgres").unwrap();
        assert_eq!(
            (row.rss_anon_pages, row.rss_file_pages, row.rss_shmem_pages),
            (Some(62521), Some(529), Some(0))
        );
        assert!(
            t.row("[   9141]    26  9141   270001").is_none(),
            "short row"
        );
        assert!(t.row("Node 0 DMA").is_none());
    }
}
