//! Frame names as `inferno-collapse-perf` writes them: `[unknown]` replaced by the DSO's
//! basename, C/C++ argument lists cut, `;` turned into `:`, half-demangled Rust symbols fixed,
//! and the kernel and JIT tests behind `--kernel` and `--jit`.

use std::borrow::Cow;

/// `[unknown]` becomes `[basename of dso]` (or `[unknown]`), with ` <address>` under
/// `--addrs`; any other symbol is kept.
pub(super) fn module_fallback(out: &mut String, dso: &str, func: &str, address: u64, addrs: bool) {
    if func != "[unknown]" {
        out.push_str(func);
        return;
    }
    let name = match (dso, addrs) {
        ("[unknown]", true) => "unknown",
        ("[unknown]", false) => {
            out.push_str(func);
            return;
        }
        (dso, _) => &dso[dso.rfind('/').map_or(0, |i| i + 1)..],
    };
    out.push('[');
    out.push_str(name);
    if addrs {
        use std::fmt::Write;
        let _ = write!(out, " <{address:x}>]");
    } else {
        out.push(']');
    }
}

/// inferno's `tidy_generic`: `;` → `:`, and the top-level argument list cut, except Go
/// method names (`net/http.(*Client).Do`) and `(anonymous namespace)`.
pub(super) fn tidy_generic(func: &mut String) {
    if func.contains(';') {
        *func = func.replace(';', ":");
    }
    // Only a `(` can start an argument list: most C symbols have none.
    if !func.contains('(') {
        return;
    }
    let mut depth: i64 = 0;
    let mut last_dot: Option<usize> = None;
    let mut cut = func.len();
    // Bytes, not chars: every delimiter is ASCII, and no byte of a multi-byte UTF-8 sequence
    // is, so indexes stay on char boundaries.
    for (idx, c) in func.bytes().enumerate() {
        match c {
            b'<' | b'{' | b'[' => depth += 1,
            b'>' | b'}' | b']' | b')' => depth -= 1,
            b'(' => {
                if depth == 0 {
                    let go = last_dot == Some(idx);
                    let anonymous = func[idx..].starts_with("(anonymous namespace)");
                    if !go && !anonymous {
                        cut = idx;
                        break;
                    }
                }
                depth += 1;
            }
            b'.' => last_dot = Some(idx + 1),
            _ => {}
        }
    }
    func.truncate(cut);
}

/// inferno's kernel test for `--kernel`: a `[…]` DSO other than `[unknown]`, a `.ko`, or a
/// `vmlinux*` path. (It counts `[vdso]` as kernel; [`Frame::is_kernel`] does not.)
pub(super) fn inferno_is_kernel(dso: &str) -> bool {
    let vmlinux = dso.rfind("vmlinux").is_some_and(|at| {
        dso[at..]
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_'))
    });
    (dso.starts_with('[') || dso.ends_with(".ko") || vmlinux) && dso != "[unknown]"
}

pub(super) fn is_jit(dso: &str) -> bool {
    (dso.starts_with("/tmp/perf-") && dso.ends_with(".map"))
        || (dso.contains("/jitted-") && dso.ends_with(".so"))
}

const RUST_HASH_LENGTH: usize = 17;

