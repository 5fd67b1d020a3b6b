//! Rule ids as a person types them: matched case-insensitively, and an unknown one answered
//! with the nearest ids of the catalog ("did you mean"), as ruff does for its codes.

use pgmortem::diagnose::rules;

/// Ids at most this many edits from the one typed are offered.
const NEAR: usize = 3;

/// The catalog's id for `typed` (case and surrounding blanks ignored), or an error that names
/// the nearest ids.
pub(crate) fn resolve(typed: &str) -> Result<&'static str, String> {
    let wanted = typed.trim().to_ascii_lowercase();
    if let Some(rule) = rules::catalog().iter().find(|r| r.meta.id == wanted) {
        return Ok(rule.meta.id);
    }
    let near = nearest(&wanted);
    let hint = match near.as_slice() {
        [] => String::new(),
        [one] => format!("; did you mean `{one}`?"),
        many => format!("; did you mean one of: {}?", many.join(", ")),
    };
    Err(format!(
        "no rule {typed:?}{hint} (`pgmortem rules` lists them)"
    ))
}

/// The ids nearest `wanted` (lower case): within [`NEAR`] edits, or holding it or held in it,
/// closest first, at most three.
fn nearest(wanted: &str) -> Vec<&'static str> {
    let mut scored: Vec<(usize, &'static str)> = rules::catalog()
        .iter()
        .map(|r| r.meta.id)
        .filter_map(|id| {
            let d = strsim::levenshtein(wanted, id);
            let part = wanted.len() >= 4 && (id.contains(wanted) || wanted.contains(id));
            (d <= NEAR || part).then_some((if part { d.min(NEAR) } else { d }, id))
        })
        .collect();
    scored.sort();
    scored.into_iter().take(3).map(|(_, id)| id).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_match_whatever_their_case() {
        assert_eq!(
            resolve("OOM-KILL-CRASH-RESTART"),
            Ok("oom-kill-crash-restart")
        );
        assert_eq!(resolve(" thp-always "), Ok("thp-always"));
    }

    #[test]
    fn a_near_miss_is_answered_with_the_nearest_ids() {
        let e = resolve("oom-kill-crash-restrat").unwrap_err();
        assert!(e.contains("did you mean `oom-kill-crash-restart`?"), "{e}");
        let e = resolve("swappiness").unwrap_err();
        assert!(e.contains("swappiness-high"), "{e}");
        let e = resolve("no-such-rule-at-all").unwrap_err();
        assert!(!e.contains("did you mean"), "{e}");
        assert!(e.contains("`pgmortem rules` lists them"), "{e}");
    }
}
