use super::*;

use pgmortem_parse::pglog::{LogLinePrefix, detect_log_prefix};

fn fixture(path: &str) -> String {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures")
        .join(path);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The lines of `text` redacted as a log with the prefix its first lines show.
fn redact_log(r: &mut Redactor, text: &str) -> Vec<String> {
    let prefix = detect_log_prefix(text.lines());
    let mut state = LineState::for_log(prefix);
    text.lines().map(|l| r.redact_line(l, &mut state)).collect()
}

fn line(r: &mut Redactor, prefix: &str, text: &str) -> String {
    let mut state = LineState::for_log(LogLinePrefix::compile(prefix).unwrap());
    r.redact_line(text, &mut state)
}

/// The quoted strings and standalone numbers of `sql` that are not tokens.
fn literals_left(sql: &str) -> Vec<String> {
    crate::sql::literals(sql)
        .into_iter()
        .map(|l| match l {
            crate::sql::Literal::String(s, e) | crate::sql::Literal::Number(s, e) => &sql[s..e],
        })
        .filter(|l| !crate::is_token(l))
        .map(str::to_owned)
        .collect()
}

#[test]
fn every_localized_log_keeps_no_literal_after_its_labels() {
    // The recorded logs of PostgreSQL 15 in each language of its catalogs: the statements
    // after the translated STATEMENT label, the query after the translated `Failed process was
    // running:`, each redacted.
    let failed = catalog_translations("Failed process was running: %s");
    for lang in ["de", "es", "fr", "ja", "ru", "zh_CN"] {
        let text = fixture(&format!("formats/pglog/pg15-{lang}-sigkill.log"));
        let mut r = Redactor::new();
        let out = redact_log(&mut r, &text);
        let prefix = detect_log_prefix(text.lines());
        let (mut statements, mut crashes) = (0, 0);
        for (before, after) in text.lines().zip(&out) {
            let Some(parts) = prefix.line_parts(before) else {
                continue;
            };
            let message = &after[after.len() - (before.len() - parts.message_start)..];
            match parts.label {
                LineLabel::Statement => {
                    statements += 1;
                    assert!(literals_left(message).is_empty(), "{lang}: {after}");
                    assert_ne!(before, after, "{lang}");
                }
                LineLabel::Detail => {
                    // The text before the query: `Der fehlgeschlagene Prozess führte aus: `,
                    // `失败进程:` (whose translation has the query in its middle).
                    let markers = failed
                        .iter()
                        .filter(|(l, _)| *l == lang)
                        .filter_map(|(_, t)| t.split("%s").next());
                    for marker in markers {
                        if let Some((_, q)) = after.split_once(marker) {
                            crashes += 1;
                            assert!(literals_left(q).is_empty(), "{lang}: {after}");
                        }
                    }
                }
                _ => {}
            }
        }
        assert!(statements >= 2, "{lang}: {statements} statements");
        assert!(crashes >= 1, "{lang}: no crash line");
        assert!(r.counts()[&Kind::QueryLiteral].occurrences > 0, "{lang}");
    }
}

#[test]
fn connection_lines_in_every_language() {
    // Each language's real `connection authorized` line, its `postgres` names changed to a
    // role and a database that are not built in.
    for lang in ["de", "es", "fr", "ja", "ru", "zh_CN"] {
        let text = fixture(&format!("formats/pglog/pg15-{lang}-sigkill.log"));
        // (PostgreSQL 15's zh_CN catalog leaves this message in English.)
        let mut authorized = catalog_translations("connection authorized: user=%s");
        authorized.push(("en", "connection authorized: user=%s"));
        let found = text
            .lines()
            .find(|l| {
                authorized
                    .iter()
                    .any(|(_, t)| l.contains(t.trim_end_matches("%s")))
            })
            .unwrap_or_else(|| panic!("{lang}: no connection line"));
        let edited = found
            .replacen("postgres@postgres", "alice@shop", 1)
            .replacen("=postgres ", "=alice ", 1)
            .replacen(" postgres application_name", " shop application_name", 1)
            .replacen("=postgres ", "=shop ", 1);
        let mut r = Redactor::new();
        let out = line(&mut r, "%m [%p] %q%u@%d ", &edited);
        assert!(!out.contains("alice"), "{lang}: {out}");
        assert!(!out.contains("shop"), "{lang}: {out}");
        assert!(out.contains("user_1@db_1"), "{lang}: {out}");
        // pgbench, PostgreSQL's own program, is no name to hide.
        assert!(out.contains("=pgbench"), "{lang}: {out}");
    }
}

#[test]
fn translated_quoted_names() {
    let mut r = Redactor::new();
    let de = catalog_translations("password authentication failed for user \"%s\"")
        .into_iter()
        .find(|(l, t)| *l == "de" && t.contains('»'))
        .unwrap()
        .1
        .replace("%s", "alice");
    let out = line(
        &mut r,
        "%m [%p] ",
        &format!("2026-11-21 18:08:13.840 UTC [1235] FATAL:  {de}"),
    );
    assert!(out.contains("»user_1«"), "{out}");
    let fr = catalog_translations("database \"%s\" does not exist")
        .into_iter()
        .find(|(l, _)| *l == "fr")
        .unwrap()
        .1
        .replace("%s", "shop");
    let out = line(
        &mut r,
        "%m [%p] ",
        &format!("2026-11-21 18:08:13.840 UTC [1235] FATAL:  {fr}"),
    );
    assert!(!out.contains("shop") && out.contains("db_1"), "{out}");
}

#[test]
fn names_of_english_messages() {
    let mut r = Redactor::new();
    let p = "%m [%p] ";
    let at = "2026-11-24 05:29:10.800 UTC [24032] ";
    let cases = [
        (
            "FATAL:  no pg_hba.conf entry for host \"10.1.2.3\", user \"alice\", database \"shop\", no encryption",
            "FATAL:  no pg_hba.conf entry for host \"192.0.2.1\", user \"user_1\", database \"db_1\", no encryption",
        ),
        (
            "FATAL:  role \"bob\" is not permitted to log in",
            "FATAL:  role \"user_2\" is not permitted to log in",
        ),
        (
            "LOG:  automatic vacuum of table \"shop.public.orders\": index scans: 0",
            "LOG:  automatic vacuum of table \"db_1.public.orders\": index scans: 0",
        ),
        (
            "LOG:  disconnection: session time: 0:00:00.012 user=alice database=shop host=app7.example port=40112",
            "LOG:  disconnection: session time: 0:00:00.012 user=user_1 database=db_1 host=host-1 port=40112",
        ),
        (
            "ERROR:  invalid input syntax for type integer: \"thirty\"",
            "ERROR:  invalid input syntax for type integer: \"lit_1\"",
        ),
        (
            "CONTEXT:  unnamed portal with parameters: $1 = 'x@y.example', $2 = '7'",
            "CONTEXT:  unnamed portal with parameters: $1 = 'lit_2', $2 = 'lit_3'",
        ),
    ];
    for (given, want) in cases {
        assert_eq!(
            line(&mut r, p, &format!("{at}{given}")),
            format!("{at}{want}")
        );
    }
}

#[test]
fn the_common_names_bundle_s_log() {
    // The recorded log of a server whose role is `test`, database `data`, application
    // `main` (fixtures/record/incident-pg15-sigkill-common-names.sh): every kind of query text
    // and name it prints.
    let text = read_server_log("incidents/pg15-sigkill-common-names");
    let mut r = Redactor::new();
    let out = redact_log(&mut r, &text).join("\n");
    for gone in [
        "test@data main",
        "user=test",
        "database=data",
        "application_name=main",
        "role \"main\"",
        "database \"log\"",
        "CREATE ROLE test",
        "alice@example.com",
        "bob@example.com",
        "carol",
        "thirty",
        "dave@example.com",
        "erin@example.com",
        "frank%",
        "grace@example.com",
        "100000000",
        "= 30",
        "= 64",
    ] {
        assert!(!out.contains(gone), "{gone:?} is still in the log");
    }
    // What is kept: the plans' shapes and figures, the parameters' places, the contexts' names.
    for kept in [
        "Index Scan using people_email_key on people  (cost=0.15..8.17 rows=1 width=4)",
        "\"Node Type\": \"Seq Scan\",",
        "\"Startup Cost\": 0.00,",
        "level: 2; CachedPlanSource: 4096 total in 3 blocks;",
        "PL/pgSQL function inline_code_block line 1 at PERFORM",
        "WHERE id = $1 AND age > lit_",
        "server process (PID ",
        "Failed process was running: SELECT sum(g) FROM generate_series(lit_",
    ] {
        assert!(out.contains(kept), "{kept:?} is not in the log");
    }
    // Every line keeps its prefix's shape: a token stands where the name stood.
    let tokens = out
        .lines()
        .filter(|l| l.contains("user_1@db_1 app_1 "))
        .count();
    let names = text
        .lines()
        .filter(|l| l.contains("test@data main "))
        .count();
    assert_eq!(tokens, names);
}

/// The server log of the collector's bundle in the incident directory `dir`.
fn read_server_log(dir: &str) -> String {
    let d = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures")
        .join(dir);
    let archive = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".tar.gz"))
        .unwrap();
    let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(
        std::fs::File::open(archive).unwrap(),
    ));
    for entry in tar.entries().unwrap() {
        let mut entry = entry.unwrap();
        if entry.path().unwrap().ends_with("postgres/server.log") {
            let mut text = String::new();
            std::io::Read::read_to_string(&mut entry, &mut text).unwrap();
            return text;
        }
    }
    panic!("no server.log in {dir}");
}

