//! Pod manifests: `kubectl get pod NAME -o yaml|json`, a `PodList` or `List` (`kubectl get pods
//! -o yaml`, a CloudNativePG report's `manifests/cluster-pods.yaml`, which sigs.k8s.io/yaml
//! writes with sorted keys and no `kind`), several YAML documents (`---`). Every pod's
//! `status.containerStatuses` and `status.initContainerStatuses` are read, with the memory
//! limit of the container of the same name in `spec.containers` / `spec.initContainers`:
//!
//! ```yaml
//! - containerID: containerd://5e1c…
//!   lastState:
//!     terminated:
//!       exitCode: 137
//!       finishedAt: "2026-11-24T05:29:10Z"
//!       reason: OOMKilled
//!       startedAt: "2026-11-24T05:29:05Z"
//!   name: postgres
//!   restartCount: 1
//! ```
//!
//! Objects of other kinds in a list (events, jobs) are passed over; a file with no pod at all
//! gives no container and no unrecognised line (it was read, it holds none).

use jiff::Timestamp;

use super::tree::{self, Node, Value};
use super::{ContainerStatus, MemoryLimit, PodStatuses, Termination, parse_quantity};
use crate::ParseStats;

/// The largest manifest read (bytes): a pod list of some thousand pods. Past it the file is
/// not read and says so.
pub const MAX_MANIFEST_BYTES: usize = 64 << 20;

/// Reads the pods' containers of a manifest file, YAML or JSON.
pub fn parse_manifests(bytes: &[u8]) -> PodStatuses {
    let mut out = PodStatuses::default();
    out.stats.lines = crate::lines::Lines::new(bytes).count() as u64;
    if bytes.len() > MAX_MANIFEST_BYTES {
        out.trouble = Some(format!(
            "{} bytes: larger than the {} MiB a manifest may be; not read",
            bytes.len(),
            MAX_MANIFEST_BYTES >> 20
        ));
        unread(&mut out.stats, bytes);
        return out;
    }
    let text = String::from_utf8_lossy(bytes);
    let (docs, error) = tree::documents(&text);
    for doc in &docs {
        read_object(doc, &mut out.containers);
    }
    if let Some(e) = error {
        out.trouble = Some(format!("line {}: {}", e.line, e.message));
        if docs.is_empty() {
            unread(&mut out.stats, bytes);
        } else {
            // What follows the error was not read.
            let rest = out.stats.lines.saturating_sub(e.line.saturating_sub(1));
            out.stats.unrecognized_lines += rest.max(1);
            out.stats.unrecognized_examples.push((
                e.line,
                crate::lines::Lines::new(bytes)
                    .nth(e.line.saturating_sub(1) as usize)
                    .map(|l| l.text.chars().take(200).collect())
                    .unwrap_or_default(),
            ));
        }
    }
    out.stats.records = out.containers.len() as u64;
    out
}

/// Every line counted as not understood, the first kept as the example.
fn unread(stats: &mut ParseStats, bytes: &[u8]) {
    let first = crate::lines::Lines::new(bytes)
        .next()
        .map(|l| l.text.into_owned())
        .unwrap_or_default();
    stats.unrecognized(1, &first);
    stats.unrecognized_lines = stats.lines.max(1);
}

/// A pod, or a list whose items are read in turn (nested lists too).
fn read_object(node: &Node, out: &mut Vec<ContainerStatus>) {
    if let Some(items) = node.get("items") {
        for item in items.items() {
            read_object(item, out);
        }
        return;
    }
    let kind = node.get("kind").and_then(Node::str);
    let is_pod = match kind {
        Some(k) => k == "Pod",
        // sigs.k8s.io/yaml of a typed list's items leaves `kind` out: a pod is what has a
        // `spec.containers` and a `status` (a job's containers are under spec.template).
        None => node.at(&["spec", "containers"]).is_some() && node.get("status").is_some(),
    };
    if is_pod {
        read_pod(node, out);
    }
}

