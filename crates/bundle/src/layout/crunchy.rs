//! The layout of a Crunchy Postgres for Kubernetes support export (`kubectl pgo support export
//! CLUSTER`), as the plugin writes it (CrunchyData/postgres-operator-client
//! `internal/cmd/export.go` and `exec.go` at commit db3197cf191f71111010cdcc08c19b2a3d0db07f,
//! 2025-09-19; the `pods/POD/...` paths since 78e0830, 2024-09-10; `describe/` since 683c1e1,
//! 2025-08-25): a `crunchy_k8s_support_export_DATE.tar.gz` whose top directories are the
//! cluster's name, `operator/`, `monitoring/` and `pgadmin/`. Under `CLUSTER/`:
//!
//! * `cli.log`: the plugin writing about its own run (`logs/cli` before 78e0830);
//! * `pgo-cli-version`, `cluster-names`, `current-context`, `server-version`,
//!   `current-namespace.yaml`, `postgrescluster.yaml`, `plugin-list`, `pgupgrade.yaml`,
//!   `patroni-info` (`patronictl list` and the like), `pgbackrest-info`, `system-time`, `events`
//!   (a table of the namespace's events), `nodes/NODE.yaml`, `nodes/list`, `crds/`;
//! * one directory per kind of object, `RESOURCE/NAME.yaml` and `RESOURCE/list`
//!   (`statefulsets`, `pods`, `configmaps`, …): `pods/POD.yaml` is a pod's manifest;
//! * `describe/pods/POD` (`kubectl describe pods POD`), `describe/nodes`,
//!   `describe/postgrescluster`, …;
//! * `pods/POD/containers/CONTAINER.log`: each container's current log, as the API gives it
//!   (no time added): the `database` container's is Patroni's process's standard streams, with
//!   PostgreSQL's lines from before its logging collector starts;
//! * `pods/POD/pgdata/pgNN/log/*` (PostgreSQL's log files, `pgdata/logs/postgres/*` when the
//!   cluster has `spec.instrumentation`), `pods/POD/pgdata/pgNN/*.conf`,
//!   `pods/POD/pgdata/patroni/log/*` (Patroni's log files), `pods/POD/pgdata/pgbackrest/log/*`
//!   (pgBackRest's on the instance), `pods/REPOHOST/pgbackrest/repoN/log/*` (on the repository
//!   host), `pods/POD/postgres-info` (pg_controldata, df, pg_settings as psql prints them);
//! * `processes/POD/CONTAINER`: `ps aux --width 500` in each container.
//!
//! Paths are relative to the archive's root (the cluster's directory is `*`); the operator's and
//! the monitoring pods' files are kept for a person to read.

use crate::kind::SourceKind::{self, *};

/// Path patterns (see `pattern.rs`) and the kind of the files they name, sorted by pattern.
pub(crate) const CRUNCHY: &[(&str, SourceKind)] = &[
    // Everything under the cluster's directory that no other pattern names (manifests of
    // statefulsets, services, configmaps, …, the `list` files, nodes, CRDs): for a person.
    ("*/**", Reference),
    ("*/cli.log", CollectorLog),
    ("*/describe/pods/*", PodDescribe),
    ("*/logs/cli", CollectorLog),
    ("*/pods/*.yaml", PodManifest),
    // The `database` container runs Patroni, which starts PostgreSQL: its log is PostgreSQL's
    // stderr until the logging collector takes over (and Patroni's lines when Patroni logs to
    // its standard streams). The other containers' (pgBackRest's server, the exporter, the
    // init containers): for a person.
    ("*/pods/*/containers/*.log", Reference),
    ("*/pods/*/containers/database.log", PostgresLog),
    ("*/pods/*/pgbackrest/*/log/*", PgbackrestLog),
    ("*/pods/*/pgdata/logs/postgres/*", PostgresLog),
    ("*/pods/*/pgdata/patroni/log/*", PatroniLog),
    ("*/pods/*/pgdata/pg*/log/*", PostgresLog),
    ("*/pods/*/pgdata/pg*/postgresql.conf", PgConf),
    ("*/pods/*/pgdata/pgbackrest/log/*", PgbackrestLog),
    ("*/processes/*/*", ProcessList),
    // The monitoring and operator pods (their logs, manifests and descriptions are not the
    // cluster's: the operator's own pod is no PostgreSQL instance).
    ("monitoring/**", Reference),
    ("monitoring/describe/**", Reference),
    ("operator/**", Reference),
    ("operator/describe/**", Reference),
    ("operator/pods/*.yaml", Reference),
    ("pgadmin/**", Reference),
];

/// Paths whose presence says a bundle is a support export (`*` is the cluster's directory).
pub(crate) const MARKERS: &[&str] = &[
    "*/cli.log",
    "*/cluster-names",
    "*/current-context",
    "*/logs/cli",
    "*/patroni-info",
    "*/pgbackrest-info",
    "*/pgo-cli-version",
    "*/postgrescluster.yaml",
    "*/server-version",
];
