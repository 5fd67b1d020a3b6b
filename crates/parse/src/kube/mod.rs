//! Kubernetes' view of a PostgreSQL pod's containers: how each ended its last run and what it
//! may use. Takes the bytes of `kubectl describe pod` output ([`parse_describe`]) or of pod
//! manifests, one pod or a list, in YAML or JSON (`kubectl get pod -o yaml|json`, the
//! `cluster-pods.yaml` of a CloudNativePG report, the `pods/NAME.yaml` of a Crunchy export:
//! [`parse_manifests`]); yields one [`ContainerStatus`] per container: its restart count, its
//! memory limit (`resources.limits.memory`), since when it runs, and its current and last
//! termination (`reason: OOMKilled`, `exitCode: 137`, `startedAt`, `finishedAt`), each with the
//! line it was read on.
//!
//! A container the kernel's memory-cgroup OOM killer took is `OOMKilled` with exit code 137
//! (128 + SIGKILL): the runtime's record of a kill the kernel log of the node would show, and
//! often all a ticket holds of it.

mod describe;
mod manifest;
mod quantity;
mod tree;

#[cfg(test)]
mod tests;

use jiff::Timestamp;
use serde::Serialize;

use crate::ParseStats;

pub use describe::{parse_describe, sniff_describe};
pub use manifest::{MAX_MANIFEST_BYTES, parse_manifests, sniff_manifest};
pub use quantity::parse_quantity;

/// One container of a pod, as `kubectl describe` or the pod's manifest shows it.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ContainerStatus {
    /// The pod's name (`metadata.name`, `Name:`), when shown.
    pub pod: Option<String>,
    /// The pod's namespace, when shown.
    pub namespace: Option<String>,
    /// The container's name (`postgres`, `database`), when shown (a pasted fragment of
    /// `kubectl describe` may start below it).
    pub container: Option<String>,
    /// An init container (`initContainerStatuses`, `Init Containers:`).
    pub init: bool,
    /// Times the kubelet restarted it (`restartCount`, `Restart Count:`).
    pub restart_count: Option<u64>,
    /// Its memory limit (`resources.limits.memory`, `Limits: memory:`).
    pub memory_limit: Option<MemoryLimit>,
    /// When its current run started (`state.running.startedAt`, `State: Running / Started:`).
    pub running_since: Option<Timestamp>,
    /// Its current state's name (`running`, `waiting`, `terminated`), when shown.
    pub state: Option<String>,
    /// Why it waits (`CrashLoopBackOff`), when it does.
    pub waiting_reason: Option<String>,
    /// How its current run ended, when it is not running (`state.terminated`).
    pub terminated: Option<Termination>,
    /// How its previous run ended (`lastState.terminated`, `Last State: Terminated`).
    pub last_terminated: Option<Termination>,
    /// The line its status (or, in `kubectl describe`, its first state line) starts on.
    pub line: u64,
}

impl ContainerStatus {
    /// Its terminations, the previous run's first.
    pub fn terminations(&self) -> impl Iterator<Item = &Termination> {
        self.last_terminated.iter().chain(self.terminated.iter())
    }
}

/// A container's memory limit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MemoryLimit {
    /// In bytes (a fraction of a byte rounds up, as Kubernetes does).
    pub bytes: u64,
    /// As written (`1Gi`, `512M`, `1073741824`).
    pub text: String,
    /// Its line.
    pub line: u64,
}

/// How a container's run ended.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Termination {
    /// `OOMKilled`, `Error`, `Completed`, `ContainerCannotRun`, … as the runtime gave it.
    pub reason: Option<String>,
    /// The main process's exit code (137 = 128 + 9: killed by SIGKILL).
    pub exit_code: Option<i32>,
    /// The signal the runtime says ended it (`signal`, `Signal:`; seldom set).
    pub signal: Option<i32>,
    /// When that run started.
    pub started_at: Option<Timestamp>,
    /// When it ended (Kubernetes keeps whole seconds).
    pub finished_at: Option<Timestamp>,
    /// The runtime's message, when it gave one.
    pub message: Option<String>,
    /// The line of the termination (its `terminated:` key, or `Last State:` / `State:`).
    pub line: u64,
}

impl Termination {
    /// Ended by the kernel's OOM killer at the container's memory limit (`OOMKilled`).
    pub fn oom_killed(&self) -> bool {
        self.reason.as_deref() == Some("OOMKilled")
    }

    /// The signal that ended it: the one given, else the one an exit code above 128 encodes
    /// (137 → 9).
    pub fn killed_by(&self) -> Option<i32> {
        self.signal.filter(|s| *s > 0).or_else(|| {
            self.exit_code
                .filter(|c| (129..160).contains(c))
                .map(|c| c - 128)
        })
    }
}

/// The containers read from one file, with how much of it was understood.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PodStatuses {
    /// Every container shown, in the file's order.
    pub containers: Vec<ContainerStatus>,
    /// Lines read, containers (records), lines not understood.
    pub stats: ParseStats,
    /// Why the file could not be read as a whole (a YAML error, the node budget), when so.
    pub trouble: Option<String>,
}
