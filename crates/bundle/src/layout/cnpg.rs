//! The layout of a CloudNativePG cluster report (`kubectl cnpg report cluster NAME [--logs]
//! [-o yaml|json]`), as the plugin writes it (cloudnative-pg/cloudnative-pg
//! `internal/cmd/plugin/report/`: cluster_report.go, logs.go, output.go; docs/src/kubectl-plugin.md):
//! a zip whose one top directory is `report_cluster_NAME_YYYYMMDD_hhmmss/`, holding
//! `manifests/` (the Cluster, its pods, jobs, PVCs and the namespace's events, each
//! `NAME.yaml` or `NAME.json`), and with `--logs`, `logs/POD-CONTAINER.jsonl` (each container's
//! previous and current logs, between the plugin's `"====== Beginning of Previous Log ====="`
//! and `"====== End of Previous Log ====="` lines) and `job-logs/POD-CONTAINER.jsonl`. Paths
//! are relative to that top directory.

use crate::kind::SourceKind::{self, *};

/// Path patterns (see `pattern.rs`) and the kind of the files they name, sorted by pattern.
pub(crate) const CNPG: &[(&str, SourceKind)] = &[
    // The pods of the jobs (initdb, join, …): the instance manager's lines, PostgreSQL's when
    // it ran.
    ("job-logs/*.jsonl", PostgresLog),
    // The instances' pods: the instance manager wraps each csvlog row of PostgreSQL in a JSON
    // line (read by the CloudNativePG form of the PostgreSQL reader).
    ("logs/*.jsonl", PostgresLog),
    // The Cluster, its jobs and PVCs, the namespace's events: for a person to read.
    ("manifests/**", Reference),
    ("manifests/cluster-pods.json", PodManifest),
    ("manifests/cluster-pods.yaml", PodManifest),
];

/// Paths whose presence says a bundle is a CloudNativePG cluster report.
pub(crate) const MARKERS: &[&str] = &[
    "job-logs/",
    "logs/",
    "manifests/cluster-jobs.json",
    "manifests/cluster-jobs.yaml",
    "manifests/cluster-pods.json",
    "manifests/cluster-pods.yaml",
    "manifests/cluster.json",
    "manifests/cluster.yaml",
];
