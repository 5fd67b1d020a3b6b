//! The HTML report in a real browser: headless Chromium renders the pages of real incidents,
//! takes screenshots (printed as `screenshot: target/browser/NAME.png`, kept by CI as
//! artefacts), and the page must log nothing to the console (no script error, no failed load:
//! every host name is made unresolvable, so a fetch would fail and be logged) while the DOM
//! it built holds the incident's span and the findings.
//!
//! Chromium is driven by its command line alone, no protocol client: `--dump-dom` prints the
//! DOM after scripts ran and `--screenshot` writes a PNG, each after `--virtual-time-budget`
//! (timers, such as the flame graph's layout, have run); `--enable-logging=stderr` writes every
//! console message of the page and of its frames as a `CONSOLE` line. Chromium logs every
//! console level alike, so the test is stricter than "no error": the page logs nothing at all.
//! Out-of-process frames are not painted into headless screenshots, so site isolation is
//! turned off (`--disable-site-isolation-trials`) to see the flame graph's frame, and every
//! compositor stage runs before a capture (`--run-all-compositor-stages-before-draw`), else
//! tiles of a tall page may be missing from it.
//!
//! Every incident of fixtures/incidents is also checked for its layout: a copy of its page with
//! a probe script (which writes what it found into the DOM, so the console stays silent) must
//! have every text of every picture inside its `<svg>`, no two axis, phase or mark labels over
//! each other, and each incident's restart named at its end (`ready`); a screenshot of each page is
//! kept in target/browser/ for a person.
//!
//! Chromium is found at `$PGMORTEM_CHROMIUM`, `/usr/bin/chromium`, or as `chromium`,
//! `chromium-browser` or `google-chrome` on the PATH. Without it the test fails and says how
//! to install it (`.ci/test-all` installs it when run as root).

// The test prints where its screenshots are, for a person and for CI to keep.
#![allow(clippy::print_stdout)]

mod common;

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{fixture, pgmortem, stdout_ok};

fn chromium() -> PathBuf {
    if let Some(path) = std::env::var_os("PGMORTEM_CHROMIUM") {
        return PathBuf::from(path);
    }
    let system = Path::new("/usr/bin/chromium");
    if system.exists() {
        return system.to_owned();
    }
    for name in ["chromium", "chromium-browser", "google-chrome"] {
        if let Some(dir) = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
            .find(|d| d.join(name).is_file())
        {
            return dir.join(name);
        }
    }
    panic!(
        "headless Chromium is needed to test the HTML report in a browser and was not found \
         (looked at $PGMORTEM_CHROMIUM, /usr/bin/chromium, and chromium, chromium-browser, \
         google-chrome on the PATH): install it (Debian: apt-get install -y chromium; \
         .ci/test-all does so when run as root) or set PGMORTEM_CHROMIUM"
    );
}

/// `target/browser` of the workspace (or of `$CARGO_TARGET_DIR`).
fn out_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"));
    let dir = target.join("browser");
    std::fs::create_dir_all(&dir).unwrap();
    dir.canonicalize().unwrap()
}

/// The path as shown to a reader: relative to the workspace when it is inside.
fn shown(path: &Path) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .unwrap();
    path.strip_prefix(&root)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// Runs headless Chromium on `page` with `args`; returns its standard output and the console
