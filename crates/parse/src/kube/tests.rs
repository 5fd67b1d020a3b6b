use jiff::Timestamp;

use super::*;

fn at(s: &str) -> Option<Timestamp> {
    Some(s.parse().unwrap())
}

/// The pasted piece of a real `kubectl describe pod` (cloudnative-pg/cloudnative-pg#7579).
const WILD: &[u8] = include_bytes!(
    "../../../../fixtures/wild/cnpg-oomkilled-dev-shm-describe/kubectl-describe-pod.txt"
);

#[test]
fn a_pasted_fragment_gives_one_unnamed_container() {
    let s = parse_describe(WILD);
    assert_eq!(s.stats.lines, 6);
    assert_eq!(s.stats.unrecognized_lines, 0);
    assert_eq!(s.stats.records, 1);
    let c = &s.containers[0];
    assert_eq!(c.container, None);
    assert_eq!(c.state.as_deref(), Some("running"));
    assert_eq!(c.running_since, at("2025-05-16T11:30:42Z"));
    let t = c.last_terminated.as_ref().unwrap();
    assert!(t.oom_killed());
    assert_eq!(t.exit_code, Some(137));
    assert_eq!(t.killed_by(), Some(9));
    assert_eq!(t.started_at, at("2025-05-16T11:12:59Z"));
    assert_eq!(t.finished_at, None);
    assert_eq!(t.line, 3);
    assert!(c.terminated.is_none());
    assert!(sniff_describe(WILD).is_some());
}

const DESCRIBE: &str = "\
Name:             pg-1
Namespace:        db
Init Containers:
  bootstrap-controller:
    State:          Terminated
      Reason:       Completed
      Exit Code:    0
      Started:      Tue, 24 Nov 2026 05:29:00 +0000
      Finished:     Tue, 24 Nov 2026 05:29:01 +0000
    Ready:          True
    Restart Count:  0
Containers:
  postgres:
    Container ID:  containerd://5e1c
    Command:
      /controller/manager
      instance
    State:          Running
      Started:      Tue, 24 Nov 2026 05:29:16 +0000
    Last State:     Terminated
      Reason:       OOMKilled
      Message:      memory limit reached
      Exit Code:    137
      Signal:       9
      Started:      Tue, 24 Nov 2026 05:29:05 +0000
      Finished:     Tue, 24 Nov 2026 05:29:10 +0000
    Ready:          True
    Restart Count:  1
    Limits:
      cpu:     1
      memory:  1Gi
    Requests:
      cpu:        1
      memory:     512Mi
    Environment:
      PGDATA:  /var/lib/postgresql/data/pgdata
Conditions:
  Type              Status
  Ready             True
Events:
  Type     Reason   Age   From     Message
  ----     ------   ----  ----     -------
  Warning  BackOff  2m    kubelet  Back-off restarting failed container
";

#[test]
fn every_field_of_a_whole_describe() {
    let s = parse_describe(DESCRIBE.as_bytes());
    assert_eq!(s.stats.unrecognized_lines, 0, "{:?}", s.stats);
    assert_eq!(s.containers.len(), 2);
    let init = &s.containers[0];
    assert!(init.init);
    assert_eq!(init.container.as_deref(), Some("bootstrap-controller"));
    let done = init.terminated.as_ref().unwrap();
    assert_eq!(
        (done.reason.as_deref(), done.exit_code),
        (Some("Completed"), Some(0))
    );
    assert_eq!(done.killed_by(), None);
    let pg = &s.containers[1];
    assert!(!pg.init);
    assert_eq!(pg.pod.as_deref(), Some("pg-1"));
    assert_eq!(pg.namespace.as_deref(), Some("db"));
    assert_eq!(pg.container.as_deref(), Some("postgres"));
    assert_eq!(pg.restart_count, Some(1));
    assert_eq!(pg.running_since, at("2026-11-24T05:29:16Z"));
    let limit = pg.memory_limit.as_ref().unwrap();
    assert_eq!(
        (limit.bytes, limit.text.as_str(), limit.line),
        (1 << 30, "1Gi", 31)
    );
    let t = pg.last_terminated.as_ref().unwrap();
    assert_eq!(t.reason.as_deref(), Some("OOMKilled"));
    assert_eq!(t.message.as_deref(), Some("memory limit reached"));
    assert_eq!((t.exit_code, t.signal), (Some(137), Some(9)));
    assert_eq!(t.started_at, at("2026-11-24T05:29:05Z"));
    assert_eq!(t.finished_at, at("2026-11-24T05:29:10Z"));
    assert_eq!(t.line, 20);
}

