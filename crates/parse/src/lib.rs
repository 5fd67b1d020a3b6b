//! Pure parsers for the files of a PostgreSQL support bundle.
//!
//! Input is always bytes (`&[u8]`) handed in by the caller; output is typed records plus
//! per-source statistics saying how much of the input was understood. This crate never touches
//! the file system, a clock or the environment: whatever context a parser needs (the year of a
//! syslog stamp, the `log_line_prefix` of a PostgreSQL log) comes in through an options value.
//!
//! * [`kernel`]: dmesg / journalctl / syslog line forms, OOM-killer reports and other kernel events.
//! * [`pglog`]: PostgreSQL server logs (stderr with a `log_line_prefix`) and their crash-cycle events.
//! * [`perf`]: `perf script` text in every layout: samples and call chains, folding to collapsed
//!   stacks (as `inferno-collapse-perf`), a profile of where the time went.
//! * [`kube`]: Kubernetes' record of a pod's containers (`kubectl describe pod`, pod manifests
//!   in YAML or JSON): restarts, memory limits, `OOMKilled` terminations.
//! * [`patroni`]: Patroni's log: PostgreSQL found dead, restarted, demoted or promoted by the
//!   high-availability agent, the DCS unreachable.
//! * [`pgbackrest`]: pgBackRest's log files: each command's run, WAL archived or not, errors
//!   with their codes.
//! * [`system`]: small /proc snapshots (uptime, date, btime) used to calibrate clocks.
//! * [`wrap`]: wrappers (container runtimes, journal exports, RFC 5424 relays) taken off the
//!   lines below the PostgreSQL and kernel readers.
//! * [`lines`]: the shared line splitter (memchr, CRLF-aware, lossy UTF-8 per line).
//! * [`paste`]: what pasting a log into a ticket did to its lines (quoting, code-block
//!   indentation, mail wraps, cut marks), learned from the first lines and undone.

mod civil;
pub mod kernel;
pub mod kube;
pub mod lines;
pub mod paste;
pub mod patroni;
pub mod perf;
pub mod pgbackrest;
pub mod pgbouncer;
pub mod pglog;
mod stats;
pub mod system;
pub mod wrap;

pub use stats::{CountedLines, ParseStats};
