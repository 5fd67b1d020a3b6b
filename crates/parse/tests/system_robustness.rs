//! Every system parser on cut, corrupted and hostile input: never a panic, and a cut file
//! never yields more than the whole one.

use std::path::Path;

use pgmortem_parse::system;

fn all_parsers(bytes: &[u8]) -> usize {
    let mut n = 0;
    n += system::parse_meminfo(bytes).fields.len();
    n += system::parse_flat_keyed(bytes).fields.len();
    n += system::parse_status(bytes).fields.len();
    n += system::parse_smaps_rollup(bytes).fields.len();
    n += system::parse_sysctl(bytes).entries.len();
    n += system::parse_choice(bytes).choices.len();
    n += system::parse_titles(bytes).0.len();
    n += system::parse_free(bytes, &system::FreeOptions::default())
        .rows
        .len();
    n += system::parse_df(bytes).rows.len();
    n += system::parse_pg_settings(bytes).settings.len();
    n += system::parse_pg_conf(bytes).entries.len();
    n += system::parse_ps(bytes).rows.len();
    n += system::parse_postmaster_opts(bytes).map_or(0, |c| c.args.len());
    let _ = system::parse_date(bytes);
    let _ = system::parse_uptime_command(bytes);
    let _ = system::parse_hostname(bytes);
    let _ = system::parse_pg_version_file(bytes);
    let _ = system::memory_cgroup_path(&String::from_utf8_lossy(bytes));
    let _ = system::parse_cgroup_value(bytes);
    let mut memory = system::CgroupMemory::default();
    memory.add_file("memory.events", bytes);
    for sniff in [
        system::sniff_meminfo,
        system::sniff_vmstat,
        system::sniff_status,
        system::sniff_smaps_rollup,
        system::sniff_sysctl,
        system::sniff_choice,
        system::sniff_free,
        system::sniff_df,
        system::sniff_pg_settings,
        system::sniff_pg_conf,
        system::sniff_cgroup_events,
        system::sniff_cgroup_stat,
        system::sniff_ps,
    ] {
        let _ = sniff(bytes);
    }
    n
}

fn fixtures() -> Vec<Vec<u8>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/formats/system");
    let mut out = Vec::new();
    for dir in std::fs::read_dir(root).unwrap() {
        let dir = dir.unwrap().path();
        if dir.is_dir() {
            for f in std::fs::read_dir(dir).unwrap() {
                out.push(std::fs::read(f.unwrap().path()).unwrap());
            }
        }
    }
    out
}

#[test]
fn cut_files_parse_as_far_as_they_go() {
    for bytes in fixtures() {
        let whole = all_parsers(&bytes);
        for cut in (0..bytes.len()).step_by((bytes.len() / 40).max(97)) {
            assert!(all_parsers(&bytes[..cut]) <= whole + 11);
        }
    }
}

#[test]
fn corrupted_bytes_never_panic() {
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for mut bytes in fixtures() {
        if bytes.is_empty() {
            continue;
        }
        for _ in 0..20 {
            let i = (next() % bytes.len() as u64) as usize;
            bytes[i] =
                [0u8, 0xff, b'\n', b'\r', b'|', b'[', b'\'', b':', b' '][(next() % 9) as usize];
            all_parsers(&bytes);
        }
    }
}

#[test]
fn hostile_shapes_never_panic() {
    let giant = vec![b'x'; 1 << 20];
    for input in [
        &b""[..],
        b"\0\0\0",
        b"\xff\xfe\n\xc3",
        b":\n:\n: kB\n",
        b"Name:\n",
        b"Filesystem\n\n\n",
        b"Filesystem 1K-blocks Used\nx\n",
        b"total\nMem:\n",
        b"name|setting\n-+-\n|\n",
        b" a | b \n---+---\n\xce\xbb|\n",
        b"name,setting\n\"unterminated\n",
        b"x = '\\",
        b"[][][]",
        b"postgres: ",
        b"postgres: : ",
        b"18446744073709551616\n",
        b"PID CMD\n-\n  \n99999999999 x\n",
        b"PID STARTED CMD\n1 a b\n",
        b"PID COMMAND CGROUP\n1\n2 x\n3 x y z\n",
        b"/usr/bin/postgres \"-D",
        b"/usr/bin/postgres \"\"\"\" \"-c\" \"",
        b",,,:::,0::,1:memory:",
        b"00:00:00 up , , ,",
        &giant,
    ] {
        all_parsers(input);
    }
}

#[test]
fn settings_and_cgroup_values_out_of_range_are_said_not_read() {
    // pg_settings in psql's unaligned form, as the collector writes it.
    let dump = b"name|setting|unit|source|sourcefile|pending_restart\n\
        shared_buffers|99999999999999999999999999|8kB|configuration file||f\n\
        work_mem|NaN|kB|configuration file||f\n\
        maintenance_work_mem|65536|kB|default||f\n\
        (3 rows)\n";
    let settings = system::parse_pg_settings(dump);
    let by_name = |n: &str| settings.settings.iter().find(|s| s.name == n).unwrap();
    assert_eq!(by_name("shared_buffers").bytes, None);
    assert_eq!(by_name("work_mem").bytes, None);
    assert_eq!(by_name("maintenance_work_mem").bytes, Some(65536 * 1024));
    assert_eq!(settings.stats.unrecognized_lines, 2);
    assert_eq!(
        settings.stats.unrecognized_examples[0].1,
        "shared_buffers = 99999999999999999999999999 8kB (number out of range)"
    );
    // A cgroup value over 64 bits is an error that says so, not "unlimited" nor a number.
    let err = system::parse_cgroup_value(b"99999999999999999999999\n").unwrap_err();
    assert!(err.to_string().contains("number out of range"), "{err}");
    assert_eq!(
        system::parse_cgroup_value(b"max\n").unwrap(),
        system::CgroupValue::Unlimited
    );
}
