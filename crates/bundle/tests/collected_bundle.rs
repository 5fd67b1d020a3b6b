//! Every collected bundle in fixtures/formats/bundle, opened: what each file was recognised as,
//! how, and how much of it the parsers understood. Adding a bundle there adds a snapshot.

use pgmortem_bundle::{OpenOptions, open, snapshot_stats};
use serde::Serialize;

#[derive(Serialize)]
struct Row<'a> {
    path: &'a str,
    kind: &'static str,
    recognized_by: pgmortem_bundle::RecognizedBy,
    lines: Option<u64>,
    records: Option<u64>,
    unrecognized_lines: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<&'a str>,
}

#[test]
fn collected_bundles() {
    insta::glob!(
        "../../../fixtures/formats/bundle",
        "pg15-*.tar.{gz,xz,bz2}",
        |path| {
            let bundle = open(path, &OpenOptions::default()).unwrap();
            // Only what the collector could not collect (tools missing, not root) is listed.
            for s in &bundle.skipped {
                assert!(s.reason.starts_with("not in the bundle: `"), "{s:?}");
            }
            let manifest = bundle.manifest.as_ref().expect("manifest.json");
            let rows: Vec<_> = bundle
                .sources
                .iter()
                .map(|s| {
                    let stats = snapshot_stats(s.kind, &s.bytes);
                    if let Some(st) = &stats {
                        assert_eq!(
                            st.unrecognized_lines, 0,
                            "{}: {:?}",
                            s.path, st.unrecognized_examples
                        );
                    }
                    Row {
                        path: &s.path,
                        kind: s.kind.as_str(),
                        recognized_by: s.recognized_by,
                        lines: stats.as_ref().map(|s| s.lines),
                        records: stats.as_ref().map(|s| s.records),
                        unrecognized_lines: stats.as_ref().map(|s| s.unrecognized_lines),
                        note: s.note.as_deref(),
                    }
                })
                .collect();
            // Content sniffing agrees with the manifest on every snapshot the manifest names.
            for s in &bundle.sources {
                let declared = manifest.file(&s.path).map(|f| f.kind.as_str());
                if let Some(kind) = declared
                    .filter(|k| *k != "unknown" && *k != "reference" && *k != "cgroup_value")
                {
                    let sniffed = pgmortem_bundle::recognize(&s.bytes[..s.bytes.len().min(16384)]);
                    if sniffed != pgmortem_bundle::SourceKind::Unknown {
                        assert_eq!(sniffed.as_str(), kind, "{}", s.path);
                    }
                }
            }
            let statuses: Vec<_> = manifest
                .files
                .iter()
                .map(|f| (f.path.as_str(), f.status, f.note.as_str()))
                .filter(|(_, status, _)| *status != Some(0))
                .collect();
            insta::assert_json_snapshot!((rows, statuses, &bundle.skipped));
        }
    );
}