#[test]
fn missing_and_bad_fields_are_left_empty() {
    let text = "    Last State:     Terminated
      Reason:       OOMKilled
      Exit Code:    lots
      Started:      yesterday
    Restart Count:  -3
    Limits:
      memory:  plenty
stray line at the margin
";
    let s = parse_describe(text.as_bytes());
    assert_eq!(s.stats.unrecognized_lines, 1);
    assert_eq!(s.stats.unrecognized_examples[0].0, 8);
    let c = &s.containers[0];
    let t = c.last_terminated.as_ref().unwrap();
    assert!(t.oom_killed());
    assert_eq!(
        (t.exit_code, t.started_at, t.killed_by()),
        (None, None, None)
    );
    assert_eq!(c.restart_count, None);
    assert_eq!(c.memory_limit, None);
    assert_eq!(parse_describe(b"").containers, []);
    assert!(sniff_describe(b"Name: x\nvalue: 3\n").is_none());
}

#[test]
fn hostile_describes_stay_bounded() {
    // Many container names: kept up to the bound, the rest said so.
    let mut text = String::from("Containers:\n");
    for i in 0..100_010 {
        text.push_str(&format!("  c{i}:\n"));
    }
    let s = parse_describe(text.as_bytes());
    assert_eq!(s.containers.len(), 100_000);
    assert!(s.trouble.is_some());
    // One huge line, invalid bytes.
    let mut bytes = b"    Last State: Terminated\n      Reason: ".to_vec();
    bytes.extend(std::iter::repeat_n(b'x', 1 << 20));
    bytes.extend(b"\n\xff\xfe\n");
    let s = parse_describe(&bytes);
    assert_eq!(s.stats.invalid_utf8_lines, 1);
    assert_eq!(s.containers.len(), 1);
}

const POD_YAML: &str = r#"apiVersion: v1
kind: Pod
metadata:
  name: cluster-example-1
  namespace: default
spec:
  containers:
  - name: postgres
    resources:
      limits:
        cpu: "1"
        memory: 1Gi
      requests:
        memory: 512Mi
  initContainers:
  - name: bootstrap-controller
    resources: {}
status:
  containerStatuses:
  - containerID: containerd://5e1c
    lastState:
      terminated:
        containerID: containerd://11aa
        exitCode: 137
        finishedAt: "2026-11-24T05:29:10Z"
        reason: OOMKilled
        startedAt: "2026-11-24T05:29:05Z"
    name: postgres
    ready: true
    restartCount: 1
    state:
      running:
        startedAt: "2026-11-24T05:29:16Z"
  initContainerStatuses:
  - name: bootstrap-controller
    restartCount: 0
    state:
      terminated:
        exitCode: 0
        reason: Completed
"#;

#[test]
fn every_field_of_a_pod_manifest() {
    let s = parse_manifests(POD_YAML.as_bytes());
    assert_eq!(s.trouble, None);
    assert_eq!(s.stats.records, 2);
    let c = &s.containers[0];
    assert_eq!(c.pod.as_deref(), Some("cluster-example-1"));
    assert_eq!(c.namespace.as_deref(), Some("default"));
    assert_eq!(c.container.as_deref(), Some("postgres"));
    assert_eq!(c.restart_count, Some(1));
    assert_eq!(c.state.as_deref(), Some("running"));
    assert_eq!(c.running_since, at("2026-11-24T05:29:16Z"));
    assert_eq!(c.line, 20);
    let limit = c.memory_limit.as_ref().unwrap();
    assert_eq!((limit.bytes, limit.line), (1 << 30, 12));
    let t = c.last_terminated.as_ref().unwrap();
    assert!(t.oom_killed());
    assert_eq!(t.exit_code, Some(137));
    assert_eq!(t.started_at, at("2026-11-24T05:29:05Z"));
    assert_eq!(t.finished_at, at("2026-11-24T05:29:10Z"));
    assert_eq!(t.line, 23);
    let init = &s.containers[1];
    assert!(init.init);
    assert_eq!(init.memory_limit, None);
    assert_eq!(init.terminated.as_ref().unwrap().exit_code, Some(0));
    assert!(sniff_manifest(POD_YAML.as_bytes()).is_some());
}

#[test]
fn the_json_form_reads_the_same() {
    let json = r#"{
    "apiVersion": "v1",
    "items": [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "hippo-instance1-abcd-0", "namespace": "postgres-operator"},
            "spec": {"containers": [{"name": "database", "resources": {"limits": {"memory": "2G"}}}]},
            "status": {
                "containerStatuses": [
                    {
                        "lastState": {"terminated": {"exitCode": 137, "finishedAt": "2026-11-24T05:29:10Z", "reason": "OOMKilled", "startedAt": null}},
                        "name": "database",
                        "restartCount": 3,
                        "state": {"waiting": {"reason": "CrashLoopBackOff"}}
                    }
                ]
            }
        },
        {"kind": "Event", "metadata": {"name": "e"}}
    ],
    "kind": "List"
}
"#;
    let s = parse_manifests(json.as_bytes());
    assert_eq!(s.trouble, None);
    assert_eq!(s.containers.len(), 1);
    let c = &s.containers[0];
    assert_eq!(c.container.as_deref(), Some("database"));
    assert_eq!(c.memory_limit.as_ref().unwrap().bytes, 2_000_000_000);
    assert_eq!(c.restart_count, Some(3));
    assert_eq!(c.state.as_deref(), Some("waiting"));
    assert_eq!(c.waiting_reason.as_deref(), Some("CrashLoopBackOff"));
    let t = c.last_terminated.as_ref().unwrap();
    assert_eq!((t.exit_code, t.started_at), (Some(137), None));
    assert_eq!(t.finished_at, at("2026-11-24T05:29:10Z"));
    assert_eq!(t.line, 12);
    assert!(sniff_manifest(json.as_bytes()).is_some());
}