#[test]
fn plans_keep_their_shape() {
    let mut r = Redactor::new();
    let mut state = LineState::default();
    let mut go = |l: &str| r.redact_line(l, &mut state);
    go("2026-12-07 06:17:54.645 UTC [13615] LOG:  duration: 0.017 ms  plan:");
    assert_eq!(
        go("\tQuery Text: SELECT id FROM people WHERE email = 'erin@example.com'"),
        "\tQuery Text: SELECT id FROM people WHERE email = 'lit_1'"
    );
    // A query text of several lines goes on until the first node.
    assert_eq!(go("\t  AND age > 30;"), "\t  AND age > lit_2;");
    assert_eq!(
        go("\tIndex Scan using people_email_key on people  (cost=0.15..8.17 rows=1 width=4)"),
        "\tIndex Scan using people_email_key on people  (cost=0.15..8.17 rows=1 width=4)"
    );
    assert_eq!(
        go("\t  Index Cond: (email = 'erin@example.com'::text)"),
        "\t  Index Cond: (email = 'lit_1'::text)"
    );
    assert_eq!(
        go("\t  Rows Removed by Filter: 12"),
        "\t  Rows Removed by Filter: 12"
    );
    assert_eq!(
        go("\t        \"Filter\": \"((email ~~ 'frank%'::text) OR (age = 64))\""),
        "\t        \"Filter\": \"((email ~~ 'lit_3'::text) OR (age = lit_4))\""
    );
    assert_eq!(
        go("\t        \"Plan Rows\": 12,"),
        "\t        \"Plan Rows\": 12,"
    );
}