/// lines it logged. Fails the test when Chromium fails or takes more than a minute.
fn run_chromium(page: &Path, args: &[&str]) -> (String, Vec<String>) {
    let profile = tempfile::tempdir().unwrap();
    let mut child = Command::new(chromium())
        .args([
            "--headless",
            "--disable-gpu",
            "--no-sandbox",
            "--hide-scrollbars",
            "--no-first-run",
            "--disable-extensions",
            "--disable-background-networking",
            "--disable-site-isolation-trials",
            "--host-resolver-rules=MAP * ~NOTFOUND",
            "--virtual-time-budget=5000",
            "--run-all-compositor-stages-before-draw",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(args)
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", chromium().display()));
    // Read both pipes while Chromium runs, so that neither fills up.
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    // A guard against a hung browser, not a speed target: on two busy cores one page has
    // taken more than a minute.
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(300) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium took more than 300 s on {}", page.display());
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let (out, err) = (out.join().unwrap(), err.join().unwrap());
    assert!(status.success(), "chromium failed ({status}): {err}");
    let console = err
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .map(str::to_owned)
        .collect();
    (out, console)
}

/// Renders the report of incident `name`, checks it in the browser and screenshots it;
/// returns the DOM Chromium built.
fn check(name: &str, dark: bool) -> String {
    let dir = out_dir();
    let page = dir.join(format!("{name}.html"));
    let bundle = std::fs::read_dir(fixture(&format!("incidents/{name}")))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".tar.gz"))
        .unwrap();
    let started = Instant::now();
    stdout_ok(
        pgmortem()
            .args(["analyze", "--format", "html", "-o"])
            .arg(&page)
            .arg(&bundle),
    );
    let bytes = std::fs::metadata(&page).unwrap().len();
    println!(
        "page: {} ({bytes} bytes, rendered in {:.2} s)",
        shown(&page),
        started.elapsed().as_secs_f64()
    );
    let started = Instant::now();
    let (dom, console) = run_chromium(&page, &["--dump-dom"]);
    assert!(
        console.is_empty(),
        "{name}: the page logged to the console:\n{}",
        console.join("\n")
    );
    assert!(dom.contains("</html>"), "{name}: no DOM: {dom}");
    let mut shots = vec![
        (format!("{name}.png"), "1366,2400", false),
        (format!("{name}-full.png"), "1366,7200", false),
    ];
    if dark {
        shots.push((format!("{name}-dark.png"), "1366,2400", true));
    }
    for (file, size, dark) in shots {
        let png = dir.join(&file);
        let _ = std::fs::remove_file(&png);
        let mut args = vec![
            format!("--screenshot={}", png.display()),
            format!("--window-size={size}"),
        ];
        if dark {
            args.push("--force-dark-mode".to_owned());
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (_, console) = run_chromium(&page, &args);
        assert!(
            console.is_empty(),
            "{name}: console:\n{}",
            console.join("\n")
        );
        let head = std::fs::read(&png).unwrap_or_default();
        assert!(
            head.starts_with(b"\x89PNG") && head.len() > 10_000,
            "{name}: no screenshot at {}",
            png.display()
        );
        println!("screenshot: {}", shown(&png));
    }
    println!(
        "browser: {name} checked in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    dom
}

#[test]
fn an_oom_kill_report_renders_with_its_incident_span_and_findings() {
    let dom = check("pg15-memcg-oom-work-mem", true);
    // The incident drawn as a span to scale, its phases, and the findings about it.
    assert!(dom.contains("id=\"span-1\""));
    assert!(dom.contains("class=\"seg-redo\""));
    assert!(dom.contains("Incident 1: redo starts → redo done"));
    assert!(dom.contains("data-rule=\"oom-kill-crash-restart\""));
    assert!(dom.contains("data-rule=\"work-mem-exceeds-memory\""));
    assert!(dom.contains("<tr class=\"victim\"><td>32691</td>"));
}

#[test]
fn a_perf_capture_report_renders_with_its_flame_graph_and_findings() {
    let dom = check("pg15-thp-compaction-perf", false);
    assert!(dom.contains("data-rule=\"perf-thp-compaction\""));
    assert!(dom.contains("<iframe class=\"flame\""));
    assert!(dom.contains(">perf samples</text>"));
}

/// Appended to a copy of a page: once it is laid out, lists every text of an `<svg>` whose box
/// lies outside its picture, and every two axis, phase or mark labels of one picture that overlap, in
/// `<pre id="pgmortem-layout">` (`ok` when there is none).
const LAYOUT_PROBE: &str = r#"<script>
addEventListener('load', function () {
  var bad = [];
  var round = function (r) { return [r.left, r.right, r.top, r.bottom].map(Math.round).join(','); };
  document.querySelectorAll('svg').forEach(function (svg, i) {
    var box = svg.getBoundingClientRect();
    if (box.width === 0 || box.height === 0) { return; }
    var name = svg.id || svg.getAttribute('aria-label') || ('svg ' + i);
    var labels = [];
    svg.querySelectorAll('text').forEach(function (t) {
      var b = t.getBoundingClientRect();
      if (b.width === 0 && b.height === 0) { return; }
      if (b.left < box.left - 1 || b.right > box.right + 1 || b.top < box.top - 1 || b.bottom > box.bottom + 1) {
        bad.push(name + ': "' + t.textContent + '" at ' + round(b) + ' outside ' + round(box));
      }
      if (t.classList.contains('tick') || t.classList.contains('phase') || t.classList.contains('marklabel')) { labels.push([t, b]); }
    });
    for (var a = 0; a < labels.length; a++) {
      for (var c = a + 1; c < labels.length; c++) {
        var p = labels[a][1], q = labels[c][1];
        if (p.left < q.right - 1 && q.left < p.right - 1 && p.top < q.bottom - 1 && q.top < p.bottom - 1) {
          bad.push(name + ': "' + labels[a][0].textContent + '" over "' + labels[c][0].textContent + '"');
        }
      }
    }
  });
  var pre = document.createElement('pre');
  pre.id = 'pgmortem-layout';
  pre.textContent = bad.length ? bad.join('\n') : 'ok';
  document.body.appendChild(pre);
});
</script>"#;

/// What the probe found in a page's DOM.
fn layout_findings(dom: &str) -> String {
    let start = dom
        .find("<pre id=\"pgmortem-layout\">")
        .map(|i| i + "<pre id=\"pgmortem-layout\">".len());
    match start {
        Some(i) => dom[i..dom[i..].find("</pre>").map_or(dom.len(), |e| i + e)].to_owned(),
        None => "the probe wrote nothing".to_owned(),
    }
}

#[test]
fn every_corpus_incident_renders_with_its_labels_inside_its_pictures() {
    let dir = out_dir();
    let mut names: Vec<String> = std::fs::read_dir(fixture("incidents"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert!(names.len() > 40, "{names:?}");
    let mut failures = Vec::new();
    for name in &names {
        let bundle = fixture(&format!("incidents/{name}"));
        let page = dir.join(format!("corpus-{name}.html"));
        stdout_ok(
            pgmortem()
                .args(["analyze", "--quiet", "--format", "html", "-o"])
                .arg(&page)
                .arg(&bundle),
        );
        let report: serde_json::Value = serde_json::from_slice(&stdout_ok(
            pgmortem()
                .args(["analyze", "--quiet", "--format", "json"])
                .arg(&bundle),
        ))
        .unwrap();
        let html = std::fs::read_to_string(&page).unwrap();
        let probe = dir.join(format!("corpus-{name}-probe.html"));
        std::fs::write(
            &probe,
            html.replace("</body>", &format!("{LAYOUT_PROBE}</body>")),
        )
        .unwrap();
        let (dom, console) = run_chromium(&probe, &["--dump-dom", "--window-size=1366,2400"]);
        if !console.is_empty() {
            failures.push(format!("{name}: console: {}", console.join("; ")));
        }
        let found = layout_findings(&dom);
        if found != "ok" {
            failures.push(format!("{name}:\n{found}"));
        }
        // Each incident drawn to scale names the end of its restart.
        for (i, incident) in report["incidents"].as_array().unwrap().iter().enumerate() {
            let Some(strip) = dom.split(&format!("id=\"span-{}\"", i + 1)).nth(1) else {
                continue;
            };
            let strip = &strip[..strip.find("</svg>").unwrap_or(strip.len())];
            if !incident["recovery"]["ready_at"].is_null() && !strip.contains(">ready</text>") {
                failures.push(format!("{name}: incident {}: no ready label", i + 1));
            }
        }
        let png = dir.join(format!("corpus-{name}.png"));
        let _ = std::fs::remove_file(&png);
        let shot = format!("--screenshot={}", png.display());
        let (_, console) = run_chromium(&page, &[shot.as_str(), "--window-size=1366,2400"]);
        if !console.is_empty() {
            failures.push(format!("{name}: console: {}", console.join("; ")));
        }
        let head = std::fs::read(&png).unwrap_or_default();
        if !head.starts_with(b"\x89PNG") {
            failures.push(format!("{name}: no screenshot at {}", png.display()));
        } else {
            println!("screenshot: {}", shown(&png));
        }
        let _ = std::fs::remove_file(&probe);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