fn read_pod(pod: &Node, out: &mut Vec<ContainerStatus>) {
    let name = pod.at(&["metadata", "name"]).and_then(Node::str);
    let namespace = pod.at(&["metadata", "namespace"]).and_then(Node::str);
    for (statuses, specs, init) in [
        ("containerStatuses", "containers", false),
        ("initContainerStatuses", "initContainers", true),
    ] {
        let specs = pod.at(&["spec", specs]).map(Node::items).unwrap_or(&[]);
        let Some(list) = pod.at(&["status", statuses]) else {
            // No status yet (a pod not scheduled): the limits are still worth having.
            for spec in specs {
                let container = spec.get("name").and_then(Node::str);
                let memory_limit = limit_of(spec);
                if memory_limit.is_some() {
                    out.push(ContainerStatus {
                        pod: name.map(str::to_owned),
                        namespace: namespace.map(str::to_owned),
                        container: container.map(str::to_owned),
                        init,
                        memory_limit,
                        line: spec.line,
                        ..ContainerStatus::default()
                    });
                }
            }
            continue;
        };
        for status in list.items() {
            let container = status.get("name").and_then(Node::str);
            let spec = specs
                .iter()
                .find(|s| s.get("name").and_then(Node::str) == container);
            let state = status.get("state");
            let state_name = state.and_then(|s| match &s.value {
                Value::Map(entries) => entries.first().map(|(k, _)| k.clone()),
                _ => None,
            });
            out.push(ContainerStatus {
                pod: name.map(str::to_owned),
                namespace: namespace.map(str::to_owned),
                container: container.map(str::to_owned),
                init,
                restart_count: status
                    .get("restartCount")
                    .and_then(Node::str)
                    .and_then(|s| s.parse().ok()),
                memory_limit: spec.and_then(limit_of),
                running_since: state
                    .and_then(|s| s.at(&["running", "startedAt"]))
                    .and_then(time),
                state: state_name,
                waiting_reason: state
                    .and_then(|s| s.at(&["waiting", "reason"]))
                    .and_then(Node::str)
                    .map(str::to_owned),
                terminated: state.and_then(|s| s.get("terminated")).map(termination),
                last_terminated: status.at(&["lastState", "terminated"]).map(termination),
                line: status.line,
            });
        }
    }
}

fn limit_of(spec: &Node) -> Option<MemoryLimit> {
    let node = spec.at(&["resources", "limits", "memory"])?;
    let text = node.str()?;
    Some(MemoryLimit {
        bytes: parse_quantity(text)?,
        text: text.to_owned(),
        line: node.line,
    })
}

fn time(node: &Node) -> Option<Timestamp> {
    node.str()?.parse().ok()
}

fn termination(node: &Node) -> Termination {
    let text = |key: &str| node.get(key).and_then(Node::str).map(str::to_owned);
    let int = |key: &str| {
        node.get(key)
            .and_then(Node::str)
            .and_then(|s| s.parse().ok())
    };
    Termination {
        reason: text("reason"),
        exit_code: int("exitCode"),
        signal: int("signal"),
        started_at: node.get("startedAt").and_then(time),
        finished_at: node.get("finishedAt").and_then(time),
        message: text("message"),
        line: node.line,
    }
}

/// A Kubernetes manifest holding pods: `kind: Pod` or `PodList` (YAML or JSON), or any object
/// with `containerStatuses` and `restartCount` (a typed list written without its kinds).
pub fn sniff_manifest(head: &[u8]) -> Option<f32> {
    let text = String::from_utf8_lossy(&head[..head.len().min(64 << 10)]);
    let has = |s: &str| text.contains(s);
    let kind_pod = has("kind: Pod\n")
        || has("kind: PodList\n")
        || has("\"kind\": \"Pod\"")
        || has("\"kind\": \"PodList\"")
        || has("\"kind\":\"Pod\"");
    let api = has("apiVersion:") || has("\"apiVersion\"");
    let statuses = has("containerStatuses") || has("containers:") || has("\"containers\"");
    let status_keys = has("containerStatuses") && has("restartCount");
    ((api && kind_pod && statuses) || status_keys).then_some(0.9)
}