/// perf leaves some Rust symbols half demangled (`_$LT$std..fs..File$GT$::open::h…`):
/// inferno's fix, byte for byte.
pub(super) fn fix_partially_demangled_rust_symbol(symbol: &str) -> Cow<'_, str> {
    let is_rust_hash =
        |s: &str| s.starts_with('h') && s[1..].bytes().all(|c| c.is_ascii_hexdigit());
    if symbol.len() < RUST_HASH_LENGTH
        || !symbol.is_char_boundary(symbol.len() - RUST_HASH_LENGTH)
        || !is_rust_hash(&symbol[symbol.len() - RUST_HASH_LENGTH..])
    {
        return Cow::Borrowed(symbol);
    }
    let mut rest = &symbol[..symbol.len() - RUST_HASH_LENGTH];
    if let Some(r) = rest.strip_suffix("::") {
        rest = r;
    }
    if rest.starts_with("_$") {
        rest = &rest[1..];
    }
    const ESCAPES: [(&str, &str); 20] = [
        ("$SP$", "@"),
        ("$BP$", "*"),
        ("$RF$", "&"),
        ("$LT$", "<"),
        ("$GT$", ">"),
        ("$LP$", "("),
        ("$RP$", ")"),
        ("$C$", ","),
        ("$u7e$", "~"),
        ("$u20$", " "),
        ("$u27$", "'"),
        ("$u3d$", "="),
        ("$u5b$", "["),
        ("$u5d$", "]"),
        ("$u7b$", "{"),
        ("$u7d$", "}"),
        ("$u3b$", ";"),
        ("$u2b$", "+"),
        ("$u21$", "!"),
        ("$u22$", "\""),
    ];
    let mut out = String::with_capacity(rest.len());
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('.') {
            if let Some(r2) = r.strip_prefix('.') {
                out.push_str("::");
                rest = r2;
            } else {
                out.push('.');
                rest = r;
            }
        } else if rest.starts_with('$') {
            match ESCAPES.iter().find(|(pat, _)| rest.starts_with(pat)) {
                Some((pat, text)) => {
                    out.push_str(text);
                    rest = &rest[pat.len()..];
                }
                None => {
                    out.push_str(rest);
                    break;
                }
            }
        } else {
            let idx = rest.find(['$', '.']).unwrap_or(rest.len());
            out.push_str(&rest[..idx]);
            rest = &rest[idx..];
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tidy(s: &str) -> String {
        let mut s = s.to_owned();
        tidy_generic(&mut s);
        s
    }

    #[test]
    fn tidy_generic_keeps_go_methods_and_templates() {
        for (input, expected) in [
            (
                "go/build.(*importReader).readByte",
                "go/build.(*importReader).readByte",
            ),
            ("foo<Vec::<usize>>(Vec<usize>)", "foo<Vec::<usize>>"),
            (".run()V", ".run"),
            ("base(BasicType) const", "base"),
            (
                "std::function<void (int, int)>::operator(int, int)",
                "std::function<void (int, int)>::operator",
            ),
            (
                "{lambda(int, int)#2}::operator()",
                "{lambda(int, int)#2}::operator",
            ),
            (
                "(anonymous namespace)::myBar()",
                "(anonymous namespace)::myBar",
            ),
            ("[(foo)]::bar()", "[(foo)]::bar"),
            ("a;b", "a:b"),
        ] {
            assert_eq!(tidy(input), expected, "{input}");
        }
    }

    #[test]
    fn rust_symbols_are_fixed_like_inferno() {
        assert_eq!(
            fix_partially_demangled_rust_symbol(
                "_$LT$std..fs..ReadDir$u20$as$u20$core..iter..traits..iterator..Iterator$GT$::next::hc14f1750ca79129b"
            ),
            "<std::fs::ReadDir as core::iter::traits::iterator::Iterator>::next"
        );
        assert_eq!(
            fix_partially_demangled_rust_symbol(
                "std::sys::unix::fs::File::open::hb90e1c1c787080f0"
            ),
            "std::sys::unix::fs::File::open"
        );
        assert_eq!(
            fix_partially_demangled_rust_symbol("_ZN4test1a2bcE"),
            "_ZN4test1a2bcE"
        );
    }

    #[test]
    fn kernel_test_is_inferno_s() {
        assert!(inferno_is_kernel("[kernel.kallsyms]"));
        assert!(inferno_is_kernel("[vdso]"));
        assert!(!inferno_is_kernel("[unknown]"));
        assert!(inferno_is_kernel(
            "/lib/modules/4.3.0-rc1-virtual/build/vmlinux"
        ));
        assert!(inferno_is_kernel("nf_conntrack.ko"));
        assert!(!inferno_is_kernel("/usr/lib/postgresql/15/bin/postgres"));
    }
}