#[test]
fn a_typed_list_without_kinds_and_documents_of_other_kinds() {
    // sigs.k8s.io/yaml of a PodList from controller-runtime: no kind anywhere.
    let list = "items:\n- metadata:\n    name: p\n  spec:\n    containers:\n    - name: postgres\n  status:\n    containerStatuses:\n    - name: postgres\n      restartCount: 0\n      state:\n        running:\n          startedAt: \"2026-11-24T05:29:16Z\"\nmetadata:\n  resourceVersion: \"7\"\n";
    let s = parse_manifests(list.as_bytes());
    assert_eq!(s.containers.len(), 1);
    assert_eq!(s.containers[0].pod.as_deref(), Some("p"));
    assert!(sniff_manifest(list.as_bytes()).is_some());
    // A job's pod template is no pod; an empty list reads whole and gives nothing.
    let job = "kind: Job\nspec:\n  template:\n    spec:\n      containers:\n      - name: x\n";
    let s = parse_manifests(job.as_bytes());
    assert_eq!((s.containers.len(), s.stats.unrecognized_lines), (0, 0));
    let s = parse_manifests(b"items: []\nmetadata: {}\n");
    assert_eq!((s.containers.len(), s.stats.unrecognized_lines), (0, 0));
    // Two documents.
    let two = format!("{POD_YAML}---\n{POD_YAML}");
    assert_eq!(parse_manifests(two.as_bytes()).containers.len(), 4);
}

#[test]
fn broken_and_hostile_manifests_say_so() {
    // A YAML error: the documents before it are kept, what follows is counted.
    let broken = format!("{POD_YAML}---\nkind: Pod\nmetadata: [unclosed\n");
    let s = parse_manifests(broken.as_bytes());
    assert_eq!(s.containers.len(), 2);
    assert!(s.trouble.as_deref().unwrap().starts_with("line "));
    assert!(s.stats.unrecognized_lines >= 1);
    // Aliases are not expanded: a billion laughs costs one node per alias.
    let mut laughs = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
    for (i, prev) in ["b", "c", "d", "e", "f", "g", "h", "i"]
        .iter()
        .zip(["a", "b", "c", "d", "e", "f", "g", "h"].iter())
    {
        laughs.push_str(&format!(
            "{i}: &{i} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n"
        ));
    }
    let s = parse_manifests(laughs.as_bytes());
    assert_eq!((s.containers.len(), s.trouble), (0, None));
    // Deep nesting stops at a bound (the parser's own, or ours).
    let deep = "[".repeat(10_000);
    let s = parse_manifests(deep.as_bytes());
    assert!(s.trouble.is_some());
    let deep = format!("{}x{}", "[".repeat(250), "]".repeat(250));
    let s = parse_manifests(deep.as_bytes());
    assert!(
        s.trouble.as_deref().unwrap().contains("nested deeper"),
        "{s:?}"
    );
    // Too big: not read, and said.
    let big = vec![b' '; MAX_MANIFEST_BYTES + 1];
    let s = parse_manifests(&big);
    assert!(s.trouble.as_deref().unwrap().contains("larger than"));
    assert_eq!(s.stats.unrecognized_lines, 1);
    // Bytes that are no YAML at all.
    let s = parse_manifests(b"\x00\x01: [\n");
    assert!(s.trouble.is_some());
}

#[test]
fn quantities() {
    assert_eq!(parse_quantity("1Gi"), Some(1 << 30));
    assert_eq!(parse_quantity("512Mi"), Some(512 << 20));
    assert_eq!(parse_quantity("1.5Gi"), Some(3 << 29));
    assert_eq!(parse_quantity("2G"), Some(2_000_000_000));
    assert_eq!(parse_quantity("128974848"), Some(128_974_848));
    assert_eq!(parse_quantity("129e6"), Some(129_000_000));
    assert_eq!(parse_quantity("1E"), Some(1_000_000_000_000_000_000));
    assert_eq!(parse_quantity("100m"), Some(1));
    assert_eq!(parse_quantity("\"1Gi\""), Some(1 << 30));
    for bad in ["", "Gi", "1Xi", "-1Gi", "1.2.3", "1e999", "16Ei", "."] {
        assert_eq!(parse_quantity(bad), None, "{bad}");
    }
}