#[test]
fn a_closed_statement_does_not_go_on() {
    let mut r = Redactor::new();
    let mut state = LineState::default();
    r.redact_line(
        "2026-12-07 06:17:54.564 UTC [13610] CONTEXT:  SQL statement \"SELECT 1 / 0 FROM people\"",
        &mut state,
    );
    assert_eq!(
        r.redact_line(
            "\tPL/pgSQL function inline_code_block line 1 at PERFORM",
            &mut state
        ),
        "\tPL/pgSQL function inline_code_block line 1 at PERFORM"
    );
    r.redact_line(
        "2026-12-07 06:17:54.564 UTC [13610] CONTEXT:  SQL statement \"SELECT 1 / 0",
        &mut state,
    );
    assert_eq!(
        r.redact_line("\tFROM people WHERE id = 7\"", &mut state),
        "\tFROM people WHERE id = lit_3\""
    );
}

#[test]
fn every_named_message_is_in_the_catalog_table_or_classified() {
    let named = pgmortem_parse::pglog::named_messages();
    for (msgid, args) in NAMED_ARGS {
        let translated = !catalog_translations(msgid).is_empty();
        assert!(
            translated || named.contains(msgid),
            "{msgid:?} has no translations in the catalog"
        );
        let conversions = msgid.matches('%').count() - 2 * msgid.matches("%%").count();
        assert_eq!(conversions, args.len(), "{msgid:?}");
    }
    for msgid in named {
        assert!(
            NAMED_ARGS.iter().any(|(m, _)| *m == msgid) || msgid.starts_with("execute"),
            "{msgid:?} of the catalog is not described"
        );
    }
}
